"""The backlog: one item per pain point of the aggregated analysis, priorities, cited ids."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runlens_feedback.aggregate import priority_for, summarize_analysis
from runlens_feedback.analyst import PRIORITIES, analyze_rows, backlog_from_summary, build_backlog
from runlens_feedback.analyst.backlog import MAX_EVIDENCE_IDS

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


def sample_items() -> list[dict[str, Any]]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return analyze_rows(list(csv.DictReader(handle)))


def item(
    feedback_id: str, theme: str, sentiment: str = "negative", severity: str = "medium"
) -> dict[str, Any]:
    return {
        "feedback_id": feedback_id,
        "theme": theme,
        "sentiment": sentiment,
        "severity": severity,
        "evidence_text": f"quote {feedback_id}",
        "sentiment_score": -1.0 if sentiment == "negative" else 1.0,
    }


def assert_backlog_shape(backlog: dict[str, Any], items: list[dict[str, Any]]) -> None:
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
        ({"critical": 2, "high": 8}, 20, 100, "P0"),  # severity +2, critical +1, reach +2
        ({"critical": 2}, 2, 100, "P2"),  # +2, critical +1, 2% of rows
        ({"critical": 2}, 4, 100, "P1"),  # +2, critical +1, reach +1
        ({"critical": 1}, 20, 100, "P2"),  # one row sets nothing: reach +2
        ({"critical": 1}, 1, 100, "P3"),  # one critical row alone
        ({"critical": 1, "high": 1}, 4, 100, "P2"),  # half high or critical: +2, reach +1
        ({"high": 3}, 10, 100, "P2"),  # 30%: +1, reach +2
        ({"high": 5}, 10, 100, "P1"),  # +2, reach +2
        ({"high": 1}, 2, 100, "P3"),  # half its rows, but one row
        ({"high": 2}, 40, 100, "P2"),  # 5%: +0, reach +2
        ({"medium": 20}, 20, 100, "P2"),  # reach +2
        ({"medium": 3}, 100, 100, "P2"),  # reach +2
        ({"medium": 3}, 3, 100, "P3"),  # reach +1
        ({"low": 2}, 2, 100, "P3"),
    ],
)
def test_priority_rule(severity: dict[str, Any], mentions: int, total: int, priority: str) -> None:
    assert priority_for(severity, mentions, total)[0] == priority


def test_trend_moves_the_priority_by_one_point() -> None:
    from fractions import Fraction

    from runlens_feedback.trend import Trend

    rising = Trend("2024-06", Fraction(8, 40), Fraction(4, 80), 8, 4, "rising", 40, 80)
    falling = Trend("2024-06", Fraction(1, 100), Fraction(9, 90), 1, 9, "falling", 100, 90)
    assert priority_for({"high": 2}, 10, 100)[0] == "P2"  # reach +2
    assert priority_for({"high": 2}, 10, 100, falling)[0] == "P3"
    assert priority_for({"high": 5}, 10, 200)[0] == "P2"  # +2, reach +1
    assert priority_for({"high": 5}, 10, 200, rising)[0] == "P1"
    reason = priority_for({"high": 2}, 10, 100, rising)[1]
    assert reason == (
        "severity +0 (2 of 10 high/critical), critical +0 (0), reach +2 (10.0% of rows), "
        "trend +1 (rising: 20.0% in 2024-06 vs 5.0% before) = 3 points"
    )
    few = Trend("2024-06", Fraction(2, 15), Fraction(2, 74), 2, 2, "too_few", 15, 74)
    assert priority_for({"high": 5}, 10, 100, few)[0] == "P1"  # no point either way
    assert (
        "trend +0 (too few rows to tell: 2 in 2024-06, 13.3% vs 2.7% before)"
        in (priority_for({"high": 5}, 10, 100, few)[1])
    )


def test_backlog_is_written_from_the_themes_own_evidence() -> None:
    """Criteria and metric name the theme, its terms and counts: no SaaS template."""
    items = [
        {
            "feedback_id": f"r{n}",
            "theme": "waiter_·_menu",
            "sentiment": "negative",
            "severity": "high" if n < 2 else "medium",
            "evidence_text": text,
        }
        for n, text in enumerate(
            [
                "The waiter forgot our order and the pasta arrived cold",
                "Our waiter never came back, the soup was cold",
                "The menu prices are high and the waiter was rude",
            ]
        )
    ]
    items.append({"feedback_id": "ok", "theme": "praise", "sentiment": "positive"})
    (entry,) = build_backlog(items)["items"]
    # the action, the theme, and its leading problem in the customer's words
    assert entry["title"] == (
        "Fix Waiter · menu: The waiter forgot our order and the pasta arrived cold"
    )
    criteria = " ".join(entry["acceptance_criteria"])
    assert "Waiter · menu" in criteria
    assert "cold" in criteria  # the theme's own words, from its quotes
    assert "2 of its 3 problem rows" in criteria
    for template in ("p95", "5 seconds", "99.5%", "CI", "workspace"):
        assert template not in criteria
    assert "baseline: 3 of 4 analysed rows (75.0%)" in entry["metric"]
    assert "high or critical reports (baseline: 2, target: 0)" in entry["metric"]
    for text in (entry["title"], criteria, entry["metric"]):
        assert "“" not in text and "”" not in text  # nothing that reads as a quotation


def test_a_rising_theme_gets_a_trend_criterion() -> None:
    summary = {
        "analysed_rows": 100,
        "pain_points": [
            {
                "key": "battery_·_charging",
                "grouped_by": "theme",
                "pain_point": "Battery · charging",
                "keywords": ["battery", "charging", "overnight", "charger"],
                "problem_rows": 12,
                "priority": "P1",
                "priority_reason": "severity +1 (1 high of 12), reach +1 (12.0% of analysed "
                "rows), trend +1 (rising: 20.0% in 2024-06 vs 5.0% before) = 3 points",
                "trend": {"direction": "rising", "period": "2024-06", "before_share": 0.05},
                "sentiment": {"negative": 12},
                "problem_severity": {"high": 1, "medium": 11},
                "feedback_ids": ["b1", "b2"],
                "examples": [],
            }
        ],
    }
    (entry,) = backlog_from_summary(summary)["items"]
    assert entry["priority"] == "P1"
    assert "trend +1 (rising" in entry["rationale"]
    criteria = entry["acceptance_criteria"]
    assert any("overnight, charger" in c for c in criteria)  # keywords, not the name's words
    assert any("at most 5.0%, its share before 2024-06" in c for c in criteria)


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


# -- the backlog's language -----------------------------------------------------------------

#: Words of the English templates that a Chinese backlog must not contain.
ENGLISH_TEMPLATE_WORDS = (
    "fix the complaints",
    "answer the requests",
    "look into the reports",
    "weak points",
    "reviewed",
    "baseline",
    "target",
    "analysed rows",
    "raise this",
    "severity",
    "points",
    "Billing and pricing",
    "Make billing clear",
)


def language_items(language: str) -> list[dict[str, Any]]:
    """Rows of a discovered theme and of a table theme, all declaring `language`."""
    rows = [item(f"d{n}", "导出_·_周报", severity="high" if n < 2 else "medium") for n in range(3)]
    rows += [item(f"b{n}", "billing_pricing", severity="critical") for n in range(2)]
    rows += [item("ok", "praise", "positive", "low")]
    return [{**row, "language": language} for row in rows]


def test_a_chinese_summary_gives_a_chinese_backlog() -> None:
    backlog = build_backlog(language_items("zh"))
    by_theme = {entry["theme"]: entry for entry in backlog["items"]}
    discovered, table = by_theme["导出_·_周报"], by_theme["billing_pricing"]
    assert discovered["title"] == "解决导出 · 周报的问题：quote d0"
    assert table["title"] == "让计费清晰准确"  # the table theme's title, translated
    assert "逐条查看关于计费/价格的引用反馈（b0, b1）" in table["acceptance_criteria"][0]
    assert any(
        "高或严重反馈（目前其 3 条反映问题的反馈中有 2 条）" in c
        for c in discovered["acceptance_criteria"]
    )
    assert "基线：已分析的 6 条中有 3 条，占 50.0%；目标：减半" in discovered["metric"]
    assert "其中高或严重的反馈（基线：2 条；目标：0 条）" in discovered["metric"]
    assert discovered["rationale"].startswith("已分析的 6 条中有 3 条（50.0%）反映这一问题；")
    assert "严重程度：严重 0、高 2、中等 1、低 0" in discovered["rationale"]
    assert discovered["rationale"].endswith(
        "P1：严重程度 +2（3 条中有 2 条为高或严重），严重反馈 +0（严重 0 条），"
        "覆盖面 +2（占已分析反馈的 50.0%），合计 4 分。"
    )
    assert "严重程度 +2（2 条中有 2 条为高或严重），严重反馈 +1（严重 2 条）" in table["rationale"]
    for entry in backlog["items"]:
        text = " ".join(
            [entry["title"], entry["metric"], entry["rationale"], *entry["acceptance_criteria"]]
        )
        for english in ENGLISH_TEMPLATE_WORDS:
            assert english not in text
        assert "“" not in text and "”" not in text  # nothing that reads as a quotation


def test_an_english_summary_keeps_an_english_backlog() -> None:
    backlog = build_backlog(language_items("en"))
    by_theme = {entry["theme"]: entry for entry in backlog["items"]}
    discovered, table = by_theme["导出_·_周报"], by_theme["billing_pricing"]
    assert discovered["title"] == "Fix 导出 · 周报: quote d0"
    assert table["title"] == "Make billing clear and correct"
    assert (
        "The cited reports about Billing and pricing (b0, b1) are reviewed"
        in (table["acceptance_criteria"][0])
    )
    assert "baseline: 3 of 6 analysed rows (50.0%), target: half" in discovered["metric"]
    assert discovered["rationale"].startswith("3 of 6 analysed rows (50.0%) raise this;")
    assert "= 4 points" in discovered["rationale"]
    for entry in backlog["items"]:
        text = " ".join([entry["title"], entry["metric"], *entry["acceptance_criteria"]])
        for chinese in ("解决", "基线", "验收", "计费"):
            assert chinese not in text


def test_the_backlog_language_is_the_reports() -> None:
    """The same rule as the report body (`report_language`): the analysed items' main
    language, English on a tie."""

    def titles(items: list[dict[str, Any]]) -> dict[str, str]:
        return {entry["theme"]: entry["title"] for entry in build_backlog(items)["items"]}

    zh, en = language_items("zh"), language_items("en")
    assert titles(zh[:3] + en[3:])["billing_pricing"] == "Make billing clear and correct"  # a tie
    assert titles(zh[:4] + en[4:])["billing_pricing"] == "让计费清晰准确"


def test_a_rising_theme_gets_a_chinese_trend_criterion_and_reason() -> None:
    summary = {
        "analysed_rows": 100,
        "languages": {"zh": 90, "en": 10},
        "pain_points": [
            {
                "key": "电池_·_充电",
                "grouped_by": "theme",
                "pain_point": "电池 · 充电",
                "keywords": ["电池", "充电", "过夜", "充电器"],
                "problem_rows": 12,
                "priority": "P2",
                "priority_reason": "severity +0 (1 of 12 high/critical), critical +0 (0), "
                "reach +2 (12.0% of rows), trend +1 (rising: 20.0% in 2024-06 vs 5.0% before) "
                "= 3 points",
                "trend": {
                    "direction": "rising",
                    "period": "2024-06",
                    "recent_share": 0.2,
                    "before_share": 0.05,
                },
                "sentiment": {"negative": 12},
                "problem_severity": {"high": 1, "medium": 11},
                "feedback_ids": ["b1", "b2"],
                "examples": [],
            }
        ],
    }
    (entry,) = backlog_from_summary(summary)["items"]
    assert entry["priority"] == "P2"
    assert entry["rationale"].endswith(
        "P2：严重程度 +0（12 条中有 1 条为高或严重），严重反馈 +0（严重 0 条），"
        "覆盖面 +2（占已分析反馈的 12.0%），趋势 +1（上升：2024-06 为 20.0%，此前为 5.0%），"
        "合计 3 分。"
    )
    criteria = entry["acceptance_criteria"]
    assert any("凡提到过夜、充电器之一的投诉" in c for c in criteria)  # not the name's words
    assert any("回落到不超过 5.0%，即 2024-06 之前的占比" in c for c in criteria)
