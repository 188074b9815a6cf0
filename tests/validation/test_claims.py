"""No false passes, no false failures: in a document for users every quotation of someone's
words cites a row, in any section, and every claim about the data, written as digits or as
words, in any section, equals a figure; names, terms, measures and ordinary prose numbers
(years, versions, ranks, targets, ranges) are left alone (docs/validation.md).

The fixture's input has 3 rows: 2 negative (66.7%), 1 neutral, 1 high, 1 critical."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.validation.test_markdown_citations import line_of, report_with

from runlens.validation import FigureValidator, ValidationReport
from runlens.validation.claims import is_claim, word_numbers
from runlens.validation.figure_rules import Figure
from runlens.validation.figures import check_figures
from runlens.validation.numbers import stated_numbers
from runlens_feedback.contracts import CONTRACTS, REPORT
from runlens_feedback.figures import FIGURE_RULES

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace

Check = Callable[..., ValidationReport]


@pytest.fixture
def check(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> Check:
    def run(markdown: str, **options: object) -> ValidationReport:
        feedback_workspace.report = markdown
        return validate(
            feedback_workspace.write(), extra=(FigureValidator(FIGURE_RULES),), **options
        )

    return run


def codes(report: ValidationReport) -> list[tuple[str, int]]:
    return [(f.code, f.details["line"]) for f in report.findings if f.artifact == REPORT]


# -- quotations -----------------------------------------------------------------------------


def test_an_invented_quotation_in_the_executive_summary_is_unsourced(check: Check) -> None:
    """The issue's case: it completed with no finding."""
    markdown = report_with(
        Executive_Summary="One customer told us “42% of our seats will churn next month”."
    )
    report = check(markdown)
    line = line_of(markdown, "told us")
    assert codes(report) == [("unsourced_quote", line)]
    assert "in a document for users cites no row" in report.findings[0].message


@pytest.mark.parametrize(
    "prose",
    [
        "The “app is unusable every single morning” complaint dominates.",  # four words
        "Someone said “slow”.",  # a reporting word: someone's words, however short
        "用户表示「太慢」。",
        "The “导出周报太慢了我们团队每周五都要导出” complaint dominates.",  # nine characters
        "They wrote “Crashes. Always.”",  # a sentence inside
    ],
)
def test_someones_words_in_any_section_must_cite_a_row(check: Check, prose: str) -> None:
    markdown = report_with(Recommended_Actions=prose)
    assert codes(check(markdown)) == [("unsourced_quote", line_of(markdown, prose[:8]))]


@pytest.mark.parametrize(
    "prose",
    [
        "Rename the “Export” button to “Export to CSV”.",  # UI labels
        'Support 27" and 32" monitors and 10" tablets.',  # inch marks
        'Search the logs with `grep "invalid token after the update"` first.',  # code
        "```\nmessage = “the login fails after every single update”\n```",  # a code block
        "Users call it “the slow export”; the “导出周报” screen.",  # a name, a term
        "Users say “等三分钟很影响效率” — fb_001.",  # a citation anywhere is checked and fine
    ],
)
def test_names_terms_measures_and_code_are_no_quotations(check: Check, prose: str) -> None:
    assert codes(check(report_with(Recommended_Actions=prose, Risks_And_Unknowns=prose))) == []


def test_a_document_for_developers_keeps_the_evidence_section_rule(check: Check) -> None:
    markdown = report_with(Executive_Summary="One customer told us “we will churn next month”.")
    contracts = [
        c.model_copy(update={"audience": "developer"}) if c.name == REPORT else c for c in CONTRACTS
    ]
    assert codes(check(markdown, contracts=contracts)) == []
    assert codes(check(markdown)) == [("unsourced_quote", line_of(markdown, "told us"))]


def test_a_cited_quotation_outside_the_evidence_section_is_still_checked(check: Check) -> None:
    markdown = report_with(Risks_And_Unknowns="Users say “exports are instant” — fb_001.")
    assert [code for code, _ in codes(check(markdown))] == ["evidence_text_mismatch"]


# -- numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prose", "stated"),
    [
        ("- Only eighty-eight rows were analysed.", "eighty-eight"),
        ("- 12 negative reviews need a reply.", "12"),
        ("- 70% of rows are negative.", "70%"),
        ("- 共八十八条反馈。", "八十八"),
        ("- 百分之三十的用户不满意。", "百分之三十"),
        ("- Twenty percent of users are unhappy.", "Twenty percent"),
        ("- 1 of its 5 problem rows is critical.", "5"),
    ],
)
def test_a_claim_about_the_data_in_any_section_must_equal_a_figure(
    check: Check, prose: str, stated: str
) -> None:
    markdown = report_with(Risks_And_Unknowns=prose)
    report = check(markdown)
    assert codes(report) == [("unsupported_figure", line_of(markdown, prose))]
    assert report.findings[0].details["stated"] == stated


@pytest.mark.parametrize(
    "prose",
    [
        "- Only three rows were analysed; 2 negative reviews, 67% of rows.",
        "- 共三条反馈，其中两条负面。",
        "- 1 of its 1 problem rows is critical (66.7% of rows are negative).",
    ],
)
def test_a_claim_that_equals_a_figure_passes(check: Check, prose: str) -> None:
    assert codes(check(report_with(Risks_And_Unknowns=prose, Recommended_Actions=prose))) == []


#: Prose a product manager writes that is no claim about the data.
ORDINARY_PROSE = """\
1. **P0 — Ship the fix in v2.3** by 2026-03-01, before Q2 2026 (release 3 of the year).
2. Fix the top 3 pain points within 30 days; the first 10 rows of the export show it.
3. Target: below 10% negative, at least 95% of logins under 2 s; cut tickets by 20%.
4. Plan 2–4 sprints for about 90 users, 10-20% of them on version 1.2.3.
5. In 2026 users expect dark mode; 24/7 support; 5 minutes per export; 3 of them.
6. 第3条建议：前3个问题在30天内修复，目标低于10%。
"""


def test_ordinary_prose_numbers_are_no_claims(check: Check) -> None:
    assert codes(check(report_with(Recommended_Actions=ORDINARY_PROSE))) == []


def test_number_words_in_a_figure_section_are_tied_strictly(check: Check) -> None:
    markdown = report_with(Executive_Summary="Eighty-eight rows were analysed.")
    report = check(markdown)
    assert codes(report) == [("figure_mismatch", line_of(markdown, "Eighty-eight"))]
    assert report.findings[0].details["expected"] == "3"


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("eighty-eight rows", ["eighty-eight"]),
        ("one of the rows", []),  # "one" is as often a pronoun
        ("We shipped v2.3 in 2026 to 40 users", ["40"]),
        ("2026 rows", ["2026"]),  # no year without a preposition before it
        ("the top 3 rows, about 90 rows, 90+ rows, 3 to 5 rows", []),
        ("1 of its 1 problem rows", ["1", "1"]),
        ("前3条反馈，第3条，共八十八条", ["八十八"]),
        ("Version 2.3 fixed 12 tickets in 5 minutes", ["12"]),
    ],
)
def test_what_is_a_claim(text: str, claims: list[str]) -> None:
    numbers = sorted([*stated_numbers(text), *word_numbers(text)], key=lambda n: n.start)
    assert [n.text for n in numbers if is_claim(text, n, {"problem"})] == claims


_NUMERAL_PIECES = st.sampled_from(
    [*"零〇一二两三四五六七八九十百千万亿条位人 ", "百分之", "eighty", "-", "one", "hundred",
     "and", "thousand", "million", "zero", "rows", "percent", "%", "1,000", "2026"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_NUMERAL_PIECES, max_size=20).map("".join))
def test_any_run_of_numerals_is_read_without_an_error(text: str) -> None:
    for number in word_numbers(text):
        assert text[number.start : number.end] == number.text
        is_claim(text, number)


def test_a_rows_own_words_outside_the_figure_sections_are_the_customers() -> None:
    """A backlog title that repeats a complaint ("we lost 65 records") is the row's words,
    not a claim of the report; the same number in the report's own words is."""
    row = "The dashboard crashed again and we lost 65 records"
    markdown = (
        "## Recommended Actions\n\n"
        "1. **P0 — Fix the dashboard: we lost 65 records…** (`crash`).\n"
        "2. We lost 65 records in the crash.\n"
        "3. 登录又崩溃了，丢了20条数据。\n"
    )
    figures = [Figure("rows.file", 3, "count", (("rows",),))]
    statements = check_figures(
        markdown,
        ["## Executive Summary"],
        figures,
        elsewhere=True,
        copied=lambda words: words in row or words in "登录又崩溃了，丢了20条数据",
    )
    assert [(s.number.text, s.line, s.verdict) for s in statements] == [("65", 4, "unsupported")]


def test_a_rows_words_after_a_titles_colon_are_the_customers() -> None:
    """A title "Fix <theme>: <a row's words>" whose row says little ("plot 100%"): the two
    words before the number reach into the theme's name, but the clause after the colon is
    the row's own words (two Chinese characters say as much as four Latin letters). Without
    the colon, or in the report's own sentence, the number is the report's claim."""
    rows = ("plot 100% ", "uptime 99% at 10:30 today", "100% 闪退 ")
    markdown = (
        "## Recommended Actions\n\n"
        "1. **P2 — Fix Reliability issues: plot 100%** (`plot`). **Fix 稳定性: 100% 闪退**\n"
        "2. **P2 — Fix Reliability issues plot 100%** (`plot`).\n"
        "3. We measured uptime 99% at 10:30 today.\n"
    )
    figures = [Figure("rows.file", 3, "count", (("rows",),))]
    statements = check_figures(
        markdown,
        ["## Executive Summary"],
        figures,
        elsewhere=True,
        copied=lambda words: any(words in row for row in rows),
    )
    assert [(s.number.text, s.line) for s in statements if s.verdict == "unsupported"] == [
        ("100%", 4),
        ("99%", 5),
    ]
