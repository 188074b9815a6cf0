"""Column codecs: every value that reaches the store is storable, on SQLite and PostgreSQL.

What a run records is untrusted (a model's answer, a CSV cell), and some of it no engine
stores as it is: PostgreSQL text and JSONB refuse U+0000, no UTF-8 driver encodes a lone
surrogate (U+D800–U+DFFF, which `json.loads` makes of `"\\ud800"`), JSONB refuses NaN and
Infinity, and `VARCHAR(n)` refuses a longer value. The column types here (`Text`, `Json`,
`Int`) pass values through a reversible escape, so what is read back equals what was written:

- `ESCAPE` (U+E000, a private-use character) starts an escape; itself is written
  `ESCAPE + "e"`, U+0000 `ESCAPE + "0"`, a lone surrogate `ESCAPE + "s" + 4 hex digits`.
  Escaping is code point by code point, so a substring (a search, a prefix) escapes to a
  substring of the escaped text.
- In JSON, strings and keys are escaped the same way, and a non-finite float becomes the
  string `ESCAPE + "f" + repr` (`"\\ue000fnan"`), which no escaped string can be.
- A text longer than its column (after escaping) is cut to fit and ends with `CUT_MARK` and
  the first 16 hex digits of the SHA-256 of the whole value: distinct long values stay
  distinct, and the same value always cuts the same way (a long run id still finds its run).
  That is the one lossy case.
- An integer outside its column's range is clamped to the range.
"""

from __future__ import annotations

from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from runlens.store.values import (
    CUT_MARK,
    ESCAPE,
    decode_json,
    encode_json,
    escape_text,
    fit,
    unescape_text,
)

__all__ = [
    "CUT_MARK",
    "ESCAPE",
    "Int",
    "Json",
    "Text",
    "decode_json",
    "encode_json",
    "escape_text",
    "fit",
    "unescape_text",
]

_INT_RANGES: Final = {"Integer": (-(2**31), 2**31 - 1), "BigInteger": (-(2**63), 2**63 - 1)}


class Text(TypeDecorator[str]):
    """`VARCHAR(length)` or `TEXT` holding any Python string (`escape_text`, `fit`)."""

    impl: TypeEngine[Any] | type[TypeEngine[Any]] = sa.Text
    cache_ok = True

    def __init__(self, length: int | None = None) -> None:
        super().__init__()
        self.length = length
        if length is not None:
            self.impl = sa.String(length)

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return fit(escape_text(str(value)), self.length)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else unescape_text(str(value))

    def coerce_compared_value(self, op: Any, value: Any) -> TypeEngine[Any]:
        return self  # a value compared with the column is escaped as the column's are


class Json(TypeDecorator[Any]):
    """A JSON document (JSONB on PostgreSQL) holding any value `json` can (`encode_json`)."""

    impl = sa.JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":  # the dialect is loaded only for a PostgreSQL store
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(sa.JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else encode_json(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else decode_json(value)


class Int(TypeDecorator[int]):
    """`INTEGER` (or `BIGINT` with `big`) clamping a value outside its range into it."""

    impl = sa.Integer
    cache_ok = True

    def __init__(self, *, big: bool = False) -> None:
        super().__init__()
        self.big = big

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        return dialect.type_descriptor(sa.BigInteger() if self.big else sa.Integer())

    def process_bind_param(self, value: Any, dialect: Dialect) -> int | None:
        if value is None:
            return None
        low, high = _INT_RANGES["BigInteger" if self.big else "Integer"]
        return min(max(int(value), low), high)

    def coerce_compared_value(self, op: Any, value: Any) -> TypeEngine[Any]:
        return self
