"""Markdown deliverables as HTML: inert whatever they contain, citations linked, findings placed.

The checks read the rendered HTML with the standard library's parser, as a browser would
tokenise it, so "no script" means no `<script>` element and no event-handler attribute, not
merely the absence of a substring.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from runlens.store.rows import CitationRow, FindingRow
from runlens.ui import markdown
from runlens.ui.markdown import is_relative, render_markdown, safe_href


class Elements(HTMLParser):
    """Every start tag of a document with its attributes, and the text outside tags."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str]]:
        return [attributes for name, attributes in self.tags if name == tag]

    @property
    def visible(self) -> str:
        return "".join(self.text)


def evidence(row_id: str) -> str:
    return f"/runs/r1/evidence/{row_id}"


def render(text: str, **kwargs: object) -> Elements:
    html = render_markdown(text, evidence_href=evidence, **kwargs)  # type: ignore[arg-type]
    return Elements(str(html))


def scheme(href: str) -> str | None:
    """The scheme a browser reads from an href (whitespace and controls dropped)."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", href)
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", cleaned)
    return match.group(1).lower() if match else None


def assert_inert(elements: Elements) -> None:
    tags = {name for name, _ in elements.tags}
    assert not tags & {"script", "img", "iframe", "object", "embed", "style", "svg", "form"}
    for name, attributes in elements.tags:
        handlers = [a for a in attributes if a.lower().startswith("on")]
        assert not handlers, f"<{name}> has {handlers}"
        assert "style" not in attributes, f"<{name}> has an inline style"
        for attribute in ("href", "src", "action", "formaction"):
            if attribute in attributes:
                assert scheme(attributes[attribute]) in {None, "http", "https", "mailto"}, (
                    name,
                    attributes,
                )


HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": "<img src=x onerror=alert(1)>",
    "raw block": '<div class="x">\n<iframe src="javascript:alert(1)"></iframe>\n</div>',
    "inline anchor": '<a href="https://example.com/" onclick="alert(1)">hi</a>',
    "javascript link": "[x](javascript:alert(1))",
    "upper-case scheme": "[x](JAVASCRIPT:alert(1))",
    "leading spaces": "[x](  javascript:alert(1))",
    "data link": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "vbscript link": "[x](vbscript:msgbox(1))",
    "autolink": "<javascript:alert(1)>",
    "entity scheme": "[x](&#106;avascript:alert(1))",
    "hex entity scheme": "[x](&#x6A;&#x61;vascript:alert(1))",
    "named entity colon": "[x](javascript&colon;alert(1))",
    "tab in scheme": "[x](java&#9;script:alert(1))",
    "reference link": "[x][evil]\n\n[evil]: javascript:alert(1)",
    "image": "![alt](javascript:alert(1))",
    "image onerror": '![x" onerror="alert(1)](x.png)',
    "html in link title": '[x](https://example.com "a\\" onmouseover=\\"alert(1)")',
    "code fence info": '```js" onload="alert(1)\ncode\n```',
}


@pytest.mark.parametrize("markdown", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_markdown_renders_inert(markdown: str) -> None:
    elements = render(f"# Title\n\n{markdown}\n")
    assert_inert(elements)


def test_raw_html_is_shown_as_text() -> None:
    elements = render("<script>alert(1)</script>\n\nA <b>bold</b> claim.\n")
    assert "<script>alert(1)</script>" in elements.visible
    assert "<b>bold</b>" in elements.visible
    assert not elements.named("b")


def test_table_alignment_is_a_class_not_an_inline_style() -> None:
    elements = render("| a | b | c |\n|:-:|--:|---|\n| 1 | 2 | 3 |\n")
    cells = elements.named("th") + elements.named("td")
    assert all("style" not in cell for cell in cells)
    assert [cell.get("class") for cell in elements.named("td")] == [
        "align-center",
        "align-right",
        None,
    ]


def test_safe_links_are_kept() -> None:
    elements = render(
        "[a](https://example.com/x) [b](http://example.com) [c](mailto:team@example.com) "
        "[d](other.md) [e](#evidence) [f](/runs)\n"
    )
    hrefs = [a["href"] for a in elements.named("a")]
    assert hrefs == [
        "https://example.com/x",
        "http://example.com",
        "mailto:team@example.com",
        "other.md",
        "#evidence",
        "/runs",
    ]
    external = [a for a in elements.named("a") if a["href"].startswith("http")]
    assert all("noopener" in a.get("rel", "") for a in external)


def test_relative_links_go_through_link_href() -> None:
    elements = render("[chart](chart.svg) [top](#top)\n", link_href=lambda href: f"/view/{href}")
    assert [a["href"] for a in elements.named("a")] == ["/view/chart.svg", "#top"]


def test_images_are_never_loaded() -> None:
    elements = render("![the chart](https://tracker.example/pixel.png)\n")
    assert not elements.named("img")
    assert "the chart" in elements.visible
    assert "https://tracker.example/pixel.png" in elements.visible


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://a.example", True),
        ("mailto:x@y.z", True),
        ("page.md#x", True),
        ("/x:y", True),
        ("#frag", True),
        ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False),
        (" \tjavascript:alert(1)", False),
        ("java\nscript:alert(1)", False),
        ("java%0Ascript:alert(1)", False),
        ("data:text/html,x", False),
        ("vbscript:x", False),
        ("file:///etc/passwd", False),
    ],
)
def test_safe_href(url: str, allowed: bool) -> None:
    assert safe_href(url) is allowed


def test_is_relative() -> None:
    assert is_relative("chart.svg") and is_relative("../x.md")
    assert not any(is_relative(u) for u in ("/x", "#x", "//host/x", "https://x", "mailto:a"))


def citation(ordinal: int, line: int, row_id: str, quote: str, **fields: object) -> CitationRow:
    values: dict[str, object] = {
        "ordinal": ordinal,
        "artifact": "report.md",
        "location": f"line {line}",
        "row_id": row_id,
        "quote": quote,
        "line": line,
        "column": 3,
        "status": "verified",
        **fields,
    }
    return CitationRow.model_validate(values)


REPORT = """# Report

## Evidence

> “takes three minutes” — fb_001

> “The dashboard is perfect” — fb_003 and more

| Quote | Row |
| --- | --- |
| “stuck at 99%” [fb_017] | ok |
"""


def test_verified_citation_links_quote_and_id_to_the_row() -> None:
    elements = render(REPORT, citations=[citation(1, 5, "fb_001", "takes three minutes")])
    links = [a for a in elements.named("a") if a["href"] == "/runs/r1/evidence/fb_001"]
    assert len(links) == 2
    quote_link = next(a for a in links if a.get("id") == "cite-1")
    assert "cite-verified" in quote_link["class"]
    html = str(
        render_markdown(
            REPORT,
            citations=[citation(1, 5, "fb_001", "takes three minutes")],
            evidence_href=evidence,
        )
    )
    assert ">“takes three minutes”</a>" in html
    assert ">fb_001</a>" in html


def test_failed_citation_is_styled_with_its_reason_visible_and_in_title() -> None:
    failed = citation(
        2,
        7,
        "fb_003",
        "The dashboard is perfect",
        status="failed",
        code="evidence_text_mismatch",
        reason="not a verbatim fragment of fb_003 <b>",
    )
    elements = render(REPORT, citations=[failed])
    link = next(a for a in elements.named("a") if a.get("id") == "cite-2")
    assert "cite-failed" in link["class"]
    assert "evidence_text_mismatch" in link["title"]
    assert "not a verbatim fragment of fb_003 <b>" in link["title"]
    assert "not a verbatim fragment of fb_003 <b>" in elements.visible
    assert not elements.named("b")


def test_citation_in_a_table_cell_is_linked() -> None:
    elements = render(REPORT, citations=[citation(3, 11, "fb_017", "stuck at 99%")])
    link = next(a for a in elements.named("a") if a.get("id") == "cite-3")
    assert link["href"] == "/runs/r1/evidence/fb_017"


def test_a_quote_holding_nul_is_linked_where_the_parser_reads_it() -> None:
    """The page finds a quote as the validator judged it: NUL read as U+FFFD."""
    report = "# Report\r\n\r\n## Evidence\r\n\r\n> “slow\0 export again” — fb_001\r\n"
    for quote in ("slow\0 export again", "slow\ufffd export again"):
        html = str(
            render_markdown(
                report, citations=[citation(1, 5, "fb_001", quote)], evidence_href=evidence
            )
        )
        assert 'id="cite-1"' in html
        assert ">“slow\ufffd export again”</a>" in html


def test_citation_not_found_in_its_block_still_gets_a_link() -> None:
    elements = render(REPORT, citations=[citation(4, 5, "fb_009", "words that are not there")])
    link = next(a for a in elements.named("a") if a.get("id") == "cite-4")
    assert link["href"] == "/runs/r1/evidence/fb_009"


def test_row_ids_are_encoded_by_evidence_href_not_trusted() -> None:
    row = citation(5, 5, 'fb_001"><script>', "takes three minutes")
    html = str(render_markdown(REPORT, citations=[row], evidence_href=lambda r: "/e/" + r))
    assert_inert(Elements(html))
    assert "<script>" not in html


def finding(ordinal: int, line: int | None, code: str = "unsourced_quote") -> FindingRow:
    return FindingRow(
        ordinal=ordinal,
        validator="MarkdownCitationValidationHook",
        artifact="report.md",
        code=code,
        message=f"problem <i>{ordinal}</i>",
        path=f"line {line}" if line else "",
        line=line,
    )


def test_findings_are_shown_after_the_block_holding_their_line() -> None:
    html = str(
        render_markdown(
            REPORT,
            findings=[finding(1, 7), finding(2, None, "missing_heading")],
            evidence_href=evidence,
        )
    )
    note = html.index('id="finding-1"')
    assert html.index("The dashboard is perfect") < note < html.index("<table>")
    assert html.index('id="finding-2"') < html.index("<h1>")
    assert "problem &lt;i&gt;1&lt;/i&gt;" in html


def test_finding_on_a_blank_line_goes_to_the_block_before_it() -> None:
    html = str(render_markdown(REPORT, findings=[finding(1, 6)], evidence_href=evidence))
    assert html.index("takes three minutes") < html.index('id="finding-1"')
    assert html.index('id="finding-1"') < html.index("The dashboard is perfect")


def test_blocks_carry_line_anchors() -> None:
    elements = render(REPORT)
    anchors = {a["id"] for a in elements.named("span") if a.get("class") == "line-anchor"}
    assert {"line-1", "line-3", "line-5", "line-7", "line-9"} <= anchors


def test_a_kept_parse_carries_nothing_of_one_view_into_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A document's parse is kept for its next view, which reads the same as a view of a
    fresh parse: the citations linked and findings placed in one view are not in the next."""
    linked = citation(1, 5, "fb_001", "takes three minutes")
    failed = citation(2, 7, "fb_003", "The dashboard is perfect", status="failed", reason="r")
    views: list[dict[str, object]] = [
        {"citations": [linked]},
        {},
        {"citations": [failed], "findings": [finding(1, 3)]},
        {"citations": [linked, failed], "stale": {"fb_001": "changed"}},
        {},
    ]

    def view_of(**kwargs: object) -> str:
        return str(render_markdown(REPORT, evidence_href=evidence, **kwargs))  # type: ignore[arg-type]

    def fresh(**kwargs: object) -> str:
        markdown._parsed.cache_clear()
        return view_of(**kwargs)

    expected = [fresh(**view) for view in views]
    markdown._parsed.cache_clear()
    shown = [view_of(**view) for view in views]
    assert shown == expected
    assert "fb_001</a>" in shown[0] and "fb_001</a>" not in shown[1]
    assert markdown._parsed.cache_info().hits == len(views) - 1
    # A document past the size kept is parsed at each view.
    monkeypatch.setattr(markdown, "_KEPT_PARSE_CHARS", len(REPORT) - 1)
    markdown._parsed.cache_clear()
    assert str(render_markdown(REPORT, evidence_href=evidence)) == expected[1]
    assert markdown._parsed.cache_info().currsize == 0
