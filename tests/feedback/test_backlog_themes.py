"""The backlog's theme check reads the analysis's theme of the cited rows only: the same
theme for each of them as reading every row's (the first item of a row that names a theme),
on generated analyses with repeated rows, blank, missing and non-text themes and ids."""

from __future__ import annotations

import random
from typing import Any

from runlens_feedback.validators import _cited, _theme, _themes_by_row

_IDS = ["fb_1", "fb_2", "fb_3", "fb_4", 5, None, ["fb_1"]]
_THEMES = ["Billing", "billing ", "Export Speed", "", "  ", None, 3, "other"]


def _every_row(analysis: Any) -> dict[str, str]:
    """Each row's theme as the check read them before: every item of the analysis."""
    themes: dict[str, str] = {}
    for item in analysis.get("items", []):
        if not isinstance(item, dict):
            continue
        row_id, theme = item.get("feedback_id"), _theme(item)
        if isinstance(row_id, str) and theme is not None:
            themes.setdefault(row_id, theme)
    return themes


def _item(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return rng.choice(["not an item", 7, None])
    item: dict[str, Any] = {}
    if rng.random() < 0.9:
        item["feedback_id"] = rng.choice(_IDS)
    if rng.random() < 0.8:
        item["theme"] = rng.choice(_THEMES)
    return item


def test_the_cited_rows_get_the_theme_every_row_would() -> None:
    rng = random.Random(28)
    for _ in range(3000):
        analysis = {"items": [_item(rng) for _ in range(rng.randrange(12))]}
        backlog = {"items": [_item(rng) for _ in range(rng.randrange(4))]}
        for entry in backlog["items"]:
            if isinstance(entry, dict) and rng.random() < 0.8:
                entry["evidence_feedback_ids"] = rng.sample(_IDS, rng.randrange(4))
        wanted = _cited(backlog)
        every = _every_row(analysis)
        found = _themes_by_row(analysis, wanted)
        assert found == {row: theme for row, theme in every.items() if row in wanted}


def test_only_the_ids_of_backlog_items_with_a_theme_are_cited() -> None:
    backlog = {
        "items": [
            {"theme": "Billing", "evidence_feedback_ids": ["fb_1", 2, "fb_2"]},
            {"theme": " ", "evidence_feedback_ids": ["fb_3"]},
            {"evidence_feedback_ids": ["fb_4"]},
            {"theme": "Export", "evidence_feedback_ids": "fb_5"},
        ]
    }
    assert _cited(backlog) == {"fb_1", "fb_2"}
