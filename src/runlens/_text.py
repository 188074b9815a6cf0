"""Untrusted text made safe to write: lone UTF-16 surrogates replaced or escaped.

A JSON `"\\ud800"` escape with no partner decodes to a lone surrogate, which no UTF-8 encoder
accepts: left in a message, a record or a terminal line it makes the write fail. Text from a
model server is cleaned with `clean_text` before anything keeps it; JSON text shown as it was
sent keeps its meaning with `escape_surrogates`.
"""

from __future__ import annotations

import re

#: One UTF-16 surrogate code point (in a `str`, always a lone one or half of a split pair).
SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> tuple[str, int]:
    """`text` with each lone UTF-16 surrogate replaced by U+FFFD, and how many were.

    Two halves of a pair left apart (`"\\ud83d\\ude00"` decoded one by one) are joined into
    the character they encode rather than replaced.
    """
    if SURROGATE.search(text) is None:
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count("\ufffd") - text.count("\ufffd")


def escape_surrogates(text: str) -> str:
    """`text` with each surrogate as its JSON escape `\\udXXX`: for JSON text shown as is."""
    if SURROGATE.search(text) is None:
        return text
    return SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
