"""The Evidence Index in memory: every source row's id, row hash, original text and metadata
(its other columns).

Rows live in a `RowStore` (`_stores`) chosen by where the index came from: as read from the
source (the table's columns, ids by position), as loaded from its file (an id -> undecoded
line dict, `_storage`) or as given (`EvidenceItem`s). None of them holds an object per row
beyond the id (and its line), so building or loading a million rows stays cheap; `items` is a
read-only mapping view that makes `EvidenceItem`s on access.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.evidence import _storage
from runlens.evidence._ids import FROM_COLUMN, IdRule
from runlens.evidence._stores import (
    CSV_FORMAT,
    EvidenceItem,
    IndexHeader,
    ItemStore,
    Metadata,
    RowStore,
)


@dataclass(frozen=True, slots=True)
class QuoteSpan:
    """Where a quote sits: character offsets `[start, end)` into the NFC-normalised row text."""

    start: int
    end: int


class _Items(Mapping[str, EvidenceItem]):
    """`EvidenceIndex.items`: id -> EvidenceItem, in CSV order, built on access."""

    __slots__ = ("_store",)

    def __init__(self, store: RowStore) -> None:
        self._store = store

    def __getitem__(self, row_id: str) -> EvidenceItem:
        if not isinstance(row_id, str):
            raise KeyError(row_id)
        store = self._store
        return EvidenceItem(store.row_hash(row_id), store.text(row_id), store.metadata(row_id))

    def __iter__(self) -> Iterator[str]:
        return iter(self._store)

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, row_id: object) -> bool:
        return isinstance(row_id, str) and row_id in self._store


class EvidenceIndex:
    """Every row of one source table: id -> (row hash, original text, metadata). Read-only.

    Made by `build_evidence_index`, `SourceTable.evidence_index`, `EvidenceIndex.load` or
    `EvidenceIndex.from_items` (the constructor, taking a `RowStore`, is for those). Besides
    the SPEC fields it records the source's `columns`, its `format` (`csv` or `xlsx`), how
    the ids were made (`id_rule`: `column`, or `row-number` when the source has no id column
    and `id_column` is only the name the derived ids `row-<n>` go by), and for a CSV file the
    `encoding` it was read with (a Python codec name), how sure the detection was
    (`encoding_confidence`, 0 to 1) and how it chose (`encoding_method`: `bom`, `utf-8`,
    `nul-pattern`, `gb2312-characters`, `western-characters`, `charset-normalizer` or
    `given`) and the field `delimiter`; for a workbook the `sheet` read. `input_format` has
    all of that as a dict; `total_rows` counts the rows. Quotes are matched in Unicode NFC on
    both sides.
    """

    __slots__ = (
        "_store",
        "columns",
        "delimiter",
        "encoding",
        "encoding_confidence",
        "encoding_method",
        "format",
        "id_column",
        "id_rule",
        "items",
        "sheet",
        "source",
        "source_hash",
        "text_column",
        "total_rows",
    )

    def __init__(
        self,
        *,
        source: str,
        source_hash: str,
        id_column: str,
        text_column: str,
        store: RowStore,
        columns: Sequence[str] = (),
        encoding: str | None = None,
        encoding_confidence: float | None = None,
        encoding_method: str | None = None,
        delimiter: str | None = None,
        format: str = CSV_FORMAT,
        sheet: str | None = None,
        id_rule: IdRule = FROM_COLUMN,
    ) -> None:
        self.source = source
        self.source_hash = source_hash
        self.id_column = id_column
        self.text_column = text_column
        self.columns = tuple(columns)
        self.encoding = encoding
        self.encoding_confidence = encoding_confidence
        self.encoding_method = encoding_method
        self.delimiter = delimiter
        self.format = format
        self.sheet = sheet
        self.id_rule: IdRule = id_rule
        self.total_rows = len(store)
        self._store = store
        self.items: Mapping[str, EvidenceItem] = _Items(store)

    @classmethod
    def from_items(
        cls,
        items: Mapping[str, EvidenceItem],
        *,
        source: str,
        source_hash: str,
        id_column: str,
        text_column: str,
        **reading: Any,
    ) -> EvidenceIndex:
        """An index from ready-made items (tests, or indexes assembled by other tools);
        `reading` takes the constructor's other keywords (`columns`, `encoding`, `sheet`,
        `id_rule` ...)."""
        return cls(
            source=source,
            source_hash=source_hash,
            id_column=id_column,
            text_column=text_column,
            store=ItemStore(dict(items)),
            **reading,
        )

    @property
    def input_format(self) -> dict[str, str | float | None]:
        """How the source was read, everything a rebuild needs to read it the same way:
        `format`, `encoding`, `encoding_confidence`, `encoding_method`, `delimiter`, `sheet`,
        `id_column`, `text_column`, `id_rule` (None where they do not apply, or where an
        index written by an older version does not say)."""
        return {
            "format": self.format,
            "encoding": self.encoding,
            "encoding_confidence": self.encoding_confidence,
            "encoding_method": self.encoding_method,
            "delimiter": self.delimiter,
            "sheet": self.sheet,
            "id_column": self.id_column,
            "text_column": self.text_column,
            "id_rule": self.id_rule,
        }

    def __contains__(self, row_id: object) -> bool:
        return isinstance(row_id, str) and row_id in self._store

    def __len__(self) -> int:
        return len(self._store)

    def __repr__(self) -> str:
        return f"<EvidenceIndex {self.source!r}: {len(self)} rows>"

    def text(self, row_id: str) -> str:
        """The row's text column, unchanged. KeyError if the id is not in the index."""
        return self._store.text(row_id)

    def row_hash(self, row_id: str) -> str:
        """The row's hash (hex). KeyError if the id is not in the index."""
        return self._store.row_hash(row_id)

    def metadata(self, row_id: str) -> Metadata:
        """The row's other columns: name -> value as the CSV parser returned it, in source
        order, every column but the id and text columns (empty for an index an older version
        wrote). KeyError if the id is not in the index."""
        return self._store.metadata(row_id)

    @property
    def metadata_columns(self) -> tuple[str, ...]:
        """The columns each row's metadata holds, in source order."""
        keys = (self.id_column, self.text_column)
        return tuple(name for name in self.columns if name not in keys)

    def locate(self, row_id: str, quote: str) -> QuoteSpan | None:
        """Where `quote` occurs in the row's text, both in Unicode NFC; None if it does not.

        Offsets count characters of the NFC-normalised row text. The first occurrence wins.
        An empty quote matches at 0 (callers reject empty quotes before asking).
        KeyError if the id is not in the index.
        """
        text = unicodedata.normalize("NFC", self._store.text(row_id))
        needle = unicodedata.normalize("NFC", quote)
        start = text.find(needle)
        return None if start < 0 else QuoteSpan(start, start + len(needle))

    @classmethod
    def load(cls, path: Path) -> EvidenceIndex:
        """Read an index file written by `write` (or any JSON of the same shape).

        Raises EvidenceIndexError, naming the path, for a missing or unreadable file, bad
        JSON or the wrong shape. For files in the layout `write` produces, ids and structure
        are checked here and each row's text is decoded on first use; a row damaged inside
        its text raises EvidenceIndexError then.
        """
        header, store = _storage.load_index(path)
        return cls(store=store, **header)

    @property
    def header(self) -> IndexHeader:
        """Everything the index records besides its rows (what its file's header holds)."""
        return IndexHeader(
            source=self.source,
            source_hash=self.source_hash,
            id_column=self.id_column,
            text_column=self.text_column,
            columns=self.columns,
            encoding=self.encoding,
            encoding_confidence=self.encoding_confidence,
            encoding_method=self.encoding_method,
            delimiter=self.delimiter,
            format=self.format,
            sheet=self.sheet,
            id_rule=self.id_rule,
        )

    def write(self, path: Path) -> str:
        """Write the index as JSON (UTF-8), atomically; return the SHA-256 hex of its bytes."""
        return _storage.write_index(path, self.header, self._store)

    def sha256(self, header: IndexHeader | None = None) -> str:
        """The SHA-256 hex of the bytes `write` writes for this index, without writing them;
        with `header` (another index's), of these rows under that header: an index file with
        that digest holds exactly these rows, whatever its header says of how they were
        read."""
        return _storage.index_sha256(self.header if header is None else header, self._store)

    def rows(self) -> Iterator[tuple[str, str, str]]:
        """(row_id, row_hash, text) for every row, in CSV order."""
        return self._store.rows()

    def texts(self) -> Iterator[tuple[str, str]]:
        """(row_id, text) for every row, in CSV order: `rows` without the hashes."""
        return self._store.texts()

    def metadata_dicts(self) -> dict[str, dict[str, str]] | None:
        """Every row's metadata (`metadata_rows`) as a dict of its own, by id in CSV order;
        None when the index does not record it for every row (an older version wrote it)."""
        return self._store.metadata_dicts()

    def metadata_rows(self) -> Iterator[tuple[str, Metadata | None]]:
        """(row_id, metadata) for every row, in CSV order; None where the index does not
        record it (an index an older version wrote)."""
        return self._store.metadata_rows()


def read_input_format(path: Path) -> dict[str, str | float | None]:
    """How the source of the index file at `path` was read (`EvidenceIndex.input_format`),
    from the file's header line alone when it is laid out as `write` writes it."""
    return read_header_only(path).input_format


def read_header_only(path: Path) -> EvidenceIndex:
    """The index file at `path` with its header fields and no rows, from its header line
    alone when it is laid out as `write` writes it: what reading its source again needs.
    Raises EvidenceIndexError as `EvidenceIndex.load` does when the header is unreadable."""
    return EvidenceIndex(store=ItemStore({}), **_storage.read_header(path))
