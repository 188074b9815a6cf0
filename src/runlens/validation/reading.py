"""Text as the Markdown parser reads it: the one normalisation every check of a document shares.

Before it parses anything, markdown-it (as CommonMark asks) reads a line end written as CR LF
or CR as LF and the NUL character as U+FFFD. A cell quoted in a Markdown document is read the
same way: a row holding `slow\\0 export` shows as `slow\ufffd export` to every reader of the
report. So the Markdown citation parse (`rendered.text_blocks`), the quote judge when it
checks a Markdown quote (`quotes.judge_quote(..., as_markdown=True)`), the figure checks and
any view that renders Markdown read text through `as_read`, and a quote is compared with its
row as both are read. `ReadText.written` maps an offset of the read text back to the text as
written, so a highlight still marks the row's own characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: What markdown-it's `normalize` core rule rewrites, and what into.
_NORMALISED = re.compile("\r\n?|\0")
_READ_AS = {"\r\n": "\n", "\r": "\n", "\0": "\ufffd"}


@dataclass(frozen=True)
class ReadText:
    """`text` as read, and for each of its offsets (and its end) the offset as written."""

    text: str
    starts: tuple[int, ...]

    def written(self, offset: int) -> int:
        """The offset in the written text of read offset `offset` (0 to `len(text)`)."""
        return self.starts[offset]


def read_markdown(text: str) -> str:
    """`text` as the Markdown parser reads it (module docstring)."""
    return _NORMALISED.sub(lambda match: _READ_AS[match.group()], text)


def as_read(text: str) -> ReadText:
    """`text` as the Markdown parser reads it, with the way back to the written offsets."""
    if _NORMALISED.search(text) is None:
        return ReadText(text, tuple(range(len(text) + 1)))
    pieces: list[str] = []
    starts: list[int] = []
    position = 0
    for match in _NORMALISED.finditer(text):
        pieces.append(text[position : match.start()])
        starts.extend(range(position, match.start()))
        pieces.append(_READ_AS[match.group()])
        starts.append(match.start())
        position = match.end()
    pieces.append(text[position:])
    starts.extend(range(position, len(text) + 1))
    return ReadText("".join(pieces), tuple(starts))
