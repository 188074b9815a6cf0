"""The aggregate's per-item rules against their plain statements, on generated items.

`group_key`, `is_actionable` and `value_counts` answer from caches and counts by distinct
value; these tests hold them to the rules written out item by item (random items with odd
themes, sentiments of every JSON type, unhashable values), so a shortcut that answers
differently for some item fails here.
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter
from typing import Any

from runlens_feedback.aggregate import (
    EMPTY_THEME,
    FEATURE_REQUEST,
    LABEL_CHARS,
    PRAISE_THEME,
    _strip_punctuation,
    group_key,
    is_actionable,
    severity_rank,
    value_counts,
)

_THEMES: list[Any] = [
    None,
    "",
    "   ",
    "\u3000",
    "Billing",
    " billing ",
    "BILLING  issues",
    PRAISE_THEME,
    EMPTY_THEME,
    FEATURE_REQUEST,
    "Feature Request",
    "praise",
    "x" * 80,
    "登录 问题",
    7,
    ["billing"],
    {"theme": "billing"},
]
_WORDINGS: list[Any] = [None, "", "Slow  sync!", "slow sync", "…", "Ｆａｓｔ", 3, "n" * 90]
_VALUES: list[Any] = [
    None,
    "positive",
    "negative",
    "neutral",
    "mixed",
    "Negative",
    "low",
    "medium",
    "high",
    "critical",
    "",
    1,
    1.0,
    True,
    False,
    0,
    "1",
    "True",
    "None",
]


def _plain_group_key(item: dict[str, Any]) -> tuple[str, str]:
    theme = item.get("theme")
    if isinstance(theme, str) and theme.strip():
        return "_".join(theme.casefold().split())[:LABEL_CHARS], "theme"
    words = unicodedata.normalize("NFKC", str(item.get("pain_point") or "")).casefold().split()
    wording = _strip_punctuation(" ".join(words))[:LABEL_CHARS].rstrip()
    return wording or "unspecified", "pain_point"


def _plain_is_actionable(item: dict[str, Any]) -> bool:
    theme = _plain_group_key(item)[0]
    if theme in (PRAISE_THEME, EMPTY_THEME):
        return False
    sentiment = item.get("sentiment")
    if sentiment in ("negative", "mixed"):
        return True
    return sentiment == "neutral" and (theme == FEATURE_REQUEST or severity_rank(item) > 0)


def _item(rng: random.Random) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for key, choices in (
        ("theme", _THEMES),
        ("pain_point", _WORDINGS),
        ("sentiment", _VALUES),
        ("severity", _VALUES),
    ):
        if rng.random() < 0.9:
            item[key] = rng.choice(choices)
    return item


def test_group_key_and_is_actionable_follow_the_plain_rules() -> None:
    rng = random.Random(28)
    for _ in range(5000):
        item = _item(rng)
        assert group_key(item) == _plain_group_key(item), item
        assert is_actionable(item) == _plain_is_actionable(item), item


def test_value_counts_are_the_counts_of_the_values_as_text() -> None:
    rng = random.Random(5)
    for size in (0, 1, 2, 5, 40, 300):
        for _ in range(60):
            items = [_item(rng) for _ in range(size)]
            if rng.random() < 0.1 and items:
                items[rng.randrange(len(items))]["sentiment"] = ["negative"]
            for key in ("sentiment", "severity", "theme"):
                expected = Counter(str(item.get(key)) for item in items)
                assert value_counts(items, key) == expected
                assert dict(value_counts(items, key)) == dict(expected)
