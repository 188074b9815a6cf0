"""`as_read`: a cell as the Markdown parser reads it, shared by the citation parse and the
quote judge, with offsets that map back to the row as written."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_core.normalize import normalize
from tests.hostile import texts_with_controls

from runlens.contracts import QuoteRules
from runlens.evidence import QuoteSpan
from runlens.validation import MarkdownCitationValidator, as_read, read_markdown
from runlens.validation.quotes import RejectedQuote, judge_quote
from runlens.validation.rendered import text_blocks
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.report import report_from_summary
from runlens_feedback.contracts import REPORT, REPORT_CONTRACT

#: Any code point a cell can hold, control characters included (no surrogates: no file
#: encodes them).
_ANY = st.characters(exclude_categories=["Cs"])


def markdown_it_reads(text: str) -> str:
    state = StateCore(text, MarkdownIt("commonmark"), {})
    normalize(state)
    return state.src


@given(st.text(_ANY, max_size=200))
def test_as_read_is_what_markdown_it_reads(text: str) -> None:
    read = as_read(text)
    assert read.text == read_markdown(text) == markdown_it_reads(text)
    assert read.written(0) == 0 and read.written(len(read.text)) == len(text)
    for offset, char in enumerate(read.text):
        written = text[read.written(offset) :]
        assert written.startswith(char) or (char, written[:1]) in {
            ("\n", "\r"),
            ("\ufffd", "\0"),
        }


@settings(max_examples=300, deadline=None)
@given(cell=texts_with_controls())
def test_the_analysts_quote_of_any_cell_passes_where_the_row_is_written(cell: str) -> None:
    item = {
        "feedback_id": "c1",
        "sentiment": "negative",
        "severity": "high",
        "pain_point": "slow",
        "theme": "performance",
        "evidence_text": cell,
    }
    report = report_from_summary(summarize_analysis([item], source="c.csv"), {"items": []})
    grammar = MarkdownCitationValidator([REPORT_CONTRACT]).grammars[REPORT]
    cited = [
        quotation
        for block in text_blocks(report)
        for quotation, row_id, _ in grammar.quotations(block.text, {"c1": "c1"}.get)
        if row_id == "c1"
    ]
    if not cited:
        return  # no line of the cell is strong enough to quote (aggregate.example_quote)
    (quotation,) = cited
    verdict = judge_quote(quotation.quote, cell, grammar.rules, row_id="c1", as_markdown=True)
    assert isinstance(verdict, QuoteSpan), verdict
    row = unicodedata.normalize("NFC", cell)
    quoted = unicodedata.normalize("NFC", quotation.quote).strip()
    assert read_markdown(row[verdict.start : verdict.end]) == quoted


def test_a_nul_quote_is_judged_as_read_and_placed_as_written() -> None:
    row = "ok\r\nthe app is so slow\0 and it crashes"
    quote = "the app is so slow\ufffd and it crashes"
    rules = QuoteRules()
    verdict = judge_quote(quote, row, rules, row_id="c1", as_markdown=True)
    assert verdict == QuoteSpan(4, len(row))
    # Outside Markdown (a JSON quote), the row is compared as written.
    rejected = judge_quote(quote, row, rules, row_id="c1")
    assert isinstance(rejected, RejectedQuote) and rejected.code == "evidence_text_mismatch"
    assert judge_quote("slow\0 and", row, rules, row_id="c1") == QuoteSpan(18, 27)
