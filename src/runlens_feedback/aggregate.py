"""The aggregated analysis: what the backlog and the report are written from.

`summarize_analysis(items, ...)` is the one aggregate of analysis items. The batch tool
returns it to the main conversation (so a model with an 8k-token context can write the
backlog and the report from it), and the offline analyst writes its deliverables from it.
Its size is bounded whatever the input's size: at most `TOP_GROUPS` pain points, each with
at most `EVIDENCE_IDS` ids and `EXAMPLES` verbatim quotes (one past the first
`LEADING_GROUPS`), each one line of at most `QUOTE_CHARS` characters (`example_quote`), at
most `KEYWORDS` theme terms, and at most `FAILURE_LINES` failure reasons and entries: under
11 KB of JSON, whether 100 rows or 100,000 are analysed. Every count is exact.

Items are grouped by `theme` when they carry one (trimmed, case-folded, spaces as `_`), else
by their normalised `pain_point`, so items from a model that gives no theme still group by
what they say. A group's rows that report a problem or a request are its *problem rows*
(`is_actionable`); only groups with problem rows are pain points.

Theme names: with a `catalogue` (the run's discovered themes, `runlens_feedback.discovery`)
a pain point's `pain_point` is its theme's name and `keywords` its terms; without one, the
name read from the key (a discovered key is its name in lower case, `discovery.theme_name`),
the theme table's label, or for groups without a theme the most common wording. The theme
"other" (rows no discovered theme fits, and the smallest groups beyond `MAX_THEMES`) is
never a listed pain point: it is counted in `other_groups`, so the biggest listed theme is
never a catch-all and there are at most `MAX_THEMES` themes besides praise and other.

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
Which pain points are listed does not depend on the metadata (the top `TOP_GROUPS` by
priority without the trend, then problem rows, then key, so recomputing the summary from
the items alone, as the figure check does, lists the same groups); the listed ones are then
ordered by the evidence: priority, points, problem rows, high-or-critical rows (the last
three descending) and key; the groups left out are counted in
`other_groups`. Shape:

    {source, total_rows, analysed_rows, unanalysed_rows, problem_rows,
     sentiment: {positive, neutral, negative, mixed}, severity: {low, medium, high, critical},
     languages: {zh: n, en: n, ...}  (only the languages items declare),
     groups, grouped_by: {theme, pain_point},
     pain_points: [{key, grouped_by, pain_point, keywords (up to 8), count, share,
                    problem_rows, priority, priority_reason, points,
                    trend: {period, direction, recent_share, before_share} or null,
                    sentiment (all rows), problem_severity (problem rows),
                    feedback_ids (problem rows),
                    examples: [{feedback_id, evidence_text, shortened, cut_start?, sentiment,
                                severity}],
                    suggested_action}],
     other_groups: {groups, rows, problem_rows},
     positive: {rows, examples},
     failed_batches: {batches, rows, reasons: [{reason, batches, rows}], entries: [...]},
     breakdowns: {columns, skipped}  (by `row_metadata`, `runlens_feedback.breakdowns`),
     warnings: [{code, message, details}]  (`runlens_feedback.genre`)}
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, Protocol

from runlens import (
    MarkdownCitations,
    as_percent,
    cut_quote,
    one_line_quote,
    percent,
)
from runlens_feedback.breakdowns import breakdowns
from runlens_feedback.contracts import REPORT_CONTRACT, SENTIMENTS, SEVERITIES
from runlens_feedback.trend import Periods, Trend, periods, theme_trend

if TYPE_CHECKING:
    from runlens_feedback.discovery import ThemeCatalogue
from runlens_feedback.genre import feedback_warnings

Priority = Literal["P0", "P1", "P2", "P3"]
#: The shares of the analysed rows that earn a pain point its reach points (exact).
_WIDE_REACH = Fraction(10, 100)
_SOME_REACH = Fraction(3, 100)
#: The shares of its problem rows, high or critical, that earn it severity points.
_MOST_SEVERE = Fraction(1, 2)
_SOME_SEVERE = Fraction(1, 4)
#: The fewest rows a severity term counts from: no single row sets a priority.
MIN_SEVERE = 2
Item = Mapping[str, Any]
#: How the report quotes rows: its contract's citation rules and closing quotation marks.
_REPORT_QUOTES = REPORT_CONTRACT.citations or MarkdownCitations()
_CLOSING = tuple(closing for _, closing in _REPORT_QUOTES.quote_marks)

TOP_GROUPS = 8
#: Quotes per pain point: EXAMPLES (of distinct rows) for the first LEADING_GROUPS, one for
#: the others.
EXAMPLES = 3
LEADING_GROUPS = 3
EVIDENCE_IDS = 6
QUOTE_CHARS = 80
LABEL_CHARS = 60
ACTION_CHARS = 100
FAILURE_LINES = 3
REASON_CHARS = 200
#: Theme of positive rows that name no product area (never a pain point).
PRAISE_THEME = "praise"
#: Theme of rows without text (never a pain point).
EMPTY_THEME = "empty"
#: Theme of suggestions and requests (a pain point even when neutral).
FEATURE_REQUEST = "feature_request"
#: Theme of rows no discovered theme fits (never a listed pain point).
OTHER_THEME = "other"
#: Groups that stand on their own (praise, empty and other not counted), as in discovery.
MAX_THEMES = 15
_OTHER = (OTHER_THEME, "theme")
KEYWORDS = 8
_UNSPECIFIED = "unspecified"


# -- one item -------------------------------------------------------------------------------


def group_key(item: Item) -> tuple[str, Literal["theme", "pain_point"]]:
    """The item's group: its theme when it has one, else its normalised pain point (both
    cut to `LABEL_CHARS`, so very long wordings that start alike share a group)."""
    theme = item.get("theme")
    if isinstance(theme, str) and theme.strip():
        return "_".join(theme.casefold().split())[:LABEL_CHARS], "theme"
    wording = _normalised(str(item.get("pain_point") or ""))[:LABEL_CHARS].rstrip()
    return wording or _UNSPECIFIED, "pain_point"


def _normalised(text: str) -> str:
    words = unicodedata.normalize("NFKC", text).casefold().split()
    return "".join(_strip_punctuation(" ".join(words)))


def _strip_punctuation(text: str) -> str:
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start])[0] in "PZ":
        start += 1
    while end > start and unicodedata.category(text[end - 1])[0] in "PZ":
        end -= 1
    return text[start:end]


def severity_rank(item: Item) -> int:
    """0 (low) .. 3 (critical); unknown values rank as low."""
    severity = item.get("severity")
    return SEVERITIES.index(severity) if severity in SEVERITIES else 0


def is_actionable(item: Item) -> bool:
    """Whether an item reports a problem or a request worth a backlog entry.

    Negative and mixed items are; neutral ones when they are feature requests or have a
    severity above low; positive items, praise and empty rows never are.
    """
    theme = group_key(item)[0]
    if theme in (PRAISE_THEME, EMPTY_THEME):
        return False
    sentiment = item.get("sentiment")
    if sentiment in ("negative", "mixed"):
        return True
    return sentiment == "neutral" and (theme == FEATURE_REQUEST or severity_rank(item) > 0)


def _score(item: Item) -> float:
    value = item.get("sentiment_score", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def representative_order(items: Sequence[Item]) -> list[Item]:
    """Most representative first: highest severity, then strongest sentiment, then input order."""
    ranked = sorted(
        enumerate(items), key=lambda pair: (-severity_rank(pair[1]), -abs(_score(pair[1])), pair[0])
    )
    return [item for _, item in ranked]


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


# -- quotes ---------------------------------------------------------------------------------


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A verbatim prefix of `text` of at most `limit` characters, cut at a clause or word
    boundary where the quote check allows (`runlens.cut_quote`)."""
    return cut_quote(text, limit)


def example_quote(evidence: str) -> tuple[str, bool, bool] | None:
    """How a report quotes an evidence text: `(quote, cut_start, cut_end)`, or None when no
    part of it can be quoted on one line as evidence.

    The quote is the evidence's longest line that the report contract's quote rules accept
    (a Markdown citation quotes one line); when that line holds every closing quotation mark
    of the contract, its longest part between them (no mark could close the quotation); then
    `short_quote`. Each cut falls where the quote check allows one: at a line break, at a
    quotation mark, or where `short_quote` cuts. `cut_start` / `cut_end`: whether something
    of the evidence was left out before / after the quote (the report writes an ellipsis
    there)."""
    stripped = evidence.strip()
    span = one_line_quote(stripped, _REPORT_QUOTES)
    if span is not None and all(mark in stripped[span[0] : span[1]] for mark in _CLOSING):
        inner = one_line_quote(stripped[span[0] : span[1]], _REPORT_QUOTES, avoid=_CLOSING)
        span = None if inner is None else (span[0] + inner[0], span[0] + inner[1])
    if span is None:
        return None
    start, end = span
    quote = cut_quote(stripped[start:end], QUOTE_CHARS, _REPORT_QUOTES)
    return quote, bool(stripped[:start].strip()), start + len(quote) < len(stripped)


class RowTexts(Protocol):
    """Where a row's whole text is read (the Evidence Index): KeyError for an unknown id."""

    def text(self, row_id: str) -> str: ...


def cut_from_row(evidence: str, row: str) -> tuple[bool, bool]:
    """Whether the row says something before / after the evidence quote (a letter or a digit,
    not only punctuation): where the report's quote of it needs an ellipsis. `(False,
    False)` when the quote is not verbatim in the row."""
    at = row.find(evidence.strip())
    if at < 0 or not evidence.strip():
        return False, False
    after = row[at + len(evidence.strip()) :]
    return _says_something(row[:at]), _says_something(after)


def _says_something(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _example(
    item: Item, quote: tuple[str, bool, bool], row_texts: RowTexts | None = None
) -> dict[str, Any]:
    text, cut_start, cut_end = quote
    if row_texts is not None:
        try:
            row = row_texts.text(str(item.get("feedback_id")))
        except KeyError:
            row = ""
        before, after = cut_from_row(str(item.get("evidence_text") or ""), row)
        cut_start, cut_end = cut_start or before, cut_end or after
    example = {
        "feedback_id": str(item.get("feedback_id")),
        "evidence_text": text,
        "shortened": cut_end,
        "sentiment": item.get("sentiment"),
        "severity": item.get("severity"),
    }
    if cut_start:  # rare (a quote of a later line): the summary stays small
        example["cut_start"] = True
    return example


def _examples(
    items: Iterable[Item], limit: int = EXAMPLES, row_texts: RowTexts | None = None
) -> list[dict[str, Any]]:
    """Up to `limit` quotes, in the items' order, each of another row and other words; with
    `row_texts`, each says where it was cut from its row, not only from its evidence."""
    examples: list[dict[str, Any]] = []
    rows: set[str] = set()
    quotes: set[str] = set()
    for item in items:
        if len(examples) >= limit:
            break
        quote = example_quote(str(item.get("evidence_text") or ""))
        if quote is None:
            continue
        example = _example(item, quote, row_texts)
        said = " ".join(example["evidence_text"].casefold().split())
        if example["feedback_id"] in rows or said in quotes:
            continue
        rows.add(example["feedback_id"])
        quotes.add(said)
        examples.append(example)
    return examples


# -- groups ---------------------------------------------------------------------------------


def _counts(items: Iterable[Item], key: str, names: Sequence[str]) -> dict[str, int]:
    counted = Counter(str(item.get(key)) for item in items)
    return {name: counted.get(name, 0) for name in names}


def _most_common(values: Iterable[Any], limit: int) -> str | None:
    counted = Counter(str(v) for v in values if isinstance(v, str) and v.strip())
    return short_quote(counted.most_common(1)[0][0], limit) if counted else None


def _pain_point(
    key: str,
    grouped_by: str,
    members: list[Item],
    analysed: int,
    catalogue: ThemeCatalogue | None = None,
    split: Periods | None = None,
    row_texts: RowTexts | None = None,
) -> dict[str, Any] | None:
    """The summary of one group, or None when none of its rows reports a problem."""
    problems = [m for m in members if is_actionable(m)]
    if not problems:
        return None
    ranked = representative_order(problems)
    problem_severity = _counts(problems, "severity", SEVERITIES)
    base, _ = priority_for(problem_severity, len(problems), analysed)
    base_points, _ = priority_points(problem_severity, len(problems), analysed)
    trend = theme_trend([str(m.get("feedback_id")) for m in problems], split)
    priority, reason = priority_for(problem_severity, len(problems), analysed, trend)
    points, _ = priority_points(problem_severity, len(problems), analysed, trend)
    name, keywords = _name(key, grouped_by, ranked, catalogue)
    return {
        "key": key,
        "grouped_by": grouped_by,
        "pain_point": name,
        "keywords": keywords,
        "count": len(members),
        "share": round(len(members) / analysed, 4) if analysed else 0.0,
        "problem_rows": len(problems),
        "priority": priority,
        "priority_reason": reason,
        "points": points,
        "base_priority": base,
        "base_points": base_points,
        "trend": trend.as_dict() if trend else None,
        "sentiment": _counts(members, "sentiment", SENTIMENTS),
        "problem_severity": problem_severity,
        "feedback_ids": list(dict.fromkeys(str(m.get("feedback_id")) for m in ranked))[
            :EVIDENCE_IDS
        ],
        "examples": _examples(ranked, row_texts=row_texts),
        "suggested_action": _most_common((m.get("suggested_action") for m in ranked), ACTION_CHARS),
    }


def _name(
    key: str, grouped_by: str, ranked: Sequence[Item], catalogue: ThemeCatalogue | None
) -> tuple[str | None, list[str]]:
    """A group's name and terms (module docstring)."""
    if grouped_by == "theme" and catalogue is not None:
        for theme in catalogue.themes:
            if group_key({"theme": theme.key})[0] == key:
                return theme.name, list(theme.keywords[:KEYWORDS])
    if grouped_by == "theme":
        from runlens_feedback.analyst.groups import group_label

        return group_label({"key": key, "grouped_by": grouped_by}), []
    return _most_common((m.get("pain_point") for m in ranked), LABEL_CHARS), []


def _pain_order(group: Mapping[str, Any], *, base: bool = False) -> tuple[str, int, int, int, str]:
    """The order of the evidence (module docstring); with `base`, by the priority and points
    without the trend (which groups are listed)."""
    prefix = "base_" if base else ""
    return (
        group[f"{prefix}priority"],
        -group[f"{prefix}points"],
        -group["problem_rows"],
        -_severe(group),
        group["key"],
    )


def _severe(group: Mapping[str, Any]) -> int:
    severity = group["problem_severity"]
    return int(severity.get("high", 0)) + int(severity.get("critical", 0))


def group_items(items: Sequence[Item]) -> dict[tuple[str, str], list[Item]]:
    """The items of each group, by `(key, grouped_by)` (`group_key`), in first-seen order.

    At most `MAX_THEMES` groups stand on their own, as discovery allows (praise, empty rows
    and "other" not counted): beyond that, the smallest groups (ties: the later seen) join
    "other", so a model that names hundreds of themes still gives a few to act on.
    """
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault(group_key(item), []).append(item)
    ranked = sorted(
        (key for key in groups if key != _OTHER and key[0] not in (PRAISE_THEME, EMPTY_THEME)),
        key=lambda key: -len(groups[key]),  # stable: first seen first among equals
    )
    if len(ranked) <= MAX_THEMES:
        return groups
    folded = [item for key in ranked[MAX_THEMES:] for item in groups.pop(key)]
    groups.setdefault(_OTHER, []).extend(folded)
    return groups


def _positive(items: Sequence[Item], row_texts: RowTexts | None = None) -> dict[str, Any]:
    praise = [i for i in items if i.get("sentiment") == "positive"]
    ordered = sorted(praise, key=lambda i: (group_key(i)[0] != PRAISE_THEME, -abs(_score(i))))
    return {"rows": len(praise), "examples": _examples(ordered, row_texts=row_texts)}


# -- failures -------------------------------------------------------------------------------


def _unanalysed(entry: Mapping[str, Any]) -> int | None:
    ids = entry.get("feedback_ids")
    return len(ids) if isinstance(ids, list) else None


def _entry_line(entry: Mapping[str, Any]) -> dict[str, Any]:
    scalars = {
        key: short_quote(value, REASON_CHARS) if isinstance(value, str) else value
        for key, value in entry.items()
        if isinstance(value, str | int | float | bool) and key != "reason"
    }
    line = {**scalars, "reason": _reason(entry)}
    unanalysed = _unanalysed(entry)
    if unanalysed is not None:
        line["unanalysed_rows"] = unanalysed
    return line


def _reason(entry: Mapping[str, Any]) -> str:
    return short_quote(str(entry.get("reason") or "unknown reason"), REASON_CHARS)


def _failures(failed_batches: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_reason: dict[str, list[Mapping[str, Any]]] = {}
    for entry in failed_batches:
        by_reason.setdefault(_reason(entry), []).append(entry)
    reasons: list[dict[str, Any]] = [
        {
            "reason": reason,
            "batches": len(entries),
            "rows": sum(_unanalysed(e) or 0 for e in entries),
        }
        for reason, entries in by_reason.items()
    ]
    reasons.sort(key=lambda r: (-r["rows"], -r["batches"], r["reason"]))
    return {
        "batches": len({e.get("batch", n) for n, e in enumerate(failed_batches)}),
        "rows": sum(_unanalysed(e) or 0 for e in failed_batches),
        "reasons": reasons[:FAILURE_LINES],
        "entries": [_entry_line(e) for e in failed_batches[:FAILURE_LINES]],
    }


# -- the summary ----------------------------------------------------------------------------


def summarize_analysis(
    items: Sequence[Item],
    *,
    total_rows: int | None = None,
    failed_batches: Sequence[Mapping[str, Any]] = (),
    source: str = "",
    row_metadata: Mapping[str, Mapping[str, Any]] | None = None,
    catalogue: ThemeCatalogue | None = None,
    row_texts: RowTexts | None = None,
) -> dict[str, Any]:
    """The bounded aggregate of analysis `items` (module docstring for the shape and rules).

    `total_rows` is the input's row count (default: the number of items); rows not among
    the items are `unanalysed_rows`. `failed_batches` are the analysis file's entries.
    `row_metadata` (feedback id -> {column: value}) gives the trend and the breakdowns;
    `catalogue` (the discovered themes) gives the pain points' names and terms;
    `row_texts` (the Evidence Index) tells each quote whether it was cut from its row.
    """
    analysed = len(items)
    total = analysed if total_rows is None else total_rows
    groups = group_items(items)
    split = periods((str(item.get("feedback_id")) for item in items), row_metadata)
    pains = [
        _pain_point(k, by, members, analysed, catalogue, split, row_texts)
        for (k, by), members in groups.items()
    ]
    candidates = sorted(
        (p for p in pains if p is not None and (p["key"], p["grouped_by"]) != _OTHER),
        key=lambda group: _pain_order(group, base=True),
    )
    listed = sorted(candidates[:TOP_GROUPS], key=_pain_order)
    listed_keys = {(p["key"], p["grouped_by"]) for p in listed}
    rest = [p for p in pains if p is not None and (p["key"], p["grouped_by"]) not in listed_keys]
    for group in listed:
        del group["base_priority"], group["base_points"]
    for group in listed[LEADING_GROUPS:]:
        del group["examples"][1:]
    return {
        "source": source,
        "total_rows": total,
        "analysed_rows": analysed,
        "unanalysed_rows": max(total - analysed, 0),
        "problem_rows": sum(1 for item in items if is_actionable(item)),
        "sentiment": _counts(items, "sentiment", SENTIMENTS),
        "severity": _counts(items, "severity", SEVERITIES),
        "languages": dict(sorted(Counter(_languages(items)).items(), key=_by_count)),
        "groups": len(groups),
        "grouped_by": {
            "theme": sum(len(m) for (_, by), m in groups.items() if by == "theme"),
            "pain_point": sum(len(m) for (_, by), m in groups.items() if by == "pain_point"),
        },
        "pain_points": listed,
        "other_groups": {
            "groups": len(groups) - len(listed),
            "rows": sum(len(m) for key, m in groups.items() if key not in listed_keys),
            "problem_rows": sum(p["problem_rows"] for p in rest),
        },
        "positive": _positive(items, row_texts),
        "failed_batches": _failures(failed_batches),
        "breakdowns": breakdowns(items, row_metadata),
        "warnings": feedback_warnings(items),
    }


def _languages(items: Iterable[Item]) -> Iterable[str]:
    return (item["language"] for item in items if isinstance(item.get("language"), str))


def _by_count(pair: tuple[str, int]) -> tuple[int, str]:
    return (-pair[1], pair[0])
