"""The figures of the insight report, recomputed from the deliverables (SPEC 13.2).

Every number the report states under `SECTIONS` must be one of these figures, written next to
words that name it (`runlens.validation.figures` says how numbers are tied to figures). The
`report_figures` tool returns the same figures, so a model quotes them instead of computing
them. Everything is counted as `runlens_feedback.aggregate` counts it (its grouping, its
problem rows, its other groups), from `feedback_analysis.json`, `product_backlog.json` and
the Evidence Index. Shares are over the analysed rows, except `rows.not_analysed.share`
(over the rows in the file).

    rows.file  rows.analysed  rows.not_analysed(.share)  problem_rows(.share)  themes
    sentiment.<positive|neutral|negative|mixed>(.share)
    severity.<low|medium|high|critical|high_or_critical>(.share)
    theme.<key>.rows  .share  .problem_rows(.share)  .high_or_critical
    theme.<key>.<sentiment> (its rows)  theme.<key>.<severity> (its problem rows)
    other_groups  other_groups.rows  other_groups.problem_rows
    backlog.items  backlog.<P0|P1|P2|P3>  failed_batches  failed_batches.rows  language.<code>
    breakdown.<column>.<value>.rows  .share  .<sentiment>  .negative.share
    sentiment.neutral_or_mixed(.share)  rows.grouped_by_wording  warning.<code>.<detail>
    theme.<key>.trend.recent_share  .before_share  .recent_rows  .before_rows

The last two lines are what the report states outside `SECTIONS` (its actions and risks),
where a claim about the data must equal some figure of its kind (docs/validation.md).

Breakdowns (`runlens_feedback.breakdowns`) are recomputed from the analysis and the input's
own metadata columns (`SOURCE_ROWS`: the source file the Evidence Index was checked against),
never from what a model wrote about them. A breakdown figure is named by its place
(`runlens.Place`), not by words: the table under "By `channel`:" (its column's name), the
row whose first cell is the value as the report writes it (`label`, or the words for a
blank, earlier or undated entry), the column whose header names the measure; so a value that
spells a measure (`negative`, `high`, `P1`, `5`) is a row key and nothing else. Its share is
over the analysed rows, its negative share over the value's rows.

Labels are English and Chinese. A theme's labels are each of its names (its key, the key in
words, its English and Chinese labels and the parts of its Chinese label) with each label of
the measure: `("Billing and pricing", "negative")`, `("计费/价格", "负面")`; so a theme named
anywhere in the sentence makes a clause's "9 negative" Billing's, not the whole file's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from runlens import SOURCE_ROWS, EvidenceIndex, Figure, FigureRule, Place
from runlens_feedback.aggregate import (
    GroupRows,
    Item,
    grouped_rows,
    summarize_analysis,
)
from runlens_feedback.analyst.groups import group_keyword, group_label, theme_spec
from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.report_format import report_language
from runlens_feedback.breakdowns import SPECIAL_LABELS, RowMetadata, breakdowns
from runlens_feedback.contracts import (
    ANALYSIS,
    BACKLOG,
    PRIORITIES,
    REPORT,
    SENTIMENTS,
    SEVERITIES,
)
from runlens_feedback.figure_labels import (
    ANALYSED_LABELS,
    BACKLOG_LABELS,
    FAILED_LABELS,
    FILE_LABELS,
    GENERIC_TERMS,
    HIGH_OR_CRITICAL_LABELS,
    LANGUAGES_LABELS,
    NOT_ANALYSED_LABELS,
    OTHER_GROUPS_LABELS,
    PROBLEM_LABELS,
    ROWS_LABELS,
    SENTIMENT_LABELS,
    SEVERITY_LABELS,
    SHARE_LABELS,
    THEMES_LABELS,
    Labels,
)
from runlens_feedback.trend import Trend

SECTIONS = ("## Product Context", "## Executive Summary", "## Top Pain Points")


def _named(names: Iterable[str], measures: Labels) -> Labels:
    """Each name with each label of a measure (an empty label: the name alone)."""
    return tuple((name, *label) for name in names for label in measures)


def _count(key: str, value: int, labels: Labels) -> Figure:
    return Figure(key, value, "count", labels)


def _counted(key: str, value: int, total: int, labels: Labels) -> list[Figure]:
    """A count and its share of `total` (no share of nothing)."""
    figures = [_count(key, value, labels)]
    if total:
        figures.append(Figure(f"{key}.share", Fraction(value, total), "share", labels))
    return figures


# -- from the deliverables ------------------------------------------------------------------


def _analysis_parts(analysis: Any) -> tuple[list[Item], list[Item]] | None:
    """The items and failed batches, or None when the document does not have their shape
    (the JSON validator reports that)."""
    if not isinstance(analysis, Mapping):
        return None
    items, failed = analysis.get("items"), analysis.get("failed_batches", [])
    if not isinstance(items, list) or not isinstance(failed, list):
        return None
    entries = (*items, *failed)
    if set(map(type, entries)) <= {dict}:  # the usual document, told at C speed
        return items, failed
    if not all(isinstance(entry, Mapping) for entry in entries):
        return None
    return items, failed


def analysis_figures(
    analysis: Any,
    rows_in_file: int,
    *,
    all_themes: bool = True,
    row_metadata: RowMetadata | None = None,
) -> list[Figure]:
    """The figures of the analysis (and the input's row count), none when its shape is wrong.

    `all_themes`: every group's figures; else only those of the pain points the aggregated
    analysis lists (what a report discusses; a tool result stays small). `row_metadata`: the
    input's other columns by id, for the breakdown figures."""
    parts = _analysis_parts(analysis)
    if parts is None:
        return []
    items, failed = parts
    # Each group's problem rows and counts, for its pain point and its figures alike.
    groups, counted = grouped_rows(items)
    summary = summarize_analysis(
        items,
        total_rows=rows_in_file,
        failed_batches=failed,
        row_metadata=row_metadata,
        groups=groups,
        counted=counted,
        counts_only=True,
    )
    analysed = summary["analysed_rows"]
    figures = [
        _count("rows.file", rows_in_file, FILE_LABELS),
        _count("rows.analysed", analysed, ANALYSED_LABELS),
        *_counted(
            "rows.not_analysed", summary["unanalysed_rows"], rows_in_file, NOT_ANALYSED_LABELS
        ),
        *_counted("problem_rows", summary["problem_rows"], analysed, PROBLEM_LABELS),
        _count("themes", summary["groups"], THEMES_LABELS),
    ]
    for sentiment in SENTIMENTS:
        count = summary["sentiment"][sentiment]
        figures += _counted(f"sentiment.{sentiment}", count, analysed, SENTIMENT_LABELS[sentiment])
    for severity in SEVERITIES:
        count = summary["severity"][severity]
        figures += _counted(f"severity.{severity}", count, analysed, SEVERITY_LABELS[severity])
    severe = summary["severity"]["high"] + summary["severity"]["critical"]
    figures += _counted("severity.high_or_critical", severe, analysed, HIGH_OR_CRITICAL_LABELS)
    listed = {(p["key"], p["grouped_by"]) for p in summary["pain_points"]}
    language = report_language(summary)
    for (key, grouped_by), members in groups.items():
        if all_themes or (key, grouped_by) in listed:
            group = counted[key, grouped_by]
            figures += _theme_figures(key, grouped_by, members, group, analysed, language)
    figures += _other_groups(summary["other_groups"])
    figures += _failures(summary["failed_batches"])
    figures += _risk_figures(summary)
    for language, count in summary["languages"].items():
        figures.append(_count(f"language.{language}", count, _language_labels(language)))
    figures += _breakdown_figures(summary["breakdowns"], analysed)
    return figures


def _risk_figures(summary: Mapping[str, Any]) -> list[Figure]:
    """The figures the report states outside its figure sections (its actions and risks),
    named by no words there: the neutral-or-mixed rows, the rows grouped by the wording of
    their pain point, the counts of the warnings (`runlens_feedback.genre`) and each listed
    pain point's trend (its problem rows and share in the recent period and before it)."""
    analysed = summary["analysed_rows"]
    sentiment = summary["sentiment"]
    uncertain = sentiment.get("neutral", 0) + sentiment.get("mixed", 0)
    figures = _counted("sentiment.neutral_or_mixed", uncertain, analysed, ())
    figures.append(
        _count("rows.grouped_by_wording", summary["grouped_by"].get("pain_point", 0), ())
    )
    for warning in summary.get("warnings") or []:
        for name, value in (warning.get("details") or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                figures.append(_count(f"warning.{warning.get('code')}.{name}", value, ()))
    for group in summary["pain_points"]:
        trend = Trend.from_dict(group["trend"]) if isinstance(group.get("trend"), Mapping) else None
        if trend is None:
            continue
        prefix = f"theme.{group['key']}.trend"
        figures += [
            Figure(f"{prefix}.recent_share", trend.recent_share, "share", ()),
            Figure(f"{prefix}.before_share", trend.before_share, "share", ()),
            _count(f"{prefix}.recent_rows", trend.recent_rows, ()),
            _count(f"{prefix}.before_rows", trend.before_rows, ()),
        ]
    return figures


#: The headers a breakdown table's measures go by: the report's own words and the ones a
#: model writing its own table uses ("Count", "% of rows", "数量", "比例").
_SHARE_WORDS: Labels = (("share",), ("占比",), ("%",), ("percent",), ("比例",))
_ROW_WORDS: Labels = (("row",), ("条",), ("count",), ("number",), ("数量",))


def breakdown_figures(
    items: Sequence[Item], row_metadata: RowMetadata | None, analysed: int
) -> list[Figure]:
    """The figures of the breakdowns of `items` by the columns of `row_metadata`."""
    return _breakdown_figures(breakdowns(items, row_metadata), analysed)


def _breakdown_figures(computed: Mapping[str, Any], analysed: int) -> list[Figure]:
    """The figures of breakdowns already computed (`breakdowns`, as a summary holds them)."""
    figures = []
    for column in computed["columns"]:
        name = " ".join(str(column["column"]).split()).replace("`", "'")
        for entry in column["values"]:
            figures += _entry_figures(f"breakdown.{column['column']}", name, entry, analysed)
    return figures


def _entry_figures(
    prefix: str, column: str, entry: Mapping[str, Any], analysed: int
) -> list[Figure]:
    """The figures of one row of a breakdown table, each placed in its cell: the table named
    by the column, the row keyed by the value as the report writes it (`label`, or the words
    for a blank, earlier or undated entry), the cell by its measure. They have no labels:
    what a cell says, `negative` or `P1` or `5`, is a row key, never the name of a measure."""
    special = entry.get("special")
    rows_keyed = SPECIAL_LABELS[special] if special else (entry["label"],)
    key = f"{prefix}.{special or entry['value']}"

    def placed(measure: str, value: int | Fraction, columns: Labels) -> Figure:
        place = Place(((column,),), rows_keyed, columns)
        if isinstance(value, Fraction):
            return Figure(f"{key}.{measure}", value, "share", (), place=place)
        return Figure(f"{key}.{measure}", value, "count", (), place=place)

    rows, sentiment = entry["rows"], entry["sentiment"]
    figures = [placed("rows", rows, _ROW_WORDS)]
    if analysed:
        figures.append(placed("share", Fraction(rows, analysed), _SHARE_WORDS))
    figures += [placed(s, sentiment[s], SENTIMENT_LABELS[s]) for s in SENTIMENTS]
    if rows:
        shares = tuple(
            (*word, *share) for word in SENTIMENT_LABELS["negative"] for share in _SHARE_WORDS
        )
        figures.append(placed("negative.share", Fraction(sentiment["negative"], rows), shares))
    return figures


def _theme_figures(
    key: str,
    grouped_by: str,
    members: Sequence[Item],
    counted: GroupRows,
    analysed: int,
    language: Lang = "en",
) -> list[Figure]:
    """A group's figures: its rows and share, its problem rows and share, its rows by
    sentiment, its problem rows by severity (as the pain-point table counts them), the
    counts from `counted` (its `group_rows`)."""
    names = theme_names(key, grouped_by, language)
    problems, sentiment, severity = counted
    prefix = f"theme.{key}"
    figures = [
        _count(f"{prefix}.rows", len(members), _named(names, ROWS_LABELS)),
        Figure(
            f"{prefix}.share",
            Fraction(len(members), analysed),
            "share",
            _named(names, SHARE_LABELS),
        ),
        *_counted(f"{prefix}.problem_rows", len(problems), analysed, _named(names, PROBLEM_LABELS)),
    ]
    figures += [
        _count(f"{prefix}.{s}", sentiment[s], _named(names, SENTIMENT_LABELS[s]))
        for s in SENTIMENTS
    ]
    figures += [
        _count(f"{prefix}.{s}", severity[s], _named(names, SEVERITY_LABELS[s])) for s in SEVERITIES
    ]
    severe = severity["high"] + severity["critical"]
    figures.append(
        _count(f"{prefix}.high_or_critical", severe, _named(names, HIGH_OR_CRITICAL_LABELS))
    )
    return figures


def theme_names(key: str, grouped_by: str, language: Lang = "en") -> tuple[str, ...]:
    """The words that name a group, its display labels first (the one in the report's
    `language`, then the other: a report names the group in its own language): for a theme
    of the analyst's table its English label, its Chinese label and each part of it
    (`计费/价格`, `计费`, `价格`), then its keyword, the key in words and the key.

    A name that is also a word of the other figures' labels is left out: themes come from
    the data, and a topic named "file" or "negative" would otherwise claim "89 rows in the
    file" or "58 negative" for itself."""
    group = {"key": key, "grouped_by": grouped_by}
    spec = theme_spec(group)
    other: Lang = "en" if language == "zh" else "zh"
    names = [group_label(group, language), group_label(group, other)]
    names += spec.label_zh.split("/") if spec else ()
    names += [group_keyword(group), key.replace("_", " "), key]
    kept = (name.strip() for name in names if name.strip())
    return tuple(dict.fromkeys(name for name in kept if name.casefold() not in GENERIC_TERMS))


def _other_groups(other: Mapping[str, int]) -> list[Figure]:
    if not other["groups"]:
        return []
    return [
        _count("other_groups", other["groups"], _named(OTHER_GROUPS_LABELS, ((),))),
        _count("other_groups.rows", other["rows"], _named(OTHER_GROUPS_LABELS, ROWS_LABELS)),
        _count(
            "other_groups.problem_rows",
            other["problem_rows"],
            _named(OTHER_GROUPS_LABELS, PROBLEM_LABELS),
        ),
    ]


def _failures(failures: Mapping[str, Any]) -> list[Figure]:
    return [
        _count("failed_batches", failures["batches"], _named(FAILED_LABELS, ((),))),
        _count("failed_batches.rows", failures["rows"], _named(FAILED_LABELS, ROWS_LABELS)),
    ]


def _language_labels(language: str) -> Labels:
    return LANGUAGES_LABELS.get(language, ((language,),))


def backlog_figures(backlog: Any) -> list[Figure]:
    """The backlog's item count and its counts by priority, none when its shape is wrong."""
    entries = backlog.get("items") if isinstance(backlog, Mapping) else None
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        return []
    priorities = Counter(entry.get("priority") for entry in entries)
    return [
        _count("backlog.items", len(entries), BACKLOG_LABELS),
        *(_count(f"backlog.{p}", priorities[p], ((p,),)) for p in PRIORITIES),
    ]


def report_figures(documents: Mapping[str, Any], index: EvidenceIndex) -> list[Figure]:
    """The figure rule's `compute`: every figure, or none when a deliverable's shape is wrong.
    The input's rows (`SOURCE_ROWS`, when given) give the breakdown figures."""
    metadata = documents.get(SOURCE_ROWS)
    analysis = analysis_figures(documents[ANALYSIS], len(index), row_metadata=metadata)
    backlog = backlog_figures(documents[BACKLOG])
    return [*analysis, *backlog] if analysis and backlog else []


FIGURE_RULES = (
    FigureRule(
        artifact=REPORT,
        sections=SECTIONS,
        sources=(ANALYSIS, BACKLOG, SOURCE_ROWS),
        compute=report_figures,
    ),
)
