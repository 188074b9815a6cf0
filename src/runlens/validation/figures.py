"""FigureValidationHook: every number a report states is recomputed from the data (SPEC 13.2).

A plugin declares *figure rules* (`Plugin.figure_rules`; `Figure`, `Place` and `FigureRule`
are defined in `runlens.validation.figure_rules`). A rule names the Markdown artifact
it checks, the sections whose numbers it checks, and the JSON artifacts it computes figures
from; its `compute` turns those documents and the Evidence Index into named figures:

    FigureRule(
        artifact="artifacts/report.md",
        sections=("## Summary",),
        sources=("artifacts/orders.json",),
        compute=lambda documents, index: [
            Figure("orders", 120, "count", labels=(("orders",),)),
            Figure("late.share", 0.125, "share", labels=(("late",),)),
        ],
    )

A figure has a key, a value, a kind (`count`; `share`, a fraction written as a percentage;
`value`, anything else such as an average), labels: the words that name it in prose, and
optionally a place: the table cell it is written in. A label is a tuple of terms that must
all appear (a theme's name and "rows"). Terms match case-insensitively; a term that starts or
ends with a letter of a script that spaces its words matches only as whole words, with an
optional plural `s`/`es` (`row` matches "rows", `high` does not match "highest"); other terms
(Chinese) match anywhere.

Every number the sections state (`runlens.validation.numbers`) is tied to the figure its
context names. A percentage ties only to shares, any other number to counts and values.

- Places first. A figure with a `Place` is named by the table's structure, never by what its
  cells say: in a cell of a table that its lead (the sentence introducing it) or first
  column's header names by one of the place's `table` labels, in the row whose first cell
  reads one of the place's `rows` (the whole cell, case and spacing aside), under a header
  that names one of its `columns` labels (the one with the most terms wins: "Negative share"
  is the share, not the count). A row keyed `negative`, `high`, `P1` or `5` names its row and
  nothing else. A cell that is some figure's place is tied to those figures only; in any
  other cell and in prose, figures are tied by their labels, as follows.

- Scopes, narrowest first. Prose: the clause around the number, between brackets or the
  separators `,` `;` `、` (and their full-width forms); the clause between separators only
  (so `10 rows (11.2%)` is one); its part of the sentence, between semicolons; its sentence;
  its block (paragraph, list item, heading); then the block with its lead (the sub-heading
  it is under, the list items it is nested in, the sentence that introduces its list or
  table with a colon). A table cell: one scope, the cell with its column header, the row's
  text cells (those stating no number) and the lead.
- A figure is named in a scope when every term of one of its labels occurs there, each at
  an occurrence of its own (a label that repeats a term needs it twice; a term occurring only
  inside a longer term's occurrence, "high" in "high or critical", is part of that term and
  occurs on its own nowhere). In a table cell the row's text cells are row keys: a key that
  is a term as a whole is that term once, not the words inside it. The
  narrowest scope that names a figure of the number's kind decides. When that is a clause,
  figures named by a label that extends a label named in the clause compete too, when the
  extra terms come before the clause: earlier in its part of the sentence, or in the lead.
  In "Billing has 13 rows, 9 negative" the clause names "negative" and the part extends it
  to Billing's negative rows; in "58 negative, most about Billing" it does not.
- The figure whose label has the most terms wins, then the nearest (summed distance of each
  term to the number; none in a table), then the one with the longest terms. Figures that
  tie all count.

Verdicts: a number tied to figures agrees when it equals one of them, else it is
`figure_mismatch` (the message and `details.expected` give the right value at the precision
written); a number tied to none agrees when it equals some figure of its kind, else it is
`unsupported_figure`. A number equals a figure at the precision written, by RunLens's one
rounding rule (`runlens.validation.rounding`: exact values, rounded half up; at an exact
half-way point either neighbour): `11.2%` and `11%` state 10/89, `11.3%` does not; 3/2000 is
`0.2%` (or `0.1%`), never `0.3%`. A mismatch names the figure, its exact value and the rule.

A rule may also name `SOURCE_ROWS` among its sources: its `compute` then finds, under that
name, the source's rows as `{id: {column: value}}` (every column but the index's id and text
columns), read from the very file the Evidence Index was checked against, so figures about
the input's other columns (a channel, a date) are recomputed from the input itself.

When a rule's sources are missing or unreadable, or the Evidence Index cannot be trusted, the
rule computes nothing and reports nothing: the validators of those files report them. A rule
that computes no figures checks nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from runlens.contracts.model import DEFAULT_QUOTE_MARKS
from runlens.evidence import EvidenceIndex
from runlens.validation import rounding
from runlens.validation.base import Collector, Problem, ValidationContext, ValidatorResult
from runlens.validation.claims import is_claim, word_numbers
from runlens.validation.figure_names import FigureNames, assigned, names_in
from runlens.validation.figure_rules import Figure, FigureRule, Label, row_key
from runlens.validation.numbers import (
    Passage,
    Span,
    SpanSet,
    StatedNumber,
    quoted_spans,
    section_passages,
    stated_numbers,
)
from runlens.validation.reading import read_markdown
from runlens.validation.sources import SOURCE_ROWS, source_rows
from runlens.validation.trust import UntrustedIndex

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
    """Every number stated in `sections` of `markdown`, tied and judged (module docstring).
    With `elsewhere`, also every claim about the data (`runlens.validation.claims`) stated
    outside them, which must equal some figure of its kind unless `copied` says the words
    around it are copied from a source row (a row's words, as in a backlog title that
    repeats a complaint, are the customer's, not the report's)."""
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
        agrees = any(figure.agrees(number) for figure in names.figures)
        if not agrees and any(
            copied(words)
            for words in _words_around(text, number)
            if sum(char.isalpha() for char in words) >= _COPIED_LETTERS
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
                agrees = any(f.agrees(number) for f in self.names.figures)
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
        """The figures whose place is this cell (module docstring), best column first."""
        cell = self.passage.cell
        if cell is None or cell.key is None:
            return ()
        figures = self.names.placed.get(row_key(cell.key), ())
        tables = [*self.passage.lead, cell.corner]
        scored: list[tuple[tuple[int, int, int, int], Figure]] = []
        for figure in figures:
            place = figure.place
            if place is None or not figure.fits(number):
                continue
            table, column = names_in(place.table, tables), names_in(place.columns, [cell.header])
            if table[0] and column[0]:  # the most specific table, then column, wins
                scored.append(((*table, *column), figure))
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


def _words_around(text: str, number: StatedNumber) -> tuple[str, str]:
    """The number with the words around it, as written, in two readings: with the two words
    before it and the one after it (scripts with spaces), and with up to six characters
    before it and four after it inside its clause (scripts without): enough to tell a row's
    own words from the report's."""
    tokens = list(_TOKEN.finditer(text[: number.start]))
    first = tokens[-2].start() if len(tokens) >= 2 else 0
    following = _NEXT_WORD.match(text, number.end)
    end = following.end() if following else number.end
    spaced = text[first:end].strip(_EDGE_PUNCTUATION)
    start, end = max(number.start - 6, 0), min(number.end + 4, len(text))
    before = _CLAUSE_EDGE.split(text[start : number.start])[-1]
    after = _CLAUSE_EDGE.split(text[number.end : end])[0]
    return spaced, before + number.text + after


_NEXT_WORD = re.compile(r"\s*[\w'’-]+")
_CLAUSE_EDGE = re.compile(r"[\s,;:!?，。；：！？、()（）]")
#: Punctuation at the edges of words around a number that belongs to the report's sentence.
_EDGE_PUNCTUATION = " \t\n.,;:!?…()[]（）【】，。；：！？*"
#: Fewer letters than this around a number say too little to be a row's own words.
_COPIED_LETTERS = 4


class RowWords:
    """Whether some words occur in a source row (NFC, as Markdown reads it): the rows'
    texts are joined once, on first use, and searched at C speed."""

    def __init__(self, index: EvidenceIndex) -> None:
        self.index = index
        self._joined: str | None = None

    def __call__(self, words: str) -> bool:
        words = unicodedata.normalize("NFC", read_markdown(words))
        if self._joined is None:
            texts = (self.index.text(row_id) for row_id in self.index.items)
            self._joined = unicodedata.normalize("NFC", read_markdown("\0".join(texts)))
        return words in self._joined


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


# -- the validator --------------------------------------------------------------------------


class FigureValidator:
    """Reports `figure_mismatch` and `unsupported_figure` for a plugin's figure rules."""

    name = "FigureValidationHook"

    def __init__(self, rules: Iterable[FigureRule]) -> None:
        self.rules = tuple(rules)

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        for rule in self.rules:
            figures = computed_figures(rule, context)
            path = context.artifact_file(rule.artifact) if figures else None
            if path is None:
                continue  # nothing to check against, or nothing to check
            markdown = path.read_bytes().decode("utf-8-sig", errors="replace")
            marks = _quote_marks(context, rule.artifact)
            index = context.evidence_index()
            copied = RowWords(index) if isinstance(index, EvidenceIndex) else (lambda _: False)
            for statement in check_figures(
                markdown, rule.sections, figures, marks, elsewhere=rule.everywhere, copied=copied
            ):
                _report(collector, rule.artifact, statement)
        return collector.result()


def computed_figures(rule: FigureRule, context: ValidationContext) -> tuple[Figure, ...]:
    """The rule's figures, or none when a source or the index cannot be read or trusted
    (for validators of other formats that check the same figures, e.g. a chart's)."""
    index = context.evidence_index()
    if isinstance(index, UntrustedIndex):
        return ()
    documents: dict[str, Any] = {}
    for name in rule.sources:
        if name == SOURCE_ROWS:
            rows = source_rows(context, index)
            if rows is None:
                return ()
            documents[name] = rows
            continue
        readable, document = context.load_document(name)
        if not readable:
            return ()
        documents[name] = document
    return tuple(rule.compute(documents, index))


def _quote_marks(context: ValidationContext, artifact: str) -> tuple[tuple[str, str], ...]:
    """The quotation marks the artifact's contract declares for citations, else the defaults."""
    contract = next((c for c in context.contracts if c.name == artifact), None)
    if contract is not None and contract.citations is not None:
        return contract.citations.quote_marks
    return DEFAULT_QUOTE_MARKS


def mismatch_reason(figure: Figure, decimals: int) -> str:
    """What a mismatch message says of the expected text: the figure's key and, unless it is
    a whole number, how it is derived (`severity.critical.share: 3/2000 = 0.15%, rounded
    half up to 1 decimal`)."""
    derivation = _derivation(figure, decimals)
    return figure.key if derivation is None else f"{figure.key}: {derivation}"


def _derivation(figure: Figure, decimals: int) -> str | None:
    """A figure's exact value and the rule that rounds it, None for a whole count."""
    if figure.exact.denominator == 1 and figure.kind != "share":
        return None
    places = "decimal" if decimals == 1 else "decimals"
    return f"{figure.exact_text()}, {rounding.RULE} to {decimals} {places}"


def _report(collector: Collector, artifact: str, statement: Statement) -> None:
    number, line = statement.number, statement.line
    where = {"line": line, "column": statement.column, "stated": number.text}
    if statement.verdict == "mismatch":
        figure = statement.tied[0]
        expected = figure.written(number.decimals)
        why, derivation = (
            mismatch_reason(figure, number.decimals),
            _derivation(figure, number.decimals),
        )
        collector.add(
            artifact,
            "figure_mismatch",
            f"line {line}, column {statement.column}: {number.text} states the figure "
            f"`{figure.key}`, which is {expected}" + (f" ({derivation})" if derivation else ""),
            Problem(
                "figure mismatch",
                f"{number.text} should be {expected} ({why}, line {line})",
                f"in {artifact}",
            ),
            path=f"line {line}",
            details={
                **where,
                "expected": expected,
                "figure": figure.key,
                "value": float(figure.exact),
                "exact": str(figure.exact),
                "rule": rounding.RULE,
            },
        )
    elif statement.verdict == "unsupported":
        collector.add(
            artifact,
            "unsupported_figure",
            f"line {line}, column {statement.column}: {number.text} names no figure computed "
            "from the data and equals none of them",
            Problem("unsupported figures", f"{number.text} (line {line})", f"in {artifact}"),
            path=f"line {line}",
            details=where,
        )
