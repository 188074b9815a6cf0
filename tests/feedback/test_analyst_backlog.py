"""The backlog: one item per pain point of the aggregated analysis, priorities, cited ids."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runlens_feedback.aggregate import priority_for, summarize_analysis
from runlens_feedback.analyst import PRIORITIES, analyze_rows, backlog_from_summary, build_backlog
from runlens_feedback.analyst.backlog import MAX_EVIDENCE_IDS

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


def sample_items() -> list[dict]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return analyze_rows(list(csv.DictReader(handle)))


def item(
    feedback_id: str, theme: str, sentiment: str = "negative", severity: str = "medium"
) -> dict:
    return {
        "feedback_id": feedback_id,
        "theme": theme,
        "sentiment": sentiment,
        "severity": severity,
        "evidence_text": f"quote {feedback_id}",
        "sentiment_score": -1.0 if sentiment == "negative" else 1.0,
    }


def assert_backlog_shape(backlog: dict, items: list[dict]) -> None:
    known = {str(i["feedback_id"]) for i in items}
    for entry in backlog["items"]:
        assert entry["priority"] in PRIORITIES
        assert entry["title"].strip()
        assert entry["metric"].strip()
        assert entry["rationale"].strip()
        assert entry["acceptance_criteria"]
        assert all(isinstance(c, str) and c.strip() for c in entry["acceptance_criteria"])
        ids = entry["evidence_feedback_ids"]
        assert 1 <= len(ids) <= MAX_EVIDENCE_IDS
        assert len(set(ids)) == len(ids)
        assert set(ids) <= known


def test_sample_backlog_cites_only_real_ids() -> None:
    items = sample_items()
    backlog = build_backlog(items)
    assert 1 <= len(backlog["items"]) <= 8
    assert_backlog_shape(backlog, items)


def test_backlog_ids_belong_to_the_theme_and_are_not_praise() -> None:
    items = sample_items()
    by_id = {i["feedback_id"]: i for i in items}
    for entry in build_backlog(items)["items"]:
        for feedback_id in entry["evidence_feedback_ids"]:
            cited = by_id[feedback_id]
            assert cited["theme"] == entry["theme"]
            assert cited["sentiment"] != "positive"


def test_praise_and_positive_only_themes_make_no_backlog_item() -> None:
    items = [
        item("1", "praise", "positive", "low"),
        item("2", "export", "positive", "low"),
        item("3", "login_auth", "negative", "high"),
    ]
    backlog = build_backlog(items)
    assert [entry["theme"] for entry in backlog["items"]] == ["login_auth"]


def test_most_representative_ids_come_first() -> None:
    items = [item("low", "export", severity="low"), item("crit", "export", severity="critical")]
    items += [item("high", "export", severity="high")]
    (entry,) = build_backlog(items)["items"]
    assert entry["evidence_feedback_ids"] == ["crit", "high", "low"]


def test_ids_are_capped() -> None:
    items = [item(f"fb_{n}", "export") for n in range(25)]
    (entry,) = build_backlog(items)["items"]
    assert len(entry["evidence_feedback_ids"]) == MAX_EVIDENCE_IDS


def test_max_items_and_order() -> None:
    items = [item(f"a{n}", "export", severity="critical") for n in range(2)]
    items += [item(f"b{n}", f"topic:t{n}", severity="low") for n in range(12)]
    backlog = build_backlog(items, max_items=3)
    assert len(backlog["items"]) == 3
    assert backlog["items"][0]["priority"] == "P0"
    ranks = [PRIORITIES.index(entry["priority"]) for entry in backlog["items"]]
    assert ranks == sorted(ranks)


@pytest.mark.parametrize(
    ("severity", "mentions", "total", "priority"),
    [
        ({"critical": 2}, 2, 100, "P0"),
        ({"critical": 1}, 10, 100, "P0"),
        ({"critical": 1}, 1, 100, "P1"),
        ({"high": 3}, 3, 100, "P1"),
        ({"high": 1}, 15, 100, "P1"),
        ({"high": 1}, 2, 100, "P2"),
        ({"medium": 3}, 3, 100, "P2"),
        ({"medium": 1}, 10, 100, "P2"),
        ({"low": 2}, 2, 100, "P3"),
    ],
)
def test_priority_rule(severity: dict, mentions: int, total: int, priority: str) -> None:
    assert priority_for(severity, mentions, total)[0] == priority


def test_rationale_carries_the_counts() -> None:
    items = [
        item("x", "export", severity="high"),
        item("y", "export"),
        item("z", "praise", "positive"),
    ]
    (entry,) = build_backlog(items)["items"]
    assert entry["mentions"] == 2
    assert "2 of 3" in entry["rationale"]
    assert "1 high" in entry["rationale"]


def test_items_from_other_sources_are_tolerated() -> None:
    items = [{"feedback_id": "m1", "sentiment": "negative", "severity": "high"}]
    (entry,) = build_backlog(items)["items"]
    assert entry["evidence_feedback_ids"] == ["m1"]


def test_build_backlog_is_the_backlog_of_the_summary() -> None:
    items = sample_items()
    assert build_backlog(items) == backlog_from_summary(summarize_analysis(items))


def test_backlog_from_a_summary_alone() -> None:
    """What a model's context holds is enough: the summary, as JSON, round-tripped."""
    summary = json.loads(json.dumps(summarize_analysis(sample_items(), source="s.csv")))
    backlog = backlog_from_summary(summary)
    assert [entry["theme"] for entry in backlog["items"]] == [
        group["key"] for group in summary["pain_points"]
    ]
    for entry, group in zip(backlog["items"], summary["pain_points"], strict=True):
        assert entry["priority"] == group["priority"]
        assert entry["mentions"] == group["problem_rows"]
        assert entry["evidence_feedback_ids"] == group["feedback_ids"]


def test_items_without_theme_group_by_their_pain_point() -> None:
    items = [
        {"feedback_id": f"m{n}", "sentiment": "negative", "severity": "high", "pain_point": p}
        for n, p in enumerate(["Slow export", "slow  export.", "Login fails", "SLOW EXPORT"])
    ]
    backlog = build_backlog(items)
    by_key = {entry["theme"]: entry for entry in backlog["items"]}
    assert set(by_key) == {"slow export", "login fails"}
    assert by_key["slow export"]["evidence_feedback_ids"] == ["m0", "m1", "m3"]
    assert "Slow export" in by_key["slow export"]["title"]


_sentiments = st.sampled_from(["positive", "neutral", "negative", "mixed"])
_severities = st.sampled_from(["low", "medium", "high", "critical"])
_themes = st.sampled_from(["export", "praise", "login_auth", "topic:soup", "feature_request"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=6), _themes, _sentiments, _severities), max_size=40
    )
)
def test_generated_items_give_a_valid_backlog(rows: list[tuple[str, str, str, str]]) -> None:
    items = [item(fid, theme, sentiment, severity) for fid, theme, sentiment, severity in rows]
    backlog = build_backlog(items)
    assert_backlog_shape(backlog, items)
    assert all(entry["theme"] != "praise" for entry in backlog["items"])
    assert build_backlog(items) == backlog
