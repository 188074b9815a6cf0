"""The theme keys every part of the plugin agrees on, and how a key reads as a name.

An item's `theme` is a key: a discovered theme's name case-folded with spaces as `_`
(`runlens_feedback.discovery`), a key of the analyst's theme table, a `topic:<keyword>` of
a row's own, or one of the keys below, whose meaning the aggregate's rules rely on
(`runlens_feedback.aggregate`). Declared here, below discovery, the aggregate and the
analyst, so each of them reads the same keys without importing another.
"""

from __future__ import annotations

#: Theme of positive rows that name no product area (never a pain point).
PRAISE_THEME = "praise"
#: Theme of rows without text (never a pain point).
EMPTY_THEME = "empty"
#: Theme of suggestions and requests (a pain point even when neutral).
FEATURE_REQUEST = "feature_request"
#: Theme of rows no discovered theme fits (never a listed pain point).
OTHER_THEME = "other"
#: Prefix of themes derived from a row's own salient keyword.
TOPIC_PREFIX = "topic:"


def theme_key(name: str) -> str:
    """The key of a theme's name: case-folded, spaces as `_`."""
    return "_".join(name.casefold().split())


def theme_name(key: str) -> str:
    """A theme's name read back from its key ("battery_·_charging" -> "Battery · charging"):
    what a consumer that only sees an item's `theme` shows."""
    words = " ".join(key.replace("_", " ").split())
    return words[:1].upper() + words[1:]
