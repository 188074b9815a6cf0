"""Finding the words that name figures in a text (`runlens.validation.figures`).

Terms are case-folded and found in case-folded text (`Folded`), Latin words whole with an
optional plural (`pattern`); an occurrence inside a longer term's occurrence is part of that
term; a label is named when each of its terms has an occurrence of its own (`assigned`); a
table row's text cells are its keys, each a term as a whole (`FigureNames.keyed`, `row_key`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from itertools import accumulate

from runlens.validation import rounding
from runlens.validation.figure_rules import Figure, row_key
from runlens.validation.figure_rules import Label as Label  # its home before figure_rules
from runlens.validation.numbers import SPACED_LETTERS, Span, SpanSet, StatedNumber

NOWHERE = SpanSet(())
_LETTER = f"[0-9_{SPACED_LETTERS}]"


class FigureNames:
    """The labels of a rule's figures, indexed so each passage is searched once per term."""

    def __init__(self, figures: Sequence[Figure]) -> None:
        self.figures = tuple(figures)
        self.labels: dict[str, list[tuple[Figure, Label]]] = {}  # first term -> labels
        terms: set[str] = set()
        by_first = self.labels
        for figure in self.figures:
            for label in figure.labels:
                if label:  # a report's figures have thousands of labels: folded at C speed
                    folded = tuple(map(str.casefold, label))
                    same_first = by_first.get(folded[0])
                    if same_first is None:
                        by_first[folded[0]] = [(figure, folded)]
                    else:
                        same_first.append((figure, folded))
                    terms.update(folded)
        self.placed: dict[str, list[Figure]] = {}  # row key -> figures placed in such rows
        named = set(terms)  # every word that names something: digits in it are no figure
        for figure in self.figures:
            if figure.place is not None:
                for row in dict.fromkeys(map(row_key, figure.place.rows)):
                    self.placed.setdefault(row, []).append(figure)
                named.update(row_key(row) for row in figure.place.rows)
                named.update(term.casefold() for label in figure.place.table for term in label)
        self.terms = sorted(terms)
        self.term_set = frozenset(self.terms)
        #: Each term with its first word and whether its words have a case (`_shape`), to
        #: leave out at once a term `_spans` would find nowhere (`occurrences`).
        self._searched = _searched(self.terms)
        self.digit_terms = sorted(term for term in named if any(c.isdigit() for c in term))
        self._digit_searched = _searched(self.digit_terms)
        #: Every word of every term, as a count may have them between it and its unit.
        self.words = frozenset(word for term in named for word in term.split())
        #: (percent, decimals) -> every value stated so that it agrees with some figure.
        self._agreeing: dict[tuple[bool, int], frozenset[Decimal]] = {}

    def agrees_with_any(self, number: StatedNumber) -> bool:
        """Whether the number agrees with some figure (`Figure.agrees`): the same verdict
        as asking each figure, answered by one lookup in the values that agree with some
        figure of its kind at its precision, worked out once per kind and precision."""
        key = (number.percent, number.decimals)
        values = self._agreeing.get(key)
        if values is None:
            # Figures of equal value agree with the same numbers: each value worked out once.
            scaled = {figure.scaled for figure in self.figures if figure.fits(number)}
            values = self._agreeing[key] = frozenset(
                value for exact in scaled for value in rounding.agreeing(exact, number.decimals)
            )
        return number.value in values

    def occurrences(self, text: str, ignored: SpanSet = NOWHERE) -> dict[str, list[Span]]:
        """Where each term occurs in `text`, outside the `ignored` spans (terms that do not
        occur are left out). An occurrence inside a longer term's occurrence is part of
        that term, not a term of its own: "mixed" in a theme named `topic:mixed`, "high" in
        "high or critical", 分析 in 未分析."""
        found: dict[str, list[Span]] = {}
        folded = Folded(text)
        for term in folded.candidates(self._searched):
            spans = [span for span in folded.find(term) if not ignored.contains(*span)]
            if spans:
                found[term] = spans
        inner = _contained({span for spans in found.values() for span in spans})
        if not inner:
            return found
        kept = {term: [s for s in spans if s not in inner] for term, spans in found.items()}
        return {term: spans for term, spans in kept.items() if spans}

    def keyed(
        self, text: str, keys: Sequence[Span], ignored: SpanSet = NOWHERE
    ) -> dict[str, list[Span]]:
        """`occurrences`, where the `keys` spans are row keys: a key that is a term as a
        whole is one occurrence of that term and nothing else (a row keyed `negative` names
        its row, not the measure "negative"); a key that is no term is searched as text."""
        whole: dict[str, list[Span]] = {}
        searched = [*ignored.spans]
        for start, end in keys:
            term = " ".join(text[start:end].split()).casefold()
            if term in self.term_set:
                whole.setdefault(term, []).append((start, end))
                searched.append((start, end))
        found = self.occurrences(text, SpanSet(searched))
        for term, spans in whole.items():
            found[term] = sorted([*found.get(term, ()), *spans])
        return found

    def named(self, found: Mapping[str, list[Span]]) -> list[tuple[Figure, Label]]:
        """The labels whose every term occurs (as often as the label repeats it)."""
        return [
            (figure, label)
            for term in found
            for figure, label in self.labels.get(term, ())
            if assigned(label, found, (0, _END))
        ]

    def hiding(self, text: str) -> list[Span]:
        """Occurrences of terms with digits: a number inside a name is part of the name."""
        folded = Folded(text)
        return [
            span for term in folded.candidates(self._digit_searched) for span in folded.find(term)
        ]


_END = 2**62  # beyond the end of any text


def assigned(label: Label, found: Mapping[str, list[Span]], scope: Span) -> bool:
    """Whether each term of `label` has an occurrence inside `scope` of its own: one
    occurrence fills one place of a label, so `("label", "negative", "negative")` needs
    "negative" twice, and a cell reading `Rows` under the header `Rows` is no row key of a
    value named "rows" and the measure "rows" at once (a matching of terms to occurrences;
    a label has a handful of terms, and a term needs no more candidates than the label has
    terms)."""
    start, end = scope
    width = len(label)
    options = []
    for term in label:
        inside = [span for span in found.get(term, ()) if start <= span[0] and span[1] <= end]
        if not inside:
            return False
        options.append(inside[:width])
    return _distinct(options, 0, set())


def _distinct(options: list[list[Span]], at: int, used: set[Span]) -> bool:
    if at == len(options):
        return True
    for span in options[at]:
        if span not in used:
            used.add(span)
            if _distinct(options, at + 1, used):
                return True
            used.discard(span)
    return False


def names_in(labels: Iterable[Label], texts: Sequence[str]) -> tuple[int, int]:
    """How well `texts` name one of `labels`: the most terms of a label named in one of
    them (each term at an occurrence of its own), then the most characters; (0, 0) when
    none is."""
    best = (0, 0)
    read: list[Folded] = []  # the texts case-folded, once, when a label needs them
    for label in labels:
        folded = tuple(term.casefold() for term in label)
        score = (len(folded), sum(map(len, folded)))
        if not folded or score <= best:
            continue
        if not read:
            read = [Folded(text) for text in texts]
        for text, where in zip(texts, read, strict=True):
            found = {term: where.find(term) for term in folded}
            if assigned(folded, found, (0, len(text))):
                best = score
                break
    return best


def _contained(spans: set[Span]) -> set[Span]:
    """The spans that lie inside another, longer span (in O(n log n): sorted by start, the
    longest first, a span ending no later than an earlier one is inside it)."""
    inner = set()
    reach = -1
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if end <= reach:
            inner.add((start, end))
        reach = max(reach, end)
    return inner


class Folded:
    """A text case-folded for finding terms (which are case-folded too: `ß` is `ss`, so
    a plain case-insensitive match would miss it), with each span found mapped back to the
    text's own offsets."""

    def __init__(self, text: str) -> None:
        if text.isascii():
            self.text, self.starts, self.plain = text.lower(), None, True
            return
        # Case-folding maps each character on its own (no context, unlike `lower`'s final
        # sigma): when no character folds to more than one, offsets are the text's own.
        folded = text.casefold()
        if len(folded) == len(text):
            self.text, self.starts = folded, None
        else:
            parts = [char.casefold() for char in text]
            self.text = "".join(parts)
            self.starts = [0, *accumulate(map(len, parts))]  # folded offset of each character
        #: Whether an ASCII word matches only itself here, case-insensitively: of the
        #: characters that match an ASCII letter so, case-folding leaves the dotless ı alone.
        self.plain = "\u0131" not in self.text

    def candidates(self, searched: Iterable[tuple[str, str, bool | None]]) -> Iterator[str]:
        """The terms of `searched` (`_searched`) that `find` may find here: all but those
        whose first word it would search as plain text and that is not in the text."""
        text, plain = self.text, self.plain
        for term, first, caseless in searched:
            if caseless is None or not (plain or caseless) or first in text:
                yield term

    def find(self, term: str) -> list[Span]:
        """The spans of `term` (case-folded) in the text, in the text's offsets."""
        spans = _spans(term, self.text, plain=self.plain)
        if self.starts is None:
            return spans
        starts = self.starts
        return [
            (bisect.bisect_right(starts, start) - 1, bisect.bisect_left(starts, end))
            for start, end in spans
        ]


def _spans(term: str, text: str, plain: bool = False) -> list[Span]:
    """Where `pattern(term)` matches in `text`, one after the other (`finditer`), found
    without compiling it: compiling the letters' class case-insensitively costs about
    0.2 ms for each of the pattern's two word boundaries, and a report's figures have some
    two hundred terms. The term's words are searched, each match then has the boundaries
    checked by patterns compiled once: no letter just before it (`_LETTER_FOLDED`), a
    plural ending that no letter follows (`_PLURAL_END`). Where the pattern would fail,
    `finditer` tries again one character on, and so does this.

    The words are searched as plain text (`_words_at`) when case-insensitivity changes
    nothing: each of their characters has no case, or is an ASCII small letter and the
    text is `plain` (no capitals, and no other character that matches an ASCII letter
    case-insensitively: `Folded.plain`); else as a case-insensitive pattern (`_body`)."""
    words = term.split()
    if not words:  # no words: the pattern matches the empty text between characters
        return [match.span() for match in pattern(term).finditer(text)]
    caseless, lead, trail = _shape(term)
    body = None if caseless is not None and (plain or caseless) else _body(term)
    first = words[0]
    spans = []
    at = 0
    while True:
        if body is None:
            start = text.find(first, at)
            if start < 0:
                break
            end = _words_at(text, words, start + len(first))
            if end < 0:
                at = start + 1
                continue
        else:
            match = body.search(text, at)
            if match is None:
                break
            start, end = match.span()
        if lead and start and _LETTER_FOLDED.match(text, start - 1):
            at = start + 1
            continue
        if trail:
            ending = _PLURAL_END.match(text, end)
            if ending is None:
                at = start + 1
                continue
            end = ending.end()
        spans.append((start, end))
        at = end
    return spans


def _searched(terms: Iterable[str]) -> list[tuple[str, str, bool | None]]:
    """Each term with its first word ("" for a term of no words) and whether its words have
    a case (`_shape`): what `Folded.candidates` needs to leave out at once a term `_spans`
    would search for as plain text and not find."""
    searched = []
    for term in terms:
        words = term.split()
        searched.append((term, words[0] if words else "", _shape(term)[0]))
    return searched


def _words_at(text: str, words: list[str], at: int) -> int:
    """Where the words after the first end, each after white space (`\\s+`) from `at`;
    -1 when they do not follow. The space is taken whole: a word starts with none."""
    for word in words[1:]:
        space = at
        while at < len(text) and text[at].isspace():  # what `\s` matches in a str pattern
            at += 1
        if at == space or not text.startswith(word, at):
            return -1
        at += len(word)
    return at


_LETTER_FOLDED = re.compile(_LETTER, re.IGNORECASE)
_PLURAL_END = re.compile(f"(?:e?s)?(?!{_LETTER})", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _shape(term: str) -> tuple[bool | None, bool, bool]:
    """Whether the term's words have no character with a case (True), or none but ASCII
    small letters besides (False), or others (None); then whether its pattern has a word
    boundary before its start and after its end."""
    caseless: bool | None = True
    for char in term:
        if char.lower() == char == char.upper():
            continue  # no case: the pattern matches the character alone
        if "a" <= char <= "z":
            caseless = False
        else:
            caseless = None
            break
    return caseless, _is_letter(term[:1]), _is_letter(term[-1:])


@lru_cache(maxsize=4096)
def _body(term: str) -> re.Pattern[str]:
    """`pattern(term)` without its word boundaries."""
    return re.compile(r"\s+".join(map(re.escape, term.split())), re.IGNORECASE)


def _is_letter(char: str) -> bool:
    return re.match(_LETTER, char) is not None


@lru_cache(maxsize=4096)
def pattern(term: str) -> re.Pattern[str]:
    """A term as a case-insensitive pattern (module docstring: whole words, plurals)."""
    body = r"\s+".join(map(re.escape, term.split()))
    if _is_letter(term[:1]):
        body = f"(?<!{_LETTER}){body}"
    if _is_letter(term[-1:]):
        body = f"{body}(?:e?s)?(?!{_LETTER})"
    return re.compile(body, re.IGNORECASE)
