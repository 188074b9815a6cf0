"""What an Evidence Index holds, and the stores its rows live in.

`EvidenceIndex` (in `index`) is the read-only view; its rows live in a `RowStore` chosen by
where the index came from:

    TableStore   as read from the source: the table's own columns (`_columns.Columns`), the
                 ids by position (or derived from row numbers), a digest per row
    LineStore    as loaded from an index file: each item's undecoded line (`_storage`)
    ItemStore    as given: ready-made `EvidenceItem`s (small indexes, tests, other JSON)

None of them holds an object per row beyond the id (and, loaded, its line), so building or
loading a million rows stays cheap. Besides its hash and text, each row keeps its `metadata`:
every other column of the source (all but the id and text columns), as the CSV parser returned
them, by name in source order. `IndexHeader` is everything an index records besides its
rows, as the index file's header has it. This module imports nothing of the index's own, so
the file layer (`_storage`) and the view (`index`) both build on it.
"""

from __future__ import annotations

import binascii
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice, repeat
from json.encoder import encode_basestring
from typing import Final, TypedDict

from runlens.evidence import _records
from runlens.evidence._columns import Columns, decode_cell
from runlens.evidence._ids import ROW_NUMBER_ID, IdRule, row_number_ids
from runlens.evidence._rowhash import DIGEST_SIZE

#: `EvidenceIndex.format`: what kind of file the source is.
CSV_FORMAT: Final = "csv"
XLSX_FORMAT: Final = "xlsx"
#: Rows per `json_batches` batch for stores that are not chunked already.
_BATCH: Final = 4096


#: A row's metadata: its other columns' values by column name.
Metadata = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One source row as the index records it: its row hash, its text column unchanged, and
    its other columns (`metadata`: name -> value as the CSV parser returned it, in source
    order; the id and text columns are not among them)."""

    row_hash: str
    text: str
    metadata: Metadata = field(default_factory=dict)


class IndexHeader(TypedDict):
    """An index's fields besides its rows (the `EvidenceIndex` constructor's keywords)."""

    source: str
    source_hash: str
    id_column: str
    text_column: str
    columns: Sequence[str]
    encoding: str | None
    encoding_confidence: float | None
    encoding_method: str | None
    delimiter: str | None
    format: str
    sheet: str | None
    id_rule: IdRule


@dataclass(frozen=True, slots=True)
class JsonBatch:
    """Consecutive rows ready for the index file, in UTF-8: ids and texts as JSON string
    literals (`*_quoted`) or as raw values holding nothing JSON escapes; row hashes in hex;
    each row's metadata as a JSON object: `metadata` has one a row, or `metadata_parts`
    the pieces each row's object is the concatenation of (`object_parts`), so that a table's
    columns need no object of their own per row."""

    ids: Sequence[bytes]
    ids_quoted: bool
    hashes: Sequence[bytes]
    texts: Sequence[bytes]
    texts_quoted: bool
    metadata: Sequence[bytes]
    metadata_parts: Sequence[Sequence[bytes]] | None = None


class RowStore(ABC):
    """Storage of an index's rows, keyed by id, iterating in source order."""

    __slots__ = ()

    @abstractmethod
    def __contains__(self, row_id: object) -> bool: ...

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __iter__(self) -> Iterator[str]: ...

    @abstractmethod
    def text(self, row_id: str) -> str:
        """The row's text; KeyError for an id not in the store."""

    @abstractmethod
    def row_hash(self, row_id: str) -> str:
        """The row's hash (hex); KeyError for an id not in the store."""

    @abstractmethod
    def metadata(self, row_id: str) -> Metadata:
        """The row's other columns (name -> value); KeyError for an id not in the store."""

    @abstractmethod
    def rows(self) -> Iterator[tuple[str, str, str]]:
        """(id, row_hash, text) for every row, in source order."""

    def texts(self) -> Iterator[tuple[str, str]]:
        """(id, text) for every row, in source order: `rows` without the hashes."""
        return ((row_id, text) for row_id, _, text in self.rows())

    def metadata_rows(self) -> Iterator[tuple[str, Metadata | None]]:
        """(id, metadata) for every row, in source order; None for a row whose metadata is
        not recorded (an index an older version wrote)."""
        return ((row_id, self.metadata(row_id)) for row_id in self)

    def metadata_dicts(self) -> dict[str, dict[str, str]] | None:
        """Every row's metadata as a dict of its own, by id in source order; None when a row
        does not record it (`metadata_rows` yields None for it)."""
        rows: dict[str, dict[str, str]] = {}
        for row_id, metadata in self.metadata_rows():
            if metadata is None:
                return None
            rows[row_id] = dict(metadata)
        return rows

    def json_batches(self) -> Iterator[JsonBatch]:
        """Every row, in source order, a batch at a time, as the index file writes them."""
        rows = self.rows()
        while chunk := list(islice(rows, _BATCH)):
            ids, hashes, texts = zip(*chunk, strict=True)
            metadata = [_json_object(self.metadata(row_id)) for row_id in ids]
            hex_hashes = list(map(str.encode, hashes))
            yield JsonBatch(_json(ids), True, hex_hashes, _json(texts), True, metadata)


class ItemStore(RowStore):
    """Rows held as ready-made `EvidenceItem`s (small indexes, tests, generic JSON files);
    `unrecorded` are the ids of items read from a file that records no metadata for them."""

    __slots__ = ("_items", "_unrecorded")

    def __init__(
        self, items: dict[str, EvidenceItem], unrecorded: frozenset[str] = frozenset()
    ) -> None:
        self._items = items
        self._unrecorded = unrecorded

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def text(self, row_id: str) -> str:
        return self._items[row_id].text

    def row_hash(self, row_id: str) -> str:
        return self._items[row_id].row_hash

    def metadata(self, row_id: str) -> Metadata:
        return self._items[row_id].metadata

    def rows(self) -> Iterator[tuple[str, str, str]]:
        for row_id, item in self._items.items():
            yield row_id, item.row_hash, item.text

    def metadata_rows(self) -> Iterator[tuple[str, Metadata | None]]:
        for row_id, item in self._items.items():
            yield row_id, None if row_id in self._unrecorded else item.metadata


class TableStore(RowStore):
    """Rows as read from the source: texts, metadata and digests from the table's `Columns`.

    `positions` maps each id to its row (ids from a column: `id_at` is that column among the
    stored ones); None means ids derived from row numbers (`row-<n>` is row n-1), which need
    no mapping at all. Every stored column but those two is the rows' metadata.
    """

    __slots__ = ("_columns", "_id_at", "_metadata_at", "_positions", "_text_at")

    def __init__(
        self,
        columns: Columns,
        *,
        text_at: int,
        id_at: int | None = None,
        positions: dict[str, int] | None = None,
    ) -> None:
        if (positions is None) != (id_at is None):
            raise ValueError("ids from a column need the column and the positions")
        if positions is not None and len(positions) != len(columns):
            raise ValueError("one id per row expected")
        self._columns = columns
        self._text_at = text_at
        self._id_at = id_at
        self._positions = positions
        self._metadata_at = tuple(
            at for at in range(len(columns.names)) if at not in (text_at, id_at)
        )

    def __contains__(self, row_id: object) -> bool:
        if self._positions is not None:
            return row_id in self._positions
        return isinstance(row_id, str) and self._row_number(row_id) is not None

    def __len__(self) -> int:
        return len(self._columns)

    def __iter__(self) -> Iterator[str]:
        if self._positions is not None:
            return iter(self._positions)
        return map(ROW_NUMBER_ID.format, range(1, len(self._columns) + 1))

    def text(self, row_id: str) -> str:
        return self._columns.value(self._position(row_id), self._text_at)

    def row_hash(self, row_id: str) -> str:
        return self._columns.digest(self._position(row_id)).hex()

    def metadata(self, row_id: str) -> Metadata:
        values = self._columns.row(self._position(row_id))
        names = self._columns.names
        return {names[at]: values[at] for at in self._metadata_at}

    def rows(self) -> Iterator[tuple[str, str, str]]:
        ids = iter(self)
        texts = self._columns.chunk_values(self._text_at)
        for chunk_texts, digests in zip(texts, self._columns.chunk_digests(), strict=True):
            hashes = digests.hex("\n", DIGEST_SIZE).split("\n")  # one C call, not one a row
            yield from zip(islice(ids, len(chunk_texts)), hashes, chunk_texts, strict=True)

    def texts(self) -> Iterator[tuple[str, str]]:
        return zip(self, self._columns.column(self._text_at), strict=True)

    def metadata_rows(self) -> Iterator[tuple[str, Metadata | None]]:
        ids = iter(self)
        names = [self._columns.names[at] for at in self._metadata_at]
        columns = [self._columns.chunk_values(at) for at in self._metadata_at]
        for size in self._columns.chunk_sizes():
            values = zip(*(next(column) for column in columns), strict=True) if names else None
            for row_id in islice(ids, size):
                yield row_id, dict(zip(names, next(values), strict=True)) if values else {}

    def metadata_dicts(self) -> dict[str, dict[str, str]] | None:
        # `metadata_rows`' dicts (each a row's own), made and keyed at C speed: a column at
        # a time, each row's values zipped with the names.
        names = [self._columns.names[at] for at in self._metadata_at]
        if not names:
            return {row_id: {} for row_id in self}
        columns = [self._columns.column(at) for at in self._metadata_at]
        rows = map(dict, map(zip, repeat(names), zip(*columns, strict=True)))
        return dict(zip(self, rows, strict=True))

    def json_batches(self) -> Iterator[JsonBatch]:
        ids = self._id_pieces()
        texts = self._columns.encoded_pieces(self._text_at)
        metadata = self._metadata_parts()
        chunks = zip(texts, self._columns.chunk_digests(), metadata, strict=True)
        for (text_pieces, texts_quoted), digests, parts in chunks:
            row_ids, ids_quoted = next(ids)
            hashes = binascii.hexlify(digests, b"\n", DIGEST_SIZE).split(b"\n")
            yield JsonBatch(
                row_ids, ids_quoted, hashes, text_pieces, texts_quoted, (), metadata_parts=parts
            )

    def _metadata_parts(self) -> Iterator[list[Sequence[bytes]]]:
        """Per chunk, the parts of each row's metadata as a JSON object in UTF-8
        (`object_parts`), from the columns' stored pieces (no dict and no `json.dumps` per
        row)."""
        names = self._columns.names
        keys = [encode_basestring(names[at]).encode("utf-8") for at in self._metadata_at]
        columns = [self._columns.encoded_pieces(at) for at in self._metadata_at]
        for size in self._columns.chunk_sizes():
            yield object_parts(keys, [next(column) for column in columns], size)

    def _id_pieces(self) -> Iterator[tuple[list[bytes], bool]]:
        """Per chunk, the ids as the index file writes them, in UTF-8 (raw: False)."""
        if self._id_at is not None:
            yield from self._columns.encoded_pieces(self._id_at)
            return
        first = 1
        for size in self._columns.chunk_sizes():
            ids = "\n".join(row_number_ids(first, size))  # `row-<n>`: nothing to escape
            yield ids.encode("ascii").split(b"\n"), False
            first += size

    def _position(self, row_id: str) -> int:
        if self._positions is not None:
            return self._positions[row_id]
        position = self._row_number(row_id)
        if position is None:
            raise KeyError(row_id)
        return position

    def _row_number(self, row_id: str) -> int | None:
        """The position of a `row-<n>` id, None for anything else."""
        digits = row_id[4:]
        if not (row_id.startswith("row-") and digits.isdigit() and digits.isascii()):
            return None
        number = int(digits)
        if ROW_NUMBER_ID.format(number) != row_id or not 1 <= number <= len(self._columns):
            return None
        return number - 1


def table_store(data: Columns, id_column: str | None, text_column: str) -> TableStore | None:
    """The index's rows over a table's columns: ids from `id_column`, or from row numbers
    (None). None when an id is empty or blank, holds a control character or repeats."""
    text_at = data.position(text_column)
    if id_column is None:
        return TableStore(data, text_at=text_at)
    id_at = data.position(id_column)
    positions = dict(zip(data.column(id_at), range(len(data)), strict=True))
    if (
        len(positions) != len(data)
        or "" in positions
        or any(map(str.isspace, positions))
        or any(_has_control(cell, quoted) for cell, quoted in data.cells(id_at))
    ):
        return None
    return TableStore(data, text_at=text_at, id_at=id_at, positions=positions)


def _has_control(cell: str, quoted: bool) -> bool:
    """Whether an id in the cell holds a character ids must not contain (`_records`): a cell
    stored raw holds no C0 control, so in ASCII only DEL can be there."""
    if not quoted and cell.isascii():
        return "\x7f" in cell
    return _records.has_control(decode_cell(cell, quoted))


def object_parts(
    keys: Sequence[bytes], columns: Sequence[tuple[Sequence[bytes], bool]], count: int
) -> list[Sequence[bytes]]:
    """The parts of `count` JSON objects `{"<key>":<value>,...}`, one a row, from each key's
    column of values (JSON string literals, or raw values holding nothing JSON escapes:
    False): row n's object is the concatenation of every part's n-th piece."""
    if not keys:
        return [[b"{}"] * count]
    parts: list[Sequence[bytes]] = []
    closing = b""  # the quote that ends the previous raw value
    for rank, (key, (pieces, quoted)) in enumerate(zip(keys, columns, strict=True)):
        opening = b"" if quoted else b'"'
        parts.append([closing + (b"," if rank else b"{") + key + b":" + opening] * count)
        parts.append(pieces)
        closing = opening
    parts.append([closing + b"}"] * count)
    return parts


def _json_object(metadata: Metadata) -> bytes:
    return json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _json(values: Sequence[str]) -> list[bytes]:
    """The values as JSON string literals, in UTF-8."""
    return "\n".join(map(encode_basestring, values)).encode("utf-8").split(b"\n")
