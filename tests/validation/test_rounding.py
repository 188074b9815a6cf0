"""One rounding rule (`runlens.validation.rounding`): what the writer writes, the checker
accepts, for every count and total, at every precision a report writes."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runlens import Figure, percent, round_half_up
from runlens.validation.figures import check_figures
from runlens.validation.rounding import agrees, is_tie, written

SECTION = "## Summary"


def verdicts(markdown_line: str, figure: Figure) -> list[str]:
    markdown = f"{SECTION}\n\n{markdown_line}\n"
    return [statement.verdict for statement in check_figures(markdown, [SECTION], [figure])]


def late(count: int, total: int) -> Figure:
    return Figure("late.share", Fraction(count, total), "share", (("late",),))


@pytest.mark.parametrize(
    ("count", "total", "text"),
    [(3, 2000, "0.2%"), (11, 2000, "0.6%"), (87, 2000, "4.4%"), (1023, 2000, "51.2%")],
)
def test_half_way_shares_are_rounded_half_up(count: int, total: int, text: str) -> None:
    assert percent(count, total) == text
    assert verdicts(f"Late: {text} of orders.", late(count, total)) == ["agrees"]


@settings(max_examples=3000, deadline=None)
@given(
    total=st.integers(1, 100_000),
    data=st.data(),
    decimals=st.sampled_from([0, 1, 2]),
)
def test_every_share_the_writer_writes_the_checker_accepts(
    total: int, data: st.DataObject, decimals: int
) -> None:
    count = data.draw(st.integers(0, total))
    text = percent(count, total, decimals)
    assert verdicts(f"Late: {text} of orders.", late(count, total)) == ["agrees"]
    # One step off is a mismatch, unless the figure lies half-way (both neighbours are nearest).
    value = Fraction(count, total) * 100
    step = Decimal(1).scaleb(-decimals)
    rounded = round_half_up(value, decimals)
    for other in (rounded - step, rounded + step):
        if other < 0:
            continue
        expected = "agrees" if is_tie(value, decimals) and other < rounded else "mismatch"
        line = f"Late: {written(other, decimals, percent=True)} of orders."
        assert verdicts(line, late(count, total)) == [expected]


@pytest.mark.parametrize("total", [16, 40, 80, 400, 2000])
def test_every_half_way_point_of_these_totals_round_trips(total: int) -> None:
    for count in range(total + 1):
        for decimals in (0, 1, 2):
            value = Fraction(count, total) * 100
            text = percent(count, total, decimals)
            assert agrees(value, Decimal(text.rstrip("%")), decimals), (count, total, text)


def test_the_rule_works_on_exact_values_not_floats() -> None:
    # 0.15 as a binary float is a little less than 3/20, so float formatting writes 0.1.
    assert f"{3 / 2000:.1%}" != percent(3, 2000)
    assert round_half_up(Fraction(3, 20), 1) == Decimal("0.2")
    assert round_half_up(Fraction(-3, 20), 1) == Decimal("-0.2")  # away from zero
    assert round_half_up(0.15, 1) == Decimal("0.2")  # a float is the decimal it prints as
    assert written(1234567, 0, grouped=True) == "1,234,567"
    assert percent(0, 0) == "0.0%"


def test_a_mismatch_names_the_exact_value_and_the_rule() -> None:
    markdown = f"{SECTION}\n\nLate: 0.3% of orders.\n"
    (statement,) = check_figures(markdown, [SECTION], [late(3, 2000)])
    assert statement.verdict == "mismatch"
    from runlens.validation.figures import mismatch_reason

    assert mismatch_reason(statement.tied[0], 1) == (
        "late.share: 3/2000 = 0.15%, rounded half up to 1 decimal"
    )


@settings(max_examples=500, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.integers(-5000, 5000),
            st.fractions(min_value=-50, max_value=50, max_denominator=400),
            st.sampled_from([Fraction(3, 2000), Fraction(1, 400), Fraction(1, 16), 0.125, 2.5]),
        ),
        min_size=1,
        max_size=6,
    ),
    kinds=st.lists(st.sampled_from(["count", "share", "value"]), min_size=6, max_size=6),
    stated=st.decimals(min_value=-6000, max_value=6000, places=2, allow_nan=False),
    decimals=st.integers(0, 3),
    percent_sign=st.booleans(),
)
def test_agreeing_with_any_figure_is_asking_each_figure(
    values: list[Fraction | int | float],
    kinds: list[str],
    stated: Decimal,
    decimals: int,
    percent_sign: bool,
) -> None:
    """`FigureNames.agrees_with_any` (one lookup among the values that agree with some
    figure) says what asking every figure `Figure.agrees` says, ties and signs included."""
    from runlens.validation.figure_names import FigureNames
    from runlens.validation.numbers import StatedNumber

    figures = [
        Figure(f"f{n}", value, kind, (("rows",),))  # type: ignore[arg-type]
        for n, (value, kind) in enumerate(zip(values, kinds, strict=False))
    ]
    names = FigureNames(figures)
    for candidate in (stated.quantize(Decimal(1).scaleb(-decimals)), *_written(figures, decimals)):
        number = StatedNumber(str(candidate), candidate, decimals, percent_sign, 0, 1)
        assert names.agrees_with_any(number) == any(f.agrees(number) for f in figures)


def _written(figures: list[Figure], decimals: int) -> list[Decimal]:
    """Each figure's value at `decimals` places and its neighbours either side."""
    step = Decimal(1).scaleb(-decimals)
    near = []
    for figure in figures:
        rounded = round_half_up(figure.scaled, decimals)
        near += [rounded - step, rounded, rounded + step]
    return near
