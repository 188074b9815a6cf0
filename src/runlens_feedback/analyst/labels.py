"""The closed value sets the analyst produces."""

from __future__ import annotations

from typing import Literal

# The theme keys that the aggregate's rules rely on are declared with those rules.
from runlens_feedback.aggregate import EMPTY_THEME, FEATURE_REQUEST, PRAISE_THEME

Lang = Literal["zh", "en"]
Sentiment = Literal["positive", "neutral", "negative", "mixed"]
Severity = Literal["low", "medium", "high", "critical"]
Priority = Literal["P0", "P1", "P2", "P3"]

SENTIMENTS: tuple[Sentiment, ...] = ("positive", "neutral", "negative", "mixed")
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")
PRIORITIES: tuple[Priority, ...] = ("P0", "P1", "P2", "P3")

#: Prefix of themes derived from a row's own salient keyword.
TOPIC_PREFIX = "topic:"

__all__ = [
    "EMPTY_THEME",
    "FEATURE_REQUEST",
    "PRAISE_THEME",
    "PRIORITIES",
    "SENTIMENTS",
    "SEVERITIES",
    "TOPIC_PREFIX",
    "Lang",
    "Priority",
    "Sentiment",
    "Severity",
]
