"""Citations typed from the validator to the page: the span where the citation grammar found
each Markdown citation is recorded (`runtime/citations.json`, through its model), kept by
the run store's rows, and the page marks exactly that span."""

from __future__ import annotations

import json
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator

from runlens.contracts import ArtifactContract, MarkdownCitations
from runlens.records.citations import CITATIONS_SCHEMA_VERSION, read_citations
from runlens.runtime.citations import citations_record
from runlens.store.rows import CitationRow, FindingRow
from runlens.store.sync import _citations
from runlens.tools.workspace import Workspace
from runlens.ui.markdown import render_markdown
from runlens.validation import ValidationReport
from runlens_feedback.contracts import REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace

ROOT = Path(__file__).resolve().parents[2]

#: Marks the page's old search did not know: only the contract's grammar reads them.
CONTRACT = ArtifactContract(
    name=REPORT, citations=MarkdownCitations(quote_marks=(("‹", "›"), ("⟪", "⟫")))
)
#: The same words twice in one paragraph, once as prose and once as the citation, CR LF
#: line ends, and a second citation after a table-free block.
DOCUMENT = (
    "# Report\r\n\r\n"
    "They wrote 导出周报太慢了 again; in their words ‹导出周报太慢了› — fb_001.\r\n\r\n"
    "> ⟪每周五都要导出⟫ [fb_001]\r\n"
)


class _Links(HTMLParser):
    """The page's links: (attributes, text) in order, and the text outside any link."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.links: list[tuple[dict[str, str], str]] = []
        self.outside: list[str] = []
        self._open: dict[str, str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._open = {name: value or "" for name, value in attrs}
            self.links.append((self._open, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            attributes, text = self.links[-1]
            self.links[-1] = (attributes, text + data)
        else:
            self.outside.append(data)


def _validated(
    ws: FeedbackWorkspace, validate: Callable[..., ValidationReport], document: str
) -> tuple[ValidationReport, str]:
    ws.analysis = {"items": [], "failed_batches": []}
    ws.backlog = {"items": []}
    ws.report = ""
    path = ws.write().root / REPORT
    path.write_bytes(document.encode("utf-8"))
    return validate(ws, contracts=[CONTRACT]), path.read_bytes().decode("utf-8-sig")


def _stored(ws: FeedbackWorkspace, report: ValidationReport) -> list[CitationRow]:
    """The store's rows for the report, as a sync makes them from the recorded file."""
    (ws.root / "runtime").mkdir(exist_ok=True)
    citations = ws.root / Workspace.CITATIONS
    citations.write_text(json.dumps(citations_record(report).encode()), encoding="utf-8")
    findings = [
        FindingRow(
            ordinal=n,
            validator=f.validator,
            artifact=f.artifact,
            code=f.code,
            path=f.path,
            message=f.message,
            details=f.details,
            row_id=f.details.get("row_id"),
            line=f.details.get("line"),
            column=f.details.get("column"),
        )
        for n, f in enumerate(report.findings)
    ]
    return _citations(Workspace(ws.root), findings)


def test_the_recorded_span_is_the_citations_place_in_the_file(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report, text = _validated(feedback_workspace, validate, DOCUMENT)
    assert report.passed, report.error_message
    spans = [(q.span, q.id_span) for q in report.quotes]
    assert all(span is not None and cited is not None for span, cited in spans)
    marked = [(text[s.start : s.end], text[i.start : i.end]) for s, i in spans if s and i]
    assert marked == [("‹导出周报太慢了›", "fb_001"), ("⟪每周五都要导出⟫", "fb_001")]
    assert [q.span.line for q in report.quotes if q.span] == [3, 5]
    # Past the first CR LF: offsets count the file's characters as written.
    assert report.quotes[0].span is not None
    assert report.quotes[0].span.start == DOCUMENT.index("‹")


def test_the_record_reads_back_typed_and_the_store_keeps_the_spans(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report, text = _validated(feedback_workspace, validate, DOCUMENT)
    rows = _stored(feedback_workspace, report)
    written = json.loads((feedback_workspace.root / Workspace.CITATIONS).read_bytes())
    published = json.loads((ROOT / "docs" / "schemas" / "citations.schema.json").read_bytes())
    assert list(Draft202012Validator(published).iter_errors(written)) == []
    read = read_citations(feedback_workspace.root / Workspace.CITATIONS)
    assert read.problems == [] and read.version == CITATIONS_SCHEMA_VERSION
    assert [(c.row_id, c.span is not None) for c in read.citations] == [
        ("fb_001", True),
        ("fb_001", True),
    ]
    first = rows[0]
    assert (first.span_start, first.span_end, first.span_line) == (
        text.index("‹"),
        text.index("›") + 1,
        3,
    )
    assert first.id_start is not None and first.id_end is not None
    assert text[first.id_start : first.id_end] == "fb_001"


def test_the_page_marks_exactly_the_recorded_span(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report, text = _validated(feedback_workspace, validate, DOCUMENT)
    rows = _stored(feedback_workspace, report)
    page = _Links(str(render_markdown(text, citations=rows, evidence_href=lambda r: "/e/" + r)))
    quotes = [(a.get("id"), shown) for a, shown in page.links if "cite" in a["class"].split()]
    ids = [shown for a, shown in page.links if "cite-id" in a["class"].split()]
    assert quotes == [("cite-0", "‹导出周报太慢了›"), ("cite-1", "⟪每周五都要导出⟫")]
    assert ids == ["fb_001", "fb_001"]
    # The same words earlier in the paragraph are prose: not linked.
    assert "They wrote 导出周报太慢了 again; in their words " in "".join(page.outside)


def test_a_failed_citation_is_marked_at_its_span_with_its_reason(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    document = DOCUMENT.replace("‹导出周报太慢了›", "‹导出周报太快了›")
    report, text = _validated(feedback_workspace, validate, document)
    assert [f.code for f in report.findings] == ["evidence_text_mismatch"]
    rows = _stored(feedback_workspace, report)
    failed = next(r for r in rows if r.status == "failed")
    assert failed.span_start == text.index("‹")
    html = str(render_markdown(text, citations=rows, evidence_href=lambda r: "/e/" + r))
    page = _Links(html)
    marked = [(a["class"], shown) for a, shown in page.links if a.get("id") == "cite-1"]
    assert marked == [("cite cite-failed", "‹导出周报太快了›")]
    assert "evidence_text_mismatch" in html and 'class="cite-note"' in html


def test_a_run_recorded_without_spans_is_still_linked_by_searching(tmp_path: Path) -> None:
    """A file written before spans were has none: the store rows neither, the page searches."""
    root = tmp_path / "ws"
    (root / "runtime").mkdir(parents=True)
    entry = {
        "artifact": REPORT,
        "location": "line 3",
        "row_id": "fb_001",
        "quote": "导出周报太慢了",
        "start": 0,
        "end": 7,
        "line": 3,
        "column": 3,
    }
    (root / Workspace.CITATIONS).write_text(
        json.dumps({"schema_version": 1, "citations": [entry]}), encoding="utf-8"
    )
    rows = _citations(Workspace(root), [])
    assert [(r.quote, r.span_start) for r in rows] == [("导出周报太慢了", None)]
    markdown = "# Report\n\n> “导出周报太慢了” — fb_001\n"
    page = _Links(str(render_markdown(markdown, citations=rows, evidence_href=lambda r: r)))
    assert [(a.get("id"), shown) for a, shown in page.links] == [
        ("cite-0", "“导出周报太慢了”"),
        (None, "fb_001"),
    ]


def test_a_damaged_citations_file_is_named_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "citations.json"
    path.write_text('{"schema_version": 1, "citations": [{"artifact": 3}, ', encoding="utf-8")
    read = read_citations(path)
    assert read.citations == [] and len(read.problems) == 1
    assert read.problems[0].startswith("runtime/citations.json: damaged, not valid JSON")
    path.write_text(
        json.dumps({"schema_version": 1, "citations": [{"artifact": 3}], "failed": {}}),
        encoding="utf-8",
    )
    read = read_citations(path)
    assert read.citations == [] and read.failed == []
    assert read.problems == [
        "runtime/citations.json: damaged, citations[0] artifact: Input should be a valid string",
        "runtime/citations.json: damaged, failed is not a list",
    ]
    assert read_citations(tmp_path / "absent.json").problems == []


def _located(markdown: str, quotation: str, row_id: str, ordinal: int = 1) -> CitationRow:
    """A verified row whose spans are `quotation`'s and the next `row_id`'s place in the file."""
    start = markdown.index(quotation)
    cited = markdown.index(row_id, start + len(quotation))
    return CitationRow(
        ordinal=ordinal,
        artifact=REPORT,
        location="line 5",
        row_id=row_id,
        quote=quotation[1:-1],
        line=5,
        column=3,
        status="verified",
        span_start=start,
        span_end=start + len(quotation),
        span_line=5,
        id_start=cited,
        id_end=cited + len(row_id),
    )


def test_a_span_holding_nul_and_cr_lf_maps_to_what_the_parser_reads() -> None:
    markdown = "# Report\r\n\r\n## Evidence\r\n\r\n> “slow\0 export again” — fb_001\r\n"
    row = _located(markdown, "“slow\0 export again”", "fb_001")
    html = str(render_markdown(markdown, citations=[row], evidence_href=lambda r: "/e/" + r))
    page = _Links(html)
    assert [(a.get("id"), shown) for a, shown in page.links] == [
        ("cite-1", "“slow\ufffd export again”"),
        (None, "fb_001"),
    ]


def test_a_span_that_markup_splits_is_linked_piece_by_piece_anchored_once() -> None:
    markdown = "# Report\n\n## Evidence\n\n> “slow **export** again” — fb_001\n"
    row = _located(markdown, "“slow **export** again”", "fb_001")
    page = _Links(str(render_markdown(markdown, citations=[row], evidence_href=lambda r: r)))
    quoted = [(a.get("id"), shown) for a, shown in page.links if "cite" in a["class"].split()]
    assert quoted == [("cite-1", "“slow "), (None, "export"), (None, " again”")]
    assert [shown for a, shown in page.links if "cite-id" in a["class"].split()] == ["fb_001"]
