"""Short quotes: verbatim, cut at a clause or between words, the cut marked outside the
quotation marks."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from runlens.validation.quotes import splits_word
from runlens_feedback.aggregate import QUOTE_CHARS, summarize_analysis
from runlens_feedback.analyst.report import report_from_summary
from runlens_feedback.quoting import short_quote

#: Words, Chinese clauses, punctuation and spaces, so cuts land everywhere.
_PIECES = st.sampled_from(
    [
        "export", "is", "so", "slow", "we", "lost", "two", "days", "of", "pipeline", "data",
        "déjà", "vu", "Ünïcode", "3.5", "v1.2", "09:30", "导出周报太慢了", "每次都要等三分钟",
        "登录", "失败", "e\u0301", "Nai\u0308ve", "sync", "—", "“quoted”", "(note)",
    ]
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", " ", ", ", ". ", "; ", "，", "。", "！", "？", "；", "", "\n"])


@st.composite
def feedback_texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.tuples(_PIECES, _GLUE), min_size=1, max_size=40))
    return "".join(piece + glue for piece, glue in words)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(feedback_texts(), st.text(max_size=200)), limit=st.integers(5, 120))
@example(text="The Salesforce connector stopped syncing and we lost two days of data.", limit=40)
def test_a_short_quote_is_verbatim_and_never_cuts_a_word(text: str, limit: int) -> None:
    quote = short_quote(text, limit)
    stripped = text.strip()
    assert nfc(quote) in nfc(stripped)  # a verbatim fragment, as the evidence check compares
    assert stripped.startswith(quote)  # a prefix: nothing left out in its middle
    if quote != stripped:
        assert quote, "a text longer than the limit still gets a quote"
        assert not splits_word(stripped, len(quote)), "never ends inside a spaced word"
        if len(quote) > limit:  # only when a single word is longer than the limit
            assert not any(char.isspace() for char in quote)
    else:
        assert len(stripped) <= limit or not any(c.isspace() for c in stripped)


@settings(max_examples=150, deadline=None)
@given(text=feedback_texts())
def test_the_report_marks_a_cut_outside_the_quotation_marks(text: str) -> None:
    item = {
        "feedback_id": "q1",
        "sentiment": "negative",
        "severity": "high",
        "pain_point": "slow",
        "theme": "performance",
        "evidence_text": text,
    }
    summary = summarize_analysis([item], total_rows=1, source="q.csv")
    report = report_from_summary(summary, {"items": []})
    (line,) = [line for line in report.splitlines() if line.startswith("> ") and "q1" in line]
    match = re.match(r"^> (… )?([“「\"])(.*)([”」\"])( …)? — q1 ", line)
    assert match, line
    opening, quoted, closing = match[2], match[3], match[4]
    assert "…" not in quoted or "…" in text  # the ellipsis is never inside the marks
    shown = re.sub(r"\\(.)", r"\1", quoted)
    assert nfc(shown) in nfc(text)
    example_ = summary["pain_points"][0]["examples"][0]
    if example_["shortened"]:
        assert match[5] == " …", "a cut at the end is marked after the closing mark"
    assert opening != closing or opening == '"'


def test_cuts_prefer_the_end_of_a_clause() -> None:
    text = (
        "Exporting the monthly revenue report to Excel takes forever, sometimes over five minutes."
    )
    assert short_quote(text, 80) == "Exporting the monthly revenue report to Excel takes forever"
    chinese = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
    assert short_quote(chinese, 20) == "导出周报太慢了，我们团队每周五都要导出"
    assert short_quote("导出周报太慢了。" + "很" * 40, 20) == "导出周报太慢了。"  # keeps 。


def test_without_clause_punctuation_english_is_cut_between_words() -> None:
    text = "The connector stopped syncing after the last update and we lost two days of data"
    quote = short_quote(text, 60)
    assert quote == "The connector stopped syncing after the last update and we"
    assert short_quote("一" * 100, 30) == "一" * 30  # Chinese: at a character boundary


def test_numbers_and_versions_are_not_clause_ends() -> None:
    text = "Version 3.5 broke the login flow completely for everyone in our team today"
    assert short_quote(text, 14) == "Version 3.5"
    assert not short_quote(text, 10).endswith("3.")


def test_a_first_word_longer_than_the_limit_is_kept_whole() -> None:
    word = "Unbelievablyslowexportsthatneverfinish"
    assert short_quote(word + " again", 10) == word


def test_leading_pain_points_get_up_to_three_quotes_of_distinct_rows() -> None:
    texts = [
        "Export is slow",
        "Export is slow",
        "export  is SLOW",
        "Export takes an hour",
        "Export hangs",
    ]
    items = [
        {"feedback_id": f"e{n}", "sentiment": "negative", "severity": "high",
         "pain_point": "slow export", "theme": "export", "evidence_text": text}
        for n, text in enumerate(texts)
    ]  # fmt: skip
    items.append({**items[0]})  # the same row twice
    (pain,) = summarize_analysis(items, total_rows=len(items))["pain_points"]
    quoted = [example["evidence_text"] for example in pain["examples"]]
    assert quoted == ["Export is slow", "Export takes an hour", "Export hangs"]
    assert len({example["feedback_id"] for example in pain["examples"]}) == 3
    assert all(len(q) <= QUOTE_CHARS for q in quoted)
