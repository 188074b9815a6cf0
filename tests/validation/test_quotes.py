"""The one quote check: verbatim in NFC, strong enough, whole words in spaced scripts; and,
through the Markdown validator, that any word-aligned fragment of a row cited in the declared
form passes while any one-character change to it fails."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from runlens.contracts import ArtifactContract, MarkdownCitations, QuoteRules
from runlens.evidence import QuoteSpan, build_evidence_index
from runlens.validation import ValidationReport, validate_workspace
from runlens.validation.quotes import (
    LONGEST_WORD,
    RejectedQuote,
    _splits_between,
    judge_quote,
    show,
    splits_word,
)

RULES = QuoteRules()
FB_001 = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
EXPORT = "Exporting the monthly revenue report to Excel takes forever, sometimes over five minutes."


def judged(quote: str, row: str, rules: QuoteRules = RULES) -> QuoteSpan | RejectedQuote:
    return judge_quote(quote, row, rules, row_id="fb_001")


def rejected(quote: str, row: str, rules: QuoteRules = RULES) -> RejectedQuote:
    verdict = judged(quote, row, rules)
    assert isinstance(verdict, RejectedQuote), verdict
    return verdict


# -- verbatim ---------------------------------------------------------------------------------


def test_a_verbatim_fragment_is_located_in_the_nfc_row() -> None:
    assert judged("等三分钟很影响效率", FB_001) == QuoteSpan(20, 29)
    start = EXPORT.index("takes forever")
    assert judged("takes forever", EXPORT) == QuoteSpan(start, start + 13)


def test_both_sides_compare_in_nfc_and_offsets_count_nfc_characters() -> None:
    row = unicodedata.normalize("NFD", "Le café est froid, vraiment")
    assert judged("café est froid", row) == QuoteSpan(3, 17)
    assert judged(unicodedata.normalize("NFD", "café"), "Un café") == QuoteSpan(3, 7)


def test_whitespace_around_a_quote_is_not_part_of_it() -> None:
    start = EXPORT.index("takes forever")
    assert judged("  takes forever \n", EXPORT) == QuoteSpan(start, start + 13)


def test_a_paraphrase_is_a_mismatch() -> None:
    verdict = rejected("export is really slow", EXPORT)
    assert verdict.code == "evidence_text_mismatch"
    assert verdict.reason == "is not a verbatim fragment of fb_001"
    assert verdict.accepted is None


@pytest.mark.parametrize("quote", ["", " ", " \n\t"])
def test_an_empty_quote_is_empty_evidence(quote: str) -> None:
    assert rejected(quote, EXPORT).code == "empty_evidence_text"


# -- strength ---------------------------------------------------------------------------------


def test_a_one_character_quote_is_weak_and_says_how_long_one_must_be() -> None:
    verdict = rejected("了", FB_001)
    assert verdict.code == "weak_evidence_quote"
    assert "at least 2 characters" in verdict.reason
    assert verdict.accepted is None  # a Chinese character is not part of a spaced word


@pytest.mark.parametrize("quote", [",", "，", "…"])
def test_a_lone_punctuation_mark_is_weak(quote: str) -> None:
    assert rejected(quote, f"等一下{quote}好吗…，, ok").code == "weak_evidence_quote"


def test_a_quote_without_letter_or_digit_is_weak_whatever_its_length() -> None:
    assert isinstance(judged("，我", "等一下，我们"), QuoteSpan)  # a letter: evidence
    verdict = rejected("?!", "Why?! Really", QuoteRules(min_length=1))
    assert verdict.code == "weak_evidence_quote"
    assert "has no letter or digit" in verdict.reason


def test_a_short_quote_is_accepted_when_it_is_the_whole_row() -> None:
    assert judged("好", " 好 ") == QuoteSpan(1, 2)
    assert judged(",", ",") == QuoteSpan(0, 1)


def test_the_minimum_length_is_the_contracts() -> None:
    rules = QuoteRules(min_length=12)
    verdict = rejected("takes", EXPORT, rules)
    assert "shorter than the minimum of 12" in verdict.reason
    assert "at least 12 characters" in verdict.reason
    assert isinstance(judged("takes forever", EXPORT, rules), QuoteSpan)


def test_a_short_cut_word_names_the_whole_word_when_that_is_strong() -> None:
    verdict = rejected("E", "Export fails")
    assert verdict.accepted == "Export"
    assert "“Export”" in verdict.reason


# -- whole words ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "edges", "accepted"),
    [
        ("xporting the monthly", "starts", "Exporting the monthly"),
        ("the monthly reve", "ends", "the monthly revenue"),
        ("onthly reve", "starts and ends", "monthly revenue"),
    ],
)
def test_a_latin_quote_may_not_cut_a_word(quote: str, edges: str, accepted: str) -> None:
    verdict = rejected(quote, EXPORT)
    assert verdict.code == "weak_evidence_quote"
    assert verdict.reason.startswith(f"{edges} inside a word of fb_001: quote whole words")
    assert verdict.accepted == accepted
    assert f"“{accepted}”" in verdict.reason
    assert verdict.details() == {"accepted": accepted}
    assert isinstance(judged(accepted, EXPORT), QuoteSpan)


@pytest.mark.parametrize(
    ("quote", "row"),
    [
        ("ортирует медленно", "Экспортирует медленно"),  # Cyrillic
        ("αργή", "Η εξαγωγή είναι αργήηη"),  # Greek
        ("00 rows", "It took 100 rows to fail"),  # digits continue a word
    ],
)
def test_other_spaced_scripts_and_numbers_keep_whole_words(quote: str, row: str) -> None:
    assert rejected(quote, row).code == "weak_evidence_quote"


@pytest.mark.parametrize(
    ("quote", "row"),
    [
        ("周报太", FB_001),  # Chinese
        ("ログインでき", "毎朝ログインできない"),  # Japanese
        ("보내기가", "내보내기가 느려요"),  # Hangul
        ("ช้ามาก", "ส่งออกช้ามาก"),  # Thai
        ("3分钟", "每次等3分钟"),  # a digit next to a Chinese character
        ("fails", "导出fails了"),  # a Latin word next to Chinese
    ],
)
def test_scripts_without_spaces_have_no_word_edges(quote: str, row: str) -> None:
    assert isinstance(judged(quote, row), QuoteSpan)


def test_any_occurrence_of_the_quote_may_be_the_whole_word_one() -> None:
    row = "We concatenate logs, and the cat sat there"
    assert judged("cat", row) == QuoteSpan(row.index(" cat ") + 1, row.index(" cat ") + 4)
    assert rejected("cat", "We concatenate logs").accepted == "concatenate"


def test_whole_words_can_be_switched_off() -> None:
    assert isinstance(judged("xporting", EXPORT, QuoteRules(whole_words=False)), QuoteSpan)


def test_punctuation_ends_a_word() -> None:
    assert isinstance(
        judged('Login fails with "invalid token"', 'Login fails with "invalid token" now'),
        QuoteSpan,
    )
    assert isinstance(judged("sometimes over five minutes.", EXPORT), QuoteSpan)


def test_splits_word_is_the_rule_writers_cut_by() -> None:
    assert splits_word("Export", 2)
    assert not splits_word("Export fails", 6)
    assert not splits_word("导出周报", 2)
    assert not splits_word("Export", 0) and not splits_word("Export", 6)


def test_messages_show_the_edges_of_a_long_quote() -> None:
    shown = show("word " * 30 + "the end")
    assert shown.startswith("“word word") and shown.endswith("the end”")
    assert " … " in shown and len(shown) < 70


# -- properties, through the Markdown validator -------------------------------------------------

ROW_ID = "r1"
CONTRACT = ArtifactContract(
    name="report.md", citations=MarkdownCitations(evidence_sections=("## Evidence",))
)
MARKS = CONTRACT.citations.quote_marks if CONTRACT.citations else ()
#: Words of several scripts, separators and Markdown-special characters.
WORDS = st.sampled_from(
    ["export", "Login", "fails", "café", "ÉTÉ", "100", "3.5", "медленно", "αργή", "导出", "周报",
     "太慢了", "ログイン", "*bold*", "_x_", "[link](u)", "`code`", "<b>", "&amp;", "a\\b", "#1",
     "|", "~~s~~", "“q”", '"q"', "「q」", "—", "fb_2"]
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", "  ", ", ", ". ", "，", "。", "", " - "])


@st.composite
def rows(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(WORDS, SEPARATORS), min_size=1, max_size=12))
    return unicodedata.normalize("NFC", "".join(word + sep for word, sep in parts)).strip()


@st.composite
def strong_fragments(draw: st.DrawFn) -> tuple[str, str]:
    """A row and a fragment of it that starts and ends between words."""
    row = draw(rows())
    cuts = [n for n in range(len(row) + 1) if not splits_word(row, n)]
    start = draw(st.sampled_from(cuts))
    end = draw(st.sampled_from([n for n in cuts if n > start] or [len(row)]))
    fragment = row[start:end].strip()
    assume(len(fragment) >= 2 and any(unicodedata.category(c)[0] in "LN" for c in fragment))
    return row, fragment


def escaped(quote: str) -> str:
    """Every ASCII punctuation character backslash-escaped, as CommonMark allows."""
    return "".join(f"\\{c}" if c.isascii() and not c.isalnum() and c != " " else c for c in quote)


def cite(quote: str) -> str | None:
    """The quote cited in the declared form, or None when every closing mark occurs in it."""
    marks = next(((o, c) for o, c in MARKS if c not in quote), None)
    if marks is None:
        return None
    return f"> {marks[0]}{escaped(quote)}{marks[1]} — {ROW_ID}"


def validate_citation(row: str, citation: str) -> ValidationReport:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "input").mkdir()
        csv_path = workspace / "input" / "rows.csv"
        quoted = row.replace('"', '""')
        csv_path.write_text(f'id,text\n{ROW_ID},"{quoted}"\n', encoding="utf-8")
        index = build_evidence_index(csv_path, id_column="id", text_column="text")
        sha = index.write(workspace / "runtime" / "evidence_index.json")
        (workspace / "report.md").write_text(f"## Evidence\n\n{citation}\n", encoding="utf-8")
        return validate_workspace(workspace, [CONTRACT], expected_index_sha256=sha)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(strong_fragments())
def test_any_strong_verbatim_fragment_cited_in_the_declared_form_passes(
    case: tuple[str, str],
) -> None:
    row, fragment = case
    citation = cite(fragment)
    assume(citation is not None)
    assert citation is not None
    report = validate_citation(row, citation)
    assert report.passed, (citation, report.error_message)
    assert [q.row_id for q in report.quotes] == [ROW_ID]


@st.composite
def changed_fragments(draw: st.DrawFn) -> tuple[str, str]:
    """A row and a one-character change of a strong fragment that is no fragment of it."""
    row, fragment = draw(strong_fragments())
    position = draw(st.integers(min_value=0, max_value=len(fragment)))
    char = draw(st.sampled_from('xé导. *1”」"'))
    change = draw(st.sampled_from(["substitute", "insert", "delete"]))
    if change == "insert":
        changed = fragment[:position] + char + fragment[position:]
    elif change == "substitute":
        changed = fragment[:position] + char + fragment[position + 1 :]
    else:
        changed = fragment[:position] + fragment[position + 1 :]
    assume(unicodedata.normalize("NFC", changed).strip() not in row)
    return row, changed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(changed_fragments())
def test_any_one_character_change_to_a_cited_fragment_fails(case: tuple[str, str]) -> None:
    row, changed = case
    citation = cite(changed)
    assume(citation is not None)
    assert citation is not None
    report = validate_citation(row, citation)
    assert not report.passed, citation
    assert report.artifacts == {"report.md": "rejected"}
    codes = {finding.code for finding in report.findings}
    assert codes <= {"evidence_text_mismatch", "empty_evidence_text", "unsourced_quote"}


def test_splits_word_between_ascii_characters_is_the_general_rule() -> None:
    """The shortcut for two ASCII characters against the rule for any two: every pair of
    ASCII characters, inside short words and inside a run longer than any word."""
    long_run = "a" * LONGEST_WORD
    for left in map(chr, range(128)):
        for right in map(chr, range(128)):
            for text, offset in (
                (f"{left}{right}", 1),
                (f"x{left}{right}y", 2),
                (f"é{left}{right}\u0301", 2),
                (f"{long_run}{left}{right}", LONGEST_WORD + 1),
            ):
                expected = _splits_between(text, offset, left, right)
                assert splits_word(text, offset) == expected, (text, offset)
