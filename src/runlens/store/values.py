"""The store's reversible value escapes, without SQLAlchemy: what `runlens.store.codec`'s column
types apply to every value written and read back (its docstring says why and how), and what a
reader of the SQLite file through the standard library (`runlens.store.reader`) applies alike.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from typing import Any, Final

#: The character that starts an escape (private use: no text means anything by it).
ESCAPE: Final = "\ue000"
#: What ends a value cut to fit its column, before the hash of the whole value.
CUT_MARK: Final = "…#"
_HASH_DIGITS = 16
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


def as_dict(value: Any) -> dict[str, Any]:
    """A JSON column's object (`{}` for anything else); one read back as text by an older
    driver is parsed first."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A JSON column's array (`[]` for anything else), parsed as `as_dict` parses."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, list) else []
