"""`runlens drift`: which claims of a run a newer file makes stale (SPEC section 16).

A claim is stale when it rests on a row the file added, removed or changed
(`runlens.sourcelock.compare`). Claims are found where the plugin's contracts say rows are
cited, never by a plugin's field names:

- quote: a citation in a Markdown deliverable (its contract's `citations`), from the run's
  record of the citations its last validation round verified (`runtime/citations.json`),
  with the line it is written on;
- item: an item of a JSON deliverable that cites the row through one of its contract's
  `evidence_fields` (an id, or a list of ids) or `evidence_quotes` (`id` beside the quote).
  The item is the object holding that field (`items[3]` for `items[3].evidence_ids`);
- figure: a number a report states (tied to its figure as the figure validator ties it,
  `runlens.validation.figure_ties`) whose figure depends on a changed row. A figure rule's
  figures are computed three times: as the run had them; from the new file (its index, and
  its rows for a rule reading `SOURCE_ROWS`); and from the run's deliverables without their
  stale items. A figure is stale when either of the last two differs from the first: the
  new data changes it, or it counts an item whose row changed (an item resting on a changed
  row may itself be wrong now, so what it counts is in doubt). A figure depending on none of
  them is not stale, even when other rows changed. A rule whose computation fails on the
  new data (a cited row removed, say) has every figure it states stale.

Each claim names its artifact, location (JSON path of the item, or `line N`), line (for
Markdown), the row and how it changed; a figure names every row it rests on (`row_ids`),
`row_id` the first. Deliverables changed since the run are named too (`changed_since_run`):
the run's citations record describes them as the run judged them.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from runlens.sourcelock.compare import Change, SourceComparison, compare_indexes

if TYPE_CHECKING:
    from runlens.contracts import ArtifactContract
    from runlens.evidence import EvidenceIndex
    from runlens.plugins.base import Plugin
    from runlens.validation.figure_rules import Figure, FigureRule

ClaimKind = Literal["quote", "item", "figure"]
#: How many of a figure's rows `as_json` lists (the count is always given).
_ROWS_SHOWN = 50
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class StaleClaim:
    """One claim of the run resting on a row that changed."""

    artifact: str
    location: str
    line: int | None
    row_id: str
    change: Change
    kind: ClaimKind
    #: Where exactly the row is cited (an item's field, a quote), or the figure's key.
    detail: str = ""
    #: Every row a figure rests on (a quote or an item: its one row).
    row_ids: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        rows = self.row_ids or (self.row_id,)
        return {
            "artifact": self.artifact,
            "location": self.location,
            "line": self.line,
            "row_id": self.row_id,
            "change": self.change,
            "kind": self.kind,
            "detail": self.detail,
            "row_ids": list(rows[:_ROWS_SHOWN]),
            "row_count": len(rows),
            "status": "stale",
        }


@dataclass(frozen=True, slots=True)
class DriftReport:
    comparison: SourceComparison
    stale: list[StaleClaim] = field(default_factory=list)
    changed_since_run: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "comparison": self.comparison.as_json(),
            "stale": [claim.as_json() for claim in self.stale],
            "stale_count": len(self.stale),
            "changed_since_run": list(self.changed_since_run),
        }


def find_drift(workspace: Path, file: Path, *, encoding: str | None = None) -> DriftReport:
    """Every claim of the run in `workspace` that `file` makes stale (module docstring).
    Raises UserError as `compare_source` does, and for a run whose plugin is not installed."""
    from runlens.plugins import load_plugin

    compared = compare_indexes(workspace, file, encoding=encoding)
    comparison = compared.comparison
    changes = comparison.change_of()
    if not changes or compared.run_index is None or compared.file_index is None:
        return DriftReport(comparison)
    plugin = load_plugin(str(compared.record.plugin))
    items = list(_item_claims(workspace, plugin.contracts, changes))
    quotes = list(_quote_claims(workspace, plugin.contracts, changes))
    figures = list(
        _figure_claims(workspace, plugin, compared.run_index, compared.file_index, changes, items)
    )
    return DriftReport(comparison, [*quotes, *items, *figures], _changed_since(workspace))


# -- items of JSON deliverables -------------------------------------------------------------


def _item_claims(
    workspace: Path, contracts: Iterable[ArtifactContract], changes: Mapping[str, Change]
) -> Iterator[StaleClaim]:
    from runlens.contracts.paths import walk

    for contract in contracts:
        paths = (*contract.evidence_fields, *(quote.id for quote in contract.evidence_quotes))
        if not paths:
            continue
        document = _json_document(workspace / contract.name)
        if document is None:
            continue
        seen: set[tuple[str, str]] = set()
        for path in paths:
            key = path.split(".")[-1]
            for match in walk(document, path):
                for row_id in _ids(match.value):
                    change = changes.get(row_id)
                    item = _item_of(match.location, key)
                    if change is None or (item, row_id) in seen:
                        continue
                    seen.add((item, row_id))
                    yield StaleClaim(
                        contract.name, item, None, row_id, change, "item", match.location
                    )


def _ids(value: Any) -> list[str]:
    """The row ids an evidence field holds: one id, or a list of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _item_of(location: str, key: str) -> str:
    """The item holding the field `key` at `location` (`items[3].ids` -> `items[3]`); `$`
    for a field of the document itself."""
    suffix = f".{key}"
    if location.endswith(suffix):
        return location[: -len(suffix)]
    return "$" if location == key else location


def _json_document(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # a model wrote it: anything goes
        return None


# -- Markdown citations -----------------------------------------------------------------------


def _quote_claims(
    workspace: Path, contracts: Iterable[ArtifactContract], changes: Mapping[str, Change]
) -> Iterator[StaleClaim]:
    from runlens.records.citations import read_citations
    from runlens.tools.workspace import Workspace

    markdown = {contract.name for contract in contracts if contract.citations is not None}
    if not markdown:
        return
    read = read_citations(workspace / Workspace.CITATIONS)
    for citation in read.citations:
        change = changes.get(citation.row_id)
        if change is None or citation.artifact not in markdown:
            continue
        yield StaleClaim(
            citation.artifact,
            citation.location,
            citation.line,
            citation.row_id,
            change,
            "quote",
            citation.quote or "",
        )


# -- figures --------------------------------------------------------------------------------


#: What a stale item's own values become when its figures are recomputed (`_doubted`).
_DOUBTED_TEXT = "\ufffdstale\ufffd"
_DOUBTED_SHIFT = 1_000_003


def _figure_claims(
    workspace: Path,
    plugin: Plugin,
    run_index: EvidenceIndex,
    file_index: EvidenceIndex,
    changes: Mapping[str, Change],
    items: list[StaleClaim],
) -> Iterator[StaleClaim]:
    id_keys = {
        contract.name: frozenset(
            path.split(".")[-1]
            for path in (*contract.evidence_fields, *(q.id for q in contract.evidence_quotes))
        )
        for contract in plugin.contracts
    }
    stale_items: dict[str, dict[str, dict[str, Change]]] = {}
    for claim in items:
        held = stale_items.setdefault(claim.artifact, {}).setdefault(claim.location, {})
        held[claim.row_id] = claim.change
    for rule in plugin.figure_rules:
        computed = _stale_figures(
            workspace, rule, run_index, file_index, changes, stale_items, id_keys
        )
        if computed is None or not computed[1]:
            continue
        original, stale = computed
        yield from _statements(workspace, plugin, rule, run_index, original, stale, changes)


def _stale_figures(
    workspace: Path,
    rule: FigureRule,
    run_index: EvidenceIndex,
    file_index: EvidenceIndex,
    changes: Mapping[str, Change],
    stale_items: Mapping[str, Mapping[str, Mapping[str, Change]]],
    id_keys: Mapping[str, frozenset[str]],
) -> tuple[dict[str, Figure], dict[str, tuple[str, ...]]] | None:
    """The rule's figures as the run computed them (by key), and for each stale one the
    rows making it stale; None when the rule computes nothing from the run's data.

    Computed again (1) from the new file: its index, and its rows for `SOURCE_ROWS`; (2)
    from the deliverables with their stale items in doubt: an item citing a removed row is
    left out (what it counts should not be counted), an item citing a changed row keeps its
    place but its own values (all but the fields citing rows) are replaced by others
    (`_doubted`): a figure that moves then depends on what the item says of the row, while a
    count of items (rows analysed) does not move. A figure either computation changes is
    stale."""
    from runlens.validation.sources import SOURCE_ROWS

    documents: dict[str, Any] = {}
    for name in rule.sources:
        document = (
            run_index.metadata_dicts() if name == SOURCE_ROWS else _json_document(workspace / name)
        )
        if document is None:
            return None
        documents[name] = document
    original = _compute(rule, documents, run_index)
    if original is None:
        return None
    stale: dict[str, tuple[str, ...]] = {}
    renewed_documents = dict(documents)
    if SOURCE_ROWS in documents:
        renewed_documents[SOURCE_ROWS] = file_index.metadata_dicts()
    renewed = _compute(rule, renewed_documents, file_index)
    _differing(original, renewed, tuple(changes), stale)
    doubted = dict(documents)
    rows: dict[str, None] = {}
    for name in rule.sources:
        held = stale_items.get(name)
        if held:
            rows.update((row_id, None) for item in held.values() for row_id in item)
            try:
                doubted[name] = _in_doubt(documents[name], held, id_keys.get(name, frozenset()))
            except RecursionError:  # nested too deep to copy: cannot say, so all are stale
                _differing(original, None, tuple(rows), stale)
                return original, stale
    if rows:
        _differing(original, _compute(rule, doubted, run_index), tuple(rows), stale)
    return original, stale


def _differing(
    original: Mapping[str, Figure],
    other: Mapping[str, Figure] | None,
    rows: tuple[str, ...],
    stale: dict[str, tuple[str, ...]],
) -> None:
    """Mark the figures of `original` that `other` computes differently (every one, when
    `other` could not be computed) as resting on `rows`."""
    for key, figure in original.items():
        again = None if other is None else other.get(key)
        if again is not None and again.exact == figure.exact:
            continue
        stale[key] = tuple(dict.fromkeys((*stale.get(key, ()), *rows)))


def _compute(
    rule: FigureRule, documents: Mapping[str, Any], index: EvidenceIndex
) -> dict[str, Figure] | None:
    """The rule's figures by key; None when its computation fails on these documents (a
    plugin's code, run on data it did not validate: any error means "cannot say")."""
    try:
        figures = rule.compute(dict(documents), index)  # read-only, as validators treat them
        return {figure.key: figure for figure in figures}
    except Exception:  # see the docstring
        return None


def _in_doubt(
    document: Any, items: Mapping[str, Mapping[str, Change]], id_keys: frozenset[str]
) -> Any:
    """`document` with its stale items (by location, `items[3]`) in doubt: left out when one
    of their rows was removed, else their values replaced (`_doubted`). The containers on
    the way to them are copied (shallow), the rest shared: `document` is left as it is, and
    a million items are not copied one by one."""
    owned: dict[int, Any] = {}
    root = _own(document, owned)
    removals: dict[int, tuple[list[Any], list[int]]] = {}
    for location, rows in items.items():
        holder, at = _place(root, location, owned)
        if holder is None or at is None:
            continue
        if "removed" in rows.values():
            removals.setdefault(id(holder), (holder, []))[1].append(at)
        elif isinstance(holder[at], dict):
            holder[at] = {
                key: value if key in id_keys else _doubted(value)
                for key, value in holder[at].items()
            }
    for holder, positions in removals.values():
        for at in sorted(set(positions), reverse=True):
            del holder[at]
    return root


def _own(node: Any, owned: dict[int, Any]) -> Any:
    """A shallow copy of a container, made once (a copy is its own copy)."""
    if not isinstance(node, dict | list):
        return node
    mine = owned.get(id(node))
    if mine is None:
        mine = owned[id(node)] = copy.copy(node)
        owned[id(mine)] = mine
    return mine


def _place(root: Any, location: str, owned: dict[int, Any]) -> tuple[list[Any] | None, int | None]:
    """The (copied) list holding the item at `location` (`items[3]`), and its position."""
    steps: list[str | int] = []
    for key, at in _STEP.findall(location):
        steps.append(key if key else int(at))
    if not steps or not isinstance(steps[-1], int):
        return None, None
    *path, last = steps
    node: Any = root
    for step in path:
        if not _holds(node, step):
            return None, None
        node[step] = _own(node[step], owned)
        node = node[step]
    if not isinstance(node, list) or not isinstance(last, int) or last >= len(node):
        return None, None
    return node, last


def _holds(node: Any, step: str | int) -> bool:
    if isinstance(step, str):
        return isinstance(node, dict) and step in node
    return isinstance(node, list) and step < len(node)


def _doubted(value: Any) -> Any:
    """Another value of the same type: what a figure counting this one would miss."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + _DOUBTED_SHIFT
    if isinstance(value, str):
        return _DOUBTED_TEXT
    if isinstance(value, list):
        return [_doubted(element) for element in value]
    if isinstance(value, dict):
        return {key: _doubted(element) for key, element in value.items()}
    return value


def _statements(
    workspace: Path,
    plugin: Plugin,
    rule: FigureRule,
    run_index: EvidenceIndex,
    original: Mapping[str, Figure],
    stale: Mapping[str, tuple[str, ...]],
    changes: Mapping[str, Change],
) -> Iterator[StaleClaim]:
    """The report's numbers tied to a stale figure, as the figure validator ties them (to
    all the rule's figures: which one a number states depends on the others too)."""
    from runlens.contracts.model import DEFAULT_QUOTE_MARKS
    from runlens.validation.figures import RowWords, check_figures

    try:
        markdown = (workspace / rule.artifact).read_bytes().decode("utf-8-sig", errors="replace")
    except OSError:
        return
    contract = plugin.contract(rule.artifact)
    marks = (
        contract.citations.quote_marks
        if contract is not None and contract.citations is not None
        else DEFAULT_QUOTE_MARKS
    )
    statements = check_figures(
        markdown,
        rule.sections,
        list(original.values()),
        marks,
        elsewhere=rule.everywhere,
        copied=RowWords(run_index),
    )
    for statement in statements:
        tied = [figure for figure in statement.tied if figure.key in stale]
        if not tied:
            continue
        rows = tuple(dict.fromkeys(row for figure in tied for row in stale[figure.key]))
        if not rows:
            continue
        yield StaleClaim(
            rule.artifact,
            f"line {statement.line}",
            statement.line,
            rows[0],
            changes.get(rows[0], "changed"),
            "figure",
            f"{statement.number.text} ({', '.join(figure.key for figure in tied)})",
            rows,
        )


def _changed_since(workspace: Path) -> list[str]:
    """The deliverables changed since the run (`runtime.recovery.workspace_changes`)."""
    from runlens.records.readers import read_manifest
    from runlens.runtime.recovery import load_run, workspace_changes
    from runlens.tools.workspace import Workspace

    manifest = read_manifest(workspace / Workspace.MANIFEST).view
    if manifest is None:
        return []
    return list(workspace_changes(workspace, load_run(workspace, settle=False).record, manifest))
