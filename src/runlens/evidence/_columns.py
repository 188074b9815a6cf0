"""A table's rows held column by column: compact, and ready to hash and to write as JSON.

Rows are kept in chunks of consecutive rows (one chunk per batch read). Within a chunk each
column is one string, its values joined by newlines (a "cell"). A column whose values hold
nothing JSON escapes (no `"`, `\\` or control character) is stored raw; any other is stored
as JSON string literals, escaped by the json module's own encoder (`"a\\nb"`). Either way the
newline separates values exactly: a raw value has none, and JSON escaping leaves none.

That is the form the row hashes (`_rowhash`) and the index file (`_storage`) need anyway, so
values are escaped once, while reading; they become Python strings again only when read
(`value`, `row`, `rows`, `column`). Memory is the table's text (one byte a character in
ASCII columns, two for most others) plus a few objects per chunk, nothing per row; the
digests of every row's canonical JSON (SPEC section 5) are kept alongside, 32 bytes a row.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain
from json import decoder as _json_decoder
from json.encoder import encode_basestring
from typing import Final

from runlens.evidence._rowhash import DIGEST_SIZE, RowHasher

#: ASCII bytes JSON escapes in a value (with `"` and `\\`): the C0 controls.
_CONTROL_BYTES: Final = bytes(range(32))
#: Decoded chunks kept for reading rows (pages read in order decode each chunk once).
_DECODED_KEPT: Final = 4
#: The json module's C string decoder (json.loads uses it); absent from typeshed's stubs.
_scanstring: Callable[[str, int], tuple[str, int]] = _json_decoder.scanstring  # type: ignore[attr-defined]


def encode_column(values: Sequence[str]) -> tuple[str, bool, Sequence[str]]:
    """(cell, quoted, pieces) for one column of a batch: the values joined by newlines, raw
    or as JSON string literals (`quoted`), and the pieces the cell was joined from."""
    cell = "\n".join(values)
    if _is_raw(cell, len(values)):
        return cell, False, values
    pieces = list(map(encode_basestring, values))
    return "\n".join(pieces), True, pieces


def _is_raw(cell: str, count: int) -> bool:
    """Whether the values joined into `cell` hold no character JSON escapes."""
    if '"' in cell or "\\" in cell or cell.count("\n") != count - 1:
        return False
    if cell.isascii():  # bytes: a C-level pass for the controls (newlines are separators)
        data = cell.encode("ascii")
        return len(data) - len(data.translate(None, _CONTROL_BYTES)) == count - 1
    return cell.replace("\n", "").isprintable()  # a control character is never printable


class _Chunk:
    """Rows `start .. start+count-1`: one cell per stored column, whether it is quoted, and
    the rows' digests (32 bytes each, in order)."""

    __slots__ = ("cells", "count", "digests", "quoted", "start")

    def __init__(
        self,
        start: int,
        count: int,
        cells: tuple[str, ...],
        quoted: tuple[bool, ...],
        digests: bytes,
    ) -> None:
        self.start = start
        self.count = count
        self.cells = cells
        self.quoted = quoted
        self.digests = digests

    def values(self, column: int) -> list[str]:
        return decode_cell(self.cells[column], self.quoted[column])

    def encoded_pieces(self, column: int) -> tuple[list[bytes], bool]:
        """The column's values as stored, in UTF-8: JSON string literals, or raw (False)."""
        return self.cells[column].encode("utf-8").split(b"\n"), self.quoted[column]


def decode_cell(cell: str, quoted: bool) -> list[str]:
    """The values a cell holds (see `encode_column`)."""
    if not quoted:
        return cell.split("\n")
    decoded: list[str] = json.loads("[" + cell.replace("\n", ",") + "]")
    return decoded


class Columns:
    """Rows of a table, column by column (see the module's docs); made by `ColumnsBuilder`.

    `names` are the table's columns; each row's digest (`digest`) is over all of them.
    """

    __slots__ = ("_chunks", "_current", "_decoded", "_offsets", "_starts", "names", "total")

    def __init__(self, names: tuple[str, ...], chunks: list[_Chunk]) -> None:
        self.names = names
        self._chunks = chunks
        self._starts = [chunk.start for chunk in chunks]
        self.total = sum(chunk.count for chunk in chunks)
        #: Per (chunk, column): where each value starts, for single values read at random.
        self._offsets: dict[tuple[int, int], array[int]] = {}
        #: The chunks last read row by row, decoded (a page may span two): number -> rows.
        self._decoded: dict[int, list[tuple[str, ...]]] = {}
        #: The last of them: (its first row, its rows), for rows read one by one in order.
        self._current: tuple[int, list[tuple[str, ...]]] = (0, [])

    def __len__(self) -> int:
        return self.total

    def position(self, name: str) -> int:
        """Where column `name` is among the stored ones (ValueError if it is not stored)."""
        return self.names.index(name)

    def value(self, row: int, column: int) -> str:
        """One value: row `row` (0-based), stored column `column`."""
        number = self._chunk_of(row)
        chunk = self._chunks[number]
        cell = chunk.cells[column]
        offsets = self._offsets.get((number, column))
        if offsets is None:
            lengths = accumulate(map(len, cell.split("\n")), initial=0)
            offsets = array("I" if len(cell) < 1 << 32 else "Q", lengths)
            self._offsets[number, column] = offsets
        local = row - chunk.start
        start = offsets[local] + local  # the newlines before it
        if chunk.quoted[column]:
            return _scanstring(cell, start + 1)[0]
        return cell[start : offsets[local + 1] + local]

    def digest(self, row: int) -> bytes:
        """Row `row`'s digest (the raw SHA-256 of its canonical JSON)."""
        chunk = self._chunks[self._chunk_of(row)]
        start = (row - chunk.start) * DIGEST_SIZE
        return chunk.digests[start : start + DIGEST_SIZE]

    def row(self, row: int) -> tuple[str, ...]:
        """One row's values, in stored-column order (rows read in order decode each chunk once)."""
        first, rows = self._current
        if 0 <= row - first < len(rows):
            return rows[row - first]
        number = self._chunk_of(row)
        return self._chunk_rows(number)[row - self._chunks[number].start]

    def rows(self, start: int, stop: int) -> list[tuple[str, ...]]:
        """Rows `start .. stop-1` (clipped to the table)."""
        stop = min(stop, self.total)
        found: list[tuple[str, ...]] = []
        while start < stop:
            number = self._chunk_of(start)
            chunk = self._chunks[number]
            local = start - chunk.start
            taken = self._chunk_rows(number)[local : local + stop - start]
            found += taken
            start += len(taken)
        return found

    def column(self, column: int) -> Iterator[str]:
        """Every value of a stored column, in row order (a chunk at a time, C-level)."""
        return chain.from_iterable(chunk.values(column) for chunk in self._chunks)

    def chunk_values(self, column: int) -> Iterator[list[str]]:
        """Per chunk, the values of a stored column (decoded a chunk at a time)."""
        return (chunk.values(column) for chunk in self._chunks)

    def cells(self, column: int) -> Iterator[tuple[str, bool]]:
        """Per chunk, a stored column's cell and whether it is quoted (see `decode_cell`)."""
        return ((chunk.cells[column], chunk.quoted[column]) for chunk in self._chunks)

    def encoded_pieces(self, column: int) -> Iterator[tuple[list[bytes], bool]]:
        """Per chunk, the column's values as stored, in UTF-8 (JSON string literals, or raw:
        False): what the index file holds, encoded a chunk at a time."""
        return (chunk.encoded_pieces(column) for chunk in self._chunks)

    def chunk_digests(self) -> Iterator[bytes]:
        """Per chunk, its rows' digests, concatenated."""
        return (chunk.digests for chunk in self._chunks)

    def chunk_sizes(self) -> Iterator[int]:
        return (chunk.count for chunk in self._chunks)

    def _chunk_of(self, row: int) -> int:
        if not 0 <= row < self.total:
            raise IndexError(f"row {row} is not in a table of {self.total} rows")
        return bisect_right(self._starts, row) - 1

    def _chunk_rows(self, number: int) -> list[tuple[str, ...]]:
        chunk = self._chunks[number]
        rows = self._decoded.get(number)
        if rows is None:
            rows = list(zip(*(chunk.values(n) for n in range(len(self.names))), strict=True))
            if len(self._decoded) >= _DECODED_KEPT:
                del self._decoded[next(iter(self._decoded))]  # the oldest
            self._decoded[number] = rows
        self._current = (chunk.start, rows)
        return rows


class ColumnsBuilder:
    """Collects a table's rows a batch at a time, hashing them on the way (`add`, `finish`).

    `columns` is the source's header; every column is stored and hashed.
    """

    __slots__ = ("_chunks", "_hasher", "_names", "_total")

    def __init__(self, columns: Sequence[str]) -> None:
        self._hasher = RowHasher(columns)
        self._names = tuple(columns)
        self._chunks: list[_Chunk] = []
        self._total = 0

    def add(self, rows: Sequence[Sequence[str]]) -> None:
        """Store and hash a batch of rows, each exactly as wide as the header."""
        if not rows:
            return
        encoded = [encode_column(values) for values in zip(*rows, strict=True)]
        digests = self._hasher.digests(
            [pieces for _, _, pieces in encoded], [quoted for _, quoted, _ in encoded]
        )
        cells = tuple(cell for cell, _, _ in encoded)
        quoted = tuple(is_quoted for _, is_quoted, _ in encoded)
        self._chunks.append(_Chunk(self._total, len(rows), cells, quoted, digests))
        self._total += len(rows)

    def __len__(self) -> int:
        return self._total

    def finish(self) -> Columns:
        return Columns(self._names, self._chunks)
