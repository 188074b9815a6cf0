"""The Markdown insight report a product manager would forward, written from the aggregated
analysis (`runlens_feedback.aggregate`), never from raw rows.

The seven headings of the Feedback Analysis contract appear exactly once each, in order, and
are the only headings; they stay in English, as contracted. The body is written in the input's
main language (`report_language`: the language most analysed items declare, Chinese or English;
English for anything else), from the templates of `runlens_feedback.analyst.report_words`.
Every count is the summary's (exact counts of the analysis); every quote is a summary
example's `evidence_text` (or one line of it), cited with its feedback id in the contract's
citation form, so the validator verifies each one. Quotes and labels never start a
line, so feedback text cannot add headings or lists to the report.

Breakdowns by metadata columns (`summary["breakdowns"]`) are tables under Product Context,
whose numbers the figure check recomputes from the input's columns; a chart
(`runlens_feedback.chart`, written by the `write_insight_chart` tool) is linked when the writer
says it exists; the summary's `warnings` (input that does not look like product feedback)
appear in Executive Summary and in Risks And Unknowns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.analyst.labels import PRIORITIES, SENTIMENTS, SEVERITIES, TOPIC_PREFIX
from runlens_feedback.analyst.report_format import (
    ReportWords,
    Summary,
    _cell,
    _escaped,
    _label,
    _noun,
    _pct,
    _plain,
    _quote_line,
    _unquoted,
    report_language,
)
from runlens_feedback.contracts import REPORT_HEADINGS as HEADINGS  # one list, the contract's

__all__ = ["render_report", "report_from_summary", "report_language"]

_LEADING = 3
_EVIDENCE_GROUPS = 5
_SMALL_SAMPLE = 30
_HIGH_UNCERTAIN_SHARE = 0.3


def report_from_summary(
    summary: Summary, backlog: Mapping[str, Any], *, chart: str | None = None
) -> str:
    """The report for `summary` (from `summarize_analysis`) and `backlog` (from
    `backlog_from_summary`), its body in `report_language(summary)`; quotes stay in their
    original language. `chart`: the chart's path relative to the report (e.g.
    `insight_chart.svg`), linked from Executive Summary; None when no chart was written."""
    words = ReportWords(report_language(summary))
    bodies = (
        _title(summary, words),
        _context(summary, words),
        _executive_summary(summary, backlog, words, chart),
        _pain_points(summary, words),
        _evidence(summary, words),
        _actions(backlog, words),
        _risks(summary, words),
    )
    blocks = [
        f"{heading}\n\n" + "\n".join(body) for heading, body in zip(HEADINGS, bodies, strict=True)
    ]
    return "\n\n".join(blocks) + "\n"


def render_report(
    items: Sequence[Mapping[str, Any]],
    backlog: Mapping[str, Any],
    *,
    source: str,
    total_rows: int,
    failed_batches: Sequence[Mapping[str, Any]] = (),
    row_metadata: Mapping[str, Mapping[str, Any]] | None = None,
    chart: str | None = None,
) -> str:
    """The report of analysis `items`: `report_from_summary(summarize_analysis(...), backlog)`
    with the input file name `source`, its row count, the batches that failed and the rows'
    metadata columns (for the breakdowns)."""
    summary = summarize_analysis(
        items,
        total_rows=total_rows,
        failed_batches=failed_batches,
        source=source,
        row_metadata=row_metadata,
    )
    return report_from_summary(summary, backlog, chart=chart)


# -- sections -------------------------------------------------------------------------------


def _title(summary: Summary, words: ReportWords) -> list[str]:
    return [words("title", source=_plain(summary.get("source", "")))]


def _context(summary: Summary, words: ReportWords) -> list[str]:
    analysed = summary["analysed_rows"]
    pains = summary["pain_points"]
    top = words("list_sep").join(
        words("top", label=_label(g, words), problems=g["problem_rows"]) for g in pains[:_LEADING]
    )
    lines = [
        words(
            "source",
            source=_plain(summary.get("source", "")),
            total=summary["total_rows"],
            analysed=analysed,
        )
    ]
    if summary["languages"]:
        languages = words("list_sep").join(
            words("language", count=count, name=words.language_name(lang))
            for lang, count in summary["languages"].items()
        )
        lines.append(words("languages", languages=languages))
    lines += [
        words("themes", groups=summary["groups"], top=top or words("none")),
        words("method"),
    ]
    for column in (summary.get("breakdowns") or {}).get("columns", []):
        lines += ["", *_breakdown_table(column, analysed, words)]
    return lines


def _breakdown_table(column: Mapping[str, Any], analysed: int, words: ReportWords) -> list[str]:
    """One metadata column as a table: rows, share of the analysed rows, positive and
    negative rows, and the negative share of the value's rows. Its lead names the column, so
    the figure check ties each cell to its column and value (`runlens_feedback.figures`)."""
    name = _plain(column["column"])
    if column["kind"] == "trend":
        lead = words("by_period", period=words(str(column["period"])), column=name)
    else:
        lead = words("by_column", column=name)
    lines = [
        lead,
        "",
        f"| {_escaped(name)} | {words('breakdown_header')} |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for entry in column["values"]:
        special = entry.get("special")
        shown = words.special(special) if special else str(entry["label"])
        rows, sentiment = entry["rows"], entry["sentiment"]
        negative = sentiment.get("negative", 0)
        lines.append(
            f"| {_escaped(shown)} | {rows} | {_pct(rows, analysed)} | "
            f"{sentiment.get('positive', 0)} | {negative} | {_pct(negative, rows)} |"
        )
    return lines


def _executive_summary(
    summary: Summary, backlog: Mapping[str, Any], words: ReportWords, chart: str | None
) -> list[str]:
    total = summary["analysed_rows"]
    lines = [words("warning"), ""] if summary.get("warnings") else []
    lines += [words("sentiment_lead", total=total), ""]
    for label in SENTIMENTS:
        count = summary["sentiment"].get(label, 0)
        name = words.level(words.sentiment(label))
        lines.append(words("level", name=name, count=count, share=_pct(count, total)))
    lines += ["", words("severity_lead"), ""]
    for level in reversed(SEVERITIES):
        count = summary["severity"].get(level, 0)
        name = words.level(words.severity(level))
        lines.append(words("level", name=name, count=count, share=_pct(count, total)))
    problems = summary["problem_rows"]
    lines += ["", words("problems", rows=words.rows(problems), share=_pct(problems, total))]
    leading = words("leading_sep").join(
        words(
            "leading_part",
            label=_label(g, words),
            priority=g["priority"],
            rows=words.rows(g["count"]),
            share=_pct(g["count"], total),
            problems=g["problem_rows"],
        )
        for g in summary["pain_points"][:_LEADING]
    )
    if leading:
        lines.append(words("leading", parts=leading))
    entries = list(backlog.get("items", []))
    by_priority = {p: sum(1 for b in entries if b.get("priority") == p) for p in PRIORITIES}
    parts = words("list_sep").join(
        words("backlog_part", count=count, priority=p) for p, count in by_priority.items() if count
    )
    priorities = words("backlog_priorities", parts=parts) if parts else ""
    lines.append(words("backlog", count=len(entries), priorities=priorities))
    if chart is not None:
        trend = next(
            (
                c
                for c in (summary.get("breakdowns") or {}).get("columns", [])
                if c["kind"] == "trend"
            ),
            None,
        )
        trend_words = words("chart_trend", period=words(str(trend["period"]))) if trend else ""
        link = words("chart", trend=trend_words).replace("insight_chart.svg", chart)
        lines += ["", link]
    return lines


def _pain_points(summary: Summary, words: ReportWords) -> list[str]:
    total = summary["analysed_rows"]
    pains = summary["pain_points"]
    if not pains:
        return [words("no_pains")]
    lines = [
        words("pains_intro"),
        "",
        words("pains_header"),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rank, group in enumerate(pains, start=1):
        severity = group["problem_severity"]
        severe = severity.get("high", 0) + severity.get("critical", 0)
        lines.append(
            f"| {rank} | {_cell(group_label(group, words.language))} | `{_cell(group['key'])}` | "
            f"{group['count']} | {_pct(group['count'], total)} | {group['problem_rows']} | "
            f"{group['sentiment'].get('negative', 0)} | {group['sentiment'].get('mixed', 0)} | "
            f"{severe} | {group['priority']} |"
        )
    other = summary["other_groups"]
    if other["groups"]:
        lines += ["", _not_listed(other, words)]
    return lines


def _not_listed(other: Mapping[str, Any], words: ReportWords) -> str:
    if words.language == "zh":
        return (
            f"未列出：其他主题 {other['groups']} 个（{words.rows(other['rows'])}，"
            f"其中 {other['problem_rows']} 条反映问题或需求）。"
        )
    groups = "1 other group" if other["groups"] == 1 else f"{other['groups']} other groups"
    return (
        f"Not listed: {groups} ({words.rows(other['rows'])}, {other['problem_rows']} of them "
        "reporting a problem or request)."
    )


def _evidence(summary: Summary, words: ReportWords) -> list[str]:
    lines: list[str] = []
    for group in summary["pain_points"][:_EVIDENCE_GROUPS]:
        if not group["examples"]:
            continue
        lead = words(
            "evidence_group",
            label=_label(group, words),
            key=_plain(group["key"]),
            rows=words.rows(group["problem_rows"]),
        )
        lines += [_unquoted(lead), ""]
        for example in group["examples"]:
            lines += [_quote_line(example, words), ""]
    positive = summary["positive"]
    if positive["examples"]:
        count = positive["rows"]
        lines += [words("evidence_positive", count=count, noun=_noun(count)), ""]
        for example in positive["examples"]:
            lines += [_quote_line(example, words), ""]
    return lines[:-1] if lines else [words("no_quotes")]


def _actions(backlog: Mapping[str, Any], words: ReportWords) -> list[str]:
    """The backlog, its text with quotation marks made single: a backlog's words (“Billing”
    (fb_005)) are no citation of a row."""
    entries = list(backlog.get("items", []))
    if not entries:
        return [words("no_actions")]
    lines = []
    for rank, entry in enumerate(entries, start=1):
        ids = ", ".join(_plain(i) for i in entry.get("evidence_feedback_ids", []))
        criteria = words("criteria_sep").join(
            _plain(c).rstrip(".。") for c in entry.get("acceptance_criteria", [])
        )
        lines += [
            words(
                "action",
                rank=rank,
                priority=entry.get("priority"),
                title=_plain(entry.get("title")),
                theme=_plain(entry.get("theme", "")),
                rationale=_plain(entry.get("rationale", "")),
            ).rstrip(),
            words("criteria", criteria=criteria),
            words("metric", metric=_plain(entry.get("metric")).rstrip(".。")),
            words("evidence_ids", ids=ids),
        ]
    return [_unquoted(line) for line in lines]


def _risks(summary: Summary, words: ReportWords) -> list[str]:
    total = summary["analysed_rows"]
    lines = _warning_lines(summary, words)
    lines += _failure_lines(summary["failed_batches"], words)
    unanalysed, total_rows = summary["unanalysed_rows"], summary["total_rows"]
    if unanalysed > 0:
        share = _pct(unanalysed, total_rows)
        lines.append(words("unanalysed", unanalysed=unanalysed, total=total_rows, share=share))
    if total < _SMALL_SAMPLE:
        lines.append(words("small", rows=words.rows(total)))
    uncertain = summary["sentiment"].get("neutral", 0) + summary["sentiment"].get("mixed", 0)
    high = bool(total) and uncertain / total >= _HIGH_UNCERTAIN_SHARE
    lines.append(
        words("uncertain", count=uncertain, share=_pct(uncertain, total))
        + words("uncertain_high" if high else "uncertain_low")
    )
    lines += _grouping_lines(summary, words)
    skipped = (summary.get("breakdowns") or {}).get("skipped", [])
    if skipped:
        columns = words("list_sep").join(
            words("skipped_part", column=_plain(s["column"]), reason=words.skip_reason(s["reason"]))
            for s in skipped
        )
        lines.append(words("skipped", columns=columns))
    lines.append(words("limits"))
    return lines


def _warning_lines(summary: Summary, words: ReportWords) -> list[str]:
    lines = []
    for warning in summary.get("warnings") or []:
        details = warning.get("details") or {}
        if warning.get("code") == "not_product_feedback":
            lines.append(
                words(
                    "not_feedback",
                    rows=details.get("rows"),
                    cues=details.get("cue_rows"),
                    story=details.get("story_rows"),
                    polar=details.get("polar_rows"),
                )
            )
        else:
            lines.append(f"- {_plain(warning.get('message', warning.get('code', '')))}")
    return lines


def _failure_lines(failures: Mapping[str, Any], words: ReportWords) -> list[str]:
    if not failures["batches"]:
        return [words("failed_none")]
    lines = [words("failed", batches=failures["batches"], rows=words.rows(failures["rows"]))]
    for reason in failures["reasons"]:
        rows, batches = words.rows(reason["rows"]), reason["batches"]
        if words.language == "zh":
            lines.append(f"  - {_plain(reason['reason'])}：{batches} 个批次，共 {rows}")
        else:
            noun = "batch" if batches == 1 else "batches"
            lines.append(f"  - {_plain(reason['reason'])}: {rows} in {batches} {noun}")
    details = [
        ", ".join(f"{k}={_plain(v)}" for k, v in entry.items() if k != "reason")
        for entry in failures["entries"]
    ]
    if any(details):
        shown = "; ".join(f"({d})" for d in details if d)
        lines.append(words("first_failures", details=shown))
    return lines


def _grouping_lines(summary: Summary, words: ReportWords) -> list[str]:
    lines = []
    by_wording = summary["grouped_by"].get("pain_point", 0)
    if by_wording:
        lines.append(words("grouping", rows=words.rows(by_wording)))
    topics = [g for g in summary["pain_points"] if str(g["key"]).startswith(TOPIC_PREFIX)]
    if topics:
        lines.append(words("topics", count=len(topics)))
    return lines
