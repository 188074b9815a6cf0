"""One rounding rule for every figure RunLens writes or checks.

A figure is an exact value: an integer or a fraction (`Fraction(3, 2000)` for 3 rows of
2,000), never a binary float, whose `0.0015` is a little more or a little less than 3/2000.
Written at `d` decimal places, it is rounded **half up**: to the nearer multiple of
`10**-d`, and at an exact half-way point away from zero (3/2000 = 0.15% is `0.2%` at one
decimal, 1/400 = 0.25% is `0.3%`, 1/16 = 6.25% is `6%` at none and `6.3%` at one).

A stated number agrees with a figure when it is the figure rounded this way at the precision
it is written. At an exact half-way point both neighbours are equally near, so the other one
(`0.1%` for 0.15%: what rounding half to even writes) agrees too; anywhere else only the one
rounding. The writer of a report, the tool that gives a model its figures, a chart and the
checker all call these functions, so what RunLens writes is what it accepts.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

#: A figure's value as a plugin may give it; floats are taken as the decimal they print as.
Number = int | Fraction | Decimal | float
#: How messages name the rule.
RULE = "rounded half up"


def exact(value: Number) -> Fraction:
    """The exact value of a figure (a float as the shortest decimal that prints it: `0.1`
    is 1/10, not the binary fraction nearest to it)."""
    if isinstance(value, float):
        return Fraction(Decimal(repr(value)))
    return Fraction(value)


def round_half_up(value: Number, decimals: int) -> Decimal:
    """`value` at `decimals` places, half-way points away from zero (module docstring)."""
    scaled = exact(value) * 10**decimals
    magnitude = abs(scaled)
    whole = int(magnitude + Fraction(1, 2))  # floor(|x| + 1/2)
    return _at(-whole if scaled < 0 else whole, decimals)


def is_tie(value: Number, decimals: int) -> bool:
    """Whether `value` lies exactly half-way between two numbers of `decimals` places."""
    doubled = exact(value) * 10**decimals * 2
    return bool(doubled.denominator == 1 and doubled.numerator % 2 == 1)


def agrees(value: Number, stated: Decimal, decimals: int) -> bool:
    """Whether `stated`, written with `decimals` places, states `value` (module docstring)."""
    rounded = round_half_up(value, decimals)
    if stated == rounded:
        return True
    if not is_tie(value, decimals):
        return False
    step = Decimal(1).scaleb(-decimals)
    other = rounded - step if exact(value) >= 0 else rounded + step
    return stated == other


def agreeing(value: Number, decimals: int) -> tuple[Decimal, ...]:
    """Every number written with `decimals` places that `agrees` with `value`: the value
    rounded half up and, at an exact half-way point, the other neighbour."""
    rounded = round_half_up(value, decimals)
    if not is_tie(value, decimals):
        return (rounded,)
    step = Decimal(1).scaleb(-decimals)
    return (rounded, rounded - step if exact(value) >= 0 else rounded + step)


def written(value: Number, decimals: int, *, percent: bool = False, grouped: bool = False) -> str:
    """`value` as RunLens writes it: rounded half up, `%` after a percentage, thousands
    separated by commas when `grouped`."""
    rounded = round_half_up(value, decimals)
    text = f"{rounded:,f}" if grouped else f"{rounded:f}"
    return text + ("%" if percent else "")


def share(part: int, whole: int) -> Fraction:
    """`part` of `whole` as an exact fraction (none of nothing: 0)."""
    return Fraction(part, whole) if whole else Fraction(0)


def percent(part: int, whole: int, decimals: int = 1) -> str:
    """`part` of `whole` as a percentage at `decimals` places: `percent(3, 2000)` is
    `0.2%`; of nothing, `0.0%`."""
    return as_percent(share(part, whole), decimals)


def as_percent(fraction: Number, decimals: int = 1) -> str:
    """A fraction of one as a percentage at `decimals` places: `as_percent(Fraction(1, 8))`
    is `12.5%`."""
    return written(exact(fraction) * 100, decimals, percent=True)


def _at(units: int, decimals: int) -> Decimal:
    """`units * 10**-decimals`, written with exactly `decimals` places."""
    return Decimal(units).scaleb(-decimals)
