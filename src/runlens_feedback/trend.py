"""The trend of each theme, from a date column of the input's metadata.

`row_metadata` maps a feedback id to its other columns. The date column is the first column
whose name is `created_at`, else one that names a date (`date`, `time`, `timestamp`,
`created`, `submitted`, `日期`, `时间`, case-insensitive, in that order of preference).
Values are parsed leniently: ISO 8601 dates and datetimes (`2024-05-03`,
`2024-05-03T10:00:00Z`), `2024/05/03`, `2024.05.03`, `2024年5月3日`, `05/03/2024`
(month first) and Unix timestamps in seconds or milliseconds; anything else is ignored.

The *recent period* is the latest calendar month among the parsed dates when they span at
least two months, else the latest ISO week when they span two weeks; with one week or
fewer there is no trend. A theme's share in a period is its problem rows dated in the period
over all analysed rows dated in it. A theme is

- `rising` when its recent share is at least 1.5 times its earlier share (or it is new) and
  at least 3 of its problem rows are recent;
- `falling` when its recent share is at most half its earlier share and it had at least 3
  earlier problem rows;
- `too_few` when the shares differ that much but the rows are too few to say so (a rise
  with fewer than 3 recent rows, a fall from fewer than 3 earlier ones): "13.3% vs 2.7%"
  from 2 rows is no trend, and not a steady one either;
- `steady` otherwise (the shares are within those bounds).

Cost: one pass over the items; each distinct date string is parsed once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from fractions import Fraction
from typing import Any, Literal, cast

from runlens import exact_value

Direction = Literal["rising", "falling", "steady", "too_few"]

_PREFERRED = ("created_at",)
_DATE_WORDS = ("date", "time", "timestamp", "created", "submitted", "日期", "时间")
_FORMATS = ("%Y/%m/%d", "%Y.%m.%d", "%m/%d/%Y", "%Y/%m/%d %H:%M", "%Y/%m/%d %H:%M:%S")
_CHINESE = re.compile(r"^\s*(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
RISE = 1.5
FALL = 0.5
MIN_ROWS = 3


@dataclass(frozen=True)
class Trend:
    """A theme's share in the recent period and before it: exact fractions of the analysed
    rows dated in each (`recent_total`, `before_total`), written by RunLens's one rounding
    rule (`runlens.as_percent`)."""

    period: str
    recent_share: Fraction
    before_share: Fraction
    recent_rows: int
    before_rows: int
    direction: Direction
    recent_total: int = 0
    before_total: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "direction": self.direction,
            "recent_share": round(float(self.recent_share), 4),
            "before_share": round(float(self.before_share), 4),
            "recent_rows": self.recent_rows,
            "recent_total": self.recent_total,
            "before_rows": self.before_rows,
            "before_total": self.before_total,
        }

    @classmethod
    def from_dict(cls, trend: Mapping[str, Any]) -> Trend | None:
        """A trend as `as_dict` wrote it (shares from its counts, else from the rounded
        shares of a summary written without them); None when it names no direction."""
        direction = trend.get("direction")
        if direction not in ("rising", "falling", "steady", "too_few"):
            return None
        counts = [_count(trend.get(key)) for key in _COUNTS]
        recent_rows, recent_total, before_rows, before_total = counts
        return cls(
            str(trend.get("period") or ""),
            _share(recent_rows, recent_total, trend.get("recent_share")),
            _share(before_rows, before_total, trend.get("before_share")),
            recent_rows,
            before_rows,
            direction,
            recent_total,
            before_total,
        )


_COUNTS = ("recent_rows", "recent_total", "before_rows", "before_total")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _share(rows: int, total: int, written: Any) -> Fraction:
    if total:
        return Fraction(rows, total)
    if isinstance(written, int | float) and not isinstance(written, bool):
        return exact_value(written)
    return Fraction(0)


def date_column(row_metadata: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The metadata column that holds the rows' dates (module docstring), or None."""
    columns: dict[str, None] = {}
    last: Any = None
    for values in row_metadata.values():
        keys = values.keys()
        if keys == last:
            continue  # the columns of the row before (the usual table): nothing new
        columns.update(dict.fromkeys(values))
        if len(columns) > 200:
            break
        last = keys
    by_fold = {str(name).casefold().strip(): str(name) for name in columns}
    for name in _PREFERRED:
        if name in by_fold:
            return by_fold[name]
    for word in _DATE_WORDS:
        for folded, name in by_fold.items():
            if word in folded:
                return name
    return None


def parse_date(value: Any) -> date | None:
    """A date from a metadata value (module docstring), None when it is not one."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_timestamp(float(value))
    text = str(value or "").strip()
    if not text:
        return None
    if re.fullmatch(r"\d{9,13}(\.\d+)?", text):
        return _from_timestamp(float(text))
    iso = text.replace("Z", "+00:00") if text.endswith("Z") else text
    try:
        return datetime.fromisoformat(iso).date()
    except ValueError:
        pass
    match = _CHINESE.match(text)
    if match:
        try:
            return date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    for form in _FORMATS:
        try:
            return datetime.strptime(text, form).date()
        except ValueError:
            continue
    return None


def _from_timestamp(seconds: float) -> date | None:
    if seconds > 1e11:  # milliseconds
        seconds /= 1000
    if not 1e8 <= seconds <= 4e9:
        return None
    return datetime.fromtimestamp(seconds, tz=UTC).date()


def month_name(day: date) -> str:
    """`2024-06`: how a month is named in trends, breakdowns and the chart."""
    return f"{day.year:04d}-{day.month:02d}"


def week_name(day: date) -> str:
    """`2024-W23`: an ISO week's name."""
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


@dataclass(frozen=True)
class Periods:
    """Each dated feedback id's period flag (True: recent) and the recent period's name."""

    recent: str
    flags: Mapping[str, bool]
    recent_total: int
    before_total: int


def periods(
    ids: Sequence[str], row_metadata: Mapping[str, Mapping[str, Any]] | None
) -> Periods | None:
    """The split of the dated rows into the recent period and before (module docstring)."""
    if not row_metadata:
        return None
    column = date_column(row_metadata)
    if column is None:
        return None
    get = row_metadata.get
    raws = [(get(feedback_id) or _NO_ROW).get(column) for feedback_id in ids]
    days = _days(ids, raws)
    if not days:
        return None
    distinct_days = set(days.values())
    for bucket in (month_name, week_name):
        named = {day: bucket(day) for day in distinct_days}  # once per distinct day
        distinct = set(named.values())
        if len(distinct) >= 2:
            recent = max(distinct)
            in_recent = {day: name == recent for day, name in named.items()}
            flags = dict(zip(days, map(in_recent.__getitem__, days.values()), strict=True))
            recent_total = sum(flags.values())
            return Periods(recent, flags, recent_total, len(flags) - recent_total)
    return None


_NO_ROW: Mapping[str, Any] = {}


def _days(ids: Sequence[str], raws: Sequence[Any]) -> dict[str, date]:
    """The date of each dated id from its value (`raws`, in the same order); each distinct
    value parsed once (values that read alike, as the first of them)."""
    try:
        distinct: dict[Any, date | None] | None = dict.fromkeys(raws)
    except TypeError:  # an unhashable value (a list or an object)
        distinct = None
    if distinct is not None and all(raw is None or type(raw) is str for raw in distinct):
        # Text values (the usual table): their dates read for all ids at C speed.
        for raw in distinct:
            distinct[raw] = parse_date(raw)
        found = dict(zip(ids, map(distinct.__getitem__, raws), strict=True))
        if None not in found.values():
            return cast("dict[str, date]", found)
        return {feedback_id: day for feedback_id, day in found.items() if day is not None}
    parsed: dict[str, date | None] = {}
    days: dict[str, date] = {}
    for feedback_id, raw in zip(ids, raws, strict=True):
        key = str(raw)
        if key not in parsed:
            parsed[key] = parse_date(raw)
        day = parsed[key]
        if day is not None:
            days[feedback_id] = day
    return days


def theme_trend(problem_ids: Sequence[str], split: Periods | None) -> Trend | None:
    """The trend of a theme from its problem rows' ids, None without dated periods."""
    if split is None or not split.recent_total or not split.before_total:
        return None
    counted = Counter(map(split.flags.get, problem_ids))  # None: a row without a date
    recent, before = counted[True], counted[False]
    recent_share = Fraction(recent, split.recent_total)
    before_share = Fraction(before, split.before_total)
    direction: Direction = "steady"
    if recent and (before_share == 0 or recent_share >= RISE * before_share):
        direction = "rising" if recent >= MIN_ROWS else "too_few"
    elif before and recent_share <= FALL * before_share:
        direction = "falling" if before >= MIN_ROWS else "too_few"
    return Trend(
        split.recent,
        recent_share,
        before_share,
        recent,
        before,
        direction,
        split.recent_total,
        split.before_total,
    )
