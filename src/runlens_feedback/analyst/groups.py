"""Names for the pain-point groups of the aggregated analysis (`runlens_feedback.aggregate`).

A group is keyed by a theme (a discovered theme, `runlens_feedback.discovery`, whose key is
its name in lower case; the analyst's theme table; a `topic:<keyword>` of its own; "other";
or any key a model chose) or, for items without a theme, by its normalised pain point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runlens_feedback.analyst.labels import EMPTY_THEME, TOPIC_PREFIX, Lang
from runlens_feedback.analyst.resources import ThemeSpec, theme_by_key
from runlens_feedback.theme_keys import OTHER_THEME, theme_name

Group = Mapping[str, Any]


def theme_spec(group: Group) -> ThemeSpec | None:
    """The theme-table row of a theme-keyed group, if it has one."""
    if group.get("grouped_by", "theme") != "theme":
        return None
    return theme_by_key().get(str(group.get("key")))


def group_label(group: Group, language: Lang = "en") -> str:
    """A one-line display label in `language`: the theme table's label (`label_en`,
    `label_zh`), the pain point's own wording for groups without a theme, else the name read
    from the key (a discovered theme's name, `theme_keys.theme_name`)."""
    key = str(group.get("key"))
    spec = theme_spec(group)
    if spec is not None:
        return spec.label(language)
    if group.get("grouped_by") == "pain_point":
        return " ".join(str(group.get("pain_point") or key).split())
    zh = language == "zh"
    if key.startswith(TOPIC_PREFIX):
        keyword = key[len(TOPIC_PREFIX) :]
        return f"关于 {keyword}" if zh else f"About “{keyword}”"
    if key == EMPTY_THEME:
        return "空反馈" if zh else "Empty feedback"
    if key == OTHER_THEME:
        return "其他（无共同话题）" if zh else "Other (no common theme)"
    return theme_name(key)


def group_keyword(group: Group, language: Lang = "en") -> str:
    """The words a title or criterion uses for the group: its topic keyword or its label."""
    key = str(group.get("key"))
    if group.get("grouped_by", "theme") == "theme" and key.startswith(TOPIC_PREFIX):
        return key[len(TOPIC_PREFIX) :]
    return group_label(group, language)
