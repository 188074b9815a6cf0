"""Figures named by their place (`runlens.Place`): a table cell's figure comes from the table's
structure (which table, which row key, which measure), never from what a cell says."""

from __future__ import annotations

from fractions import Fraction

from runlens import Figure, Label, Place
from runlens.validation.figures import Statement, check_figures

SECTION = "## Context"
ROWS: tuple[Label, ...] = (("rows",),)
SHARE: tuple[Label, ...] = (("share",),)
NEGATIVE: tuple[Label, ...] = (("negative",),)
NEGATIVE_SHARE: tuple[Label, ...] = (("negative", "share"),)
POSITIVE: tuple[Label, ...] = (("positive",),)


def placed(column: str, value: str, counts: dict[str, int], analysed: int) -> list[Figure]:
    """A breakdown row's figures, placed like the Feedback Analysis plugin places them."""
    key = f"breakdown.{column}.{value}"

    def place(columns: tuple[Label, ...]) -> Place:
        return Place(((column,),), (value,), columns)

    rows, negative = counts["rows"], counts["negative"]
    figures = [
        Figure(f"{key}.rows", rows, "count", (), place=place(ROWS)),
        Figure(f"{key}.share", Fraction(rows, analysed), "share", (), place=place(SHARE)),
        Figure(f"{key}.positive", counts["positive"], "count", (), place=place(POSITIVE)),
        Figure(f"{key}.negative", negative, "count", (), place=place(NEGATIVE)),
    ]
    if rows:
        share = Fraction(negative, rows)
        figures.append(
            Figure(f"{key}.negative.share", share, "share", (), place=place(NEGATIVE_SHARE))
        )
    return figures


#: Whole-file figures whose labels are the very words the breakdown's values spell.
FILE = [
    Figure("sentiment.negative", 1000, "count", (("negative",),)),
    Figure("sentiment.positive", 996, "count", (("positive",),)),
    Figure("rows.analysed", 1996, "count", (("analysed",),)),
]
TABLE = """## Context

By `label`:

| label | Rows | Share | Positive | Negative | Negative share |
| --- | --- | --- | --- | --- | --- |
| negative | 1000 | 50.1% | 51 | 902 | 90.2% |
| positive | 996 | 49.9% | 900 | 50 | 5.0% |
"""
LABEL_FIGURES = [
    *placed("label", "negative", {"rows": 1000, "positive": 51, "negative": 902}, 1996),
    *placed("label", "positive", {"rows": 996, "positive": 900, "negative": 50}, 1996),
    *FILE,
]


def judged(markdown: str, figures: list[Figure]) -> list[Statement]:
    return check_figures(markdown, [SECTION], figures)


def test_a_row_keyed_by_a_measure_word_is_that_rows_figures() -> None:
    stated = judged(TABLE, LABEL_FIGURES)
    assert [(s.number.text, s.verdict) for s in stated] == [
        ("1000", "agrees"),
        ("50.1%", "agrees"),
        ("51", "agrees"),
        ("902", "agrees"),
        ("90.2%", "agrees"),
        ("996", "agrees"),
        ("49.9%", "agrees"),
        ("900", "agrees"),
        ("50", "agrees"),
        ("5.0%", "agrees"),
    ]
    tied = {s.number.text: [f.key for f in s.tied] for s in stated}
    assert tied["1000"] == ["breakdown.label.negative.rows"]  # not the negative count
    assert tied["902"] == ["breakdown.label.negative.negative"]
    assert tied["90.2%"] == ["breakdown.label.negative.negative.share"]  # not the count's
    assert tied["51"] == ["breakdown.label.negative.positive"]


def test_a_wrong_cell_is_a_mismatch_against_its_own_place() -> None:
    wrong = TABLE.replace("| 902 |", "| 901 |")
    (bad,) = [s for s in judged(wrong, LABEL_FIGURES) if s.verdict != "agrees"]
    assert bad.number.text == "901" and bad.verdict == "mismatch"
    assert [f.key for f in bad.tied] == ["breakdown.label.negative.negative"]


def test_values_that_are_numbers_priorities_or_blank_words_are_row_keys() -> None:
    figures = [
        *placed("priority", "P1", {"rows": 3, "positive": 1, "negative": 2}, 7),
        *placed("priority", "rating 5", {"rows": 4, "positive": 4, "negative": 0}, 7),
        *placed("priority", "no value", {"rows": 0, "positive": 0, "negative": 0}, 7),
        *FILE,
    ]
    markdown = """## Context

By `priority`:

| priority | Rows | Share | Positive | Negative | Negative share |
| --- | --- | --- | --- | --- | --- |
| P1 | 3 | 42.9% | 1 | 2 | 66.7% |
| rating 5 | 4 | 57.1% | 4 | 0 | 0.0% |
| no value | 0 | 0.0% | 0 | 0 |  |
"""
    stated = judged(markdown, figures)
    assert all(s.verdict == "agrees" for s in stated), [(s.number.text, s.verdict) for s in stated]
    assert "5" not in [s.number.text for s in stated]  # the digit of `rating 5` is its name


def test_the_table_is_named_by_its_lead_not_by_a_cell() -> None:
    figures = [
        *placed("channel", "email", {"rows": 2, "positive": 0, "negative": 2}, 4),
        *placed("segment", "email", {"rows": 3, "positive": 3, "negative": 0}, 4),
    ]
    markdown = """## Context

By `segment`:

| segment | Rows | Share | Positive | Negative | Negative share |
| --- | --- | --- | --- | --- | --- |
| email | 3 | 75.0% | 3 | 0 | 0.0% |
"""
    stated = judged(markdown, figures)
    assert all(s.verdict == "agrees" for s in stated)
    assert {f.key for s in stated for f in s.tied} == {
        f"breakdown.segment.email.{m}" for m in ("rows", "share", "positive", "negative")
    } | {"breakdown.segment.email.negative.share"}


def test_a_placed_figure_is_not_named_in_prose() -> None:
    # "negative" and "label" in a sentence name the whole file's negative rows, not a cell.
    markdown = "## Context\n\nSentiment by label: 1000 negative rows.\n"
    (stated,) = judged(markdown, LABEL_FIGURES)
    assert [f.key for f in stated.tied] == ["sentiment.negative"]


def test_a_chart_label_may_be_a_place_row_key() -> None:
    figure = placed("label", "negative", {"rows": 1, "positive": 0, "negative": 1}, 1)[0]
    assert "negative" in figure.names
