"""The aggregated analysis: what the backlog and the report are written from.

Bounded in size whatever the input's size (top pain points, a few representative verbatim
quotes each), so a model with a small context can write the backlog and the report from it.
Pain points are grouped by `theme` when items carry one, else by their normalised wording.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.contracts import SENTIMENTS, SEVERITIES

TOP_GROUPS = 12
EXAMPLES = 3
EVIDENCE_IDS = 10
_SEVERITY_RANK = {name: rank for rank, name in enumerate(reversed(SEVERITIES))}  # critical=0


def _group_key(item: Mapping[str, Any]) -> str:
    theme = item.get("theme")
    if isinstance(theme, str) and theme.strip():
        return theme.strip()
    return " ".join(str(item.get("pain_point", "")).lower().split()) or "unspecified"


def _urgency(item: Mapping[str, Any]) -> tuple[int, int]:
    negative = 0 if item.get("sentiment") in ("negative", "mixed") else 1
    return (_SEVERITY_RANK.get(str(item.get("severity")), len(SEVERITIES)), negative)


def _group_summary(key: str, members: list[Mapping[str, Any]], analysed: int) -> dict[str, Any]:
    ranked = sorted(members, key=_urgency)  # stable: input order breaks ties
    wording = Counter(str(m.get("pain_point", "")) for m in members).most_common(1)[0][0]
    return {
        "theme": key,
        "pain_point": wording,
        "count": len(members),
        "share": round(len(members) / analysed, 4) if analysed else 0.0,
        "severity_counts": _counts(members, "severity", SEVERITIES),
        "sentiment_counts": _counts(members, "sentiment", SENTIMENTS),
        "feedback_ids": [str(m["feedback_id"]) for m in ranked[:EVIDENCE_IDS]],
        "examples": [
            {
                "feedback_id": m["feedback_id"],
                "evidence_text": m.get("evidence_text"),
                "severity": m.get("severity"),
                "sentiment": m.get("sentiment"),
            }
            for m in ranked[:EXAMPLES]
        ],
        "suggested_actions": [
            action
            for action, _ in Counter(
                str(m["suggested_action"]) for m in members if m.get("suggested_action")
            ).most_common(2)
        ],
    }


def _counts(items: Sequence[Mapping[str, Any]], key: str, names: Sequence[str]) -> dict[str, int]:
    counted = Counter(str(item.get(key)) for item in items)
    return {name: counted.get(name, 0) for name in names}


def _group_order(group: dict[str, Any]) -> tuple[int, int, int, str]:
    severe = group["severity_counts"]["critical"] + group["severity_counts"]["high"]
    negative = group["sentiment_counts"]["negative"] + group["sentiment_counts"]["mixed"]
    return (-negative, -severe, -group["count"], group["theme"])


def summarize_analysis(
    items: Sequence[Mapping[str, Any]],
    *,
    total_rows: int,
    failed_batches: Sequence[Mapping[str, Any]],
    source: str,
) -> dict[str, Any]:
    """Counts overall and per pain point, with representative quotes, most pressing first."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        groups.setdefault(_group_key(item), []).append(item)
    summaries = sorted(
        (_group_summary(k, v, len(items)) for k, v in groups.items()), key=_group_order
    )
    unanalysed = sum(len(batch.get("feedback_ids", ())) for batch in failed_batches)
    return {
        "source": source,
        "total_rows": total_rows,
        "analysed_rows": len(items),
        "unanalysed_rows": unanalysed,
        "sentiment_counts": _counts(items, "sentiment", SENTIMENTS),
        "severity_counts": _counts(items, "severity", SEVERITIES),
        "pain_point_groups": len(summaries),
        "pain_points": summaries[:TOP_GROUPS],
        "failed_batches": [
            {
                "batch": b.get("batch"),
                "rows": len(b.get("feedback_ids", ())),
                "reason": b.get("reason"),
            }
            for b in failed_batches[:10]
        ],
    }
