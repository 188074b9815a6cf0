"""summarize_analysis: exact counts, grouping, verbatim quotes, and a size that does not grow
with the input."""

from __future__ import annotations

import json
import random
import unicodedata
from collections import Counter
from typing import Any

from runlens_feedback.aggregate import (
    EVIDENCE_IDS,
    EXAMPLES,
    FAILURE_LINES,
    QUOTE_CHARS,
    TOP_GROUPS,
    actionable_items,
    group_items,
    group_rows,
    short_quote,
    summarize_analysis,
    value_counts,
)

SENTIMENTS = ("positive", "neutral", "negative", "mixed")
SEVERITIES = ("low", "medium", "high", "critical")


def model_items(count: int, *, seed: int = 1, themes: bool = True) -> list[dict[str, Any]]:
    """Items as a model might submit them: many themes or wordings, long quotes (of use, so
    the input reads as feedback and carries no genre warning)."""
    rng = random.Random(seed)
    items = []
    for number in range(count):
        area = rng.randrange(400)
        item = {
            "feedback_id": f"row-{number:06d}",
            "sentiment": rng.choice(SENTIMENTS),
            "severity": rng.choice(SEVERITIES),
            "pain_point": f"Problem number {area} with the {rng.choice(['app', 'site'])}",
            "evidence_text": "用了 " + "很慢 " * rng.randrange(1, 200) + f"case {number}",
            "suggested_action": f"Fix area {area} " + "x" * rng.randrange(300),
        }
        if themes:
            item["theme"] = f"area_{area}"
        items.append(item)
    return items


def test_beyond_fifteen_themes_the_smallest_join_other() -> None:
    """A model that names a theme per row does not give a PM 40 themes: the 15 largest stand
    (ties: first seen), the others are counted as "other"; praise is never folded."""
    base = {"sentiment": "negative", "severity": "high", "pain_point": "p", "evidence_text": "e"}
    themes = [f"t{n:02d}" for n in range(20) for _ in range(20 - n)]  # t00: 20 rows ... t19: 1
    items = [{**base, "feedback_id": f"r{n}", "theme": t} for n, t in enumerate(themes)]
    praise = [{**base, "feedback_id": "p", "theme": "praise", "sentiment": "positive"}]
    groups = group_items(items + praise)
    assert [key for key, _ in groups] == [*(f"t{n:02d}" for n in range(15)), "praise", "other"]
    assert len(groups[("other", "theme")]) == sum(range(1, 6))  # t15..t19
    assert summarize_analysis(items + praise)["groups"] == 17
    fifteen = [item for item in items if item["theme"] < "t15"]
    assert ("other", "theme") not in group_items(fifteen)


def size(summary: dict[str, Any]) -> int:
    return len(json.dumps(summary, ensure_ascii=False).encode("utf-8"))


def test_counts_are_exact() -> None:
    items = model_items(3000)
    summary = summarize_analysis(items, total_rows=3100, source="s.csv")
    assert summary["total_rows"] == 3100
    assert summary["analysed_rows"] == 3000
    assert summary["unanalysed_rows"] == 100
    assert summary["sentiment"] == {
        s: Counter(i["sentiment"] for i in items)[s] for s in SENTIMENTS
    }
    assert summary["severity"] == {s: Counter(i["severity"] for i in items)[s] for s in SEVERITIES}
    # 400 themes: the 15 largest stand, the rest are counted as one "other" group
    assert summary["groups"] == 16
    largest = sorted(Counter(i["theme"] for i in items).values(), reverse=True)
    assert summary["other_groups"]["rows"] >= sum(largest[15:])
    listed = sum(group["count"] for group in summary["pain_points"])
    assert listed + summary["other_groups"]["rows"] == 3000
    problems = sum(group["problem_rows"] for group in summary["pain_points"])
    assert problems + summary["other_groups"]["problem_rows"] == summary["problem_rows"]
    for group in summary["pain_points"]:
        members = [i for i in items if i["theme"] == group["key"]]
        assert group["count"] == len(members)
        assert group["sentiment"] == {
            s: sum(1 for m in members if m["sentiment"] == s) for s in SENTIMENTS
        }


def test_size_is_bounded_whatever_the_input() -> None:
    small = summarize_analysis(model_items(500), source="s.csv")
    large = summarize_analysis(model_items(20_000), source="s.csv")
    no_theme = summarize_analysis(model_items(20_000, themes=False), source="s.csv")
    for summary in (small, large, no_theme):
        assert len(summary["pain_points"]) == TOP_GROUPS
        for group in summary["pain_points"]:
            assert 1 <= len(group["feedback_ids"]) <= EVIDENCE_IDS
            assert 1 <= len(group["examples"]) <= EXAMPLES
            assert all(len(e["evidence_text"]) <= QUOTE_CHARS for e in group["examples"])
        assert size(summary) < 11_000
    assert size(large) < size(small) * 1.2


def test_failures_are_summed_by_reason_and_capped() -> None:
    failed = [
        {"batch": n, "offset": n * 40, "feedback_ids": [f"f{n}a", f"f{n}b"], "reason": "timeout"}
        for n in range(50)
    ] + [{"batch": 99, "feedback_ids": ["blank"], "reason": "row has no text to quote"}]
    summary = summarize_analysis(model_items(10), total_rows=111, failed_batches=failed)
    failures = summary["failed_batches"]
    assert failures["batches"] == 51
    assert failures["rows"] == 101
    assert failures["reasons"] == [
        {"reason": "timeout", "batches": 50, "rows": 100},
        {"reason": "row has no text to quote", "batches": 1, "rows": 1},
    ]
    assert len(failures["entries"]) == FAILURE_LINES
    assert failures["entries"][0] == {
        "batch": 0,
        "offset": 0,
        "reason": "timeout",
        "unanalysed_rows": 2,
    }


def test_items_without_theme_group_by_normalised_wording() -> None:
    wordings = ["Export is slow", "export is slow.", "  EXPORT   is slow ", "Login fails", ""]
    items = [
        {"feedback_id": str(n), "sentiment": "negative", "severity": "medium", "pain_point": w}
        for n, w in enumerate(wordings)
    ]
    summary = summarize_analysis(items)
    groups = {g["key"]: g for g in summary["pain_points"]}
    assert set(groups) == {"export is slow", "login fails", "unspecified"}
    assert groups["export is slow"]["count"] == 3
    assert groups["export is slow"]["pain_point"] == "Export is slow"
    assert {g["grouped_by"] for g in groups.values()} == {"pain_point"}
    assert summary["grouped_by"] == {"theme": 0, "pain_point": 5}


def test_praise_is_never_a_pain_point_and_examples_are_the_items_quotes() -> None:
    items = model_items(600)
    items += [
        {"feedback_id": f"p{n}", "sentiment": "positive", "severity": "low", "theme": "praise",
         "pain_point": "praise", "evidence_text": f"great {n}"}
        for n in range(300)
    ]  # fmt: skip
    summary = summarize_analysis(items)
    assert "praise" not in {g["key"] for g in summary["pain_points"]}
    assert summary["positive"]["rows"] == sum(1 for i in items if i["sentiment"] == "positive")
    quotes = {i["feedback_id"]: i["evidence_text"] for i in items}
    examples = [e for g in summary["pain_points"] for e in g["examples"]]
    for example in examples + summary["positive"]["examples"]:
        assert example["evidence_text"]
        assert quotes[example["feedback_id"]].startswith(example["evidence_text"])


def test_priority_order_puts_the_backlog_candidates_first() -> None:
    items = [
        {"feedback_id": f"big{n}", "theme": "big", "sentiment": "negative", "severity": "low"}
        for n in range(40)
    ]
    items += [
        {"feedback_id": f"crit{n}", "theme": "tiny", "sentiment": "negative",
         "severity": "critical"}
        for n in range(2)
    ]  # fmt: skip
    summary = summarize_analysis(items)
    # two critical rows of two: severity +2, critical +1, reach +1 (4.8%); 95% low: reach +2
    assert [(g["key"], g["priority"]) for g in summary["pain_points"]] == [
        ("tiny", "P1"),
        ("big", "P2"),
    ]


def test_short_quotes_end_before_the_word_the_limit_falls_in() -> None:
    text = "The Salesforce connector stopped syncing after the last update"
    assert short_quote(text, 58) == "The Salesforce connector stopped syncing after the last"
    assert short_quote("Exportfailures" * 3, 10) == "Exportfailures" * 3
    assert short_quote("导出周报太慢了，我们团队", 5) == "导出周报太"


def test_short_quotes_do_not_split_an_accent_from_its_letter() -> None:
    text = "Cafe\u0301 " * 30  # "Café" with a combining accent, as NFD text writes it
    for limit in range(4, 40):
        quote = short_quote(text, limit)
        assert not quote.endswith("Cafe")
        assert unicodedata.normalize("NFC", quote) in unicodedata.normalize("NFC", text)


# -- themes, names and priorities (severity, reach, trend) ----------------------------------


def themed(
    key: str, count: int, *, start: int = 0, severity: str = "medium"
) -> list[dict[str, Any]]:
    return [
        {
            "feedback_id": f"{key}-{start + n}",
            "theme": key,
            "sentiment": "negative",
            "severity": severity,
            "pain_point": f"row wording {n}",
            "evidence_text": f"quote {key} {n}",
        }
        for n in range(count)
    ]


def test_pain_points_are_named_after_the_catalogue_theme() -> None:
    from runlens_feedback.discovery import discover_themes

    texts = [
        "The waiter forgot our order and the pasta arrived cold.",
        "Our waiter never refilled the water and the soup was cold.",
        "The battery drains overnight and charging takes hours.",
        "The phone battery dies by noon even after charging.",
    ] * 10
    catalogue = discover_themes(texts)
    items = [
        {
            "feedback_id": str(n),
            "theme": key,
            "sentiment": "negative",
            "severity": "medium",
            "pain_point": f"row {n}",
            "evidence_text": texts[n],
        }
        for n, key in enumerate(catalogue.assignments)
    ]
    summary = summarize_analysis(items, catalogue=catalogue)
    named = {theme.key: theme for theme in catalogue.themes}
    assert summary["pain_points"]
    for group in summary["pain_points"]:
        assert group["pain_point"] == named[group["key"]].name
        assert group["keywords"] == list(named[group["key"]].keywords)
    # without the catalogue the name is read back from the key
    plain = summarize_analysis(items)
    assert [g["pain_point"] for g in plain["pain_points"]] == [
        g["pain_point"] for g in summary["pain_points"]
    ]


def test_other_is_never_a_listed_pain_point() -> None:
    items = themed("other", 50) + themed("battery_·_charging", 5)
    summary = summarize_analysis(items)
    assert [g["key"] for g in summary["pain_points"]] == ["battery_·_charging"]
    assert summary["other_groups"] == {"groups": 1, "rows": 50, "problem_rows": 50}
    assert summary["problem_rows"] == 55


def test_priorities_separate_on_a_realistic_input() -> None:
    """Eight themes of different reach and severity: not all P1, a spread P0..P3."""
    items = (
        themed("checkout", 30, severity="high")
        + themed("checkout", 2, start=30, severity="critical")
        + themed("delivery", 25, severity="high")
        + themed("sizing", 33)
        + themed("packaging", 8)
        + themed("app_login", 3, severity="high")
        + themed("colours", 3)
        + themed("returns", 2, severity="low")
        + themed("sync", 1, severity="critical")
        + themed("sync", 5, start=1)
    )
    items += [
        {"feedback_id": f"p{n}", "theme": "praise", "sentiment": "positive", "severity": "low"}
        for n in range(117)
    ]
    summary = summarize_analysis(items)
    priorities = {g["key"]: g["priority"] for g in summary["pain_points"]}
    assert priorities == {
        "checkout": "P0",  # all high or critical +2, 2 critical +1, 14.0% of rows +2
        "delivery": "P1",  # all high +2, 10.9% of rows +2
        "sizing": "P2",  # 14.4% of rows, none high: reach +2
        "app_login": "P2",  # 3 high: severity +2, 1.3% of rows
        "packaging": "P3",  # 3.5% of rows +1, medium
        "sync": "P3",  # one critical row sets nothing; 2.6% of rows
        "colours": "P3",
        "returns": "P3",
    }
    # the order of the evidence: priority, points, problem rows
    assert [g["key"] for g in summary["pain_points"]] == [
        "checkout", "delivery", "sizing", "app_login", "packaging", "sync", "colours", "returns"
    ]  # fmt: skip
    assert set(priorities.values()) == {"P0", "P1", "P2", "P3"}
    for group in summary["pain_points"]:
        assert "severity +" in group["priority_reason"]
        assert "reach +" in group["priority_reason"]
        assert "critical +" in group["priority_reason"]
        assert group["priority_reason"].endswith(f"= {group['points']} points")


def test_a_rising_theme_is_raised_and_a_falling_one_lowered() -> None:
    items = themed("rising", 12) + themed("falling", 12) + themed("steady", 12)
    items += themed("filler", 164, severity="low")
    months = {}
    for n, entry in enumerate(items):
        key, number = entry["theme"], int(entry["feedback_id"].rsplit("-", 1)[1])
        recent = {
            "rising": number >= 3,  # 9 of 12 in the last month
            "falling": number >= 11,  # 1 of 12 in the last month
            "steady": number % 4 == 0,  # 3 of 12, like the filler
        }.get(key, n % 4 == 0)
        months[entry["feedback_id"]] = {
            "created_at": "2024-06-1" + str(n % 9) if recent else f"2024-0{1 + n % 5}-03",
            "channel": "email",
        }
    months["filler-0"] = {"created_at": "not a date"}  # ignored
    summary = summarize_analysis(items, row_metadata=months)
    by_key = {g["key"]: g for g in summary["pain_points"]}
    assert by_key["rising"]["trend"]["direction"] == "rising"
    assert by_key["rising"]["trend"]["period"] == "2024-06"
    assert by_key["falling"]["trend"]["direction"] == "falling"
    assert by_key["steady"]["trend"]["direction"] == "steady"
    # 12 of 200 rows: 6% reach (+1), medium (+0); the trend decides
    assert by_key["rising"]["priority"] == "P2"
    assert by_key["steady"]["priority"] == "P3"
    assert by_key["falling"]["priority"] == "P3"
    assert "trend +1 (rising" in by_key["rising"]["priority_reason"]
    assert "trend -1 (falling" in by_key["falling"]["priority_reason"]
    plain = summarize_analysis(items)
    assert all(g["trend"] is None for g in plain["pain_points"])
    assert {g["key"] for g in plain["pain_points"]} == set(by_key)
    assert plain["other_groups"] == summary["other_groups"]


def test_lenient_dates() -> None:
    from datetime import date

    from runlens_feedback.trend import date_column, parse_date

    assert parse_date("2024-05-03") == date(2024, 5, 3)
    assert parse_date("2024-05-03T10:00:00Z") == date(2024, 5, 3)
    assert parse_date("2024/05/03") == date(2024, 5, 3)
    assert parse_date("2024年5月3日") == date(2024, 5, 3)
    assert parse_date("05/03/2024") == date(2024, 5, 3)
    assert parse_date(1714694400) == date(2024, 5, 3)
    assert parse_date("1714694400000") == date(2024, 5, 3)
    for junk in ("", "soon", "2024-13-45", None, "12"):
        assert parse_date(junk) is None
    assert date_column({"a": {"channel": "x", "Created_At": "2024-01-01"}}) == "Created_At"
    assert date_column({"a": {"channel": "x", "review_date": "2024-01-01"}}) == "review_date"
    assert date_column({"a": {"channel": "x"}}) is None


def test_representative_order_is_severity_then_strength_then_input_order() -> None:
    """The order against its definition, on items with every kind of severity and score
    (unknown, missing, not text, ints, bools, ties)."""
    from runlens_feedback.aggregate import representative_order
    from runlens_feedback.priority import severity_rank

    def score(item: dict[str, Any]) -> float:
        value = item.get("sentiment_score", 0.0)
        return float(value) if isinstance(value, int | float) else 0.0

    rng = random.Random(28)
    severities = ["low", "medium", "high", "critical", "urgent", None, 3, ["high"], "HIGH"]
    scores = [0.0, 1.5, -1.5, 2, -3, True, "2.0", None, 0.25, -0.25]
    for _ in range(300):
        items: list[dict[str, Any]] = []
        for number in range(rng.randrange(30)):
            item: dict[str, Any] = {"feedback_id": f"r{number}"}
            if rng.random() < 0.9:
                item["severity"] = rng.choice(severities)
            if rng.random() < 0.9:
                item["sentiment_score"] = rng.choice(scores)
            items.append(item)
        expected = [
            item
            for _, item in sorted(
                enumerate(items),
                key=lambda pair: (-severity_rank(pair[1]), -abs(score(pair[1])), pair[0]),
            )
        ]
        assert [i["feedback_id"] for i in representative_order(items)] == [
            i["feedback_id"] for i in expected
        ]


def test_a_summary_from_groups_counted_beforehand_is_the_same_summary() -> None:
    items = model_items(3_000) + model_items(500, seed=2, themes=False)
    items[7] = {**items[7], "severity": None, "sentiment": 3}  # values that are no text
    groups = group_items(items)
    counted = {group: group_rows(members) for group, members in groups.items()}
    assert summarize_analysis(items, groups=groups, counted=counted) == summarize_analysis(items)
    for group, members in groups.items():
        problems, sentiment, severity = counted[group]
        assert problems == actionable_items(members)
        assert sentiment == value_counts(members, "sentiment")
        assert severity == value_counts(problems, "severity")
