"""`build_backlog`: one backlog item per theme that has actionable feedback.

Actionable items are negative and mixed ones, plus neutral feature requests and neutral items
with a severity above low (`summary.is_actionable`); praise, positive-only themes and empty
rows produce no backlog item.

Priority, per theme, where `n` is the theme's actionable items, `share` is `n` over all analysed
items, and `critical`/`high` count its actionable items of that severity:

- P0: critical >= 2, or critical >= 1 and share >= 10%;
- P1: critical >= 1, or high >= 3, or high >= 1 and share >= 15%;
- P2: high >= 1, or share >= 10%, or n >= 3;
- P3: anything else.

Items are ordered by priority, then by `n` (descending), then by theme key, and cut to
`max_items`. Each cites up to 10 feedback ids, most representative first (highest severity,
then strongest sentiment, then input order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.analyst.labels import PRIORITIES, SEVERITIES, TOPIC_PREFIX, Priority
from runlens_feedback.analyst.resources import ThemeSpec, theme_by_key
from runlens_feedback.analyst.summary import (
    distribution,
    is_actionable,
    representative_order,
    theme_label,
    theme_of,
)

MAX_EVIDENCE_IDS = 10


def build_backlog(items: Sequence[Mapping[str, Any]], *, max_items: int = 8) -> dict[str, Any]:
    """`{"items": [...]}`: prioritised backlog items grouped by theme (module docstring).

    Each item: `title`, `theme`, `priority` (P0-P3), `evidence_feedback_ids` (non-empty, real
    ids), `acceptance_criteria` (non-empty list of testable statements), `metric` (measurable,
    with its baseline), `rationale` (the counts behind the priority) and `mentions`.
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        if is_actionable(item):
            groups.setdefault(theme_of(item), []).append(item)
    entries = [_entry(theme, members, len(items)) for theme, members in groups.items()]
    entries.sort(
        key=lambda entry: (PRIORITIES.index(entry["priority"]), -entry["mentions"], entry["theme"])
    )
    return {"items": entries[: max(max_items, 0)]}


def priority_for(severity: Mapping[str, int], mentions: int, total: int) -> tuple[Priority, str]:
    """The priority of a theme and the reason, from its severity counts and frequency."""
    share = mentions / total if total else 0.0
    critical, high = severity.get("critical", 0), severity.get("high", 0)
    if critical >= 2:
        return "P0", f"{critical} critical reports"
    if critical >= 1 and share >= 0.10:
        return "P0", "a critical report in a theme raised by at least 10% of rows"
    if critical >= 1:
        return "P1", "a critical report"
    if high >= 3:
        return "P1", f"{high} high-severity reports"
    if high >= 1 and share >= 0.15:
        return "P1", "a high-severity report in a theme raised by at least 15% of rows"
    if high >= 1:
        return "P2", "a high-severity report"
    if share >= 0.10 or mentions >= 3:
        return "P2", "recurring reports (at least 3, or at least 10% of rows)"
    return "P3", "few reports, none high or critical"


def _entry(theme: str, members: list[Mapping[str, Any]], total: int) -> dict[str, Any]:
    severity = distribution(members, "severity", SEVERITIES)
    sentiment = distribution(members, "sentiment", ("negative", "mixed", "neutral"))
    mentions = len(members)
    priority, reason = priority_for(severity, mentions, total)
    ids = _evidence_ids(members)
    share = f"{mentions / total:.1%}" if total else "0%"
    spec = theme_by_key().get(theme)
    return {
        "title": _title(theme, spec),
        "theme": theme,
        "priority": priority,
        "evidence_feedback_ids": ids,
        "acceptance_criteria": _criteria(theme, spec, ids),
        "metric": _metric(theme, spec, mentions, total, share),
        "rationale": (
            f"{mentions} of {total} analysed rows ({share}) raise this; severity: "
            + ", ".join(f"{count} {level}" for level, count in reversed(severity.items()))
            + "; sentiment: "
            + ", ".join(f"{count} {label}" for label, count in sentiment.items())
            + f". {priority} because of {reason}."
        ),
        "mentions": mentions,
    }


def _evidence_ids(members: list[Mapping[str, Any]]) -> list[str]:
    ids: list[str] = []
    for item in representative_order(members):
        feedback_id = str(item.get("feedback_id"))
        if feedback_id not in ids:
            ids.append(feedback_id)
    return ids[:MAX_EVIDENCE_IDS]


def _keyword(theme: str) -> str:
    return theme[len(TOPIC_PREFIX) :] if theme.startswith(TOPIC_PREFIX) else theme_label(theme)


def _title(theme: str, spec: ThemeSpec | None) -> str:
    if spec is not None and spec.title:
        return spec.title
    return f"Resolve the problems reported about “{_keyword(theme)}”"


def _criteria(theme: str, spec: ThemeSpec | None, ids: list[str]) -> list[str]:
    cited = ", ".join(ids[:3])
    retest = f"Each cited case ({cited}) is re-tested after the change and no longer reproduces"
    if spec is not None and spec.acceptance_criteria:
        return [*spec.acceptance_criteria, *([retest] if spec.key != "feature_request" else [])]
    keyword = _keyword(theme)
    return [
        f"The problem reported about “{keyword}” in the cited feedback is reproduced and its "
        "cause recorded",
        retest,
        f"New negative feedback about “{keyword}” falls by at least half within 30 days of release",
    ]


def _metric(theme: str, spec: ThemeSpec | None, mentions: int, total: int, share: str) -> str:
    baseline = f"baseline: {mentions} of {total} analysed rows ({share})"
    if spec is not None and spec.metric:
        return f"{spec.metric}; share of feedback raising it ({baseline}, target: half)"
    return (
        f"Share of feedback reporting problems about “{_keyword(theme)}” ({baseline}, target: half)"
    )
