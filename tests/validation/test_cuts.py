"""Cutting quotes where the quote check allows (`runlens.validation.cuts`): whatever the text,
every quote a cutter writes is one the checker (`judge_quote`) accepts."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.hostile import texts

from runlens.contracts import QuoteRules
from runlens.evidence import QuoteSpan
from runlens.validation.cuts import cut_quote, cut_text, fit_quote, one_line_quote
from runlens.validation.quotes import LONGEST_WORD, is_strong, judge_quote, splits_word

RULES = QuoteRules()
STRICT = QuoteRules(min_length=15)
_CLOSING = ("”", '"', "」")


def accepted(quote: str, row: str, rules: QuoteRules = RULES) -> bool:
    return isinstance(judge_quote(quote, row, rules, row_id="r1"), QuoteSpan)


def _has_word_character(text: str) -> bool:
    return any(unicodedata.category(char)[0] in "LN" for char in text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# -- where a cut may fall --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("e\u0301x", 1),  # between a letter and its accent
        ("❤\ufe0f love", 1),  # between an emoji and its variation selector
        ("👍🏽 ok", 1),  # between an emoji and its skin tone
        ("👨\u200d👩 ok", 1),  # before a zero-width joiner
        ("👨\u200d👩 ok", 2),  # after it
        ("🇨🇳 ok", 1),  # inside a flag
        ("\u1100\u1161 ok", 1),  # between two jamo that make one syllable
        ("export", 3),  # inside a Latin word
    ],
)
def test_a_cut_never_splits_a_character_or_a_spaced_word(text: str, offset: int) -> None:
    assert splits_word(text, offset)


def test_a_letter_after_an_emoji_with_a_selector_starts_a_word() -> None:
    text = "❤\ufe0flove it"
    assert not splits_word(text, 2)  # the selector belongs to the emoji, not to "love"
    assert accepted("love it", text)


def test_a_run_longer_than_any_word_may_be_cut_anywhere() -> None:
    blob = "a" * (LONGEST_WORD + 1)
    assert not splits_word(blob, 50)
    assert splits_word("a" * LONGEST_WORD, 50)
    assert accepted(blob[:40], blob + " tail")


# -- cut_text: a prefix every quote of which is a quote of the text ------------------------


@settings(max_examples=300, deadline=None)
@given(text=texts(), limit=st.integers(1, 3_000))
@example(text="a" * 10_000, limit=2_000)
@example(text="😀" * 3_000 + " ok", limit=2_000)
@example(text="word " * 2_000, limit=2_000)
def test_cut_text_ends_where_a_quote_may_end(text: str, limit: int) -> None:
    prefix = cut_text(text, limit)
    assert text.startswith(prefix)
    if len(text) <= limit:
        assert prefix == text
        return
    assert not splits_word(text, len(prefix))
    assert prefix.strip(), "a long text keeps something to quote"
    if _has_word_character(text):
        assert _has_word_character(prefix), "a letter or digit to quote, when the text has one"
    # Beyond the limit only to finish the first word, or to reach the first letter or digit.
    if len(prefix) > limit:
        head = text[:limit]
        assert splits_word(text, limit) or not _has_word_character(head)


@settings(max_examples=200, deadline=None)
@given(text=texts(), limit=st.integers(50, 2_500), data=st.data())
def test_any_accepted_quote_of_a_cut_text_is_accepted_in_the_text(
    text: str, limit: int, data: st.DataObject
) -> None:
    prefix = cut_text(text, limit)
    start = data.draw(st.integers(0, len(prefix)))
    end = data.draw(st.integers(start, len(prefix)))
    span = fit_quote(prefix, start, end, RULES)
    quote = prefix[slice(*span)]
    if quote == prefix.strip() and prefix != text and not is_strong(quote, RULES):
        return  # the whole of a cut text is no whole row: fit_quote had nothing else
    assert accepted(quote, text), quote


# -- cut_quote: a short quote, preferably a whole clause ------------------------------------


@settings(max_examples=400, deadline=None)
@given(text=texts(), limit=st.integers(1, 160))
@example(text="The Salesforce connector stopped syncing and we lost two days of data.", limit=40)
@example(text="{0", limit=1)
def test_a_short_quote_is_a_verbatim_prefix_cut_where_quotes_may_be_cut(
    text: str, limit: int
) -> None:
    quote = cut_quote(text, limit)
    whole = text.strip()
    assert whole.startswith(quote)
    assert quote == quote.strip()
    assert nfc(quote) in nfc(whole)
    if quote != whole:
        assert quote
        assert not splits_word(whole, len(quote))


def test_cuts_prefer_the_end_of_a_clause() -> None:
    text = (
        "Exporting the monthly revenue report to Excel takes forever, sometimes over five minutes."
    )
    assert cut_quote(text, 80) == "Exporting the monthly revenue report to Excel takes forever"
    chinese = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
    assert cut_quote(chinese, 20) == "导出周报太慢了，我们团队每周五都要导出"
    assert cut_quote("导出周报太慢了。" + "很" * 40, 20) == "导出周报太慢了。"  # keeps 。


def test_without_clause_punctuation_english_is_cut_between_words() -> None:
    text = "The connector stopped syncing after the last update and we lost two days of data"
    assert cut_quote(text, 60) == "The connector stopped syncing after the last update and we"
    assert cut_quote("一" * 100, 30) == "一" * 30  # Chinese: at a character boundary
    assert cut_quote("The Salesforce connector stopped syncing after the last update", 58) == (
        "The Salesforce connector stopped syncing after the last"
    )


def test_numbers_and_versions_are_not_clause_ends() -> None:
    text = "Version 3.5 broke the login flow completely for everyone in our team today"
    assert cut_quote(text, 14) == "Version 3.5"
    assert not cut_quote(text, 10).endswith("3.")


def test_a_first_word_longer_than_the_limit_is_kept_whole() -> None:
    word = "Unbelievablyslowexportsthatneverfinish"
    assert cut_quote(word + " again", 10) == word
    assert cut_quote("Exportfailures" * 3, 10) == "Exportfailures" * 3


def test_a_quote_of_punctuation_goes_on_to_the_first_word() -> None:
    assert cut_quote("{0", 1) == "{0"
    assert cut_quote("!!! " * 30 + "broken", 20).endswith("broken")


# -- fit_quote: the analyst's evidence ------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(text=texts(), data=st.data(), rules=st.sampled_from([RULES, STRICT]))
@example(text="😀 ok", data=None, rules=RULES)
def test_a_fitted_quote_is_always_accepted(
    text: str, data: st.DataObject | None, rules: QuoteRules
) -> None:
    if data is None:
        start, end = 0, 1
    else:
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
    quote = text[slice(*fit_quote(text, start, end, rules))]
    assert accepted(quote, text, rules), (quote, text)


def test_a_fitted_quote_contains_what_it_was_asked_for() -> None:
    text = "The export is slow. 😀 It crashes too."
    start = text.index("xport")
    quote = text[slice(*fit_quote(text, start, start + 8, RULES))]
    assert quote == "export is"
    emoji = text.index("😀")
    assert text[slice(*fit_quote(text, emoji, emoji + 1, RULES))] == "😀 It"


# -- one_line_quote: a Markdown citation's line ---------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=texts())
def test_a_one_line_quote_is_accepted_and_on_one_line(text: str) -> None:
    span = one_line_quote(text, RULES, avoid=_CLOSING)
    if span is None:
        strong = [line for line in text.splitlines() if is_strong(line.strip(), RULES)]
        assert all(any(mark in line for mark in _CLOSING) for line in strong)
        return
    quote = text[slice(*span)]
    assert len(quote.splitlines()) == 1
    assert not any(mark in quote for mark in _CLOSING)
    assert accepted(quote, text), quote


def test_the_longest_line_is_quoted() -> None:
    text = "ok\nThe export never finishes\n是"
    assert one_line_quote(text, RULES) == (3, 3 + len("The export never finishes"))
    assert one_line_quote("a\nb", RULES) is None  # no line is strong on its own
