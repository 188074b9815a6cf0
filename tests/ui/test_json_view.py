"""JSON deliverables as HTML: every node anchored at its path, findings and citations on it."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from runlens.store.rows import CitationRow, FindingRow
from runlens.ui.json_view import (
    ROOT_ID,
    anchor_id,
    child_path,
    dotted,
    nearest_existing,
    path_parts,
    render_json_readable,
    render_json_tree,
)


class Nodes(HTMLParser):
    """Start tags by id, every tag's attributes, and the text inside each element with an id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.by_id: dict[str, dict[str, str]] = {}
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.tags.append((tag, attributes))
        if "id" in attributes:
            self.by_id[attributes["id"]] = {"tag": tag, **attributes}

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def links(self) -> list[dict[str, str]]:
        return [attributes for tag, attributes in self.tags if tag == "a"]


DOCUMENT: dict[str, Any] = {
    "items": [
        {"row_id": "r1", "label": "slow", "quote": "takes three minutes", "score": 0.5},
        {"row_id": "r2", "label": "<script>alert(1)</script>", "quote": "wrong", "ok": True},
    ],
    "refs": {"related": ["r1", "r9"]},
    "note": None,
}


def href(row_id: str) -> str:
    return f"/runs/x/evidence/{row_id}"


def test_paths() -> None:
    assert path_parts("items[3].sentiment") == ["items", 3, "sentiment"]
    assert path_parts("") == []
    assert child_path("", "items") == "items"
    assert child_path("items", 3) == "items[3]"
    assert child_path("items[3]", "x") == "items[3].x"
    assert dotted("items[3].row_ids[0]") == "items.row_ids"
    assert anchor_id("") == ROOT_ID and anchor_id("items[0]") == "items[0]"


@pytest.mark.parametrize(
    ("path", "existing"),
    [
        ("items[1].label", "items[1].label"),
        ("items[1].missing", "items[1]"),
        ("items[7].label", "items"),
        ("nothing.here", ""),
        ("refs.related[1]", "refs.related[1]"),
        ("", ""),
    ],
)
def test_nearest_existing(path: str, existing: str) -> None:
    assert nearest_existing(DOCUMENT, path) == existing


def test_every_node_is_anchored_at_its_path() -> None:
    nodes = Nodes(str(render_json_tree(DOCUMENT, evidence_href=href)))
    for path in (ROOT_ID, "items", "items[0]", "items[1].label", "refs.related[1]", "note"):
        assert path in nodes.by_id, path


def test_strings_are_escaped() -> None:
    html = str(render_json_tree(DOCUMENT, evidence_href=href))
    nodes = Nodes(html)
    assert "script" not in {tag for tag, _ in nodes.tags}
    assert "<script>alert(1)</script>" in "".join(nodes.text)


def test_hostile_keys_are_escaped_in_text_and_ids() -> None:
    document = {'"><img src=x onerror=alert(1)>': {"<b>": 1}}
    nodes = Nodes(str(render_json_tree(document, evidence_href=href)))
    assert {tag for tag, _ in nodes.tags} <= {"div", "ul", "li", "details", "summary", "span"}
    assert all(not name.startswith("on") for _, attrs in nodes.tags for name in attrs)


def finding(ordinal: int, path: str, code: str = "invalid_enum") -> FindingRow:
    return FindingRow(
        ordinal=ordinal,
        validator="JsonOutputValidationHook",
        artifact="a.json",
        code=code,
        message=f"{path} is wrong",
        path=path,
    )


def test_findings_are_marked_at_their_node_or_nearest_ancestor() -> None:
    html = str(
        render_json_tree(
            DOCUMENT,
            findings=[finding(1, "items[1].label"), finding(2, "items[0].absent", "missing")],
            evidence_href=href,
        )
    )
    nodes = Nodes(html)
    assert "has-finding" in nodes.by_id["items[1].label"]["class"]
    assert "has-finding" in nodes.by_id["items[0]"]["class"]
    assert "finding-1" in nodes.by_id and "finding-2" in nodes.by_id
    # The marker of the missing field sits inside the node of its nearest existing ancestor.
    start = html.index('id="items[0]"')
    assert start < html.index('id="finding-2"') < html.index('id="items[0].row_id"')


def citation(ordinal: int, location: str, row_id: str, **fields: Any) -> CitationRow:
    return CitationRow.model_validate(
        {
            "ordinal": ordinal,
            "artifact": "a.json",
            "location": location,
            "row_id": row_id,
            "status": "verified",
            **fields,
        }
    )


def test_citations_link_their_value_to_the_row() -> None:
    citations = [
        citation(1, "items[0].quote", "r1", quote="takes three minutes"),
        citation(
            2,
            "items[1].quote",
            "r2",
            quote="wrong",
            status="failed",
            code="mismatch",
            reason="not in row r2",
        ),
    ]
    nodes = Nodes(str(render_json_tree(DOCUMENT, citations=citations, evidence_href=href)))
    verified = nodes.by_id["cite-1"]
    assert verified["href"] == "/runs/x/evidence/r1" and "cite-verified" in verified["class"]
    failed = nodes.by_id["cite-2"]
    assert "cite-failed" in failed["class"] and "not in row r2" in failed["title"]
    assert "mismatch: not in row r2" in "".join(nodes.text)
    # The cited ids elsewhere in the document link to their rows too.
    assert {"href": "/runs/x/evidence/r1"}.items() <= next(
        a for a in nodes.links() if "cite-id" in a["class"]
    ).items()


def test_id_paths_link_ids_the_contract_cites() -> None:
    nodes = Nodes(str(render_json_tree(DOCUMENT, evidence_href=href, id_paths=["refs.related"])))
    hrefs = {a["href"] for a in nodes.links()}
    assert hrefs == {"/runs/x/evidence/r1", "/runs/x/evidence/r9"}


def test_plain_values_are_not_links() -> None:
    nodes = Nodes(str(render_json_tree(DOCUMENT, evidence_href=href)))
    assert nodes.links() == []


def test_readable_view_shows_lists_of_flat_objects_as_tables() -> None:
    document = {
        "title": "Backlog",
        "items": [
            {"title": "Export", "priority": "P0", "row_ids": ["r1", "r2"]},
            {"title": "<b>Login</b>", "priority": "P1", "row_ids": ["r3"], "extra": 1},
        ],
        "empty": [],
    }
    html = str(
        render_json_readable(
            document,
            findings=[finding(1, "items[1].priority")],
            evidence_href=href,
            id_paths=["items.row_ids"],
        )
    )
    nodes = Nodes(html)
    headers = [t for t, _ in nodes.tags if t == "th"]
    assert len(headers) == 4  # title, priority, row_ids, extra
    assert "<b>Login</b>" in "".join(nodes.text) and "b" not in {t for t, _ in nodes.tags}
    assert {a["href"] for a in nodes.links()} == {f"/runs/x/evidence/r{i}" for i in (1, 2, 3)}
    assert "finding-1" in nodes.by_id
    assert "(none)" in "".join(nodes.text)
    assert "Backlog" in "".join(nodes.text)


def test_readable_view_falls_back_to_the_tree() -> None:
    document = {"groups": [{"name": "a", "members": [{"id": 1}]}]}
    html = str(render_json_readable(document, evidence_href=href))
    assert "json-tree" in html and "<table" not in html
