"""The closed value sets the analyst produces."""

from __future__ import annotations

from typing import Literal

Lang = Literal["zh", "en"]
Sentiment = Literal["positive", "neutral", "negative", "mixed"]
Severity = Literal["low", "medium", "high", "critical"]
Priority = Literal["P0", "P1", "P2", "P3"]

SENTIMENTS: tuple[Sentiment, ...] = ("positive", "neutral", "negative", "mixed")
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")
PRIORITIES: tuple[Priority, ...] = ("P0", "P1", "P2", "P3")

#: Theme of a row whose text is empty or whitespace only.
EMPTY_THEME = "empty"
#: Theme of positive rows that name no product area.
PRAISE_THEME = "praise"
#: Prefix of themes derived from a row's own salient keyword.
TOPIC_PREFIX = "topic:"
