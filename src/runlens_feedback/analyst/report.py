"""The Markdown insight report a product manager would forward, written from the aggregated
analysis (`runlens_feedback.aggregate`), never from raw rows.

The seven headings of the Feedback Analysis contract appear exactly once each, in order, and
are the only headings. Every count is the summary's (exact counts of the analysis); every quote
is a summary example's `evidence_text` (or one line of it), cited with its feedback id in the
contract's citation form, so the validator verifies each one. Quotes and labels never start a
line, so feedback text cannot add headings or lists to the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens.contracts import MarkdownCitations
from runlens.validation.citations import BRACKETS
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.analyst.labels import PRIORITIES, SENTIMENTS, SEVERITIES, TOPIC_PREFIX
from runlens_feedback.contracts import REPORT_CONTRACT
from runlens_feedback.contracts import REPORT_HEADINGS as HEADINGS  # one list, the contract's

_LEADING = 3
_EVIDENCE_GROUPS = 5
_SMALL_SAMPLE = 30
_HIGH_UNCERTAIN_SHARE = 0.3
_LANGUAGES = {"zh": "Chinese", "en": "English"}
_QUOTE_MARKS = (REPORT_CONTRACT.citations or MarkdownCitations()).quote_marks
#: ASCII punctuation that could start Markdown markup inside a quoted line.
_MARKUP = frozenset("\\`*_[]<>&~|")
_ID_MARKUP = _MARKUP - {"_"}
_OPENING_MARKS = frozenset(opening for opening, _ in _QUOTE_MARKS)
_SINGLE_MARKS = str.maketrans({"“": "‘", "”": "’", '"': "'", "「": "『", "」": "』"})

Summary = Mapping[str, Any]


def report_from_summary(summary: Summary, backlog: Mapping[str, Any]) -> str:
    """The report for `summary` (from `summarize_analysis`) and `backlog` (from
    `backlog_from_summary`). English prose; quotes stay in their original language."""
    bodies = (
        _title(summary),
        _context(summary),
        _executive_summary(summary, backlog),
        _pain_points(summary),
        _evidence(summary),
        _actions(backlog),
        _risks(summary),
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
) -> str:
    """The report of analysis `items`: `report_from_summary(summarize_analysis(...), backlog)`
    with the input file name `source`, its row count and the batches that failed."""
    summary = summarize_analysis(
        items, total_rows=total_rows, failed_batches=failed_batches, source=source
    )
    return report_from_summary(summary, backlog)


# -- formatting -----------------------------------------------------------------------------


def _pct(count: int, total: int) -> str:
    return f"{count / total:.1%}" if total else "0.0%"


def _noun(count: int) -> str:
    return "row" if count == 1 else "rows"


def _rows(count: int) -> str:
    return f"{count} {_noun(count)}"


def _plain(text: object) -> str:
    """Text safe inside inline code and on one line: no line breaks, no backticks."""
    return " ".join(str(text).split()).replace("`", "'")


def _cell(text: object) -> str:
    return _plain(text).replace("|", "\\|")


def _label(group: Mapping[str, Any]) -> str:
    return _plain(group_label(group))


def _quote_line(example: Mapping[str, Any]) -> str:
    """The example as a citation of the contract's form, `> “quote” — id (sentiment,
    severity)`: verbatim, with Markdown characters escaped so the reader sees the row's
    words, in quotation marks the quote does not close early. Where the quote was cut (by the
    summary, or to one line of a multi-line quote) an ellipsis outside the marks says so:
    before the opening mark for a cut at the start, after the closing mark for one at the end.
    """
    quote = str(example.get("evidence_text") or "")
    cut_start, cut_end = False, bool(example.get("shortened"))
    if "\n" in quote or "\r" in quote:
        lines = [line.strip() for line in quote.splitlines()]
        longest = max(range(len(lines)), key=lambda n: len(lines[n]))
        quote = lines[longest]
        cut_start = cut_start or any(lines[:longest])
        cut_end = cut_end or any(lines[longest + 1 :])
    opening, closing = _quote_marks(quote)
    if closing in quote:  # every closing mark occurs in it: quote up to the first one
        quote, cut_end = quote[: quote.index(closing)].rstrip(), True
    return (
        f"> {'… ' if cut_start else ''}{opening}{_escaped(quote)}{closing}"
        f"{' …' if cut_end else ''} {_attribution(str(example.get('feedback_id')))} "
        f"({example.get('sentiment')}, {example.get('severity')})"
    )


def _attribution(row_id: str) -> str:
    """How a citation names its row: `— id`, or `[id]` for an id the dash form cannot carry
    (one with spaces or quotation marks), with Markdown characters escaped so the reader
    sees the id as it is."""
    shown = "".join(f"\\{char}" if char in _ID_MARKUP else char for char in row_id)
    # An underscore inside a word is no emphasis; one at either edge may be.
    if shown.startswith("_"):
        shown = "\\" + shown
    if shown.endswith("_"):
        shown = shown[:-1] + "\\_"
    if not any(char.isspace() or char in _OPENING_MARKS for char in row_id):
        return f"— {shown}"
    left, right = next(
        ((left, right) for left, right in BRACKETS if right not in row_id), BRACKETS[0]
    )
    return f"{left}{shown}{right}"


def _quote_marks(quote: str) -> tuple[str, str]:
    """The first of the contract's quotation-mark pairs whose closing mark is not in `quote`
    (else the first pair)."""
    return next((pair for pair in _QUOTE_MARKS if pair[1] not in quote), _QUOTE_MARKS[0])


def _escaped(quote: str) -> str:
    """`quote` with every character Markdown could read as markup backslash-escaped."""
    return "".join(f"\\{char}" if char in _MARKUP else char for char in quote)


def _unquoted(text: str) -> str:
    """`text` with quotation marks made single (“x” -> ‘x’): in an evidence section a
    quotation must cite a row, and a label quotes none."""
    return text.translate(_SINGLE_MARKS)


# -- sections -------------------------------------------------------------------------------


def _title(summary: Summary) -> list[str]:
    return [f"Insight report on the product feedback in `{_plain(summary.get('source', ''))}`."]


def _context(summary: Summary) -> list[str]:
    analysed = summary["analysed_rows"]
    pains = summary["pain_points"]
    top = ", ".join(
        f"{_label(g)} ({g['problem_rows']} reporting a problem)" for g in pains[:_LEADING]
    )
    lines = [
        f"- Source: `{_plain(summary.get('source', ''))}`, {summary['total_rows']} rows in the "
        f"file, {analysed} analysed.",
    ]
    if summary["languages"]:
        languages = ", ".join(
            f"{count} {_LANGUAGES.get(lang, _plain(lang))}"
            for lang, count in summary["languages"].items()
        )
        lines.append(f"- Languages: {languages}.")
    lines += [
        f"- Themes: {summary['groups']} distinct; highest-priority pain points: {top or 'none'}.",
        "- Method: deterministic offline analysis (sentiment lexicons and rules, keyword themes);"
        " every quote below is verbatim from the cited row.",
    ]
    return lines


def _executive_summary(summary: Summary, backlog: Mapping[str, Any]) -> list[str]:
    total = summary["analysed_rows"]
    lines = [f"Sentiment of the {total} analysed rows:", ""]
    for label in SENTIMENTS:
        count = summary["sentiment"].get(label, 0)
        lines.append(f"- {label.capitalize()}: {count} ({_pct(count, total)})")
    lines += ["", "Severity:", ""]
    for level in reversed(SEVERITIES):
        count = summary["severity"].get(level, 0)
        lines.append(f"- {level.capitalize()}: {count} ({_pct(count, total)})")
    problems = summary["problem_rows"]
    lines += [
        "",
        f"Rows reporting a problem or request: {_rows(problems)} ({_pct(problems, total)}).",
    ]
    leading = "; ".join(
        f"{_label(g)} ({g['priority']}): {_rows(g['count'])} ({_pct(g['count'], total)}), "
        f"{g['problem_rows']} reporting a problem"
        for g in summary["pain_points"][:_LEADING]
    )
    if leading:
        lines.append(f"Highest-priority pain points: {leading}.")
    entries = list(backlog.get("items", []))
    by_priority = {p: sum(1 for b in entries if b.get("priority") == p) for p in PRIORITIES}
    counts = ", ".join(f"{count} {p}" for p, count in by_priority.items() if count)
    lines.append(f"Backlog: {len(entries)} items" + (f" ({counts})." if counts else "."))
    return lines


def _pain_points(summary: Summary) -> list[str]:
    total = summary["analysed_rows"]
    pains = summary["pain_points"]
    if not pains:
        return ["No analysed row reports a problem or a request."]
    lines = [
        "Pain points by priority, then by rows reporting a problem or request. Rows, share, "
        "negative and mixed count every row of the group; high or critical counts its problem "
        "rows.",
        "",
        "| # | Pain point | Key | Rows | Share | Problem rows | Negative | Mixed "
        "| High or critical | Priority |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rank, group in enumerate(pains, start=1):
        severity = group["problem_severity"]
        severe = severity.get("high", 0) + severity.get("critical", 0)
        lines.append(
            f"| {rank} | {_cell(group_label(group))} | `{_cell(group['key'])}` | "
            f"{group['count']} | {_pct(group['count'], total)} | {group['problem_rows']} | "
            f"{group['sentiment'].get('negative', 0)} | {group['sentiment'].get('mixed', 0)} | "
            f"{severe} | {group['priority']} |"
        )
    other = summary["other_groups"]
    if other["groups"]:
        groups = "1 other group" if other["groups"] == 1 else f"{other['groups']} other groups"
        lines += [
            "",
            f"Not listed: {groups} ({_rows(other['rows'])}, {other['problem_rows']} of them "
            "reporting a problem or request).",
        ]
    return lines


def _evidence(summary: Summary) -> list[str]:
    lines: list[str] = []
    for group in summary["pain_points"][:_EVIDENCE_GROUPS]:
        if not group["examples"]:
            continue
        lines += [
            _unquoted(
                f"**{_label(group)}** (`{_plain(group['key'])}`, "
                f"{_rows(group['problem_rows'])} reporting a problem):"
            ),
            "",
        ]
        for example in group["examples"]:
            lines += [_quote_line(example), ""]
    positive = summary["positive"]
    if positive["examples"]:
        lines += [f"**What users value** ({positive['rows']} positive {_noun(positive['rows'])}):"]
        lines.append("")
        for example in positive["examples"]:
            lines += [_quote_line(example), ""]
    return lines[:-1] if lines else ["No quotable feedback was analysed."]


def _actions(backlog: Mapping[str, Any]) -> list[str]:
    entries = list(backlog.get("items", []))
    if not entries:
        return [
            "No actionable problems were found; keep collecting feedback and re-run the analysis."
        ]
    lines = []
    for rank, entry in enumerate(entries, start=1):
        ids = ", ".join(_plain(i) for i in entry.get("evidence_feedback_ids", []))
        criteria = "; ".join(_plain(c) for c in entry.get("acceptance_criteria", []))
        lines += [
            f"{rank}. **{entry.get('priority')} — {_plain(entry.get('title'))}** "
            f"(`{_plain(entry.get('theme', ''))}`). {_plain(entry.get('rationale', ''))}",
            f"   - Acceptance criteria: {criteria}.",
            f"   - Metric: {_plain(entry.get('metric'))}.",
            f"   - Evidence: {ids}.",
        ]
    return lines


def _risks(summary: Summary) -> list[str]:
    total = summary["analysed_rows"]
    lines = _failure_lines(summary["failed_batches"])
    unanalysed, total_rows = summary["unanalysed_rows"], summary["total_rows"]
    if unanalysed > 0:
        lines.append(
            f"- Unanalysed rows: {unanalysed} of {total_rows} ({_pct(unanalysed, total_rows)}) "
            "are not in these figures."
        )
    if total < _SMALL_SAMPLE:
        lines.append(f"- Small sample: only {_rows(total)} analysed; shares are indicative only.")
    uncertain = summary["sentiment"].get("neutral", 0) + summary["sentiment"].get("mixed", 0)
    high = bool(total) and uncertain / total >= _HIGH_UNCERTAIN_SHARE
    lines.append(
        f"- Neutral or mixed rows: {uncertain} ({_pct(uncertain, total)})"
        + (" — a large share; read those rows before acting." if high else ".")
    )
    lines += _grouping_lines(summary)
    lines.append(
        "- Method limits: lexicon-based sentiment misses sarcasm and domain slang; ratings, "
        "channels and segments were not weighed."
    )
    return lines


def _failure_lines(failures: Mapping[str, Any]) -> list[str]:
    if not failures["batches"]:
        return ["- Failed batches: none."]
    lines = [
        f"- Failed batches: {failures['batches']} could not be analysed in full "
        f"({_rows(failures['rows'])} left unanalysed). Reasons:"
    ]
    lines += [
        f"  - {_plain(r['reason'])}: {_rows(r['rows'])} in {r['batches']} "
        f"{'batch' if r['batches'] == 1 else 'batches'}"
        for r in failures["reasons"]
    ]
    details = [
        ", ".join(f"{k}={_plain(v)}" for k, v in entry.items() if k != "reason")
        for entry in failures["entries"]
    ]
    if any(details):
        lines.append("  - First failures: " + "; ".join(f"({d})" for d in details if d) + ".")
    return lines


def _grouping_lines(summary: Summary) -> list[str]:
    lines = []
    by_wording = summary["grouped_by"].get("pain_point", 0)
    if by_wording:
        lines.append(
            f"- Grouping: {_rows(by_wording)} carried no theme and are grouped by the wording "
            "of their pain point, which can split one problem across groups."
        )
    topics = [g for g in summary["pain_points"] if str(g["key"]).startswith(TOPIC_PREFIX)]
    if topics:
        lines.append(
            f"- Uncategorised: {len(topics)} of the listed pain points matched no known theme "
            "and are named by their own keyword."
        )
    return lines
