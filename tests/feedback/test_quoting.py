"""The report's quotes: one line of the row's evidence, verbatim, cut where the quote check
allows (`runlens.cut_quote`, tested in tests/validation/test_cuts.py), the cut marked outside
the quotation marks."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from runlens_feedback.aggregate import QUOTE_CHARS, example_quote, summarize_analysis
from runlens_feedback.analyst.report import report_from_summary

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
    lines = [line for line in report.splitlines() if line.startswith("> ") and "q1" in line]
    if example_quote(text) is None:  # no line of it is strong enough to quote on its own
        assert lines == []
        return
    (line,) = lines
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
