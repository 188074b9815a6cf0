"""What changed between two runs of one plugin, deliverable by deliverable (plugin-neutral).

JSON deliverables: every list of objects (the document itself, or a top-level field) is
matched item to item by identity (a string `id`, `key`, `name` or `title` field unique in
both runs, else the field the contract cites rows with, such as `items.row_id`, else the
position) and shown as items added, removed and changed, field by field; top-level fields
that are not such lists are compared whole. Markdown deliverables: sections (a heading and
what follows it up to the next heading) added, removed and changed, a changed one with a
short line diff. Other files: same bytes or not. Findings are counted by code in each run.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from markdown_it import MarkdownIt

from runlens.errors import UserError
from runlens.store.rows import ArtifactRow, RunDetail

#: Field names that identify an item, in the order they are tried.
IDENTITY_FIELDS = ("id", "key", "name", "title")
#: How many lines of a changed section's diff are shown.
DIFF_LINES = 40
_ABSENT: Any = object()

ChangeKind = Literal["added", "removed", "changed"]
#: Reads an artifact of a run: its bytes, or None when the run has no such file.
ArtifactReader = Callable[[RunDetail, str], bytes | None]


@dataclass(frozen=True)
class FieldChange:
    """One field whose value differs; `before`/`after` are None when the field is absent
    (`had_before`/`has_after` tell absent from null)."""

    name: str
    before: Any
    after: Any
    had_before: bool = True
    has_after: bool = True


@dataclass(frozen=True)
class ItemChange:
    """One item of a list added, removed or changed (with its changed fields)."""

    key: str
    kind: ChangeKind
    item: Any
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class ListDiff:
    """A list of objects compared item by item. `identity` is the field items were matched by,
    or None when they were matched by position."""

    path: str
    identity: str | None
    changes: tuple[ItemChange, ...]
    unchanged: int

    def count(self, kind: ChangeKind) -> int:
        return sum(1 for change in self.changes if change.kind == kind)


@dataclass(frozen=True)
class JsonDiff:
    fields: tuple[FieldChange, ...]
    lists: tuple[ListDiff, ...]

    @property
    def same(self) -> bool:
        return not self.fields and not any(diff.changes for diff in self.lists)


@dataclass(frozen=True)
class SectionChange:
    heading: str
    kind: ChangeKind
    diff: tuple[str, ...] = ()


@dataclass(frozen=True)
class MarkdownDiff:
    sections: tuple[SectionChange, ...]
    unchanged: int


@dataclass(frozen=True)
class ArtifactComparison:
    """One deliverable in either run. `note` says what could not be compared, or for other
    files whether the bytes are the same."""

    name: str
    label: str
    kind: Literal["json", "markdown", "other"]
    row_a: ArtifactRow | None
    row_b: ArtifactRow | None
    json: JsonDiff | None = None
    markdown: MarkdownDiff | None = None
    note: str | None = None


@dataclass(frozen=True)
class FindingCount:
    code: str
    a: int
    b: int

    @property
    def delta(self) -> int:
        return self.b - self.a


@dataclass(frozen=True)
class Comparison:
    a: RunDetail
    b: RunDetail
    artifacts: tuple[ArtifactComparison, ...]
    findings: tuple[FindingCount, ...]


def compare_runs(
    a: RunDetail,
    b: RunDetail,
    *,
    read: ArtifactReader,
    id_fields: Mapping[str, Sequence[str]] | None = None,
) -> Comparison:
    """Compare two runs of one plugin. UserError when their plugins differ.

    `id_fields` maps an artifact name to the dotted paths its contract cites rows with
    (`items.row_id`), used to match items that have no identity field of their own.
    """
    if a.plugin != b.plugin:
        raise UserError(
            f"runs {a.run_id} and {b.run_id} are of different plugins ({a.plugin} and "
            f"{b.plugin}): only runs of the same plugin can be compared"
        )
    rows_a = {row.name: row for row in a.artifacts}
    rows_b = {row.name: row for row in b.artifacts}
    names = list(rows_a) + [name for name in rows_b if name not in rows_a]
    fields = id_fields or {}
    artifacts = tuple(
        _compare_artifact(name, a, b, rows_a.get(name), rows_b.get(name), read, fields.get(name))
        for name in names
    )
    return Comparison(a, b, artifacts, finding_counts(a.findings_by_code, b.findings_by_code))


def finding_counts(a: Mapping[str, int], b: Mapping[str, int]) -> tuple[FindingCount, ...]:
    codes = sorted(set(a) | set(b))
    return tuple(FindingCount(code, a.get(code, 0), b.get(code, 0)) for code in codes)


@functools.lru_cache(maxsize=32)
def contract_id_fields(plugin_name: str) -> Mapping[str, tuple[str, ...]]:
    """Artifact name -> the dotted paths its contract cites rows with, from the installed
    plugin; empty when the plugin is not installed or does not load (items are then matched
    by their own identity fields or by position). Cached (read-only): the installed plugins
    do not change while the server runs."""
    from runlens.plugins.loader import load_plugin

    try:
        plugin = load_plugin(plugin_name)
    except Exception:  # a plugin that does not load must not break the comparison
        return MappingProxyType({})
    return MappingProxyType(
        {
            contract.name: tuple(
                dict.fromkeys(
                    [*contract.evidence_fields, *(quote.id for quote in contract.evidence_quotes)]
                )
            )
            for contract in plugin.contracts
        }
    )


def artifact_kind(name: str) -> Literal["json", "markdown", "other"]:
    """How a deliverable is read, by its file name: JSON, Markdown, or other bytes."""
    lowered = name.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".md", ".markdown")):
        return "markdown"
    return "other"


def _compare_artifact(
    name: str,
    a: RunDetail,
    b: RunDetail,
    row_a: ArtifactRow | None,
    row_b: ArtifactRow | None,
    read: ArtifactReader,
    id_fields: Sequence[str] | None,
) -> ArtifactComparison:
    row = row_b or row_a
    label = row.label if row is not None and row.label else name
    kind = artifact_kind(name)
    data_a = read(a, name) if row_a is not None else None
    data_b = read(b, name) if row_b is not None else None
    base = ArtifactComparison(name, label, kind, row_a, row_b)
    if data_a is None or data_b is None:
        missing = " and ".join(
            run.run_id for run, data in ((a, data_a), (b, data_b)) if data is None
        )
        return _with(base, note=f"no file in {missing}")
    if kind == "other":
        return _with(base, note="same bytes" if data_a == data_b else "the files differ")
    try:
        text_a, text_b = data_a.decode("utf-8-sig"), data_b.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _with(base, note="not UTF-8 text in one of the runs")
    if kind == "markdown":
        return _with(base, markdown=compare_markdown(text_a, text_b))
    try:
        document_a, document_b = json.loads(text_a), json.loads(text_b)
    except ValueError:
        return _with(base, note="not valid JSON in one of the runs")
    return _with(base, json=compare_json(document_a, document_b, id_fields or ()))


def _with(base: ArtifactComparison, **changes: Any) -> ArtifactComparison:
    return replace(base, **changes)


def compare_json(a: Any, b: Any, id_fields: Sequence[str] = ()) -> JsonDiff:
    """Two JSON documents: lists of objects item by item, other top-level fields whole."""
    if _object_list(a) and _object_list(b):
        return JsonDiff((), (compare_list("", a, b, _fields_for("", id_fields)),))
    if not isinstance(a, dict) or not isinstance(b, dict):
        same = a == b
        return JsonDiff(() if same else (FieldChange("(document)", a, b),), ())
    fields: list[FieldChange] = []
    lists: list[ListDiff] = []
    for key in list(a) + [k for k in b if k not in a]:
        before, after = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if before == after == []:
            continue
        if _object_list(before) and _object_list(after):
            lists.append(compare_list(key, before, after, _fields_for(key, id_fields)))
        elif before != after:
            fields.append(_field_change(key, before, after))
    return JsonDiff(tuple(fields), tuple(lists))


def _fields_for(list_path: str, id_fields: Sequence[str]) -> tuple[str, ...]:
    """The item fields of the dotted `id_fields` that sit directly in the list at `list_path`
    (`items.row_id` -> `row_id` for `items`; `row_id` for a document that is a list)."""
    prefix = f"{list_path}." if list_path else ""
    found = []
    for path in id_fields:
        rest = path[len(prefix) :] if path.startswith(prefix) else None
        if rest and "." not in rest:
            found.append(rest)
    return tuple(found)


def _object_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _field_change(name: str, before: Any, after: Any) -> FieldChange:
    return FieldChange(
        name,
        None if before is _ABSENT else before,
        None if after is _ABSENT else after,
        had_before=before is not _ABSENT,
        has_after=after is not _ABSENT,
    )


def identity_field(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], extra: Iterable[str] = ()
) -> str | None:
    """The first of `IDENTITY_FIELDS`, then of `extra`, whose values are strings unique within
    each list; None when there is none (items are then matched by position)."""
    for name in (*IDENTITY_FIELDS, *extra):
        if _identifies(a, name) and _identifies(b, name):
            return name
    return None


def _identifies(items: Sequence[Mapping[str, Any]], name: str) -> bool:
    values = [item.get(name) for item in items]
    return all(isinstance(v, str) for v in values) and len(set(values)) == len(values)


def compare_list(
    path: str,
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    id_fields: Iterable[str] = (),
) -> ListDiff:
    """Two lists of objects matched by identity (`identity_field`), else by position."""
    present = [items for items in (a, b) if items]
    identity = identity_field(present[0], present[-1], id_fields) if present else None
    if identity is None:
        keyed_a = {f"#{i}": item for i, item in enumerate(a)}
        keyed_b = {f"#{i}": item for i, item in enumerate(b)}
    else:
        keyed_a = {str(item[identity]): item for item in a}
        keyed_b = {str(item[identity]): item for item in b}
    changes: list[ItemChange] = []
    unchanged = 0
    for key, after in keyed_b.items():
        before = keyed_a.get(key)
        if before is None:
            changes.append(ItemChange(key, "added", after))
        elif before != after:
            names = list(before) + [k for k in after if k not in before]
            fields = tuple(
                _field_change(n, before.get(n, _ABSENT), after.get(n, _ABSENT))
                for n in names
                if before.get(n, _ABSENT) != after.get(n, _ABSENT)
            )
            changes.append(ItemChange(key, "changed", after, fields))
        else:
            unchanged += 1
    changes.extend(
        ItemChange(key, "removed", item) for key, item in keyed_a.items() if key not in keyed_b
    )
    return ListDiff(path, identity, tuple(changes), unchanged)


def sections(markdown: str) -> list[tuple[str, tuple[str, ...]]]:
    """(heading, lines) of each section: the text before the first heading (when it has any),
    then each heading with the lines up to the next heading. A heading met again is numbered
    (`Evidence (2)`), so each section has its own key."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    tokens = MarkdownIt("commonmark").parse(markdown)
    starts: list[tuple[int, str]] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            level = int(token.tag[1])
            starts.append((token.map[0], f"{'#' * level} {tokens[index + 1].content.strip()}"))
    found: list[tuple[str, tuple[str, ...]]] = []
    first = starts[0][0] if starts else len(lines)
    preamble = tuple(lines[:first])
    if any(line.strip() for line in preamble):
        found.append(("(before the first heading)", preamble))
    seen: dict[str, int] = {}
    for number, (start, title) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        seen[title] = seen.get(title, 0) + 1
        key = title if seen[title] == 1 else f"{title} ({seen[title]})"
        found.append((key, tuple(lines[start:end])))
    return found


def compare_markdown(a: str, b: str) -> MarkdownDiff:
    """Sections added, removed and changed (with up to `DIFF_LINES` lines of diff)."""
    before = dict(sections(a))
    after = dict(sections(b))
    changes: list[SectionChange] = []
    unchanged = 0
    for heading, lines in after.items():
        old = before.get(heading)
        if old is None:
            changes.append(SectionChange(heading, "added"))
        elif _trimmed(old) != _trimmed(lines):
            changes.append(SectionChange(heading, "changed", _diff(old, lines)))
        else:
            unchanged += 1
    changes.extend(SectionChange(h, "removed") for h in before if h not in after)
    return MarkdownDiff(tuple(changes), unchanged)


def _trimmed(lines: Sequence[str]) -> list[str]:
    return [line.rstrip() for line in lines if line.strip()]


def _diff(before: Sequence[str], after: Sequence[str]) -> tuple[str, ...]:
    """`- old line` / `+ new line`, the marker set apart from the line (`- > quote`)."""
    body = [
        f"{line[0]} {line[1:]}"
        for line in difflib.unified_diff(_trimmed(before), _trimmed(after), n=0, lineterm="")
        if not line.startswith(("---", "+++", "@@"))
    ]
    if len(body) > DIFF_LINES:
        body = [*body[:DIFF_LINES], f"… {len(body) - DIFF_LINES} more changed lines"]
    return tuple(body)
