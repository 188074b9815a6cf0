"""One feedback text, parsed once: language, clauses, tokens, lexical units and sentiment."""

from __future__ import annotations

import threading
from contextlib import suppress
from dataclasses import dataclass
from functools import cached_property

from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.matching import ClauseWords, clause_words
from runlens_feedback.analyst.sentiment import SentimentResult, score_text
from runlens_feedback.analyst.text import Clause, detect_language, split_clauses
from runlens_feedback.analyst.tokens import Token, kept_segments, release_segments, tokenize
from runlens_feedback.analyst.units import Unit, UnitKind, clause_units


@dataclass(frozen=True, slots=True)
class _Reading:
    """What one clause reads as: its units (`term`, `kind`, `value`, start, end), with
    offsets from where it starts, and its `ClauseWords` (whose offsets are the clause's
    own)."""

    units: tuple[tuple[str, UnitKind, float, int, int], ...]
    words: ClauseWords


#: Clauses whose reading `parse` remembers (the most recent ones): feedback repeats its
#: clauses ("太慢了", "the export fails"), and a clause's tokens, units and words depend on
#: its characters alone (a run of Chinese characters never crosses a clause's bounds, and
#: its words are jieba's for that run wherever it occurs; no lookup reads past the clause).
#: About 10 MB when full.
REMEMBERED_CLAUSES = 32_768
_remembered: dict[str, _Reading] = {}
_remembered_lock = threading.Lock()


@dataclass(frozen=True)
class Document:
    """A parsed text. Clause, token and unit offsets index into `text`."""

    text: str
    lang: Lang
    clauses: tuple[Clause, ...]
    units: tuple[tuple[Unit, ...], ...]
    sentiment: SentimentResult
    _readings: tuple[_Reading, ...]

    def clause_text(self, index: int) -> str:
        clause = self.clauses[index]
        return self.text[clause.start : clause.end]

    def clause_words(self, index: int) -> ClauseWords:
        """One clause as keyword patterns read it, made once for all the sets scanned."""
        return self._readings[index].words

    @cached_property
    def tokens(self) -> tuple[tuple[Token, ...], ...]:
        """The tokens of each clause (`tokenize`), read again when asked for: few rows need
        them once their units and words are known."""
        return tuple(
            tuple(tokenize(self.text, clause.start, clause.end)) for clause in self.clauses
        )


def parse(text: str) -> Document:
    """Parse `text` (any mix of Chinese and English; `lang` is the dominant one). Its Chinese
    runs are segmented here unless theme discovery kept their words (`kept_segments`) or a
    clause was read before (`REMEMBERED_CLAUSES`)."""
    lang = detect_language(text)
    clauses = split_clauses(text)
    segments: dict[tuple[int, int], list[str]] | None = None
    taken = False
    readings: list[_Reading] = []
    units: list[list[Unit]] = []
    for clause in clauses:
        start = clause.start
        reading = _remembered.get(text[start : clause.end])
        if reading is None:
            if not taken:
                segments, taken = kept_segments(text), True
            reading = _read(text, clause, segments)
        readings.append(reading)
        units.append(
            [
                Unit(term, kind, value, unit_start + start, unit_end + start)
                for term, kind, value, unit_start, unit_end in reading.units
            ]
        )
    if not taken:
        release_segments(text)  # this row's share of its kept words, not needed
    return Document(
        text=text,
        lang=lang,
        clauses=tuple(clauses),
        units=tuple(tuple(clause) for clause in units),
        sentiment=score_text(text, lang, clauses, units),
        _readings=tuple(readings),
    )


def _read(text: str, clause: Clause, segments: dict[tuple[int, int], list[str]] | None) -> _Reading:
    """The reading of one clause of `text`, remembered by the clause's characters."""
    start, end = clause.start, clause.end
    tokens = tokenize(text, start, end, segments)
    units = clause_units(text, start, end, tokens)
    reading = _Reading(
        units=tuple(
            (unit.term, unit.kind, unit.value, unit.start - start, unit.end - start)
            for unit in units
        ),
        words=clause_words(text[start:end], tokens),
    )
    with _remembered_lock:
        if len(_remembered) >= REMEMBERED_CLAUSES:
            with suppress(KeyError, StopIteration):
                del _remembered[next(iter(_remembered))]
        _remembered[text[start:end]] = reading
    return reading
