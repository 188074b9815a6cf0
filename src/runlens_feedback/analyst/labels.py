"""The closed value sets the analyst produces."""

from __future__ import annotations

from typing import Literal

# The closed value sets of the deliverables are declared with their contracts.
from runlens_feedback.contracts import (
    PRIORITIES,
    SENTIMENTS,
    SEVERITIES,
    Priority,
    Sentiment,
    Severity,
)

# The theme keys that the aggregate's rules rely on are declared below discovery, the
# aggregate and the analyst.
from runlens_feedback.theme_keys import EMPTY_THEME, FEATURE_REQUEST, PRAISE_THEME, TOPIC_PREFIX

Lang = Literal["zh", "en"]

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
