"""The shipped sample's themes against a hand-labelled gold (tests/feedback/data)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from runlens_feedback.discovery import CONCEPT, ThemeCatalogue, discover_themes

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
GOLD = Path(__file__).parent / "data" / "sample_themes_gold.csv"

#: Purity of the placed rows against the gold topics, and the share of rows placed in a theme.
#: Measured 0.63 and 0.97 with sentence vectors (words only: 0.61 and 0.96; the word-pair
#: themes before them: 0.39 and 0.79).
MIN_PURITY = 0.58
MIN_COVERAGE = 0.9
#: Rows about money that name a charge, price or refund in so many words.
MONEY_ROWS = ("fb_005", "fb_011", "fb_024", "fb_032", "fb_069", "fb_082")


Sample = tuple[list[str], dict[str, str], ThemeCatalogue]


@pytest.fixture(scope="module")
def sample() -> Sample:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with GOLD.open(encoding="utf-8", newline="") as handle:
        gold = {row["feedback_id"]: row["topic"] for row in csv.DictReader(handle)}
    ids = [row["feedback_id"] for row in rows]
    assert sorted(gold) == sorted(ids), "the gold labels every row of the sample, once"
    catalogue = discover_themes([row["text"] for row in rows])
    return ids, gold, catalogue


def _theme_of(sample: Sample) -> dict[str, str]:
    ids, _, catalogue = sample
    return dict(zip(ids, catalogue.assignments, strict=True))


def _majority(sample: Sample) -> dict[str, tuple[str, int, int]]:
    """Each theme's (majority gold topic, its rows, the theme's rows)."""
    _, gold, _ = sample
    topics: dict[str, Counter[str]] = {}
    for feedback_id, key in _theme_of(sample).items():
        topics.setdefault(key, Counter())[gold[feedback_id]] += 1
    found = {}
    for key, counted in topics.items():
        topic, rows = counted.most_common(1)[0]
        found[key] = (topic, rows, sum(counted.values()))
    return found


def test_themes_agree_with_the_hand_labelled_topics(sample: Sample) -> None:
    ids, _, catalogue = sample
    majority = _majority(sample)
    placed = [majority[theme.key] for theme in catalogue.themes]
    in_themes = sum(total for _, _, total in placed)
    purity = sum(rows for _, rows, _ in placed) / in_themes
    assert purity >= MIN_PURITY, majority
    assert in_themes / len(ids) >= MIN_COVERAGE
    # the big topics each lead a theme of their own
    leading = {topic for topic, _, _ in placed}
    assert {"export", "billing", "login", "support", "permissions"} <= leading, majority


def test_the_export_theme_holds_no_login_or_billing_row(sample: Sample) -> None:
    theme_of = _theme_of(sample)
    majority = _majority(sample)
    export = [key for key, (topic, _, _) in majority.items() if topic == "export"]
    assert len(export) == 1, majority
    for feedback_id in ("fb_003", "fb_019", "fb_024"):
        assert theme_of[feedback_id] != export[0], feedback_id
    _, gold, _ = sample
    held = [i for i, key in theme_of.items() if key == export[0]]
    assert sum(gold[i] == "export" for i in held) >= 0.9 * len(held)


def test_every_row_about_a_charge_is_in_the_billing_theme(sample: Sample) -> None:
    theme_of = _theme_of(sample)
    keys = {theme_of[feedback_id] for feedback_id in MONEY_ROWS}
    assert len(keys) == 1, {i: theme_of[i] for i in MONEY_ROWS}
    assert _majority(sample)[keys.pop()][0] == "billing"


def test_one_topic_in_two_languages_is_one_theme(sample: Sample) -> None:
    theme_of = _theme_of(sample)
    # "Exporting the monthly revenue report" and "导出周报太慢了"; "charged twice" and "扣了...钱"
    assert theme_of["fb_002"] == theme_of["fb_001"] != "other"
    assert theme_of["fb_034"] == theme_of["fb_001"]
    assert theme_of["fb_011"] == theme_of["fb_005"] != "other"


def test_names_are_phrases_of_the_input_not_word_pairs(sample: Sample) -> None:
    _, _, catalogue = sample
    texts = SAMPLE.read_text(encoding="utf-8").casefold()
    for theme in catalogue.themes:
        assert " · " not in theme.name, theme.name
        assert CONCEPT not in theme.name and not any(CONCEPT in k for k in theme.keywords)
        # a phrase that occurs in the input, or two of its words joined by "与"/"and"
        parts = theme.name.casefold().replace(" and ", "与").split("与")
        assert 1 <= len(parts) <= 2, theme.name
        for part in parts:
            assert part in texts, (theme.name, part)
    names = [theme.name for theme in catalogue.themes]
    assert len(set(names)) == len(names)
