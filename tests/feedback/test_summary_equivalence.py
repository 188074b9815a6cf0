"""The aggregated analysis against its earlier, item-by-item implementation.

`summarize_analysis` reads its items in few passes, a column at a time and by distinct
value. The functions it replaced are kept here as they were; each test summarises generated
analyses (odd themes and quotes, scores and severities of every JSON type, repeated and
missing ids, dates of every format, metadata of other types) once with the current code and
once with the earlier functions put back, and the two summaries must be equal, or both
raise the same error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.hostile import sentences

from runlens_feedback import aggregate, breakdowns, trend
from runlens_feedback.aggregate import (
    ACTION_CHARS,
    EVIDENCE_IDS,
    KEYWORDS,
    LABEL_CHARS,
    PRAISE_THEME,
    GroupRows,
    Item,
    RowTexts,
    _first_ids,
    _most_common,
    _named,
    _score,
    actionable_items,
    group_items,
    group_key,
    group_rows,
    priority_for,
    priority_points,
    value_counts,
)
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.breakdowns import RowMetadata
from runlens_feedback.contracts import SENTIMENTS, SEVERITIES
from runlens_feedback.discovery import ThemeCatalogue
from runlens_feedback.quotes import _examples
from runlens_feedback.trend import theme_trend

# -- the earlier functions, as they were ----------------------------------------------------


def _old_representative_order(items: Sequence[Item]) -> list[Item]:
    ranks, keys = aggregate._SEVERITY_RANKS, []
    for n, item in enumerate(items):
        severity = item.get("severity")
        rank = ranks.get(severity, 0) if type(severity) is str else aggregate.severity_rank(item)
        value = item.get("sentiment_score", 0.0)
        score = float(value) if isinstance(value, int | float) else 0.0
        keys.append((-rank, -abs(score), n))
    return [items[n] for n in sorted(range(len(keys)), key=keys.__getitem__)]


def _old_breakdowns(items: Sequence[Item], row_metadata: RowMetadata | None) -> dict[str, Any]:
    result: dict[str, Any] = {"columns": [], "skipped": []}
    if not row_metadata:
        return result
    metas, sentiments = _old_analysed(items, row_metadata)
    for column in breakdowns._columns(row_metadata):
        values = _old_pairs(metas, sentiments, column)
        entry = breakdowns._trend(column, values)
        if isinstance(entry, str):
            entry = breakdowns._category(column, values, reason=entry)
        if isinstance(entry, str):
            result["skipped"].append({"column": column, "reason": entry})
        elif len(result["columns"]) < breakdowns.MAX_COLUMNS:
            result["columns"].append(entry)
        else:
            result["skipped"].append({"column": column, "reason": "too many columns"})
    return result


def _old_pairs(
    metas: list[Mapping[str, Any]], sentiments: list[str], column: str
) -> breakdowns.Pairs:
    try:
        raw = Counter(zip([meta.get(column) for meta in metas], sentiments, strict=True))
    except TypeError:  # an unhashable value
        raw = None
    if raw is None or not all(value is None or type(value) is str for value, _ in raw):
        # Equal values of other types (1, 1.0 and True) count as one but read apart.
        return Counter(
            [
                (str(meta.get(column) or "").strip(), sentiment)
                for meta, sentiment in zip(metas, sentiments, strict=True)
            ]
        )
    pairs: breakdowns.Pairs = Counter()
    for (value, sentiment), count in raw.items():
        pairs[(value or "").strip(), sentiment] += count
    return pairs


def _old_analysed(
    items: Sequence[Item], row_metadata: RowMetadata
) -> tuple[list[Mapping[str, Any]], list[str]]:
    ids = [str(item.get("feedback_id")) for item in items]
    if len(set(ids)) == len(ids):
        found = [row_metadata.get(row_id) for row_id in ids]
        if None not in found:
            metas = cast("list[Mapping[str, Any]]", found)
            return metas, [
                s if (s := item.get("sentiment")) in SENTIMENTS else "neutral" for item in items
            ]
    seen: set[str] = set()
    metas, sentiments = [], []
    for row_id, item in zip(ids, items, strict=True):
        meta = row_metadata.get(row_id)
        if meta is None or row_id in seen:
            continue
        seen.add(row_id)
        metas.append(meta)
        sentiments.append(breakdowns._sentiment(item.get("sentiment")))
    return metas, sentiments


def _old_periods(
    ids: Iterable[str], row_metadata: Mapping[str, Mapping[str, Any]] | None
) -> trend.Periods | None:
    if not row_metadata:
        return None
    column = trend.date_column(row_metadata)
    if column is None:
        return None
    parsed: dict[str, date | None] = {}
    days: dict[str, date] = {}
    for feedback_id in ids:
        raw = (row_metadata.get(feedback_id) or {}).get(column)
        key = str(raw)
        if key not in parsed:
            parsed[key] = trend.parse_date(raw)
        day = parsed[key]
        if day is not None:
            days[feedback_id] = day
    if not days:
        return None
    distinct_days = set(days.values())
    for bucket in (trend.month_name, trend.week_name):
        named = {day: bucket(day) for day in distinct_days}  # once per distinct day
        distinct = set(named.values())
        if len(distinct) >= 2:
            recent = max(distinct)
            in_recent = {day: name == recent for day, name in named.items()}
            flags = dict(zip(days, map(in_recent.__getitem__, days.values()), strict=True))
            recent_total = sum(flags.values())
            return trend.Periods(recent, flags, recent_total, len(flags) - recent_total)
    return None


def _old_pain_point(
    key: str,
    grouped_by: str,
    members: list[Item],
    analysed: int,
    catalogue: ThemeCatalogue | None = None,
    split: trend.Periods | None = None,
    row_texts: RowTexts | None = None,
    counted: GroupRows | None = None,
) -> dict[str, Any] | None:
    problems = actionable_items(members) if counted is None else counted.problems
    if not problems:
        return None
    ranked = _old_representative_order(problems)
    severities = value_counts(problems, "severity") if counted is None else counted.severity
    problem_severity = _named(severities, SEVERITIES)
    base, _ = priority_for(problem_severity, len(problems), analysed)
    base_points, _ = priority_points(problem_severity, len(problems), analysed)
    trend_ = theme_trend([str(m.get("feedback_id")) for m in problems], split)
    priority, reason = priority_for(problem_severity, len(problems), analysed, trend_)
    points, _ = priority_points(problem_severity, len(problems), analysed, trend_)
    name, keywords = _old_name(key, grouped_by, ranked, catalogue)
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
        "trend": trend_.as_dict() if trend_ else None,
        "sentiment": _named(
            value_counts(members, "sentiment") if counted is None else counted.sentiment,
            SENTIMENTS,
        ),
        "problem_severity": problem_severity,
        "feedback_ids": _first_ids(ranked, EVIDENCE_IDS),
        "examples": _examples(ranked, row_texts=row_texts),
        "suggested_action": _most_common((m.get("suggested_action") for m in ranked), ACTION_CHARS),
    }


def _old_name(
    key: str, grouped_by: str, ranked: Sequence[Item], catalogue: ThemeCatalogue | None
) -> tuple[str | None, list[str]]:
    if grouped_by == "theme" and catalogue is not None:
        for theme in catalogue.themes:
            if group_key({"theme": theme.key})[0] == key:
                return theme.name, list(theme.keywords[:KEYWORDS])
    if grouped_by == "theme":
        return group_label({"key": key, "grouped_by": grouped_by}), []
    return _most_common((m.get("pain_point") for m in ranked), LABEL_CHARS), []


def _old_positive(items: Sequence[Item], row_texts: RowTexts | None = None) -> dict[str, Any]:
    praise = [i for i in items if i.get("sentiment") == "positive"]
    ordered = sorted(praise, key=lambda i: (group_key(i)[0] != PRAISE_THEME, -abs(_score(i))))
    return {"rows": len(praise), "examples": _examples(ordered, row_texts=row_texts)}


def _old_languages(items: Iterable[Item]) -> Iterable[str]:
    return (item["language"] for item in items if isinstance(item.get("language"), str))


#: (module, name, earlier function) for each function replaced.
_EARLIER: list[tuple[Any, str, Callable[..., Any]]] = [
    (aggregate, "representative_order", _old_representative_order),
    (aggregate, "periods", _old_periods),
    (  # the earlier summary named and quoted every group: it had no `counts_only`
        aggregate,
        "_pain_point",
        lambda *group, counts_only=False: _old_pain_point(*group),
    ),
    (aggregate, "_positive", _old_positive),
    (aggregate, "_languages", _old_languages),
    (
        aggregate,
        "breakdowns",
        lambda items, row_metadata, ids: _old_breakdowns(items, row_metadata),
    ),
]

# -- generated analyses ---------------------------------------------------------------------

_IDS = st.one_of(
    st.sampled_from([f"fb_{n}" for n in range(30)]),
    st.sampled_from(["", " ", "fb_1 ", "1", "None", "编号7", "e\u0301"]),
    st.integers(-2, 40),
    st.none(),
)
_WORDS = st.one_of(
    st.none(),
    st.sampled_from(
        ["", "  ", "Billing", " billing ", "BILLING  issues", "praise", "feature_request",
         "other", "empty", "登录 问题", "x" * 90, "Ｆａｓｔ", "…", "Slow  sync!"]
    ),
    sentences(max_pieces=3),
    st.integers(0, 3),
    st.lists(st.just("billing"), max_size=1),
)  # fmt: skip
_LABELS = st.one_of(
    st.sampled_from(
        ["positive", "negative", "neutral", "mixed", "low", "medium", "high", "critical"]
    ),
    st.sampled_from(["", "Negative", "HIGH", "None", "1", "True"]),
    st.none(),
    st.sampled_from([0, 1, 1.0, True, False, 2.5]),
    st.lists(st.just("high"), max_size=1),
)
_SCORES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5),
    st.sampled_from([True, False, None, "0.9", "-3", 10**400, [1.0]]),
)
_PLAIN_SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.5, -1.5, 2.0, 3]), st.floats(-5, 5, allow_nan=False)
)
_PLAIN_LABELS = st.sampled_from(
    ["positive", "negative", "neutral", "mixed", "low", "medium", "high", "critical", "High"]
)
_LANGUAGES = st.one_of(st.sampled_from(["zh", "en", "", "fr"]), st.none(), st.just(3))
_DATES = st.one_of(
    st.dates().map(str),
    st.sampled_from(
        ["2026-01-03", "2026-02-14", "2026-03-30", "2026/03/31", "2026.04.01", "2026年4月2日",
         "04/05/2026", "2026-04-06T10:00:00Z", "1767225600", "1767225600000", "2026-04",
         "", " ", "soon", "2026-02-30", "None"]
    ),
    st.none(),
    st.sampled_from([1767225600, 1767225600.5, 3, True]),
)  # fmt: skip
_VALUES = st.one_of(
    st.sampled_from(["web", "app", "email", " web", "", "5", "4", "3.5", "-1", "x" * 60]),
    st.none(),
    st.sampled_from([1, 1.0, True]),
)


@st.composite
def _items(draw: st.DrawFn) -> dict[str, Any]:
    fields = {
        "feedback_id": _IDS,
        "sentiment": _LABELS,
        "severity": _LABELS,
        "theme": _WORDS,
        "pain_point": _WORDS,
        "evidence_text": st.one_of(sentences(), st.sampled_from(["", " ", None, 7])),
        "suggested_action": _WORDS,
        "language": _LANGUAGES,
        "sentiment_score": _SCORES,
    }
    return {key: draw(values) for key, values in fields.items() if draw(st.integers(0, 9))}


@st.composite
def _analyses(
    draw: st.DrawFn,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]] | None, list[dict[str, Any]]]:
    items = draw(st.lists(_items(), max_size=60))
    if draw(st.booleans()):  # the usual analysis: every score a number, every label text
        for item in items:
            item["sentiment_score"] = draw(_PLAIN_SCORES)
            item["theme"] = draw(st.sampled_from(["billing", "Login", "praise", None]))
            item["sentiment"] = draw(st.sampled_from(["negative", "mixed", "neutral", "positive"]))
            item["severity"] = draw(_PLAIN_LABELS)
    if draw(st.booleans()):  # many rows of few kinds, as a real analysis has
        items = [dict(item) for item in items[:6] * draw(st.integers(2, 12))]
    metadata: dict[str, dict[str, Any]] | None = None
    if draw(st.integers(0, 4)):
        metadata = {}
        columns = draw(
            st.sampled_from(
                [
                    ("created_at", "channel", "rating"),
                    ("date", "segment"),
                    ("channel",),
                    ("submitted", "created_at"),
                ]
            )
        )
        for item in items:
            if draw(st.integers(0, 9)):
                row = {c: draw(_DATES if c in ("created_at", "date", "submitted") else _VALUES)
                       for c in columns}  # fmt: skip
                metadata[str(item.get("feedback_id"))] = row
    failed = draw(
        st.lists(
            st.fixed_dictionaries(
                {"batch": st.integers(0, 3), "reason": _WORDS, "feedback_ids": st.just(["a"])}
            ),
            max_size=3,
        )
    )
    return items, metadata, failed


def _outcome(summarise: Callable[[], Any]) -> Any:
    try:
        return summarise()
    except (TypeError, ValueError, OverflowError) as error:
        return type(error)


def _both(
    items: list[dict[str, Any]],
    metadata: dict[str, dict[str, Any]] | None,
    failed: list[dict[str, Any]],
    *,
    grouped: bool,
) -> tuple[Any, Any]:
    def summarise() -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if grouped:  # as the figure check calls it
            groups = group_items(items)
            extra = {"groups": groups, "counted": {g: group_rows(m) for g, m in groups.items()}}
        return aggregate.summarize_analysis(
            items, total_rows=len(items) + 3, failed_batches=failed, row_metadata=metadata, **extra
        )

    new = _outcome(summarise)
    with pytest.MonkeyPatch.context() as patch:
        for module, name, earlier in _EARLIER:
            patch.setattr(module, name, earlier)
        old = _outcome(summarise)
    return new, old


def _same(new: Any, old: Any) -> bool:
    """Equal, NaN scores and all: compared as their text."""
    return repr(new) == repr(old)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_analyses(), st.booleans())
def test_the_summary_is_the_earlier_ones(analysis: Any, grouped: bool) -> None:
    items, metadata, failed = analysis
    new, old = _both(items, metadata, failed, grouped=grouped)
    assert _same(new, old), (new, old)
    if isinstance(new, dict):  # the sentiment counts, added up from the groups' when given
        counted = Counter(str(item.get("sentiment")) for item in items)
        assert new["sentiment"] == {s: counted[s] for s in SENTIMENTS}


def test_the_comparison_sees_another_order() -> None:
    """The comparison can fail: an order other than the earlier one changes the summary."""
    items = [
        {"feedback_id": "a", "sentiment": "negative", "severity": "low", "evidence_text": "late"},
        {"feedback_id": "b", "sentiment": "negative", "severity": "high", "evidence_text": "lost"},
    ]
    new, old = _both(items, None, [], grouped=False)
    assert _same(new, old)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggregate, "representative_order", lambda rows: list(rows))
        changed = aggregate.summarize_analysis(items)
    assert not _same(changed, old)


#: What a summary for the figures leaves out (`summarize_analysis(counts_only=True)`).
_NAMING = ("pain_point", "keywords", "feedback_ids", "examples", "suggested_action")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_analyses(), st.booleans())
def test_the_counts_only_summary_is_the_whole_one_without_names_and_quotes(
    analysis: Any, grouped: bool
) -> None:
    items, metadata, failed = analysis

    def summarise(counts_only: bool) -> Any:
        def summary() -> dict[str, Any]:
            extra: dict[str, Any] = {}
            if grouped:
                groups = group_items(items)
                extra = {"groups": groups, "counted": {g: group_rows(m) for g, m in groups.items()}}
            return aggregate.summarize_analysis(
                items,
                total_rows=len(items) + 3,
                failed_batches=failed,
                row_metadata=metadata,
                counts_only=counts_only,
                **extra,
            )

        return _outcome(summary)

    whole, counts = summarise(False), summarise(True)
    if isinstance(whole, dict) and aggregate._nameable(items):
        whole = {key: value for key, value in whole.items() if key != "positive"}
        whole["pain_points"] = [
            {key: value for key, value in group.items() if key not in _NAMING}
            for group in whole["pain_points"]
        ]
    assert _same(counts, whole), (counts, whole)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_analyses())
@example(([{"sentiment": "negative", "sentiment_score": 10**400}], None, []))
@example(([{"sentiment": "positive", "evidence_text": 10**5000}], None, []))
@example(([{"sentiment": "mixed", "evidence_text": [1]}], {"None": {"date": "2024-01-02"}}, []))
def test_the_figures_are_those_of_the_whole_summary(analysis: Any) -> None:
    """`analysis_figures` counts from the summary without names and quotes: the same figures
    as from the whole summary, as it did before."""
    from runlens_feedback import figures

    items, metadata, failed = analysis
    document = {"items": items, "failed_batches": failed}

    def computed() -> Any:
        return _outcome(
            lambda: figures.analysis_figures(document, len(items) + 3, row_metadata=metadata)
        )

    def whole_summary(*args: Any, **keywords: Any) -> dict[str, Any]:
        keywords.pop("counts_only", None)
        return aggregate.summarize_analysis(*args, **keywords)

    now = computed()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "summarize_analysis", whole_summary)
        before = computed()
    assert _same(now, before)


def _grouped_apart(items: list[dict[str, Any]]) -> Any:
    """The groups and their rows as the figures read them before: two passes."""
    groups = group_items(items)
    return groups, {group: group_rows(members) for group, members in groups.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_analyses(), st.lists(st.integers(0, 40), max_size=120))
def test_the_groups_and_their_rows_in_one_pass_are_those_of_two(
    analysis: Any, themes: list[int]
) -> None:
    items = analysis[0]
    for item, theme in zip(items, themes, strict=False):  # more themes than stand alone
        item["theme"] = f"Theme {theme}" if theme % 7 else item.get("theme")
    assert _same(
        _outcome(lambda: aggregate.grouped_rows(items)), _outcome(lambda: _grouped_apart(items))
    )


def test_more_groups_than_stand_alone_fold_with_their_problem_rows() -> None:
    items = [
        {"theme": f"t{n % 20}", "sentiment": ("negative", "positive", "neutral")[n % 3],
         "severity": ("low", "high")[n % 2], "feedback_id": str(n)}
        for n in range(200)
    ]  # fmt: skip
    groups, counted = aggregate.grouped_rows(items)
    assert ("other", "theme") in groups
    assert _same((groups, counted), _grouped_apart(items))
