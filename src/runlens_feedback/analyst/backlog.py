"""The product backlog, written from the aggregated analysis (`runlens_feedback.aggregate`).

One backlog item per pain point of the summary, that is per group with rows reporting a
problem or a request (negative and mixed rows, neutral feature requests, neutral rows with a
severity above low); praise, positive-only groups and empty rows produce no backlog item.

Priority is the summary's (`runlens_feedback.aggregate`: severity, reach and trend points,
with `priority_reason` saying which), recomputed with `priority_for` only for a summary that
lacks one. Items are ordered by priority, then by problem rows (descending), then by group
key, and cut to `max_items`. Each cites the pain point's ids (at most `EVIDENCE_IDS`, 6, most
representative first: highest severity, then strongest sentiment, then input order).

Everything an item says comes from its theme's own evidence, never from a fixed template:

- the title names the theme (its discovered name, or the theme table's title for a table
  theme) and what its rows mostly are (complaints, mixed reviews, requests);
- the acceptance criteria: the cited cases are reviewed and their cause recorded; the
  theme's own terms (its discovered keywords, else the most frequent terms of its quotes)
  are traced to causes; when it has high or critical reports, none recurs after the change
  (with today's count); when it is rising, its share of the latest period falls back to its
  earlier share; and the cited cases are re-checked;
- the metric: the theme's share of the analysed rows, with its baseline (its problem rows)
  and target (half), plus its high-or-critical count with target 0 when it has any.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.aggregate import EVIDENCE_IDS, priority_for, summarize_analysis
from runlens_feedback.analyst.groups import group_keyword, theme_spec
from runlens_feedback.analyst.labels import FEATURE_REQUEST, PRIORITIES
from runlens_feedback.analyst.resources import ThemeSpec
from runlens_feedback.discovery import terms

MAX_EVIDENCE_IDS = EVIDENCE_IDS
MAX_ITEMS = 8
_LEVELS = ("critical", "high", "medium", "low")
_TERMS = 5
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
    priority, reason = _priority(group, severity, mentions, total)
    ids = [str(i) for i in group["feedback_ids"]][:MAX_EVIDENCE_IDS]
    share = f"{mentions / total:.1%}" if total else "0%"
    spec = theme_spec(group)
    name = _theme_name(group, spec)
    terms = _terms(group, name)
    return {
        "title": _title(group, spec, name),
        "theme": str(group["key"]),
        "priority": priority,
        "evidence_feedback_ids": ids,
        "acceptance_criteria": _criteria(group, name, terms, ids, severity, mentions),
        "metric": _metric(name, severity, mentions, total, share),
        "rationale": (
            f"{mentions} of {total} analysed rows ({share}) raise this; severity: "
            + ", ".join(f"{severity.get(level, 0)} {level}" for level in _LEVELS)
            + "; sentiment: "
            + ", ".join(f"{count} {label}" for label, count in _problem_sentiment(group).items())
            + f". {priority}: {reason}."
        ),
        "mentions": mentions,
    }


def _priority(
    group: Group, severity: Mapping[str, int], mentions: int, total: int
) -> tuple[str, str]:
    given, reason = group.get("priority"), group.get("priority_reason")
    if given in PRIORITIES and isinstance(reason, str) and reason:
        return str(given), reason
    return priority_for(severity, mentions, total)


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


def _theme_name(group: Group, spec: ThemeSpec | None) -> str:
    name = group.get("pain_point")
    if group.get("grouped_by", "theme") == "theme" and isinstance(name, str) and name.strip():
        return " ".join(name.split())
    return group_keyword(group) if spec is None else spec.label_en


def _terms(group: Group, name: str) -> list[str]:
    """The theme's own words: its discovered keywords, else the commonest terms of its
    quotes; never the words of its name."""
    named = set(name.casefold().replace("·", " ").split())
    given = [str(k) for k in group.get("keywords") or () if isinstance(k, str)]
    if not given:
        counted: Counter[str] = Counter()
        for example in group.get("examples") or ():
            counted.update(set(terms(str(example.get("evidence_text") or ""))))
        given = [term for term, _ in sorted(counted.items(), key=lambda p: (-p[1], p[0]))]
    kept = [t for t in given if t.casefold() not in named]
    return kept[:_TERMS]


def _title(group: Group, spec: ThemeSpec | None, name: str) -> str:
    if spec is not None and spec.title:
        return spec.title
    if str(group.get("key")) == FEATURE_REQUEST:
        return f"{name}: answer the requests"
    sentiment = _problem_sentiment(group)
    if sentiment["neutral"] > sentiment["negative"] + sentiment["mixed"]:
        return f"{name}: look into the reports"
    if sentiment["mixed"] > sentiment["negative"]:
        return f"{name}: fix the weak points customers mention"
    return f"{name}: fix the complaints"


def _criteria(
    group: Group,
    name: str,
    words: list[str],
    ids: list[str],
    severity: Mapping[str, int],
    mentions: int,
) -> list[str]:
    cited = ", ".join(ids[:3])
    criteria = [f"The cited reports about {name} ({cited}) are reviewed and each cause recorded"]
    if words:
        listed = ", ".join(words)
        criteria.append(
            f"Each complaint that names one of {listed} is traced to a cause, with an owner "
            "and a fix"
        )
    severe = int(severity.get("high", 0)) + int(severity.get("critical", 0))
    if severe:
        criteria.append(
            f"No new high or critical report about {name} in the 30 days after the change "
            f"({severe} of its {mentions} problem rows today)"
        )
    trend = group.get("trend")
    if isinstance(trend, Mapping) and trend.get("direction") == "rising":
        before = float(trend.get("before_share") or 0.0)
        recent = float(trend.get("recent_share") or 0.0)
        period = trend.get("period")
        if before > 0:
            criteria.append(
                f"Its share of each period's feedback falls back to at most {before:.1%}, its "
                f"share before {period}"
            )
        else:
            criteria.append(
                f"New in {period} ({recent:.1%} of that period's feedback): its share of each "
                f"later period is at most half of that"
            )
    criteria.append(f"The cited cases ({cited}) are re-checked after the change and resolved")
    return criteria


def _metric(name: str, severity: Mapping[str, int], mentions: int, total: int, share: str) -> str:
    metric = (
        f"Share of analysed feedback reporting problems about {name} (baseline: {mentions} "
        f"of {total} analysed rows ({share}), target: half)"
    )
    severe = int(severity.get("high", 0)) + int(severity.get("critical", 0))
    if severe:
        metric += f"; its high or critical reports (baseline: {severe}, target: 0)"
    return metric
