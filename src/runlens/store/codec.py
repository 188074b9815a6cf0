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

import hashlib
import math
import re
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

#: The character that starts an escape (private use: no text means anything by it).
ESCAPE: Final = "\ue000"
#: What ends a value cut to fit its column, before the hash of the whole value.
CUT_MARK: Final = "…#"
_HASH_DIGITS = 16
_INT_RANGES: Final = {"Integer": (-(2**31), 2**31 - 1), "BigInteger": (-(2**63), 2**63 - 1)}
#: A character `escape_text` escapes: the escape itself, U+0000, a lone surrogate.
_NEEDS_ESCAPE: Final = re.compile("[\ue000\x00\ud800-\udfff]")


def escape_text(text: str) -> str:
    """`text` with no U+0000 and no lone surrogate, reversibly (`unescape_text`)."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    out: list[str] = []
    for char in text:
        if char == ESCAPE:
            out.append(ESCAPE + "e")
        elif char == "\x00":
            out.append(ESCAPE + "0")
        elif "\ud800" <= char <= "\udfff":
            out.append(f"{ESCAPE}s{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def unescape_text(text: str) -> str:
    """The text `escape_text` was given. An escape it cannot read (a value written by hand,
    one cut short) is kept as it is."""
    if ESCAPE not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        kind = text[index + 1] if char == ESCAPE and index + 1 < len(text) else ""
        if kind == "e":
            out.append(ESCAPE)
            index += 2
        elif kind == "0":
            out.append("\x00")
            index += 2
        elif kind == "s" and _is_hex(text[index + 2 : index + 6]):
            out.append(chr(int(text[index + 2 : index + 6], 16)))
            index += 6
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdef" for c in text)


def fit(text: str, length: int | None) -> str:
    """`text` (escaped) cut to `length` characters with `CUT_MARK` and a hash of the whole
    when it is longer; as it is otherwise."""
    if length is None or len(text) <= length:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    tail = CUT_MARK + digest
    keep = text[: max(length - len(tail), 0)]
    # Never end inside an escape: drop a started one (at most 5 characters back).
    start = keep.rfind(ESCAPE, max(len(keep) - 5, 0))
    if start != -1 and len(unescape_text(keep[start:])) == len(keep[start:]):
        keep = keep[:start]
    return (keep + tail)[:length]


def encode_json(value: Any) -> Any:
    """A JSON value every engine stores: strings and keys escaped, non-finite floats tagged."""
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{ESCAPE}f{value!r}"
    if isinstance(value, dict):
        return {escape_text(str(key)): encode_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_json(item) for item in value]
    return value


def decode_json(value: Any) -> Any:
    """The value `encode_json` was given (tuples come back as lists, keys as strings)."""
    if isinstance(value, str):
        if value.startswith(ESCAPE + "f") and value[2:] in ("nan", "inf", "-inf"):
            return float(value[2:])
        return unescape_text(value)
    if isinstance(value, dict):
        return {unescape_text(key): decode_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_json(item) for item in value]
    return value


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
