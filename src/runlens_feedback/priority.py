"""The priority of a pain point, from the severity of its problem rows, their reach and
their trend (`priority_for`); the aggregate (`runlens_feedback.aggregate`) gives each pain
point one.

Priority of a pain point is a sum of points, where `n` is its problem rows, `share` is `n`
over all analysed rows, and `critical`/`high` count its problem rows of that severity. No
single row sets a priority: a severity term counts only from `MIN_SEVERE` (2) rows up.

- severity: 2 when at least half of the `n` rows are high or critical, 1 when a quarter are
  (with at least 2 such rows), else 0;
- critical: 1 for at least 2 critical rows, else 0;
- reach: 2 for share >= 10%, 1 for share >= 3%, else 0;
- trend (only with `row_metadata` holding a date column, `runlens_feedback.trend`): +1 when
  the theme is rising (its share of the latest month or week is at least 1.5 times its share
  before, from 3 recent rows up), -1 when it is falling, else 0;
- P0 for 5 points or more, P1 for 4, P2 for 2-3, P3 for 0-1.

`priority_reason` says each term and why ("severity +2 (5 of 9 high/critical), critical +0
(1), reach +1 (7.5% of rows), trend +1 (rising: 12.0% in 2024-06 vs 4.0%
before) = 4 points").
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

from runlens import as_percent, percent
from runlens_feedback.contracts import SEVERITIES
from runlens_feedback.trend import Trend

Priority = Literal["P0", "P1", "P2", "P3"]
#: The shares of the analysed rows that earn a pain point its reach points (exact).
_WIDE_REACH = Fraction(10, 100)
_SOME_REACH = Fraction(3, 100)
#: The shares of its problem rows, high or critical, that earn it severity points.
_MOST_SEVERE = Fraction(1, 2)
_SOME_SEVERE = Fraction(1, 4)
#: The fewest rows a severity term counts from: no single row sets a priority.
MIN_SEVERE = 2


def severity_rank(item: Mapping[str, Any]) -> int:
    """0 (low) .. 3 (critical); unknown values rank as low."""
    severity = item.get("severity")
    return SEVERITIES.index(severity) if severity in SEVERITIES else 0


def priority_parts(
    severity: Mapping[str, int], mentions: int, total: int, trend: Trend | None = None
) -> dict[str, int]:
    """The points of a pain point by term (module docstring): `severity`, `critical`, `reach`
    and, with a trend, `trend`. `priority_points` words them; the backlog words them in its
    language."""
    critical, high = severity.get("critical", 0), severity.get("high", 0)
    severe = critical + high
    severe_share = Fraction(severe, mentions) if mentions else Fraction(0)
    points = 0
    if severe >= MIN_SEVERE:
        points = 2 if severe_share >= _MOST_SEVERE else 1 if severe_share >= _SOME_SEVERE else 0
    share = Fraction(mentions, total) if total else Fraction(0)
    parts = {
        "severity": points,
        "critical": 1 if critical >= MIN_SEVERE else 0,
        "reach": 2 if share >= _WIDE_REACH else 1 if share >= _SOME_REACH else 0,
    }
    if trend is not None:
        parts["trend"] = {"rising": 1, "falling": -1}.get(trend.direction, 0)
    return parts


def priority_points(
    severity: Mapping[str, int], mentions: int, total: int, trend: Trend | None = None
) -> tuple[int, list[str]]:
    """The points of a pain point (module docstring) and a phrase for each term."""
    parts = priority_parts(severity, mentions, total, trend)
    critical, high = severity.get("critical", 0), severity.get("high", 0)
    reasons = [
        f"severity {parts['severity']:+d} ({critical + high} of {mentions} high/critical)",
        f"critical {parts['critical']:+d} ({critical})",
        f"reach {parts['reach']:+d} ({percent(mentions, total)} of rows)",
    ]
    if trend is not None:
        reasons.append(f"trend {parts['trend']:+d} ({trend_phrase(trend)})")
    return sum(parts.values()), reasons


def trend_phrase(trend: Trend) -> str:
    """A trend as the priority reason words it: "rising: 20.0% in 2024-06 vs 5.0% before";
    for a change too few rows show, "too few rows to tell: 2 in 2024-06, 13.3% vs 2.7%
    before"."""
    recent, before = as_percent(trend.recent_share), as_percent(trend.before_share)
    if trend.direction == "too_few":
        return (
            f"too few rows to tell: {trend.recent_rows} in {trend.period}, "
            f"{recent} vs {before} before"
        )
    return f"{trend.direction}: {recent} in {trend.period} vs {before} before"


def priority_for(
    severity: Mapping[str, int], mentions: int, total: int, trend: Trend | None = None
) -> tuple[Priority, str]:
    """The priority of a pain point and the reason (module docstring), from the severity
    counts of its problem rows, their number, the number of analysed rows and its trend."""
    points, reasons = priority_points(severity, mentions, total, trend)
    priority: Priority = "P3"
    if points >= 5:
        priority = "P0"
    elif points >= 4:
        priority = "P1"
    elif points >= 2:
        priority = "P2"
    return priority, ", ".join(reasons) + f" = {points} points"
