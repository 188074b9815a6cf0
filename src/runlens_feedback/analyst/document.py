"""One feedback text, parsed once: language, clauses, tokens, lexical units and sentiment."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.matching import ClauseWords, clause_words
from runlens_feedback.analyst.sentiment import SentimentResult, score_text
from runlens_feedback.analyst.text import Clause, detect_language, split_clauses
from runlens_feedback.analyst.tokens import Token, kept_segments, tokenize
from runlens_feedback.analyst.units import Unit, remembered_units


@dataclass(frozen=True)
class Document:
    """A parsed text. Clause and token offsets index into `text`."""

    text: str
    lang: Lang
    clauses: tuple[Clause, ...]
    tokens: tuple[tuple[Token, ...], ...]
    units: tuple[tuple[Unit, ...], ...]
    sentiment: SentimentResult

    def clause_text(self, index: int) -> str:
        clause = self.clauses[index]
        return self.text[clause.start : clause.end]

    def clause_words(self, index: int) -> ClauseWords:
        """One clause as keyword patterns read it, made once for all the sets scanned."""
        return self._clause_words[index]

    @cached_property
    def _clause_words(self) -> tuple[ClauseWords, ...]:
        return tuple(
            clause_words(self.clause_text(index), tokens)
            for index, tokens in enumerate(self.tokens)
        )


def parse(text: str) -> Document:
    """Parse `text` (any mix of Chinese and English; `lang` is the dominant one). Its Chinese
    runs are segmented here unless theme discovery kept their words (`kept_segments`)."""
    lang = detect_language(text)
    clauses = split_clauses(text)
    segments = kept_segments(text)
    tokens = [tokenize(text, clause.start, clause.end, segments) for clause in clauses]
    units = [
        remembered_units(text, clause.start, clause.end, clause_tokens)
        for clause, clause_tokens in zip(clauses, tokens, strict=True)
    ]
    return Document(
        text=text,
        lang=lang,
        clauses=tuple(clauses),
        tokens=tuple(tuple(clause_tokens) for clause_tokens in tokens),
        units=tuple(tuple(clause) for clause in units),
        sentiment=score_text(text, lang, clauses, units),
    )
