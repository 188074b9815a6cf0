"""summarize_analysis: exact counts, grouping, verbatim quotes, and a size that does not grow
with the input."""

from __future__ import annotations

import json
import random
import unicodedata
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from runlens.validation.quotes import splits_word
from runlens_feedback.aggregate import (
    EVIDENCE_IDS,
    EXAMPLES,
    FAILURE_LINES,
    QUOTE_CHARS,
    TOP_GROUPS,
    short_quote,
    summarize_analysis,
)

SENTIMENTS = ("positive", "neutral", "negative", "mixed")
SEVERITIES = ("low", "medium", "high", "critical")


def model_items(count: int, *, seed: int = 1, themes: bool = True) -> list[dict]:
    """Items as a model might submit them: many themes or wordings, long quotes."""
    rng = random.Random(seed)
    items = []
    for number in range(count):
        area = rng.randrange(400)
        item = {
            "feedback_id": f"row-{number:06d}",
            "sentiment": rng.choice(SENTIMENTS),
            "severity": rng.choice(SEVERITIES),
            "pain_point": f"Problem number {area} with the {rng.choice(['app', 'site'])}",
            "evidence_text": "很慢 " * rng.randrange(1, 200) + f"case {number}",
            "suggested_action": f"Fix area {area} " + "x" * rng.randrange(300),
        }
        if themes:
            item["theme"] = f"area_{area}"
        items.append(item)
    return items


def size(summary: dict) -> int:
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
    assert summary["groups"] == len({i["theme"] for i in items})
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
        assert size(summary) < 10_000
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
    assert [(g["key"], g["priority"]) for g in summary["pain_points"]] == [
        ("tiny", "P0"),
        ("big", "P2"),
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=300), st.integers(min_value=1, max_value=120))
def test_short_quotes_are_verbatim_prefixes_cut_between_words(text: str, limit: int) -> None:
    quote = short_quote(text, limit)
    whole = text.strip()
    assert quote == quote.strip()
    assert whole.startswith(quote)
    assert not splits_word(whole, len(quote))
    # Longer than the limit only when a word runs across it: the word is kept whole.
    assert len(quote) <= limit or splits_word(whole, limit)


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
