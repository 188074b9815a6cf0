"""Names for the pain-point groups of the aggregated analysis (`runlens_feedback.aggregate`).

A group is keyed by a theme (a discovered theme, `runlens_feedback.discovery`, whose key is
its name in lower case; the analyst's theme table; a `topic:<keyword>` of its own; "other";
or any key a model chose) or, for items without a theme, by its normalised pain point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runlens_feedback.analyst.labels import EMPTY_THEME, TOPIC_PREFIX
from runlens_feedback.analyst.resources import ThemeSpec, theme_by_key
from runlens_feedback.discovery import OTHER as OTHER_THEME
from runlens_feedback.discovery import theme_name

Group = Mapping[str, Any]


def theme_spec(group: Group) -> ThemeSpec | None:
    """The theme-table row of a theme-keyed group, if it has one."""
    if group.get("grouped_by", "theme") != "theme":
        return None
    return theme_by_key().get(str(group.get("key")))


def group_label(group: Group) -> str:
    """A one-line display label: the theme table's English label, the pain point's own
    wording for groups without a theme, else the name read from the key (a discovered
    theme's name, `discovery.theme_name`)."""
    key = str(group.get("key"))
    spec = theme_spec(group)
    if spec is not None:
        return spec.label_en
    if group.get("grouped_by") == "pain_point":
        return " ".join(str(group.get("pain_point") or key).split())
    if key.startswith(TOPIC_PREFIX):
        return f"About “{key[len(TOPIC_PREFIX) :]}”"
    if key == EMPTY_THEME:
        return "Empty feedback"
    if key == OTHER_THEME:
        return "Other (no common theme)"
    return theme_name(key)


def group_keyword(group: Group) -> str:
    """The words a title or criterion uses for the group: its topic keyword or its label."""
    key = str(group.get("key"))
    if group.get("grouped_by", "theme") == "theme" and key.startswith(TOPIC_PREFIX):
        return key[len(TOPIC_PREFIX) :]
    return group_label(group)
