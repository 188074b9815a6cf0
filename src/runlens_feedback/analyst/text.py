"""Language detection and clause splitting. Clauses are spans of the original string, so any
clause (or run of adjacent clauses) sliced from the text is a verbatim quote of it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from runlens_feedback.analyst.labels import Lang

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
# Chinese punctuation and !?; always end a clause; "." and "," only when not inside a number
# (3.5, 1,000); newlines too. Runs of separators count as one boundary.
_SEPARATOR = re.compile(r"(?:[。！？；，…\n\r!?;]|(?<!\d)[.,]|[.,](?!\d))+")
_SENTENCE_END = frozenset("。！？!?.;；\n\r…")


@dataclass(frozen=True, slots=True)
class Clause:
    """A clause of a text: `text[start:end]`, with no surrounding whitespace."""

    start: int
    end: int
    #: The separator run that follows it ("" at the end of the text).
    separator: str

    @property
    def ends_sentence(self) -> bool:
        return not self.separator or any(ch in _SENTENCE_END for ch in self.separator)

    @property
    def exclaims(self) -> bool:
        return "!" in self.separator or "！" in self.separator

    @property
    def asks(self) -> bool:
        return "?" in self.separator or "？" in self.separator


def detect_language(text: str) -> Lang:
    """`zh` when the text has at least as many CJK characters as Latin words, else `en`.

    A text with neither (digits, emoji, punctuation) counts as `en`.
    """
    cjk = len(_CJK.findall(text))
    if cjk == 0:
        return "en"
    return "zh" if cjk >= len(_LATIN_WORD.findall(text)) else "en"


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow `[start, end)` so it neither begins nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_clauses(text: str) -> list[Clause]:
    """Split on 。！？；，,.!?; newlines (and …), keeping only clauses with visible text."""
    clauses: list[Clause] = []
    position = 0
    for match in _SEPARATOR.finditer(text):
        _append(clauses, text, position, match.start(), match.group())
        position = match.end()
    _append(clauses, text, position, len(text), "")
    return clauses


def _append(clauses: list[Clause], text: str, start: int, end: int, separator: str) -> None:
    start, end = strip_span(text, start, end)
    if start < end:
        clauses.append(Clause(start, end, separator))
    elif clauses and separator:
        # An empty piece between separators: fold its separator into the previous clause so
        # sentence ends ("好。\n\n差") are not lost.
        last = clauses[-1]
        clauses[-1] = Clause(last.start, last.end, last.separator + separator)
