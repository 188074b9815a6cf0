"""Aggregates over analysis items, shared by the backlog, the report and `summarize`.

Every function accepts items from any source (the offline analyst or a model), reading keys
with defaults: a missing `theme` counts as `uncategorized`, a missing severity as `low`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.analyst.labels import (
    EMPTY_THEME,
    PRAISE_THEME,
    SENTIMENTS,
    SEVERITIES,
    TOPIC_PREFIX,
)
from runlens_feedback.analyst.resources import theme_by_key

UNCATEGORIZED = "uncategorized"
_TOP_QUOTES = 10


def theme_of(item: Mapping[str, Any]) -> str:
    """The item's theme key (`uncategorized` when missing)."""
    return str(item.get("theme") or UNCATEGORIZED)


def severity_rank(item: Mapping[str, Any]) -> int:
    """0 (low) .. 3 (critical); unknown values rank as low."""
    severity = item.get("severity")
    return SEVERITIES.index(severity) if severity in SEVERITIES else 0


def score_of(item: Mapping[str, Any]) -> float:
    """The item's signed sentiment score (0 when missing or not a number)."""
    value = item.get("sentiment_score", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def is_actionable(item: Mapping[str, Any]) -> bool:
    """Whether an item reports a problem or a request worth a backlog entry.

    Negative and mixed items are; neutral ones when they are feature requests or have a
    severity above low; positive items, praise and empty rows never are.
    """
    theme = theme_of(item)
    if theme in (PRAISE_THEME, EMPTY_THEME):
        return False
    sentiment = item.get("sentiment")
    if sentiment in ("negative", "mixed"):
        return True
    return sentiment == "neutral" and (theme == "feature_request" or severity_rank(item) > 0)


def representative_order(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Most representative first: highest severity, then strongest sentiment, then input order."""
    ranked = sorted(
        enumerate(items),
        key=lambda pair: (-severity_rank(pair[1]), -abs(score_of(pair[1])), pair[0]),
    )
    return [item for _, item in ranked]


def theme_label(theme: str) -> str:
    """An English display label for a theme key."""
    spec = theme_by_key().get(theme)
    if spec is not None:
        return spec.label_en
    if theme.startswith(TOPIC_PREFIX):
        return f"Other: “{theme[len(TOPIC_PREFIX) :]}”"
    if theme == EMPTY_THEME:
        return "Empty feedback"
    return theme.replace("_", " ").capitalize()


def distribution(
    items: Sequence[Mapping[str, Any]], key: str, order: Sequence[str]
) -> dict[str, int]:
    """Counts of `key` over the items, with every value of `order` present (0 when absent)."""
    counts = Counter(str(item.get(key)) for item in items)
    result = {value: counts.get(value, 0) for value in order}
    for value in sorted(counts):
        if value not in result:
            result[value] = counts[value]
    return result


def theme_table(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per-theme counts, most frequent first (ties by theme key)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        groups.setdefault(theme_of(item), []).append(item)
    total = len(items)
    rows = [
        {
            "theme": theme,
            "label": theme_label(theme),
            "count": len(members),
            "share": round(len(members) / total, 4) if total else 0.0,
            "sentiment": distribution(members, "sentiment", SENTIMENTS),
            "severity": distribution(members, "severity", SEVERITIES),
            "actionable": sum(1 for member in members if is_actionable(member)),
        }
        for theme, members in groups.items()
    ]
    return sorted(rows, key=lambda row: (-row["count"], row["theme"]))


def top_quotes(
    items: Sequence[Mapping[str, Any]], limit: int = _TOP_QUOTES
) -> list[dict[str, Any]]:
    """The most representative non-empty quotes, problems first."""
    ordered = representative_order([item for item in items if is_actionable(item)])
    ordered += representative_order([item for item in items if not is_actionable(item)])
    quotes: list[dict[str, Any]] = []
    for item in ordered:
        quote = str(item.get("evidence_text") or "")
        if quote.strip() and len(quotes) < limit:
            quotes.append(
                {
                    "feedback_id": str(item.get("feedback_id")),
                    "theme": theme_of(item),
                    "sentiment": item.get("sentiment"),
                    "severity": item.get("severity"),
                    "evidence_text": quote,
                }
            )
    return quotes


def summarize(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A compact aggregate of analysis items for a model's context.

    Keys: `total`, `sentiment` and `severity` (counts of every value), `languages`, `themes`
    (per-theme count, share, sentiment and severity counts, actionable count; most frequent
    first), `actionable` (rows that ask for work), `empty_text` (whitespace-only rows) and
    `top_quotes` (up to 10 verbatim quotes with their feedback ids, problems first).
    """
    return {
        "total": len(items),
        "sentiment": distribution(items, "sentiment", SENTIMENTS),
        "severity": distribution(items, "severity", SEVERITIES),
        "languages": distribution(items, "language", ("zh", "en")),
        "themes": theme_table(items),
        "actionable": sum(1 for item in items if is_actionable(item)),
        "empty_text": sum(1 for item in items if theme_of(item) == EMPTY_THEME),
        "top_quotes": top_quotes(items),
    }
