"""A JSON deliverable as HTML: a tree whose every node is anchored at its path.

Paths are written as the validators write them (`items[3].sentiment`, SPEC section 6), so a
finding's `path` and a citation's `location` name a node directly: the node carries the path
as its `id`, a finding is marked at its node (at the nearest node that exists when the path
names something missing, such as an absent required field), and a value a citation points at
(a quote, a cited id) links to the evidence page of its row. Every string from the document
is escaped. `render_json_readable` is the reader's version: lists of flat objects become
tables, everything else the same tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from runlens.store.rows import CitationRow, FindingRow
from runlens.ui.markdown import findings_note

_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
ROOT_ID = "json-root"


def child_path(location: str, key: str | int) -> str:
    """`items` + 3 -> `items[3]`; `items[3]` + `sentiment` -> `items[3].sentiment`."""
    if isinstance(key, int):
        return f"{location}[{key}]"
    return f"{location}.{key}" if location else key


def path_parts(path: str) -> list[str | int]:
    """`items[3].sentiment` -> ["items", 3, "sentiment"]."""
    return [int(i) if i else name for i, name in _PART.findall(path)]


def nearest_existing(document: Any, path: str) -> str:
    """The path itself when the document has a node there, else its nearest ancestor that
    exists (`""`, the document, at worst)."""
    location = ""
    node = document
    for part in path_parts(path):
        in_list = isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node)
        in_object = isinstance(part, str) and isinstance(node, dict) and part in node
        if not (in_list or in_object):
            break
        node = node[part]
        location = child_path(location, part)
    return location


def anchor_id(path: str) -> str:
    """The HTML id of the node at `path` (the document itself has one of its own)."""
    return path or ROOT_ID


@dataclass
class _Marks:
    """What is shown on the nodes: findings by node path, citations by location."""

    evidence_href: Callable[[str], str]
    findings: dict[str, list[FindingRow]] = field(default_factory=dict)
    citations: dict[str, list[CitationRow]] = field(default_factory=dict)
    cited_ids: dict[str, str] = field(default_factory=dict)
    id_paths: frozenset[str] = frozenset()
    #: Row id -> how a newer input changed it: links to these rows are marked stale.
    stale: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        document: Any,
        findings: Sequence[FindingRow],
        citations: Sequence[CitationRow],
        evidence_href: Callable[[str], str],
        id_paths: Iterable[str] = (),
        stale: Mapping[str, str] | None = None,
    ) -> _Marks:
        marks = cls(evidence_href, id_paths=frozenset(id_paths), stale=dict(stale or {}))
        for finding in findings:
            node = nearest_existing(document, finding.path)
            marks.findings.setdefault(node, []).append(finding)
        for citation in citations:
            marks.citations.setdefault(citation.location, []).append(citation)
            status = marks.cited_ids.get(citation.row_id)
            if status != "failed":
                marks.cited_ids[citation.row_id] = citation.status
        return marks

    def names_row(self, path: str, value: Any) -> str | None:
        """The status class of a link from the string at `path` to the row it names: a row
        this artifact cites, or a value of a field the contract cites rows with."""
        if not isinstance(value, str):
            return None
        if value in self.cited_ids:
            return self.cited_ids[value]
        return "plain" if dotted(path) in self.id_paths else None

    def stale_note(self, row_id: str) -> str:
        """The visible mark of a link to a row a newer input changed; "" otherwise."""
        change = self.stale.get(row_id)
        if change is None:
            return ""
        return str(
            Markup(
                ' <span class="cite-stale" data-stale-row="{}" data-stale-change="{}">'
                "stale: row {} {} in the newer file</span>"
            ).format(row_id, change, row_id, change)
        )


def dotted(path: str) -> str:
    """A concrete path as the contract's rule path: `items[3].row_ids[0]` -> `items.row_ids`."""
    return ".".join(part for part in path_parts(path) if isinstance(part, str))


def render_json_tree(
    document: Any,
    *,
    findings: Sequence[FindingRow] = (),
    citations: Sequence[CitationRow] = (),
    evidence_href: Callable[[str], str],
    id_paths: Iterable[str] = (),
    stale: Mapping[str, str] | None = None,
) -> Markup:
    """The document as a nested list, each node's `id` its path, findings and citations shown
    at their nodes; links to the rows in `stale` (row id -> change) marked stale."""
    marks = _Marks.of(document, findings, citations, evidence_href, id_paths, stale)
    body = "".join(_node(None, document, "", marks))
    return Markup(f'<div class="json-tree"><ul class="jroot">{body}</ul></div>')


def render_json_readable(
    document: Any,
    *,
    findings: Sequence[FindingRow] = (),
    citations: Sequence[CitationRow] = (),
    evidence_href: Callable[[str], str],
    id_paths: Iterable[str] = (),
    stale: Mapping[str, str] | None = None,
) -> Markup:
    """The reader's view: a list of flat objects as a table (top level, or under a top-level
    key), scalar fields as a definition list, anything else as the tree."""
    marks = _Marks.of(document, findings, citations, evidence_href, id_paths, stale)
    if _is_flat_list(document):
        return Markup(_table(document, "", marks))
    if not isinstance(document, dict):
        return render_json_tree(
            document,
            findings=findings,
            citations=citations,
            evidence_href=evidence_href,
            id_paths=id_paths,
            stale=stale,
        )
    parts: list[str] = [findings_note(marks.findings.get("", []), aside=False)]
    scalars = {k: v for k, v in document.items() if not isinstance(v, dict | list)}
    if scalars:
        rows = "".join(
            f"<dt>{escape(key)}</dt><dd>{_leaf_value(value, key, marks)}</dd>"
            for key, value in scalars.items()
        )
        parts.append(f'<dl class="json-fields">{rows}</dl>')
    for key, value in document.items():
        if key in scalars:
            continue
        parts.append(f'<h3 class="json-key">{escape(key)}</h3>')
        if _is_flat_list(value) or value == []:
            parts.append(findings_note(marks.findings.get(key, []), aside=False))
            shown = _table(value, key, marks) if value else '<p class="muted">(none)</p>'
            parts.append(shown)
        else:
            inner = "".join(_node(None, value, key, marks, anchored=False))
            parts.append(f'<div class="json-tree"><ul class="jroot">{inner}</ul></div>')
    return Markup("".join(parts))


def _node(
    key: str | int | None, value: Any, path: str, marks: _Marks, *, anchored: bool = True
) -> Iterator[str]:
    """One `<li>`: the key, then the value (a nested list for objects and arrays)."""
    classes = ["jnode"]
    notes = findings_note(marks.findings.get(path, []), aside=False)
    if notes:
        classes.append("has-finding")
    label = "" if key is None else _key_html(key)
    anchor = f' id="{escape(anchor_id(path))}"' if anchored else ""
    if isinstance(value, dict | list):
        children = list(_children(value, path, marks, anchored))
        size = f"{{{len(value)}}}" if isinstance(value, dict) else f"[{len(value)}]"
        summary = f'{label}<span class="jsize">{size}</span>'
        if not children:
            yield f'<li class="{" ".join(classes)}"{anchor}>{summary}{notes}</li>'
            return
        yield (
            f'<li class="{" ".join(classes)}"{anchor}><details open><summary>{summary}</summary>'
            f"{notes}<ul>{''.join(children)}</ul></details></li>"
        )
        return
    classes.append("jleaf")
    leaf = _leaf_value(value, path, marks)
    yield f'<li class="{" ".join(classes)}"{anchor}>{label}{leaf}{notes}</li>'


def _children(
    value: dict[str, Any] | list[Any], path: str, marks: _Marks, anchored: bool
) -> Iterator[str]:
    items: Iterator[tuple[str | int, Any]] = (
        iter(value.items()) if isinstance(value, dict) else enumerate(value)
    )
    for key, child in items:
        yield from _node(key, child, child_path(path, key), marks, anchored=anchored)


def _key_html(key: str | int) -> str:
    if isinstance(key, int):
        return f'<span class="jindex">{key}</span> '
    return f'<span class="jkey">{escape(key)}</span>: '


def _leaf_value(value: Any, path: str, marks: _Marks) -> str:
    """A scalar as JSON text, linked to its row when a citation points at it or it is an id
    this artifact cites."""
    shown = escape(json.dumps(value, ensure_ascii=False))
    kind = _kind(value)
    cited = marks.citations.get(path, [])
    if cited:
        return "".join(_citation_links(cited, shown, kind, marks, path))
    status = marks.names_row(path, value)
    if status is not None:
        href = escape(marks.evidence_href(value))
        stale = " stale" if value in marks.stale else ""
        link = f'<a class="jstr cite-id cite-{status}{stale}" href="{href}">{shown}</a>'
        return link + marks.stale_note(value)
    return f'<span class="{kind}">{shown}</span>'


def _citation_links(
    cited: list[CitationRow], shown: Markup, kind: str, marks: _Marks, path: str
) -> Iterator[str]:
    """The value linked to the row it cites (further rows it cites as links of their ids).
    A failed citation shows its reason, unless a finding at the same node already does."""
    noted = path in marks.findings
    first, rest = cited[0], cited[1:]
    yield _link(first, shown, kind, marks, noted)
    for row in rest:
        yield " " + _link(row, escape(row.row_id), "jref", marks, noted)


def _link(row: CitationRow, shown: Markup | str, kind: str, marks: _Marks, noted: bool) -> str:
    link = _citation_link(row, shown, kind, marks, noted)
    return link + marks.stale_note(row.row_id)


def _citation_link(
    row: CitationRow, shown: Markup | str, kind: str, marks: _Marks, noted: bool
) -> str:
    href = marks.evidence_href(row.row_id)
    if row.row_id in marks.stale:
        kind = f"{kind} stale"
    if row.status == "verified":
        title = f"verified quote of row {row.row_id}" if row.quote else f"row {row.row_id}"
        return str(
            Markup(
                '<a class="{} cite cite-verified" id="cite-{}" href="{}" title="{}">{}</a>'
            ).format(kind, row.ordinal, href, title, shown)
        )
    reason = f"{row.code}: {row.reason}" if row.code else (row.reason or "not traced")
    link = Markup(
        '<a class="{} cite cite-failed" id="cite-{}" href="{}" title="failed: {}">{}</a>'
    ).format(kind, row.ordinal, href, reason, shown)
    if not noted:
        link += Markup(' <span class="cite-note">✕ {}</span>').format(reason)
    return str(link)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "jstr"
    if isinstance(value, bool) or value is None:
        return "jlit"
    return "jnum"


def _is_flat_list(value: Any) -> bool:
    """A non-empty list of objects whose fields are scalars or lists of scalars."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) for item in value)
        and all(_is_flat(field_value) for item in value for field_value in item.values())
    )


def _is_flat(value: Any) -> bool:
    if isinstance(value, list):
        return all(not isinstance(v, dict | list) for v in value)
    return not isinstance(value, dict)


def _table(items: list[Mapping[str, Any]], path: str, marks: _Marks) -> str:
    columns: list[str] = []
    for item in items:
        columns.extend(k for k in item if k not in columns)
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    rows: list[str] = []
    for index, item in enumerate(items):
        row_path = child_path(path, index)
        cells = "".join(
            f"<td>{_cell(item[c], child_path(row_path, c), marks) if c in item else ''}</td>"
            for c in columns
        )
        notes = findings_note(marks.findings.get(row_path, []), aside=False)
        row_class = ' class="has-finding"' if notes else ""
        note_row = f'<tr class="note-row"><td colspan="{len(columns)}">{notes}</td></tr>'
        rows.append(f"<tr{row_class}>{cells}</tr>")
        if notes:
            rows.append(note_row)
    return (
        f'<div class="table-wrap"><table class="json-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cell(value: Any, path: str, marks: _Marks) -> str:
    notes = findings_note(marks.findings.get(path, []), aside=False)
    if isinstance(value, list):
        shown = "<br>".join(_plain(v, child_path(path, i), marks) for i, v in enumerate(value))
        return shown + notes
    return _plain(value, path, marks) + notes


def _plain(value: Any, path: str, marks: _Marks) -> str:
    """A scalar for a table cell: strings without their JSON quotes, linked like a leaf."""
    if not isinstance(value, str):
        return _leaf_value(value, path, marks)
    shown = escape(value)
    cited = marks.citations.get(path, [])
    if cited:
        return "".join(_citation_links(cited, shown, "jtext", marks, path))
    status = marks.names_row(path, value)
    if status is not None:
        href = escape(marks.evidence_href(value))
        stale = " stale" if value in marks.stale else ""
        link = f'<a class="cite-id cite-{status}{stale}" href="{href}">{shown}</a>'
        return link + marks.stale_note(value)
    return str(shown)
