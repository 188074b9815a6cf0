"""The closed value sets the analyst produces."""

from __future__ import annotations

from typing import Literal

# The theme keys that the aggregate's rules rely on are declared with those rules.
from runlens_feedback.aggregate import EMPTY_THEME, FEATURE_REQUEST, PRAISE_THEME

# The closed value sets of the deliverables are declared with their contracts.
from runlens_feedback.contracts import (
    PRIORITIES,
    SENTIMENTS,
    SEVERITIES,
    Priority,
    Sentiment,
    Severity,
)

Lang = Literal["zh", "en"]

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
