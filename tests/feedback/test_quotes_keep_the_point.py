"""Report quotes keep their point, trend words agree with their figures, titles name the
problem: what a product manager reads must not mislead."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from tests.hostile import texts

from runlens_feedback.aggregate import QUOTE_CHARS, cut_from_row, priority_for, summarize_analysis
from runlens_feedback.analyst import analyze_rows, backlog_from_summary, report_from_summary
from runlens_feedback.analyst.backlog import build_backlog
from runlens_feedback.analyst.document import parse
from runlens_feedback.analyst.evidence import pick_evidence
from runlens_feedback.trend import Periods, theme_trend


class Rows:
    """Row texts by id, as the Evidence Index gives them."""

    def __init__(self, rows: dict[str, str]) -> None:
        self.rows = rows

    def text(self, row_id: str) -> str:
        return self.rows[row_id]


# -- the quote of a row ----------------------------------------------------------------------


def test_a_short_sentence_is_quoted_whole_with_what_the_complaint_is_about() -> None:
    text = "报表分享链接没有过期时间设置，担心数据泄露。"
    assert pick_evidence(parse(text), "") == "报表分享链接没有过期时间设置，担心数据泄露"
    text = "价格比同类产品贵不少，而且按席位收费，小团队很吃亏。客服态度还不错。"
    assert pick_evidence(parse(text), "") == "价格比同类产品贵不少，而且按席位收费，小团队很吃亏"


def test_negation_stays_inside_the_quote() -> None:
    text = "I waited all week. The support team did not answer, and the refund never came."
    quote = pick_evidence(parse(text), "")
    assert "did not answer" in quote and "refund never came" in quote


def test_a_long_sentence_is_widened_within_the_limit_earlier_clauses_first() -> None:
    text = (
        "After the last update of the mobile app on my phone, the sync of my notes, "
        "which used to take seconds, now fails every single time I open it at work."
    )
    quote = pick_evidence(parse(text), "")
    assert quote in text and len(quote) <= QUOTE_CHARS
    assert "fails every single time" in quote
    assert len(quote) > len("now fails every single time I open it at work")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts())
def test_every_quote_is_verbatim_and_every_cut_is_marked(text: str) -> None:
    items = analyze_rows([{"feedback_id": "r1", "text": text}])
    evidence = items[0]["evidence_text"]
    assert evidence in text
    summary = summarize_analysis(items, row_texts=Rows({"r1": text}))
    examples = [e for g in summary["pain_points"] for e in g["examples"]]
    examples += summary["positive"]["examples"]
    for example in examples:
        quote = example["evidence_text"]
        at = text.find(quote)
        assert at >= 0
        before, after = text[:at], text[at + len(quote) :]
        if any(char.isalnum() for char in before):
            assert example.get("cut_start"), (text, quote)
        if any(char.isalnum() for char in after):
            assert example["shortened"], (text, quote)


def test_the_report_marks_a_quote_cut_from_its_row() -> None:
    rows = {
        "a1": "Crash on export again. This is the third time this week and my manager is upset.",
        "a2": "The export crashes.",
    }
    items = analyze_rows([{"feedback_id": k, "text": v} for k, v in rows.items()])
    summary = summarize_analysis(items, row_texts=Rows(rows))
    report = report_from_summary(summary, backlog_from_summary(summary))
    lines = {line for line in report.splitlines() if line.startswith("> ")}
    (cut,) = [line for line in lines if "a1" in line]
    assert "” …" in cut  # the row goes on after the quoted sentence
    (whole,) = [line for line in lines if "a2" in line]
    assert "…" not in whole


def test_cut_from_row_reads_letters_not_punctuation() -> None:
    assert cut_from_row("太慢了", "导出太慢了。") == (True, False)
    assert cut_from_row("导出太慢了", "导出太慢了！！") == (False, False)
    assert cut_from_row("Slow", "Slow :) 😀") == (False, False)
    assert cut_from_row("not in the row", "Slow") == (False, False)


# -- trend words -----------------------------------------------------------------------------


def split(recent: int, before: int) -> Periods:
    flags = {f"r{n}": True for n in range(recent)} | {f"b{n}": False for n in range(before)}
    return Periods("2026-06", flags, recent, before)


def test_a_big_change_from_two_rows_is_too_few_to_tell_not_steady() -> None:
    periods = split(15, 74)
    trend = theme_trend(["r0", "r1", "b0", "b1"], periods)
    assert trend is not None and trend.direction == "too_few"
    assert (trend.recent_share, trend.before_share) == (Fraction(2, 15), Fraction(2, 74))
    reason = priority_for({"medium": 4}, 4, 89, trend)[1]
    assert "trend +0 (too few rows to tell: 2 in 2026-06, 13.3% vs 2.7% before)" in reason
    assert "steady" not in reason
    steady = theme_trend(["r0", "b0", "b1", "b2", "b3", "b4"], periods)
    assert steady is not None and steady.direction == "steady"  # 6.7% vs 6.8%
    falling = theme_trend(["b0", "b1", "b2"], periods)
    assert falling is not None and falling.direction == "falling"


def test_the_chinese_backlog_says_too_few_rows() -> None:
    periods = split(15, 74)
    trend = theme_trend(["r0", "r1", "b0", "b1"], periods)
    assert trend is not None
    summary: dict[str, Any] = {
        "analysed_rows": 89,
        "languages": {"zh": 89},
        "pain_points": [
            {
                "key": "billing",
                "grouped_by": "theme",
                "pain_point": "扣费",
                "problem_rows": 4,
                "trend": trend.as_dict(),
                "sentiment": {"negative": 4},
                "problem_severity": {"critical": 2, "medium": 2},
                "feedback_ids": ["r0", "r1", "b0", "b1"],
                "examples": [],
            }
        ],
    }
    (entry,) = backlog_from_summary(summary)["items"]
    too_few = "趋势 +0（条数太少，无法判断：2026-06 有 2 条，占 13.3%，此前为 2.7%）"
    assert too_few in entry["rationale"]
    assert "平稳" not in entry["rationale"]


# -- titles ----------------------------------------------------------------------------------


def negative(row_id: str, theme: str, text: str, severity: str = "high") -> dict[str, Any]:
    return {
        "feedback_id": row_id,
        "theme": theme,
        "sentiment": "negative",
        "severity": severity,
        "evidence_text": text,
        "language": "en",
    }


def test_a_title_names_the_problem_in_the_customers_words() -> None:
    items = [
        negative("e1", "weekly_·_export", "The weekly export takes ten minutes"),
        negative("e2", "weekly_·_export", "Exports time out", "medium"),
        negative("e3", "weekly_·_export", "Export is slow", "medium"),
    ]
    (entry,) = build_backlog(items)["items"]
    assert entry["title"] == "Fix Weekly · export: The weekly export takes ten minutes"


def test_a_quote_a_title_cannot_hold_leaves_the_action_alone() -> None:
    items = [
        negative("e1", "errors", 'The report says "server busy" and fails'),
        negative("e2", "errors", "It shows *** and fails", "medium"),
    ]
    (entry,) = build_backlog(items)["items"]
    assert entry["title"] == "Errors: fix the complaints"


def test_a_long_problem_is_cut_at_a_word_with_an_ellipsis() -> None:
    text = "The dashboard freezes " + "whenever I switch between the regional views " * 3
    (entry,) = build_backlog([negative("e1", "dashboard", text.strip())])["items"]
    problem = entry["title"].split(": ", 1)[1]
    assert problem.endswith("…")
    assert text.startswith(problem[:-1])
    assert len(problem) <= 61
