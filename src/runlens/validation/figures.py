"""FigureValidationHook: every number a report states is recomputed from the data (SPEC 13.2).

A plugin declares *figure rules* (`Plugin.figure_rules`). A rule names the Markdown artifact
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
  cells say: in a cell of a table that its first column's header or its lead (the sentence
  introducing it) names by one of the place's `table` labels (the header first: a lead says
  other words too, "By `region`:" says "by"), in the row whose first cell
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

import unicodedata
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from runlens.contracts.model import DEFAULT_QUOTE_MARKS
from runlens.evidence import EvidenceIndex
from runlens.validation import rounding
from runlens.validation.base import Collector, Problem, ValidationContext, ValidatorResult
from runlens.validation.figure_rules import (
    Compute,
    Figure,
    FigureKind,
    FigureRule,
    Label,
    Place,
)
from runlens.validation.figure_ties import Statement, Verdict, check_figures
from runlens.validation.reading import read_markdown
from runlens.validation.sources import SOURCE_ROWS, source_rows
from runlens.validation.trust import UntrustedIndex

__all__ = [
    "Compute",
    "Figure",
    "FigureKind",
    "FigureRule",
    "FigureValidator",
    "Label",
    "Place",
    "RowWords",
    "Statement",
    "Verdict",
    "check_figures",
    "computed_figures",
    "mismatch_reason",
]


class RowWords:
    """Whether some words occur in a source row (NFC, as Markdown reads it): the rows'
    texts are joined once, on first use, and searched at C speed."""

    def __init__(
        self, index: EvidenceIndex, texts: Callable[[], dict[str, str]] | None = None
    ) -> None:
        self.index = index
        #: Every row's text by id when the round shares them (`ValidationContext.row_texts`).
        self.texts = texts
        self._joined: str | None = None

    def __call__(self, words: str) -> bool:
        words = unicodedata.normalize("NFC", read_markdown(words))
        if self._joined is None:
            texts: Iterable[str]
            if self.texts is not None:
                texts = self.texts().values()  # in the index's order
            else:
                texts = (text for _, _, text in self.index.rows())  # in order, a chunk at a time
            # Joined by U+FFFD: what a NUL between them reads as (`read_markdown`), without
            # replacing one NUL per row.
            self._joined = unicodedata.normalize("NFC", read_markdown("\ufffd".join(texts)))
        return words in self._joined


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
            copied = (
                RowWords(index, partial(context.row_texts, index))
                if isinstance(index, EvidenceIndex)
                else (lambda _: False)
            )
            for statement in check_figures(
                markdown, rule.sections, figures, marks, elsewhere=rule.everywhere, copied=copied
            ):
                _report(collector, rule.artifact, statement)
        return collector.result()


def computed_figures(rule: FigureRule, context: ValidationContext) -> tuple[Figure, ...]:
    """The rule's figures, or none when a source or the index cannot be read or trusted
    (for validators of other formats that check the same figures, e.g. a chart's).

    Computed once per validation round and shared: the report's validator and the chart's
    state the same figures of the same artifacts, which do not change during a round."""
    return context.shared("figures", rule, lambda: _computed_figures(rule, context))


def _computed_figures(rule: FigureRule, context: ValidationContext) -> tuple[Figure, ...]:
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
