"""Breakdowns of the analysed rows by the input's metadata columns (channel, segment, rating,
a date as a trend), bounded whatever the input.

`breakdowns(items, row_metadata)`: `row_metadata` maps each feedback id to its row's other
columns (`{column: value}`, the id and text columns left out); only analysed rows count, each
row once. A column is broken down when:

- it is a *date* column: at least 90% of its non-blank values read as dates
  (`YYYY-MM-DD`, `YYYY/MM/DD` or `YYYY.MM.DD`, a time after it allowed, or `YYYY-MM`): a
  trend by month when the rows span at least `MIN_MONTHS` months, else by ISO week
  (`2026-W07`) when they span at least two weeks; the latest `MAX_PERIODS` periods are listed
  and the rows before them are counted as one `earlier` entry;
- else it is a *category* column: at most `MAX_VALUES` distinct non-blank values, at least
  two, no more than half as many values as non-blank rows (an id or a comment is not a
  category), and values of at most `FREE_TEXT_CHARS` characters on average (free text is not
  a category). Values are listed by rows (most first), numbers in numeric order.

Other columns are listed under `skipped` with the reason. At most `MAX_COLUMNS` columns are
broken down, in input order. Rows without a value are one `blank` entry. Shape:

    {columns: [{column, kind: category|trend, period: month|week|None, rows,
                values: [{value, label, special: None|blank|earlier, rows,
                          sentiment: {positive, neutral, negative, mixed}}]}],
     skipped: [{column, reason}]}

`label` is how the report writes a value and how the figure check finds it
(`runlens_feedback.figures`): the value on one line; a value with a digit in it is written
after its column name (`rating 5`), so its digits are part of the name, not a stated number.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from runlens_feedback.contracts import SENTIMENTS
from runlens_feedback.trend import month_name, week_name

if TYPE_CHECKING:
    from runlens import EvidenceIndex, SourceTable

Item = Mapping[str, Any]
RowMetadata = Mapping[str, Mapping[str, Any]]

MAX_COLUMNS = 4
MAX_VALUES = 12
MAX_PERIODS = 12
MIN_MONTHS = 3
FREE_TEXT_CHARS = 40
LABEL_CHARS = 40
#: Share of non-blank values that must read as dates for a column to be a trend.
DATE_SHARE = 0.9
#: How the report writes (and the figure check finds) the entries that are no value of the
#: column, in English and in Chinese.
SPECIAL_LABELS = {
    "blank": ("no value", "未填写"),
    "earlier": ("earlier", "更早"),
    "undated": ("no date", "无日期"),
}
_DATE = re.compile(r"\s*(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?(?:[T ][\d:.]+.*)?\s*$")
_NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d+)?\s*$")


def breakdowns(
    items: Sequence[Item], row_metadata: RowMetadata | None, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """The breakdowns of `items` by the columns of `row_metadata` (module docstring).
    `ids`: each item's feedback id as text, when the caller has read them already."""
    result: dict[str, Any] = {"columns": [], "skipped": []}
    if not row_metadata:
        return result
    by_sentiment = _analysed(items, row_metadata, ids)
    for column in _columns(row_metadata):
        values = _pairs(by_sentiment, column)
        entry = _trend(column, values)
        if isinstance(entry, str):
            entry = _category(column, values, reason=entry)
        if isinstance(entry, str):
            result["skipped"].append({"column": column, "reason": entry})
        elif len(result["columns"]) < MAX_COLUMNS:
            result["columns"].append(entry)
        else:
            result["skipped"].append({"column": column, "reason": "too many columns"})
    return result


def _pairs(by_sentiment: Mapping[str, list[Mapping[str, Any]]], column: str) -> Pairs:
    """The column's (value, sentiment) pairs counted, each value trimmed text: the values of
    each sentiment's rows counted as read first, so each distinct value is made text and
    trimmed once, and no pair is made per row."""
    pairs: Pairs = Counter()
    for sentiment, metas in by_sentiment.items():
        values = [meta.get(column) for meta in metas]
        try:
            raw = Counter(values)
        except TypeError:  # an unhashable value
            raw = None
        if raw is None or not all(value is None or type(value) is str for value in raw):
            # Equal values of other types (1, 1.0 and True) count as one but read apart.
            raw = Counter([str(value or "").strip() for value in values])
        for value, count in raw.items():
            pairs[(value or "").strip(), sentiment] += count
    return pairs


def _analysed(
    items: Sequence[Item], row_metadata: RowMetadata, ids: Sequence[str] | None = None
) -> dict[str, list[Mapping[str, Any]]]:
    """The metadata of the analysed rows by their sentiment, each row once, in item order.

    When no id repeats and every id has its metadata (the usual analysis), the lists are
    read in one pass each, without a set of the ids seen."""
    if ids is None:
        ids = [str(item.get("feedback_id")) for item in items]
    if len(set(ids)) == len(ids):
        found = [row_metadata.get(row_id) for row_id in ids]
        if None not in found:
            metas = cast("list[Mapping[str, Any]]", found)
            sentiments = [
                s if (s := item.get("sentiment")) in SENTIMENTS else "neutral" for item in items
            ]
            by_sentiment: dict[str, list[Mapping[str, Any]]] = {s: [] for s in SENTIMENTS}
            add = {sentiment: rows.append for sentiment, rows in by_sentiment.items()}
            for row, sentiment in zip(metas, sentiments, strict=True):
                add[sentiment](row)
            return by_sentiment
    seen: set[str] = set()
    by_sentiment = {}  # by sentiment, in first-seen order
    for row_id, item in zip(ids, items, strict=True):
        meta = row_metadata.get(row_id)
        if meta is None or row_id in seen:
            continue
        seen.add(row_id)
        by_sentiment.setdefault(_sentiment(item.get("sentiment")), []).append(meta)
    return by_sentiment


def _sentiment(value: Any) -> str:
    return value if value in SENTIMENTS else "neutral"


def _columns(row_metadata: RowMetadata) -> list[str]:
    columns: dict[str, None] = {}
    last: Any = None
    for meta in row_metadata.values():
        keys = meta.keys()
        if keys == last:
            continue  # the same columns as the row before (the usual table): nothing new
        columns.update(dict.fromkeys(map(str, meta)))
        last = keys
    return list(columns)


#: Double quotation marks made single in labels: a value is no quotation of a row.
_SINGLE_MARKS = str.maketrans({"“": "‘", "”": "’", '"': "'", "「": "『", "」": "』", "`": "'"})


def label_of(column: str, value: str) -> str:
    """How a value is written and found (module docstring): on one line, at most
    `LABEL_CHARS` characters, its double quotation marks made single (a report's quotations
    are citations of rows, and a value cites none)."""
    shown = " ".join(value.split()).translate(_SINGLE_MARKS)[:LABEL_CHARS].strip()
    if any(char.isdigit() for char in shown):
        return f"{column} {shown}"
    return shown


#: The rows of a column as (value, sentiment) pairs, each with how many rows hold it: a
#: column is judged by its distinct values, whatever its number of rows.
Pairs = Counter[tuple[str, str]]


def _entry(
    value: str, label: str, sentiments: Mapping[str, int], special: str | None = None
) -> dict[str, Any]:
    """One value's entry from the number of its rows by sentiment."""
    counted = Counter(sentiments)
    return {
        "value": value,
        "label": label,
        "special": special,
        "rows": sum(counted.values()),
        "sentiment": {s: counted.get(s, 0) for s in SENTIMENTS},
    }


def _blank(values: Pairs) -> list[dict[str, Any]]:
    blank: Counter[str] = Counter()
    for (value, sentiment), count in values.items():
        if not value:
            blank[sentiment] += count
    return [_entry("", "", blank, "blank")] if +blank else []


def _category(column: str, values: Pairs, *, reason: str) -> dict[str, Any] | str:
    distinct: Counter[str] = Counter()
    for (value, _), count in values.items():
        if value:
            distinct[value] += count
    given = sum(distinct.values())
    if len(distinct) < 2:
        return "one value" if distinct else "no values"
    if len(distinct) > MAX_VALUES or len(distinct) > given // 2:
        return "too many distinct values"
    if sum(len(value) * count for value, count in distinct.items()) / given > FREE_TEXT_CHARS:
        return "free text"
    numeric = all(_NUMBER.match(value) for value in distinct)
    order = (
        sorted(distinct, key=lambda v: (float(v), v))
        if numeric
        else sorted(distinct, key=lambda v: (-distinct[v], v))
    )
    by_value: dict[str, Counter[str]] = {value: Counter() for value in order}
    for (value, sentiment), count in values.items():
        if value:
            by_value[value][sentiment] += count
    entries = [_entry(v, label_of(column, v), s) for v, s in by_value.items()]
    return {
        "column": column,
        "kind": "category",
        "period": None,
        "rows": values.total(),
        "values": entries + _blank(values),
    }


def _date(value: str) -> dt.date | None:
    match = _DATE.match(value)
    if match is None:
        return None
    year, month, day = int(match[1]), int(match[2]), int(match[3] or 1)
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _trend(column: str, values: Pairs) -> dict[str, Any] | str:
    """The column as a trend, or why it is none (then it may still be a category)."""
    days = {value: _date(value) for value in {value for value, _ in values if value}}
    dated = [
        (days[value], sentiment, count) for (value, sentiment), count in values.items() if value
    ]
    given = sum(count for _, _, count in dated)
    if not given or sum(count for day, _, count in dated if day) < DATE_SHARE * given:
        return "not dates"
    distinct = {day for day in days.values() if day is not None}
    months = {(day.year, day.month) for day in distinct}
    weeks = {day.isocalendar()[:2] for day in distinct}
    if len(months) >= MIN_MONTHS:
        period, name = "month", month_name
    elif len(weeks) >= 2:
        period, name = "week", week_name
    else:
        return "dates within one week"
    by_period: dict[str, Counter[str]] = {}
    undated: Counter[str] = Counter()
    for day, sentiment, count in dated:
        if day is None:
            undated[sentiment] += count
        else:
            by_period.setdefault(name(day), Counter())[sentiment] += count
    periods = sorted(by_period)
    shown, earlier = periods[-MAX_PERIODS:], periods[:-MAX_PERIODS]
    entries = []
    if earlier:
        older = sum((by_period[p] for p in earlier), Counter())
        entries.append(_entry(earlier[-1], "", older, "earlier"))
    entries += [_entry(p, p, by_period[p]) for p in shown]
    if undated:
        entries.append(_entry("", "", undated, "undated"))
    return {
        "column": column,
        "kind": "trend",
        "period": period,
        "rows": values.total(),
        "values": entries + _blank(values),
    }


def table_metadata(table: SourceTable, index: EvidenceIndex) -> dict[str, dict[str, str]]:
    """Each row's other columns by its id (`{feedback_id: {column: value}}`, the index's id
    and text columns left out): the `row_metadata` to break down, read as the figure check
    reads the source (`runlens.SOURCE_ROWS`: the index's ids in source
    order, so ids made from row numbers pair up too)."""
    skipped = (index.id_column, index.text_column)
    kept = [(n, column) for n, column in enumerate(table.columns) if column not in skipped]
    ids = (row_id for row_id, _, _ in index.rows())
    return {
        row_id: {column: values[n] for n, column in kept}
        for row_id, values in zip(
            ids, (table.row_values(at) for at in range(table.total_rows)), strict=True
        )
    }
