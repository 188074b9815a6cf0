"""The product backlog, written from the aggregated analysis (`runlens_feedback.aggregate`).

One backlog item per pain point of the summary, that is per group with rows reporting a
problem or a request (negative and mixed rows, neutral feature requests, neutral rows with a
severity above low); praise, positive-only groups and empty rows produce no backlog item.

Priority is the aggregate's documented rule (`runlens_feedback.aggregate.priority_for`:
P0 for 2+ critical reports or a critical one raised by 10% of rows, down to P3 for a few
low-severity reports), computed from each pain point's problem-row counts. Items are ordered
by priority, then by problem rows (descending), then by group key, and cut to `max_items`.
Each cites the pain point's ids (at most `EVIDENCE_IDS`, 6, most representative first: highest
severity, then strongest sentiment, then input order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.aggregate import EVIDENCE_IDS, priority_for, summarize_analysis
from runlens_feedback.analyst.groups import group_keyword, theme_spec
from runlens_feedback.analyst.labels import FEATURE_REQUEST, PRIORITIES
from runlens_feedback.analyst.resources import ThemeSpec

MAX_EVIDENCE_IDS = EVIDENCE_IDS
MAX_ITEMS = 8
_LEVELS = ("critical", "high", "medium", "low")
Group = Mapping[str, Any]


def backlog_from_summary(
    summary: Mapping[str, Any], *, max_items: int = MAX_ITEMS
) -> dict[str, Any]:
    """`{"items": [...]}`: one prioritised backlog item per pain point of `summary`.

    Each item: `title`, `theme` (the group key), `priority` (P0-P3), `evidence_feedback_ids`
    (non-empty, real ids), `acceptance_criteria` (non-empty list of testable statements),
    `metric` (measurable, with its baseline and target), `rationale` (the counts behind the
    priority) and `mentions` (the problem rows). At most `max_items` items, and never more
    than the summary lists.
    """
    total = int(summary.get("analysed_rows", 0))
    groups = [g for g in summary.get("pain_points", ()) if g.get("feedback_ids")]
    entries = [_entry(group, total) for group in groups]
    entries.sort(
        key=lambda entry: (PRIORITIES.index(entry["priority"]), -entry["mentions"], entry["theme"])
    )
    return {"items": entries[: max(max_items, 0)]}


def build_backlog(
    items: Sequence[Mapping[str, Any]], *, max_items: int = MAX_ITEMS
) -> dict[str, Any]:
    """The backlog of analysis `items`: `backlog_from_summary(summarize_analysis(items))`."""
    return backlog_from_summary(summarize_analysis(items), max_items=max_items)


def _entry(group: Group, total: int) -> dict[str, Any]:
    severity: Mapping[str, int] = group["problem_severity"]
    mentions = int(group["problem_rows"])
    priority, reason = priority_for(severity, mentions, total)
    ids = [str(i) for i in group["feedback_ids"]][:MAX_EVIDENCE_IDS]
    share = f"{mentions / total:.1%}" if total else "0%"
    spec = theme_spec(group)
    return {
        "title": _title(group, spec),
        "theme": str(group["key"]),
        "priority": priority,
        "evidence_feedback_ids": ids,
        "acceptance_criteria": _criteria(group, spec, ids),
        "metric": _metric(group, spec, mentions, total, share),
        "rationale": (
            f"{mentions} of {total} analysed rows ({share}) raise this; severity: "
            + ", ".join(f"{severity.get(level, 0)} {level}" for level in _LEVELS)
            + "; sentiment: "
            + ", ".join(f"{count} {label}" for label, count in _problem_sentiment(group).items())
            + f". {priority} because of {reason}."
        ),
        "mentions": mentions,
    }


def _problem_sentiment(group: Group) -> dict[str, int]:
    """Sentiment of the problem rows: every negative and mixed row of a pain point is one;
    the rest are neutral requests or neutral reports above low severity."""
    sentiment = group.get("sentiment", {})
    negative, mixed = int(sentiment.get("negative", 0)), int(sentiment.get("mixed", 0))
    return {
        "negative": negative,
        "mixed": mixed,
        "neutral": max(int(group["problem_rows"]) - negative - mixed, 0),
    }


def _title(group: Group, spec: ThemeSpec | None) -> str:
    if spec is not None and spec.title:
        return spec.title
    return f"Resolve the problems reported about “{group_keyword(group)}”"


def _criteria(group: Group, spec: ThemeSpec | None, ids: list[str]) -> list[str]:
    cited = ", ".join(ids[:3])
    retest = f"Each cited case ({cited}) is re-tested after the change and no longer reproduces"
    if spec is not None and spec.acceptance_criteria:
        return [*spec.acceptance_criteria, *([retest] if spec.key != FEATURE_REQUEST else [])]
    keyword = group_keyword(group)
    return [
        f"The problem reported about “{keyword}” in the cited feedback is reproduced and its "
        "cause recorded",
        retest,
        f"New negative feedback about “{keyword}” falls by at least half within 30 days of release",
    ]


def _metric(group: Group, spec: ThemeSpec | None, mentions: int, total: int, share: str) -> str:
    baseline = f"baseline: {mentions} of {total} analysed rows ({share})"
    if spec is not None and spec.metric:
        return f"{spec.metric}; share of feedback raising it ({baseline}, target: half)"
    return (
        f"Share of feedback reporting problems about “{group_keyword(group)}” ({baseline}, "
        "target: half)"
    )
