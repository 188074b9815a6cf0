"""JSON encoding of records: `orjson` (UTF-8 bytes, C speed), with the json module behind it.

Every record is written as UTF-8 JSON with non-ASCII text as is (not `\\uXXXX`-escaped), so
secret redaction, which runs on the encoded text, sees secrets as they were. Values JSON has
no type for are written as `str(value)`. The few values orjson refuses (an integer wider than
64 bits, a non-string dict key it cannot convert, nesting deeper than 254 levels) are encoded
by the json module instead, exactly as before orjson was used.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_COMPACT = orjson.OPT_NON_STR_KEYS
_INDENTED = orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2

#: A lone surrogate (text from a tool or a hook, say) cannot be UTF-8: it is written as its
#: JSON escape (`\\ud800`), so the record stays valid UTF-8 and JSON and reads back the same.
_ESCAPED = "backslashreplace"

_FALLBACK = json.JSONEncoder(ensure_ascii=False, default=str)
_FALLBACK_INDENTED = json.JSONEncoder(ensure_ascii=False, default=str, indent=2)


def dumps_compact(value: Any) -> bytes:
    """One line of JSON (an `events.jsonl` line, `trace.json`), no newline at the end."""
    try:
        return orjson.dumps(value, default=str, option=_COMPACT)
    except orjson.JSONEncodeError:
        return _FALLBACK.encode(value).encode("utf-8", _ESCAPED)


def dumps_indented(value: Any) -> bytes:
    """A record meant to be read by people too (`run.json`, `manifest.json`): two-space indent."""
    try:
        return orjson.dumps(value, default=str, option=_INDENTED)
    except orjson.JSONEncodeError:
        return _FALLBACK_INDENTED.encode(value).encode("utf-8", _ESCAPED)
