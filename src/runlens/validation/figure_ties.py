"""Tying each number a report states to the figures its words name, and judging it
(`check_figures`): places first, then the narrowest scope that names a figure, then the
most specific, nearest and longest label (`runlens.validation.figures` has every rule).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from runlens.contracts.model import DEFAULT_QUOTE_MARKS
from runlens.validation.claims import is_claim, word_numbers
from runlens.validation.figure_names import FigureNames, assigned, names_in
from runlens.validation.figure_rules import Figure, Label, row_key
from runlens.validation.numbers import (
    Passage,
    Span,
    SpanSet,
    StatedNumber,
    quoted_spans,
    section_passages,
    stated_numbers,
)

Verdict = Literal["agrees", "mismatch", "unsupported"]
_BRACKETED_BREAK = re.compile(r"[,;、，；()（）\[\]【】]")
_CLAUSE_BREAK = re.compile(r"[,;、，；]")
_PART_BREAK = re.compile(r"[;；]")
#: Scopes up to this one are clauses: the one that names a figure may be extended (`_tie`).
_CLAUSES = 2
_SENTENCE_BREAK = re.compile(r"[.!?](?=\s|$)|[。！？]")


@dataclass(frozen=True)
class Statement:
    """One number a document states, where, the figures it is tied to, and the verdict."""

    number: StatedNumber
    line: int
    column: int
    tied: tuple[Figure, ...]
    verdict: Verdict


def check_figures(
    markdown: str,
    sections: Sequence[str],
    figures: Sequence[Figure],
    quote_marks: Iterable[tuple[str, str]] = DEFAULT_QUOTE_MARKS,
    *,
    elsewhere: bool = False,
    copied: Callable[[str], bool] = lambda words: False,
) -> list[Statement]:
    """Every number stated in `sections` of `markdown`, tied and judged
    (`runlens.validation.figures`). With `elsewhere`, also every claim about the data
    (`runlens.validation.claims`) stated outside them, which must equal some figure of its
    kind unless `copied` says the words around it are copied from a source row (a row's
    words, as in a backlog title that repeats a complaint, are the customer's, not the
    report's)."""
    names = FigureNames(figures)
    marks = tuple(quote_marks)
    statements = []
    for passage in section_passages(markdown, sections):
        if passage.cell is None or passage.cell.counted:
            statements += _PassageCheck(passage, names, marks).statements()
    if elsewhere:
        for passage in section_passages(markdown, sections, outside=True):
            if passage.cell is None or passage.cell.counted:
                statements += _claims(passage, names, marks, copied)
    return statements


def _claims(
    passage: Passage,
    names: FigureNames,
    marks: tuple[tuple[str, str], ...],
    copied: Callable[[str], bool],
) -> list[Statement]:
    """The claims about the data in a passage outside the figure sections, each judged
    against every figure of its kind: there a number is not tied to one."""
    text = passage.block.text
    skip = [*quoted_spans(text, marks), *names.hiding(text)]
    numbers = [*stated_numbers(text, skip), *word_numbers(text, skip)]
    statements = []
    for number in sorted(numbers, key=lambda n: n.start):
        if not is_claim(text, number, names.words):
            continue
        line, column = passage.block.position(number.start)
        agrees = names.agrees_with_any(number)
        if not agrees and any(
            copied(words)
            for words in _words_around(text, number)
            if _letters(words) >= _COPIED_LETTERS
        ):
            continue
        statements.append(
            Statement(number, line, column, (), "agrees" if agrees else "unsupported")
        )
    return statements


class _PassageCheck:
    """The numbers of one passage, tied to figures through the text around them."""

    def __init__(self, passage: Passage, names: FigureNames, marks: tuple[tuple[str, str], ...]):
        self.passage = passage
        self.names = names
        self.own = passage.block.text
        # The block first, so a number's offsets in it are its offsets in `text`; then, for
        # a table cell, its column header and the row's keys (its text cells); then the lead.
        parts = [self.own]
        keys: list[Span] = []
        if passage.cell is not None:
            parts.append(passage.cell.header)
            for key in (t for t in passage.cell.row if self._is_text(t)):
                start = sum(len(part) + 1 for part in parts)
                keys.append((start, start + len(key)))
                parts.append(key)
        self.text = "\n".join([*parts, *passage.lead])
        quoted = quoted_spans(self.own, marks)
        # Words inside a quotation are the customer's, not the report's: they name nothing.
        self.found = names.keyed(self.text, keys, SpanSet(quoted))
        self.candidates = names.named(self.found)
        self.skip = [*quoted, *names.hiding(self.own)]

    def _is_text(self, cell: str) -> bool:
        """A row's text cell: one that states no number (digits inside a name are no number)."""
        return not stated_numbers(cell, self.names.hiding(cell))

    def statements(self) -> list[Statement]:
        statements = []
        words = [
            number
            for number in word_numbers(self.own, self.skip)
            if is_claim(self.own, number, self.names.words)
        ]
        numbers = sorted([*stated_numbers(self.own, self.skip), *words], key=lambda n: n.start)
        for number in numbers:
            line, column = self.passage.block.position(number.start)
            tied = self._tie(number)
            if tied:
                verdict: Verdict = "agrees" if any(f.agrees(number) for f in tied) else "mismatch"
            else:
                agrees = self.names.agrees_with_any(number)
                verdict = "agrees" if agrees else "unsupported"
            statements.append(Statement(number, line, column, tied, verdict))
        return statements

    def _scopes(self, number: StatedNumber) -> list[Span]:
        whole = (0, len(self.text))
        if self.passage.cell is not None:
            return [whole]
        return [
            _around(self.own, number, _BRACKETED_BREAK, within=_SENTENCE_BREAK),
            _around(self.own, number, _CLAUSE_BREAK, within=_SENTENCE_BREAK),
            _around(self.own, number, _PART_BREAK, within=_SENTENCE_BREAK),
            _around(self.own, number, _SENTENCE_BREAK),
            (0, len(self.own)),
            whole,
        ]

    def _placed(self, number: StatedNumber) -> tuple[Figure, ...]:
        """The figures whose place is this cell (`runlens.validation.figures`), best column
        first."""
        cell = self.passage.cell
        if cell is None or cell.key is None:
            return ()
        figures = self.names.placed.get(row_key(cell.key), ())
        lead = self.passage.lead
        scored: list[tuple[tuple[int, ...], Figure]] = []
        for figure in figures:
            place = figure.place
            if place is None or not figure.fits(number):
                continue
            # The first column's header names its own table; a lead names it among other
            # words ("By `region`:" says "by", which names a column called `by` too).
            corner, led = names_in(place.table, [cell.corner]), names_in(place.table, lead)
            column = names_in(place.columns, [cell.header])
            if (corner[0] or led[0]) and column[0]:  # the header's table, the lead's, the column
                scored.append(((*corner, *led, *column), figure))
        top = max((score for score, _ in scored), default=None)
        return tuple(figure for score, figure in scored if score == top)

    def _tie(self, number: StatedNumber) -> tuple[Figure, ...]:
        placed = self._placed(number)
        if placed:
            return placed
        fitting = [(f, label) for f, label in self.candidates if f.fits(number)]
        scopes = self._scopes(number)
        for level, scope in enumerate(scopes):
            named = [(f, label) for f, label in fitting if self._inside(label, scope)]
            if not named:
                continue
            if level < _CLAUSES and len(scopes) > _CLAUSES:
                named += self._extensions(named, fitting, clause=scope, part=scopes[_CLAUSES])
            return self._best(named, number)
        return ()

    def _extensions(
        self,
        named: list[tuple[Figure, Label]],
        fitting: list[tuple[Figure, Label]],
        *,
        clause: Span,
        part: Span,
    ) -> list[tuple[Figure, Label]]:
        """Labels that extend a label named in the clause with terms said before it: earlier
        in the same part of the sentence ("Billing: 13 rows, 9 negative") or in the block's
        lead ("Billing:" above "- 9 negative")."""
        before = ((part[0], clause[0]), (len(self.own), len(self.text)))
        extended = []
        for figure, label in fitting:
            for _, narrower in named:
                extra = set(label) - set(narrower)
                if set(narrower) < set(label) and all(
                    any(self._inside((term,), region) for region in before) for term in extra
                ):
                    extended.append((figure, label))
                    break
        return extended

    def _inside(self, label: Label, scope: Span) -> bool:
        return assigned(label, self.found, scope)

    def _best(self, named: list[tuple[Figure, Label]], number: StatedNumber) -> tuple[Figure, ...]:
        """The figures of the most specific, then nearest, then longest label."""
        scored: dict[str, tuple[tuple[int, int, int], Figure]] = {}
        for figure, label in named:
            score = (len(label), -self._distance(label, number), sum(map(len, label)))
            if figure.key not in scored or score > scored[figure.key][0]:
                scored[figure.key] = (score, figure)
        top = max(score for score, _ in scored.values())
        return tuple(figure for score, figure in scored.values() if score == top)

    def _distance(self, label: Label, number: StatedNumber) -> int:
        if self.passage.cell is not None:
            return 0
        return sum(min(_gap(span, number) for span in self.found[term]) for term in label)


_TOKEN = re.compile(r"\S+")


def _words_around(text: str, number: StatedNumber) -> tuple[str, str, str]:
    """The number with the words around it, as written, in three readings: with the two
    words before it and the one after it (scripts with spaces); the same cut at the last
    clause mark before the number (a title "Fix billing: plot 100%" repeats a row's words
    after its colon, the two words before the number reach into the report's own); and with
    up to six characters before it and four after it inside its clause (scripts without):
    enough to tell a row's own words from the report's."""
    tokens = list(_TOKEN.finditer(text[: number.start]))
    first = tokens[-2].start() if len(tokens) >= 2 else 0
    following = _NEXT_WORD.match(text, number.end)
    end = following.end() if following else number.end
    spaced = text[first:end].strip(_EDGE_PUNCTUATION)
    lead = _CLAUSE_MARK.split(text[first : number.start])[-1]
    in_clause = (lead + text[number.start : end]).strip(_EDGE_PUNCTUATION)
    start, end = max(number.start - 6, 0), min(number.end + 4, len(text))
    before = _CLAUSE_EDGE.split(text[start : number.start])[-1]
    after = _CLAUSE_EDGE.split(text[number.end : end])[0]
    return spaced, in_clause, before + number.text + after


_NEXT_WORD = re.compile(r"\s*[\w'’-]+")
_CLAUSE_EDGE = re.compile(r"[\s,;:!?，。；：！？、()（）]")
#: A clause mark between words (not a decimal point nor a time's colon: one a space follows).
_CLAUSE_MARK = re.compile(r"[,;:!?](?=\s)|[，。；：！？、()（）]")
#: Punctuation at the edges of words around a number that belongs to the report's sentence.
_EDGE_PUNCTUATION = " \t\n.,;:!?…()[]（）【】，。；：！？*"
#: Fewer letters than this around a number say too little to be a row's own words.
_COPIED_LETTERS = 4


def _letters(words: str) -> int:
    """The letters of `words`, a wide (CJK) character counted as two: two of them make a
    word as four Latin letters do (`闪退`, "crash")."""
    return sum(
        (2 if unicodedata.east_asian_width(char) in "WF" else 1) for char in words if char.isalpha()
    )


def _around(
    text: str,
    number: StatedNumber,
    breaks: re.Pattern[str],
    within: re.Pattern[str] | None = None,
) -> Span:
    """The span between the last break before the number and the first break after it
    (inside the span `within` breaks make, when given)."""
    start, end = _around(text, number, within) if within else (0, len(text))
    start = max((m.end() for m in breaks.finditer(text, start, number.start)), default=start)
    after = breaks.search(text, number.end, end)
    return start, after.start() if after else end


def _gap(span: Span, number: StatedNumber) -> int:
    start, end = span
    if end <= number.start:
        return number.start - end
    return max(start - number.end, 0)
