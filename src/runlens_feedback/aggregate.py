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

Priority of a pain point: `runlens_feedback.priority` (severity, critical rows, reach and
trend points; P0 from 5 points down to P3). Quotes: `runlens_feedback.quotes`.
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

import functools
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from math import isnan
from operator import neg
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from runlens_feedback.analyst.groups import group_label
from runlens_feedback.breakdowns import breakdowns
from runlens_feedback.contracts import SENTIMENTS, SEVERITIES
from runlens_feedback.genre import feedback_warnings
from runlens_feedback.priority import (
    MIN_SEVERE,
    Priority,
    priority_for,
    priority_parts,
    priority_points,
    severity_rank,
    trend_phrase,
)
from runlens_feedback.quotes import (
    EXAMPLES,
    QUOTE_CHARS,
    RowTexts,
    _examples,
    cut_from_row,
    example_quote,
    short_quote,
)
from runlens_feedback.theme_keys import EMPTY_THEME, FEATURE_REQUEST, OTHER_THEME, PRAISE_THEME
from runlens_feedback.trend import Periods, periods, theme_trend

if TYPE_CHECKING:
    from runlens_feedback.discovery import ThemeCatalogue

__all__ = [
    "EMPTY_THEME",
    "EXAMPLES",
    "FEATURE_REQUEST",
    "MIN_SEVERE",
    "OTHER_THEME",
    "PRAISE_THEME",
    "QUOTE_CHARS",
    "GroupRows",
    "Item",
    "Priority",
    "RowTexts",
    "actionable_items",
    "cut_from_row",
    "example_quote",
    "group_items",
    "group_key",
    "group_rows",
    "grouped_rows",
    "is_actionable",
    "priority_for",
    "priority_parts",
    "priority_points",
    "representative_order",
    "severity_rank",
    "short_quote",
    "summarize_analysis",
    "trend_phrase",
    "value_counts",
]

Item = Mapping[str, Any]

TOP_GROUPS = 8
#: Quotes per pain point: EXAMPLES (of distinct rows) for the first LEADING_GROUPS, one for
#: the others.
LEADING_GROUPS = 3
EVIDENCE_IDS = 6
LABEL_CHARS = 60
ACTION_CHARS = 100
FAILURE_LINES = 3
REASON_CHARS = 200
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
    if isinstance(theme, str):
        key = _theme_group(theme)
        if key is not None:
            return key
    return _wording_key(str(item.get("pain_point") or "")), "pain_point"


@functools.lru_cache(maxsize=4096)
def _theme_group(theme: str) -> tuple[str, Literal["theme"]] | None:
    """A theme's group, None for a blank theme (worked out once per theme: every item of a
    group asks, several times per summary)."""
    if not theme.strip():
        return None
    return _theme_key(theme), "theme"


@functools.lru_cache(maxsize=4096)
def _theme_key(theme: str) -> str:
    """A theme's group key (worked out once per theme: every item of a group asks)."""
    return "_".join(theme.casefold().split())[:LABEL_CHARS]


@functools.lru_cache(maxsize=4096)
def _wording_key(pain_point: str) -> str:
    wording = _normalised(pain_point)[:LABEL_CHARS].rstrip()
    return wording or _UNSPECIFIED


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


def is_actionable(item: Item) -> bool:
    """Whether an item reports a problem or a request worth a backlog entry.

    Negative and mixed items are; neutral ones when they are feature requests or have a
    severity above low; positive items, praise and empty rows never are.
    """
    sentiment = item.get("sentiment")
    if sentiment not in _ACTIONABLE_SENTIMENTS:
        return False  # positive or none: never, whatever the group (read first: it is cheap)
    theme = group_key(item)[0]
    if theme in (PRAISE_THEME, EMPTY_THEME):
        return False
    if sentiment != "neutral":
        return True
    return theme == FEATURE_REQUEST or severity_rank(item) > 0


_ACTIONABLE_SENTIMENTS = ("negative", "mixed", "neutral")


def actionable_items(members: Iterable[Item]) -> list[Item]:
    """The members that `is_actionable`, in order: its rule in one loop, each text theme's
    group looked up once (a summary asks it of every analysed row)."""
    problems = []
    for item in members:
        sentiment = item.get("sentiment")
        if sentiment not in _ACTIONABLE_SENTIMENTS:
            continue
        theme = item.get("theme")
        found = _theme_group(theme) if type(theme) is str else None
        key = found[0] if found is not None else group_key(item)[0]
        if key in (PRAISE_THEME, EMPTY_THEME):
            continue
        if sentiment != "neutral" or key == FEATURE_REQUEST or severity_rank(item) > 0:
            problems.append(item)
    return problems


def _score(item: Item) -> float:
    value = item.get("sentiment_score", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def representative_order(items: Sequence[Item]) -> list[Item]:
    """Most representative first: highest severity, then strongest sentiment, then input order.

    The sort key (`_rank`, `_score`) is read a column at a time, at C speed, when every
    severity is hashable and every score a number (the usual analysis); item by item
    otherwise: a group of tens of thousands of rows is ordered on every summary."""
    severities, descending = [item.get("severity") for item in items], _DESCENDING
    strengths = _strengths(items)
    if strengths is not None:
        try:  # highest first: each rank negated
            ranks: list[int] | None = [descending.get(s, 0) for s in severities]
        except TypeError:  # an unhashable severity (a list or an object)
            ranks = None
        if ranks is not None:
            # Two stable sorts of plain numbers: by score, then by rank (ties keep the order).
            order = sorted(range(len(items)), key=strengths.__getitem__)
            order.sort(key=ranks.__getitem__)
            return [items[n] for n in order]
    keys = [(-_rank(item), -abs(_score(item)), n) for n, item in enumerate(items)]
    return [items[n] for n in sorted(range(len(keys)), key=keys.__getitem__)]


def _strengths(items: Sequence[Item]) -> list[float] | None:
    """Each item's `-abs(_score(item))`, read a column at a time, when every score is a
    number and none is NaN (then they sort as plain numbers); else None."""
    values = [item.get("sentiment_score", 0.0) for item in items]
    if not set(map(type, values)) <= _NUMBERS:
        return None
    strengths = list(map(neg, map(abs, map(float, values))))
    return None if any(map(isnan, strengths)) else strengths


_NUMBERS = {int, float, bool}
_SEVERITY_RANKS: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
_DESCENDING: dict[Any, int] = {severity: -rank for severity, rank in _SEVERITY_RANKS.items()}


def _rank(item: Item) -> int:
    """`severity_rank`, a text severity looked up at once."""
    severity = item.get("severity")
    if type(severity) is str:
        return _SEVERITY_RANKS.get(severity, 0)
    return severity_rank(item)


# -- groups ---------------------------------------------------------------------------------


def _counts(items: Iterable[Item], key: str, names: Sequence[str]) -> dict[str, int]:
    return _named(value_counts(items, key), names)


def _named(counted: Mapping[str, int], names: Sequence[str]) -> dict[str, int]:
    return {name: counted.get(name, 0) for name in names}


class GroupRows(NamedTuple):
    """What a group's pain point and its figures both count: its problem rows
    (`actionable_items`), its rows by sentiment and its problem rows by severity
    (`value_counts`)."""

    problems: list[Item]
    sentiment: Counter[str]
    severity: Counter[str]


def group_rows(members: Sequence[Item]) -> GroupRows:
    """`GroupRows` of a group's `members`, worked out once for its pain point and figures."""
    problems = actionable_items(members)
    return GroupRows(
        problems, value_counts(members, "sentiment"), value_counts(problems, "severity")
    )


def value_counts(items: Iterable[Item], key: str) -> Counter[str]:
    """How many items hold each value of `key`, the values as text (`str`): counted by
    value first, so each distinct value is made text once rather than once per item."""
    values = [item.get(key) for item in items]
    try:
        by_value = Counter(values)
    except TypeError:  # an unhashable value (a list or an object)
        return Counter(map(str, values))
    if not all(value is None or type(value) is str for value in by_value):
        # Equal values of other types (1, 1.0 and True) count as one key but read apart.
        return Counter(map(str, values))
    counted: Counter[str] = Counter()
    for value, count in by_value.items():
        counted[str(value)] += count
    return counted


def _most_common(values: Iterable[Any], limit: int) -> str | None:
    """The most common non-blank text of `values` (ties: the first seen), shortened.

    Counted by value first, then the blank and non-text values dropped: each distinct value
    is judged once, in first-seen order, so the ties fall as they would one by one."""
    values = list(values)
    try:
        by_value = Counter(values)
    except TypeError:  # an unhashable value (a list or an object): none of them is text
        by_value = Counter(v for v in values if isinstance(v, str))
    counted = {v: n for v, n in by_value.items() if isinstance(v, str) and v.strip()}
    if not counted:
        return None
    return short_quote(max(counted, key=counted.__getitem__), limit)


def _pain_point(
    key: str,
    grouped_by: str,
    members: list[Item],
    analysed: int,
    catalogue: ThemeCatalogue | None = None,
    split: Periods | None = None,
    row_texts: RowTexts | None = None,
    counted: GroupRows | None = None,
    counts_only: bool = False,
) -> dict[str, Any] | None:
    """The summary of one group, or None when none of its rows reports a problem.
    `counted`: `group_rows(members)`, when the caller has worked it out already;
    `counts_only`: without what names or quotes the group (`summarize_analysis`)."""
    problems = actionable_items(members) if counted is None else counted.problems
    if not problems:
        return None
    severities = value_counts(problems, "severity") if counted is None else counted.severity
    problem_severity = _named(severities, SEVERITIES)
    base, _ = priority_for(problem_severity, len(problems), analysed)
    base_points, _ = priority_points(problem_severity, len(problems), analysed)
    trend = None if split is None else theme_trend(_ids(problems), split)
    priority, reason = priority_for(problem_severity, len(problems), analysed, trend)
    points, _ = priority_points(problem_severity, len(problems), analysed, trend)
    group: dict[str, Any] = {"key": key, "grouped_by": grouped_by}
    if not counts_only:
        ranked = representative_order(problems)
        group["pain_point"], group["keywords"] = _name(key, grouped_by, ranked, catalogue)
    group.update(
        {
            "count": len(members),
            "share": round(len(members) / analysed, 4) if analysed else 0.0,
            "problem_rows": len(problems),
            "priority": priority,
            "priority_reason": reason,
            "points": points,
            "base_priority": base,
            "base_points": base_points,
            "trend": trend.as_dict() if trend else None,
            "sentiment": _named(
                value_counts(members, "sentiment") if counted is None else counted.sentiment,
                SENTIMENTS,
            ),
            "problem_severity": problem_severity,
        }
    )
    if not counts_only:
        group["feedback_ids"] = _first_ids(ranked, EVIDENCE_IDS)
        group["examples"] = _examples(ranked, row_texts=row_texts)
        actions = [m.get("suggested_action") for m in ranked]
        group["suggested_action"] = _most_common(actions, ACTION_CHARS)
    return group


def _ids(members: Iterable[Item]) -> list[str]:
    """The members' feedback ids as text."""
    return list(map(str, [member.get("feedback_id") for member in members]))


def _first_ids(ranked: Iterable[Item], limit: int) -> list[str]:
    """The first `limit` distinct feedback ids (as text) of `ranked`, in its order."""
    ids: dict[str, None] = {}
    for member in ranked:
        ids[str(member.get("feedback_id"))] = None
        if len(ids) == limit:
            break
    return list(ids)


def _name(
    key: str, grouped_by: str, ranked: Sequence[Item], catalogue: ThemeCatalogue | None
) -> tuple[str | None, list[str]]:
    """A group's name and terms (module docstring)."""
    if grouped_by == "theme" and catalogue is not None:
        for theme in catalogue.themes:
            if group_key({"theme": theme.key})[0] == key:
                return theme.name, list(theme.keywords[:KEYWORDS])
    if grouped_by == "theme":
        return group_label({"key": key, "grouped_by": grouped_by}), []
    return _most_common([m.get("pain_point") for m in ranked], LABEL_CHARS), []


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


def grouped_rows(
    items: Sequence[Item],
) -> tuple[dict[tuple[str, str], list[Item]], dict[tuple[str, str], GroupRows]]:
    """`group_items(items)` and each of its groups' `group_rows`, each item read once: its
    group and whether it is a problem row (`actionable_items`) told in the same loop."""
    groups: dict[tuple[str, str], list[Item]] = {}
    problems: dict[tuple[str, str], list[Item]] = {}
    # Per text theme, what its items need: where they go and how their group judges them.
    by_theme: dict[str, _Slot] = {}
    for item in items:
        theme = item.get("theme")
        slot = by_theme.get(theme) if type(theme) is str else None
        if slot is None:
            found = _theme_group(theme) if type(theme) is str else None
            key: tuple[str, str] = group_key(item) if found is None else found
            members = groups.get(key)
            if members is None:
                members = groups[key] = []
                problems[key] = []
            slot = _Slot(
                members.append,
                problems[key].append,
                key[0] not in (PRAISE_THEME, EMPTY_THEME),
                key[0] == FEATURE_REQUEST,
            )
            if found is not None and type(theme) is str:  # the same for every item naming it
                by_theme[theme] = slot
        slot.add_member(item)
        sentiment = item.get("sentiment")
        if (
            sentiment in _ACTIONABLE_SENTIMENTS
            and slot.may_be_problem
            and (sentiment != "neutral" or slot.requests or severity_rank(item) > 0)
        ):
            slot.add_problem(item)
    ranked = sorted(
        (key for key in groups if key != _OTHER and key[0] not in (PRAISE_THEME, EMPTY_THEME)),
        key=lambda key: -len(groups[key]),  # stable: first seen first among equals
    )
    if len(ranked) > MAX_THEMES:  # as `group_items` folds them, with their problem rows
        folded = ranked[MAX_THEMES:]
        groups.setdefault(_OTHER, []).extend(item for key in folded for item in groups.pop(key))
        problems.setdefault(_OTHER, []).extend(item for key in folded for item in problems.pop(key))
    counted = {
        key: GroupRows(
            problems[key],
            value_counts(members, "sentiment"),
            value_counts(problems[key], "severity"),
        )
        for key, members in groups.items()
    }
    return groups, counted


class _Slot(NamedTuple):
    """Where `grouped_rows` puts the items of one group, and what their group says of them:
    whether its rows may be problem rows (not praise nor empty) and whether it is the
    feature requests (where a neutral row is a problem row too)."""

    add_member: Callable[[Item], None]
    add_problem: Callable[[Item], None]
    may_be_problem: bool
    requests: bool


def _positive(items: Sequence[Item], row_texts: RowTexts | None = None) -> dict[str, Any]:
    praise = [i for i in items if i.get("sentiment") == "positive"]
    strengths = _strengths(praise)
    if strengths is None:
        ordered = sorted(praise, key=lambda i: (group_key(i)[0] != PRAISE_THEME, -abs(_score(i))))
    else:  # two stable sorts of plain values: by strength, then praise themes first
        order = sorted(range(len(praise)), key=strengths.__getitem__)
        order.sort(key=[group_key(i)[0] != PRAISE_THEME for i in praise].__getitem__)
        ordered = [praise[n] for n in order]
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
    groups: Mapping[tuple[str, str], list[Item]] | None = None,
    counted: Mapping[tuple[str, str], GroupRows] | None = None,
    counts_only: bool = False,
) -> dict[str, Any]:
    """The bounded aggregate of analysis `items` (module docstring for the shape and rules).

    `total_rows` is the input's row count (default: the number of items); rows not among
    the items are `unanalysed_rows`. `failed_batches` are the analysis file's entries.
    `row_metadata` (feedback id -> {column: value}) gives the trend and the breakdowns;
    `catalogue` (the discovered themes) gives the pain points' names and terms;
    `row_texts` (the Evidence Index) tells each quote whether it was cut from its row.
    `groups`: `group_items(items)`, when the caller has worked it out already, and
    `counted` each of its groups' `group_rows` (both given or neither).
    `counts_only`: the summary the figures are counted from (`runlens_feedback.figures`),
    without what names or quotes: no pain point has `pain_point`, `keywords`,
    `feedback_ids`, `examples` or `suggested_action`, and there is no `positive`. Those are
    what orders every problem row by how representative it is; every count is the same.
    When an item holds a value naming or quoting could fail on (a score too large for a
    float, an evidence text that is not text), the summary is the whole one, which fails
    as it always did.
    """
    counts_only = counts_only and _nameable(items)
    analysed = len(items)
    total = analysed if total_rows is None else total_rows
    if groups is None:
        groups = group_items(items)
    ids = _ids(items)
    split = periods(ids, row_metadata)
    pains = [
        _pain_point(
            k,
            by,
            members,
            analysed,
            catalogue,
            split,
            row_texts,
            None if counted is None else counted[k, by],
            counts_only=counts_only,
        )
        for (k, by), members in groups.items()
    ]
    candidates = sorted(
        (p for p in pains if p is not None and (p["key"], p["grouped_by"]) != _OTHER),
        key=lambda group: _pain_order(group, base=True),
    )
    listed = sorted(candidates[:TOP_GROUPS], key=_pain_order)
    # The groups part the items: their rows by sentiment add up to all the items'.
    sentiments = (
        value_counts(items, "sentiment")
        if counted is None
        else sum((rows.sentiment for rows in counted.values()), Counter())
    )
    listed_keys = {(p["key"], p["grouped_by"]) for p in listed}
    rest = [p for p in pains if p is not None and (p["key"], p["grouped_by"]) not in listed_keys]
    for group in listed:
        del group["base_priority"], group["base_points"]
    if not counts_only:
        for group in listed[LEADING_GROUPS:]:
            del group["examples"][1:]
    summary: dict[str, Any] = {
        "source": source,
        "total_rows": total,
        "analysed_rows": analysed,
        "unanalysed_rows": max(total - analysed, 0),
        # Every item is in one group, and a group without problem rows has no pain point.
        "problem_rows": sum(p["problem_rows"] for p in pains if p is not None),
        "sentiment": _named(sentiments, SENTIMENTS),
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
        "positive": None if counts_only else _positive(items, row_texts),
        "failed_batches": _failures(failed_batches),
        "breakdowns": breakdowns(items, row_metadata, ids),
        "warnings": feedback_warnings(items),
    }
    if counts_only:
        del summary["positive"]
    return summary


#: Whole-number scores below this become floats without overflowing.
_FLOAT_SAFE = 2**1000
_QUOTED_TYPES = {str, type(None), float, bool}


def _nameable(items: Sequence[Item]) -> bool:
    """Whether naming and quoting the groups of `items` (`_pain_point`'s `ranked` and what
    it gives, `_positive`) cannot raise: every score that is an integer fits a float (the
    representative order makes each a float) and every evidence text is text, null or a
    plain scalar (a quote is made of its `str`)."""
    scores = [item.get("sentiment_score") for item in items]
    if int in set(map(type, scores)) and any(
        type(score) is int and abs(score) >= _FLOAT_SAFE for score in scores
    ):
        return False
    return set(map(type, [item.get("evidence_text") for item in items])) <= _QUOTED_TYPES


def _languages(items: Iterable[Item]) -> list[str]:
    return [language for item in items if isinstance(language := item.get("language"), str)]


def _by_count(pair: tuple[str, int]) -> tuple[int, str]:
    return (-pair[1], pair[0])
