"""Row hashes (SPEC section 5), computed a batch of rows at a time.

`row_hash` is SHA-256 of the UTF-8 bytes of
`json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`. `canonical_json`
below is that definition, word for word; `RowHasher` produces the very same bytes without a
dict or a `json.dumps` call per row, because per-row Python work is what makes a naive build
several times slower than reading the CSV.

How a batch is done: all rows are laid out in one list, key separators and values interleaved,
and joined into one string in which `\\x00` stands for every structural quote and `\\x01`
separates rows (keys go in raw, so they are escaped along with the values). JSON escaping
(ensure_ascii=False) touches only `\\`, `"` and characters below U+0020, so it is applied to
the encoded batch with a few `bytes.replace` calls; the `\\x00` stand-ins then become real
quotes and a split on `\\x01` gives each row's canonical bytes. That is exact only when no
value contains `\\x00` or `\\x01`: the caller says when a NUL may be present, and a `\\x01`
shows as a wrong row count after the split. Either way the batch falls back to
`canonical_json`, one row at a time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Final

_QUOTE: Final = "\x00"
_ROW_SEP: Final = "\x01"
#: Control characters JSON escapes, except the two stand-ins (deleted by translate's table).
_KEEP_CONTROLS: Final = bytes(range(2, 32))
_NOT_CONTROLS: Final = bytes(byte for byte in range(256) if byte not in _KEEP_CONTROLS)
_ESCAPES: Final = {byte: json.dumps(chr(byte))[1:-1].encode() for byte in _KEEP_CONTROLS}
_DIGEST: Final = type(hashlib.sha256()).digest
DIGEST_SIZE: Final = 32


def canonical_json(columns: Sequence[str], values: Sequence[str]) -> str:
    """The row's canonical JSON text, exactly as SPEC section 5 defines it."""
    row = dict(zip(columns, values, strict=True))
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class RowHasher:
    """Computes row hashes for rows of one header, a batch at a time.

    `digests(rows)` returns the raw 32-byte digests of the rows, concatenated in order. Every
    row must have exactly `len(columns)` values; the caller checks that first.
    """

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        width = len(self.columns)
        order = sorted(range(width), key=self.columns.__getitem__)
        self._width = width
        #: (slot in the interleaved list, column index) for each value, in sorted-key order.
        self._slots = tuple((2 * rank + 1, column) for rank, column in enumerate(order))
        keys = [self.columns[column] for column in order]
        q = _QUOTE
        self._first = "{" + q + keys[0] + q + ":" + q
        self._row_start = q + "}" + _ROW_SEP + self._first
        self._between = [q + "," + q + key + q + ":" + q for key in keys[1:]]
        self._templates: dict[int, list[str]] = {}

    def digests(self, rows: Sequence[Sequence[str]], *, may_contain_nul: bool = False) -> bytes:
        """Concatenated SHA-256 digests of the rows' canonical JSON, in row order."""
        if not rows:
            return b""
        pieces = None if may_contain_nul else self._canonical_batch(rows)
        if pieces is None:
            pieces = [canonical_json(self.columns, row).encode("utf-8") for row in rows]
        # map() keeps the per-row work in C: no Python frame per row.
        return b"".join(map(_DIGEST, map(hashlib.sha256, pieces)))

    def _canonical_batch(self, rows: Sequence[Sequence[str]]) -> list[bytes] | None:
        count = len(rows)
        layout = self._template(count).copy()
        columns = list(zip(*rows, strict=True))
        stride = 2 * self._width
        for slot, column in self._slots:
            layout[slot::stride] = columns[column]
        data = "".join(layout).encode("utf-8")
        data = _escape(data)
        pieces = data.replace(b"\x00", b'"').split(b"\x01")
        # A value holding \x01 would have split a row in two: let the exact path handle it.
        return pieces if len(pieces) == count else None

    def _template(self, count: int) -> list[str]:
        template = self._templates.get(count)
        if template is None:
            unit: list[str] = [self._row_start, ""]
            for between in self._between:
                unit += [between, ""]
            template = unit * count
            template[0] = self._first
            template.append(_QUOTE + "}")
            if len(self._templates) < 4:  # the full batch size and a few stragglers
                self._templates[count] = template
        return template


def _escape(data: bytes) -> bytes:
    """JSON-escape (ensure_ascii=False) every value and key in an encoded batch.

    In UTF-8 the bytes `\\`, `"` and 0x02-0x1f never occur inside a multi-byte character, so
    byte replacement is the same as escaping the characters.
    """
    if b"\\" in data:
        data = data.replace(b"\\", b"\\\\")
    if b'"' in data:
        data = data.replace(b'"', b'\\"')
    controls = data.translate(None, _NOT_CONTROLS)
    for byte in set(controls):
        data = data.replace(bytes((byte,)), _ESCAPES[byte])
    return data
