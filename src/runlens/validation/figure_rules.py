"""What a plugin declares about its figures: each `Figure` with the labels that name it and
the `Place` it is written in, and the `FigureRule` that computes them from the data.

How the figures a report states are tied to these and checked: `runlens.validation.figures`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

from runlens.evidence import EvidenceIndex
from runlens.validation import rounding
from runlens.validation.numbers import StatedNumber
from runlens.validation.reading import read_markdown
from runlens.validation.rounding import Number

FigureKind = Literal["count", "share", "value"]
#: Terms that must all appear for a label to name its figure.
Label = tuple[str, ...]


def row_key(text: str) -> str:
    """A table row's key as places compare it: NFC, case-folded, on one line with single
    spaces, NUL as the replacement character (as Markdown reads it)."""
    folded = unicodedata.normalize("NFC", read_markdown(text)).casefold()
    return " ".join(folded.split())


@dataclass(frozen=True)
class Place:
    """The table cell a figure is written in (module docstring): the table, named by one of
    `table`'s labels in its lead or first column's header; the row, whose first cell reads
    one of `rows`; the column, whose header names one of `columns`'s labels."""

    table: tuple[Label, ...]
    rows: tuple[str, ...]
    columns: tuple[Label, ...]


@dataclass(frozen=True)
class Figure:
    """A figure computed from the data: `value` is a count, a share (a fraction,
    `Fraction(10, 89)` for 10 of 89 rows, written as 11.2%) or a plain value; `decimals` is how
    `text` writes a share or a value. Values are exact (`runlens.validation.rounding`): give
    integers and fractions; a float is taken as the decimal it prints as."""

    key: str
    value: Number
    kind: FigureKind
    labels: tuple[Label, ...]
    decimals: int = 1
    place: Place | None = None

    @property
    def names(self) -> frozenset[str]:
        """Every word that names the figure, case-folded: its labels' terms and its place's
        row keys (a chart labels a bar with one of them)."""
        terms = {term.casefold() for label in self.labels for term in label}
        if self.place is not None:
            terms.update(row_key(row) for row in self.place.rows)
        return frozenset(terms)

    @property
    def exact(self) -> Fraction:
        """The value as an exact fraction (a share as a fraction, not a percentage)."""
        return rounding.exact(self.value)

    @property
    def text(self) -> str:
        """The figure as a report should write it: `89`, `11.2%`."""
        return self.written(0 if self.kind == "count" else self.decimals)

    def written(self, decimals: int) -> str:
        """The figure at `decimals` places, by the rounding rule, `%` after a share."""
        return rounding.written(self.scaled, decimals, percent=self.kind == "share", grouped=True)

    def fits(self, number: StatedNumber) -> bool:
        """Whether the number is of this figure's kind: a percentage for a share."""
        return number.percent == (self.kind == "share")

    def agrees(self, number: StatedNumber) -> bool:
        """Whether the number states this figure, at the precision it is written."""
        return self.fits(number) and rounding.agrees(self.scaled, number.value, number.decimals)

    def exact_text(self) -> str:
        """The exact value as messages show it: `3/2000 = 0.15%` for a fraction, `21.6667`
        for a value given as a decimal, `89` for a whole number."""
        unit = "%" if self.kind == "share" else ""
        shown = _decimal(self.scaled) + unit
        if isinstance(self.value, Fraction) and self.value.denominator != 1:
            return f"{self.value} = {shown}"
        return shown

    @cached_property
    def scaled(self) -> Fraction:
        """The exact value as written: a share as a percentage (`Fraction(10, 89)` is
        1000/89), anything else as it is; worked out once per figure."""
        return self.exact * 100 if self.kind == "share" else self.exact


def _decimal(value: Fraction) -> str:
    """A fraction as a decimal: exact when it ends within 6 places, else to 6 places and `…`."""
    for places in range(7):
        if (value * 10**places).denominator == 1:
            return rounding.written(value, places)
    return rounding.written(value, 6) + "…"


#: `compute(documents, index)`: the figures, from the rule's sources (by name) and the index.
Compute = Callable[[Mapping[str, Any], EvidenceIndex], Iterable[Figure]]


@dataclass(frozen=True)
class FigureRule:
    """Which sections of which Markdown artifact state figures, and how to compute them
    from the JSON artifacts named in `sources` (module docstring)."""

    artifact: str
    sections: tuple[str, ...]
    sources: tuple[str, ...]
    compute: Compute
    #: Whether the claims about the data outside `sections` are checked too (module
    #: docstring): each must equal some figure of its kind.
    everywhere: bool = True
