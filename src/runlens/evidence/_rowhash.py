"""Row hashes (SPEC section 5), computed a batch of rows at a time.

`row_hash` is SHA-256 of the UTF-8 bytes of
`json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`. `RowHasher`
produces the very same bytes without a dict or a `json.dumps` call per row, because per-row
Python work is what makes a naive build several times slower than reading the CSV.

How a batch is done: the hasher is given each column's values as JSON pieces (`_columns`
makes them while storing the rows): either JSON string literals, escaped by the json module's
own encoder, or raw values that need no escaping at all (no `"`, `\\` or control character),
which the separators then quote. Keys, separators and pieces of all rows are laid out in one
list in sorted-key order, joined, encoded once and split into rows at `\\n`: a JSON string
literal never holds a raw newline and a raw piece holds none, so the split is exact and no
value needs a fallback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Final

_DIGEST: Final = type(hashlib.sha256()).digest
_SHA256: Final = hashlib.sha256
DIGEST_SIZE: Final = 32
#: Row layouts (a batch size and which columns are quoted) kept for reuse.
_LAYOUTS_KEPT: Final = 8


class RowHasher:
    """Computes row hashes for rows of one header, a batch at a time.

    `digests(pieces, quoted)` returns the raw 32-byte digests of the rows, concatenated in
    order, from each column's JSON pieces; `digests_of_rows(rows)` does the same from plain
    rows. Every row must have exactly `len(columns)` values; the caller checks that first.
    """

    __slots__ = ("_keys", "_layouts", "_order", "columns")

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        #: Column positions in sorted-key order (the order `sort_keys` writes them in).
        self._order = tuple(sorted(range(len(self.columns)), key=self.columns.__getitem__))
        self._keys = tuple(encode_basestring(self.columns[column]) for column in self._order)
        self._layouts: dict[tuple[int, tuple[bool, ...]], list[str]] = {}

    def digests(self, pieces: Sequence[Sequence[str]], quoted: Sequence[bool]) -> bytes:
        """Concatenated SHA-256 digests of the rows' canonical JSON, in row order.

        `pieces[c]` are column c's values as JSON: string literals if `quoted[c]`, else raw
        values holding no character JSON escapes.
        """
        count = len(pieces[0]) if pieces else 0
        if not count:
            return b""
        layout = self._layout(count, tuple(quoted[column] for column in self._order)).copy()
        stride = 2 * len(self._order) + 1
        for rank, column in enumerate(self._order):
            layout[2 * rank + 1 :: stride] = pieces[column]
        rows = "".join(layout).encode("utf-8").split(b"\n")
        rows.pop()  # after the last row's newline
        # map() keeps the per-row work in C: no Python frame per row.
        return b"".join(map(_DIGEST, map(_SHA256, rows)))

    def digests_of_rows(self, rows: Sequence[Sequence[str]]) -> bytes:
        """`digests` for plain rows (every value escaped by the json module)."""
        if not rows:
            return b""
        columns = [list(map(encode_basestring, values)) for values in zip(*rows, strict=True)]
        return self.digests(columns, [True] * len(columns))

    def _layout(self, count: int, in_order: tuple[bool, ...]) -> list[str]:
        """`count` rows' separators, with a slot for each value: what goes before each value
        (closing the previous raw value, opening a raw one) and after the last,
        `{"a":"` ... `","b":` ... `}` + newline. The last few made are kept."""
        key = (count, in_order)
        layout = self._layouts.get(key)
        if layout is None:
            unit: list[str] = []
            previous_raw = False
            for rank, raw_key in enumerate(self._keys):
                raw = not in_order[rank]
                opening = "{" if rank == 0 else ","
                unit += [_quote(previous_raw) + opening + raw_key + ":" + _quote(raw), ""]
                previous_raw = raw
            unit.append(_quote(previous_raw) + "}\n")
            layout = unit * count
            if len(self._layouts) >= _LAYOUTS_KEPT:
                del self._layouts[next(iter(self._layouts))]  # the oldest
            self._layouts[key] = layout
        return layout


def _quote(raw: bool) -> str:
    """The quote a raw piece needs on each side (a JSON string literal brings its own)."""
    return '"' if raw else ""
