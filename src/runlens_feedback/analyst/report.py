"""`render_report`: the Markdown insight report a product manager would forward.

The seven headings of the Feedback Analysis contract appear exactly once each, in order, and
are the only headings. Every count is computed from the items; every quote is an item's
`evidence_text` (or one line of it), cited with its feedback id. Quotes never start a line, so
feedback text cannot add headings or lists to the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.analyst.labels import EMPTY_THEME, PRAISE_THEME, SENTIMENTS, SEVERITIES
from runlens_feedback.analyst.summary import (
    is_actionable,
    representative_order,
    summarize,
    theme_of,
)

HEADINGS = (
    "# FeedbackLens Insight Report",
    "## Product Context",
    "## Executive Summary",
    "## Top Pain Points",
    "## Evidence",
    "## Recommended Actions",
    "## Risks And Unknowns",
)
_TABLE_THEMES = 15
_EVIDENCE_THEMES = 5
_QUOTES_PER_THEME = 3
_PRAISE_QUOTES = 2
_SMALL_SAMPLE = 30
_HIGH_UNCERTAIN_SHARE = 0.3

Item = Mapping[str, Any]


def render_report(
    items: Sequence[Item],
    backlog: Mapping[str, Any],
    *,
    source: str,
    total_rows: int,
    failed_batches: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The report for `items` (analysis items), `backlog` (from `build_backlog`), the input
    file name `source` and its row count `total_rows`, with the `failed_batches` that could not
    be analysed. English prose; quotes stay in their original language."""
    summary = summarize(items)
    bodies = (
        _title(source),
        _context(summary, source, total_rows),
        _executive_summary(summary, backlog),
        _pain_points(summary),
        _evidence(items, summary),
        _actions(backlog),
        _risks(summary, items, total_rows, failed_batches),
    )
    blocks = [
        f"{heading}\n\n" + "\n".join(body) for heading, body in zip(HEADINGS, bodies, strict=True)
    ]
    return "\n\n".join(blocks) + "\n"


def _pct(count: int, total: int) -> str:
    return f"{count / total:.1%}" if total else "0.0%"


def _noun(count: int) -> str:
    return "row" if count == 1 else "rows"


def _rows(count: int) -> str:
    return f"{count} {_noun(count)}"


def _plain(text: object) -> str:
    """Text safe inside inline code: one line, no backticks."""
    return " ".join(str(text).split()).replace("`", "'")


def _title(source: str) -> list[str]:
    return [f"Insight report on the product feedback in `{_plain(source)}`."]


def _context(summary: Mapping[str, Any], source: str, total_rows: int) -> list[str]:
    total = summary["total"]
    languages = summary["languages"]
    themes = summary["themes"]
    named = [row for row in themes if row["theme"] != EMPTY_THEME]
    top = ", ".join(f"{row['label']} ({_rows(row['count'])})" for row in named[:3]) or "none"
    return [
        f"- Source: `{_plain(source)}`, {total_rows} rows in the file, {total} analysed.",
        f"- Languages: {languages.get('zh', 0)} Chinese, {languages.get('en', 0)} English.",
        f"- Themes: {len(themes)} distinct; most discussed: {top}.",
        "- Method: deterministic offline analysis (sentiment lexicons and rules, keyword themes);"
        " every quote below is verbatim from the cited row.",
    ]


def _executive_summary(summary: Mapping[str, Any], backlog: Mapping[str, Any]) -> list[str]:
    total = summary["total"]
    lines = [f"Sentiment of the {total} analysed rows:", ""]
    for label in SENTIMENTS:
        count = summary["sentiment"].get(label, 0)
        lines.append(f"- {label.capitalize()}: {count} ({_pct(count, total)})")
    lines += ["", "Severity:", ""]
    for level in reversed(SEVERITIES):
        count = summary["severity"].get(level, 0)
        lines.append(f"- {level.capitalize()}: {count} ({_pct(count, total)})")
    pains = [row for row in summary["themes"] if row["actionable"]]
    pains.sort(key=lambda row: (-row["actionable"], row["theme"]))
    if pains:
        leading = "; ".join(
            f"{row['label']}: {_rows(row['actionable'])} ({_pct(row['actionable'], total)})"
            for row in pains[:3]
        )
        lines += ["", f"Biggest pain points (rows reporting a problem or request): {leading}."]
    backlog_items = list(backlog.get("items", []))
    by_priority = {
        p: sum(1 for b in backlog_items if b.get("priority") == p) for p in ("P0", "P1", "P2", "P3")
    }
    counts = ", ".join(f"{count} {p}" for p, count in by_priority.items() if count)
    lines.append(f"Backlog: {len(backlog_items)} items" + (f" ({counts})." if counts else "."))
    return lines


def _pain_points(summary: Mapping[str, Any]) -> list[str]:
    total = summary["total"]
    rows = sorted(
        summary["themes"], key=lambda row: (-row["actionable"], -row["count"], row["theme"])
    )
    if not rows:
        return ["No feedback rows were analysed."]
    lines = [
        "Themes ranked by rows reporting a problem or request (all rows of each theme counted).",
        "",
        "| # | Theme | Key | Rows | Share | Problem rows | Negative | Mixed | High or critical |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rank, row in enumerate(rows[:_TABLE_THEMES], start=1):
        severe = row["severity"].get("high", 0) + row["severity"].get("critical", 0)
        lines.append(
            f"| {rank} | {row['label']} | `{_plain(row['theme'])}` | {row['count']} | "
            f"{_pct(row['count'], total)} | {row['actionable']} | "
            f"{row['sentiment'].get('negative', 0)} | "
            f"{row['sentiment'].get('mixed', 0)} | {severe} |"
        )
    rest = rows[_TABLE_THEMES:]
    if rest:
        lines += ["", f"{len(rest)} more themes cover {sum(r['count'] for r in rest)} rows."]
    return lines


def _quote_line(item: Item) -> str:
    quote = str(item.get("evidence_text") or "")
    if "\n" in quote or "\r" in quote:
        quote = max((line.strip() for line in quote.splitlines()), key=len)
    return (
        f"> “{quote}” — {_plain(item.get('feedback_id'))} "
        f"({item.get('sentiment')}, {item.get('severity')})"
    )


def _quotable(item: Item) -> bool:
    return bool(str(item.get("evidence_text") or "").strip())


def _evidence(items: Sequence[Item], summary: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    pains = sorted(
        (row for row in summary["themes"] if row["actionable"]),
        key=lambda row: (-row["actionable"], row["theme"]),
    )
    for row in pains[:_EVIDENCE_THEMES]:
        members = [
            i for i in items if theme_of(i) == row["theme"] and is_actionable(i) and _quotable(i)
        ]
        lines += [f"**{row['label']}** (`{_plain(row['theme'])}`, {_rows(row['actionable'])}):", ""]
        for item in representative_order(members)[:_QUOTES_PER_THEME]:
            lines += [_quote_line(item), ""]
    praise = [i for i in items if i.get("sentiment") == "positive" and _quotable(i)]
    if praise:
        lines += [
            f"**What users value** ({len(praise)} positive {_noun(len(praise))}):",
            "",
        ]
        ordered = sorted(praise, key=lambda i: (theme_of(i) != PRAISE_THEME, -abs(_score(i))))
        for item in ordered[:_PRAISE_QUOTES]:
            lines += [_quote_line(item), ""]
    return lines[:-1] if lines else ["No quotable feedback was analysed."]


def _score(item: Item) -> float:
    value = item.get("sentiment_score", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def _actions(backlog: Mapping[str, Any]) -> list[str]:
    entries = list(backlog.get("items", []))
    if not entries:
        return [
            "No actionable problems were found; keep collecting feedback and re-run the analysis."
        ]
    lines = []
    for rank, entry in enumerate(entries, start=1):
        ids = ", ".join(_plain(i) for i in entry.get("evidence_feedback_ids", []))
        criteria = "; ".join(str(c) for c in entry.get("acceptance_criteria", []))
        lines += [
            f"{rank}. **{entry.get('priority')} — {entry.get('title')}** "
            f"(`{_plain(entry.get('theme', ''))}`). {entry.get('rationale', '')}",
            f"   - Acceptance criteria: {criteria}.",
            f"   - Metric: {entry.get('metric')}.",
            f"   - Evidence: {ids}.",
        ]
    return lines


def _risks(
    summary: Mapping[str, Any],
    items: Sequence[Item],
    total_rows: int,
    failed_batches: Sequence[Mapping[str, Any]],
) -> list[str]:
    total = summary["total"]
    lines = []
    if failed_batches:
        lines.append(f"- {len(failed_batches)} batch(es) could not be analysed:")
        for number, batch in enumerate(failed_batches, start=1):
            details = ", ".join(f"{k}={_plain(v)}" for k, v in batch.items() if k != "reason")
            lines.append(
                f"  - Batch {number}: {_plain(batch.get('reason', 'unknown reason'))}"
                + (f" ({details})" if details else "")
            )
    else:
        lines.append("- Failed batches: none.")
    missing = total_rows - total
    if missing > 0:
        lines.append(
            f"- Unanalysed rows: {missing} of {total_rows} ({_pct(missing, total_rows)}) "
            "are not in these figures."
        )
    if total < _SMALL_SAMPLE:
        lines.append(
            f"- Small sample: only {total} rows were analysed; shares are indicative only."
        )
    uncertain = summary["sentiment"].get("neutral", 0) + summary["sentiment"].get("mixed", 0)
    lines.append(
        f"- Neutral or mixed rows: {uncertain} ({_pct(uncertain, total)})"
        + (
            " — a large share; read those rows before acting."
            if total and uncertain / total >= _HIGH_UNCERTAIN_SHARE
            else "."
        )
    )
    if summary["empty_text"]:
        lines.append(
            f"- Empty feedback: {_rows(summary['empty_text'])} without text, so without evidence."
        )
    topics = sum(
        row["count"] for row in summary["themes"] if str(row["theme"]).startswith("topic:")
    )
    if topics:
        lines.append(
            f"- Uncategorised: {topics} rows matched no known theme and are grouped by "
            "their own keyword."
        )
    lines.append(
        "- Method limits: lexicon-based sentiment misses sarcasm and domain slang; ratings, "
        "channels and segments were not weighed."
    )
    return lines
