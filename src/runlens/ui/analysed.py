"""What a run's deliverables say of each source row, for the rows page and the evidence page.

A plugin's contract declares the fields of its items that describe the row an item cites
(`ArtifactContract.row_fields`, e.g. `items.sentiment` beside `evidence_fields`
`items.row_id`); nothing here knows a field by name. A run's analysed rows are the items of
the first contract that declares such fields, one per row id, in the deliverable's order;
each field is held as a column of strings, so filtering 100,000 rows is one pass over a list
and a page decodes only its own rows' text and metadata from the Evidence Index. A run's
table is built once per version of the deliverable's file and the last few are kept.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runlens.contracts import ArtifactContract
from runlens.contracts.paths import split, walk
from runlens.evidence import EvidenceIndex
from runlens.ui.files import WorkspaceFileError, open_in_workspace

#: The largest deliverable read for its rows (a 100,000-row analysis is some tens of MB).
READ_LIMIT = 512 * 1024 * 1024
#: The most values of a field the rows page lists to choose from.
CHOICES_LISTED = 60
#: The query parameter prefix that filters by a metadata column: `meta.channel=app`.
METADATA_PREFIX = "meta."


@dataclass(frozen=True, slots=True)
class RowFields:
    """One contract's fields that describe a row: where its items are, the id's path inside
    an item, the fields' paths inside an item (their names), and the closed value sets the
    contract gives some of them."""

    artifact: str
    label: str
    items: tuple[str, ...]
    id_path: tuple[str, ...]
    names: tuple[str, ...]
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def row_fields_of(contract: ArtifactContract) -> RowFields | None:
    """The contract's row fields, with the evidence field that names the row; None when it
    declares none (or none sharing a list with an evidence field)."""
    for id_field in contract.evidence_fields if contract.row_fields else ():
        items = split(id_field)[:-1]
        inside = [split(path)[len(items) :] for path in contract.row_fields]
        if any(
            split(path)[: len(items)] != items or not keys
            for path, keys in zip(contract.row_fields, inside, strict=True)
        ):
            continue
        enums = contract.rules.enum_fields if contract.rules is not None else {}
        names = tuple(".".join(keys) for keys in inside)
        return RowFields(
            artifact=contract.name,
            label=contract.display_name,
            items=items,
            id_path=split(id_field)[len(items) :],
            names=names,
            choices={
                name: tuple(enums[path])
                for name, path in zip(names, contract.row_fields, strict=True)
                if path in enums
            },
        )
    return None


@functools.lru_cache(maxsize=32)
def declared_row_fields(plugin_name: str) -> tuple[RowFields, ...]:
    """The installed plugin's contracts that describe rows; empty when it does not load.
    Cached: installed plugins do not change while serving."""
    from runlens.plugins.loader import load_plugin

    try:
        plugin = load_plugin(plugin_name)
    except Exception:  # a plugin that does not load must not break the page
        return ()
    found = (row_fields_of(contract) for contract in plugin.contracts)
    return tuple(fields for fields in found if fields is not None)


def shown(value: Any) -> str:
    """A deliverable's value as text: a string as it is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


class AnalysedRows:
    """The rows one deliverable describes: ids in its order, each field a column of text.

    The rows' metadata columns are read from the Evidence Index the first time a filter
    needs them, all in one pass, and kept (by the index's source hash: metadata is the
    source's own)."""

    __slots__ = ("_metadata", "_positions", "columns", "fields", "ids")

    def __init__(self, fields: RowFields, document: Any) -> None:
        self.fields = fields
        positions: dict[str, int] = {}
        paths = [split(name) for name in fields.names]
        columns: list[list[str]] = [[] for _ in paths]
        for item in _items(document, fields.items):
            row_id = _value(item, fields.id_path)
            if not isinstance(row_id, str) or row_id in positions:
                continue  # the first item of a row describes it
            positions[row_id] = len(positions)
            for keys, column in zip(paths, columns, strict=True):
                column.append(shown(_value(item, keys)))
        self.ids = list(positions)
        self.columns = dict(zip(fields.names, columns, strict=True))
        self._positions = positions
        self._metadata: tuple[str, dict[str, list[str | None]]] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def describe(self, row_id: str) -> dict[str, str] | None:
        """The fields' values for the row, None when the deliverable has no item for it."""
        position = self._positions.get(row_id)
        if position is None:
            return None
        return {name: column[position] for name, column in self.columns.items()}

    def values(self, name: str) -> list[str] | None:
        """The distinct non-empty values of a field, its declared choices first; None when
        there are more than `CHOICES_LISTED` (free text, say: the page offers a text box)."""
        declared = self.fields.choices.get(name, ())
        seen = dict.fromkeys(v for v in self.columns[name] if v and v not in declared)
        if len(seen) + len(declared) > CHOICES_LISTED:
            return None
        return [*declared, *sorted(seen)]

    def select(
        self,
        fields: Mapping[str, str],
        metadata: Mapping[str, str],
        index: EvidenceIndex,
    ) -> list[int]:
        """Positions of the rows whose fields and metadata columns equal the values given."""
        positions: Sequence[int] = range(len(self.ids))
        for name, wanted in fields.items():
            column = self.columns[name]
            positions = [p for p in positions if column[p] == wanted]
        if metadata:
            known = self._metadata_columns(index)
            for name, wanted in metadata.items():
                values = known[name]
                positions = [p for p in positions if values[p] == wanted]
        return list(positions)

    def _metadata_columns(self, index: EvidenceIndex) -> dict[str, list[str | None]]:
        """Every metadata column of the analysed rows, in their order (None for a row the
        index does not have)."""
        if self._metadata is not None and self._metadata[0] == index.source_hash:
            return self._metadata[1]
        names = index.metadata_columns
        columns: dict[str, list[str | None]] = {name: [] for name in names}
        for row_id in self.ids:
            found = index.metadata(row_id) if row_id in index else {}
            for name, column in columns.items():
                column.append(found.get(name))
        self._metadata = (index.source_hash, columns)
        return columns


def _value(item: Any, keys: Sequence[str]) -> Any:
    """The value at `keys` in nested objects of an item; None where there is none."""
    for key in keys:
        if not isinstance(item, dict):
            return None
        item = item.get(key)
    return item


def _items(document: Any, path: tuple[str, ...]) -> list[Any]:
    """The elements of the list(s) at `path` (the document itself for an empty path)."""
    found = [match.value for match in walk(document, path) if match.found] if path else [document]
    return [item for value in found for item in (value if isinstance(value, list) else [value])]


#: Characters of a row's text the rows page shows.
SNIPPET_CHARS = 160


@dataclass(frozen=True, slots=True)
class ListedRow:
    """One row of the rows page: its id, the start of its text, the deliverable's fields
    for it and its metadata."""

    row_id: str
    snippet: str
    fields: dict[str, str]
    metadata: dict[str, str]


@dataclass(frozen=True, slots=True)
class RowsPage:
    """One page of a run's analysed rows, filtered: `matched` of `total` rows match."""

    total: int
    matched: int
    page: int
    pages: int
    rows: list[ListedRow]


class BadFilter(ValueError):
    """A query parameter that names neither a field nor a metadata column."""


def split_filters(
    params: Mapping[str, str], table: AnalysedRows, index: EvidenceIndex, reserved: Sequence[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The non-empty filters of a query: (field -> value, metadata column -> value).
    BadFilter, naming what can be filtered, for a parameter that is neither (`reserved`
    parameters, such as the page number, are skipped)."""
    fields: dict[str, str] = {}
    metadata: dict[str, str] = {}
    for name, value in params.items():
        if name in reserved or not value:
            continue
        column = name.removeprefix(METADATA_PREFIX)
        if name in table.fields.names:
            fields[name] = value
        elif name.startswith(METADATA_PREFIX) and column in index.metadata_columns:
            metadata[column] = value
        else:
            known = [*table.fields.names, *(METADATA_PREFIX + c for c in index.metadata_columns)]
            raise BadFilter(f"cannot filter by {name!r}; filters: {', '.join(known)}")
    return fields, metadata


def rows_page(
    table: AnalysedRows,
    index: EvidenceIndex,
    filters: tuple[dict[str, str], dict[str, str]],
    page: int,
    size: int,
    *,
    only: Collection[str] | None = None,
) -> RowsPage:
    """Page `page` (from 1) of `size` rows among those matching the filters (and, given
    `only`, among those row ids); only that page's rows are read from the index."""
    selected = table.select(filters[0], filters[1], index)
    if only is not None:
        selected = [position for position in selected if table.ids[position] in only]
    pages = max((len(selected) + size - 1) // size, 1)
    page = min(max(page, 1), pages)
    shown_rows = [
        _listed(table, index, table.ids[position])
        for position in selected[(page - 1) * size : page * size]
    ]
    return RowsPage(len(table), len(selected), page, pages, shown_rows)


def _listed(table: AnalysedRows, index: EvidenceIndex, row_id: str) -> ListedRow:
    known = row_id in index
    text = index.text(row_id) if known else ""
    snippet = text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"
    return ListedRow(
        row_id=row_id,
        snippet=snippet,
        fields=table.describe(row_id) or {},
        metadata=dict(index.metadata(row_id)) if known else {},
    )


@dataclass(frozen=True, slots=True)
class RowAnalysis:
    """What one deliverable says of a row: its label, name, and the fields' values."""

    artifact: str
    label: str
    fields: dict[str, str]


class AnalysisUnavailable(Exception):
    """The run's deliverable cannot be read for its rows; the message says why."""


class AnalysedTables:
    """Runs' analysed rows, the `capacity` most recent kept, rebuilt when the file changes."""

    def __init__(self, capacity: int = 4) -> None:
        self._capacity = capacity
        self._loaded: OrderedDict[tuple[str, str], tuple[tuple[int, int], AnalysedRows]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def table(self, workspace: Path, fields: RowFields) -> AnalysedRows:
        """The rows `fields.artifact` of the run in `workspace` describes."""
        try:
            opened = open_in_workspace(workspace, fields.artifact)
        except WorkspaceFileError as error:
            raise AnalysisUnavailable(f"{fields.artifact}: {error}") from None
        version = (opened.size, opened.mtime_ns)
        key = (os.fspath(workspace), fields.artifact)
        with self._lock:
            cached = self._loaded.get(key)
        if cached is not None and cached[0] == version:
            opened.close()
            return cached[1]
        if opened.size > READ_LIMIT:
            opened.close()
            raise AnalysisUnavailable(f"{fields.artifact} is {opened.size} bytes: too large")
        try:
            document = json.loads(b"".join(opened.chunks()))
        except ValueError as error:
            raise AnalysisUnavailable(f"{fields.artifact} is not valid JSON ({error})") from None
        table = AnalysedRows(fields, document)
        with self._lock:
            self._loaded[key] = (version, table)
            self._loaded.move_to_end(key)
            while len(self._loaded) > self._capacity:
                self._loaded.popitem(last=False)
        return table

    def analyses(self, workspace: Path, plugin: str, row_id: str) -> list[RowAnalysis]:
        """What each of the plugin's describing deliverables says of the row (those that
        cannot be read, or have no item for it, say nothing)."""
        found: list[RowAnalysis] = []
        for fields in declared_row_fields(plugin):
            try:
                described = self.table(workspace, fields).describe(row_id)
            except AnalysisUnavailable:
                continue
            if described is not None:
                found.append(RowAnalysis(fields.artifact, fields.label, described))
        return found


__all__ = [
    "METADATA_PREFIX",
    "AnalysedRows",
    "AnalysedTables",
    "AnalysisUnavailable",
    "BadFilter",
    "ListedRow",
    "RowAnalysis",
    "RowFields",
    "RowsPage",
    "declared_row_fields",
    "row_fields_of",
    "rows_page",
    "split_filters",
]
