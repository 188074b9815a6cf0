"""When a quote is evidence: the one quote check of every validator that checks quotes.

A quote is evidence of a row when it is a verbatim fragment of the row's text and too strong
to be a coincidence. Verbatim: both sides in Unicode NFC, the whitespace around the quote not
part of it, everything inside it exactly as in the row. Strong (`QuoteRules`): at least
`min_length` characters and at least one letter or digit (`","`, `"…"` or `"了"` occur in
almost any row, so they prove nothing), unless the quote is the row's whole text; and with
`whole_words`, a quote neither starts nor ends inside a word of a script that puts spaces
between words (Latin, Cyrillic, Greek, ...: "xport is slo" is a cut, not a quote), nor inside a
character (between a letter and its accents, inside an emoji and its modifiers, between two
Hangul jamo that make one syllable). Scripts that write words without spaces (Chinese,
Japanese, Korean as the contract rules read it, Thai, Lao, Khmer, Myanmar) have no word edges
to respect. A run of more than `LONGEST_WORD` letters and digits is no word of any language
(a hash, a blob, one letter held down): it may be cut anywhere.

`splits_word` is that rule, and the one place it lives: the writers of quotes
(`runlens.validation.cuts`) cut only where it allows, so what RunLens writes it accepts.

A quote may occur in its row more than once; it is accepted when any occurrence is. A rejected
quote says why and, where one can be named, which quote would have been accepted, so a model
repairing its deliverable knows exactly what to write.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from runlens.contracts import QuoteRules
from runlens.evidence import QuoteSpan
from runlens.validation.findings import FindingCode
from runlens.validation.reading import as_read, read_markdown

#: Unicode character-name prefixes of the scripts that write words without spaces between them.
_UNSPACED_SCRIPTS = (
    "CJK ",
    "IDEOGRAPHIC ",
    "HIRAGANA ",
    "KATAKANA",  # also KATAKANA-HIRAGANA PROLONGED SOUND MARK
    "HALFWIDTH KATAKANA ",
    "HANGUL ",
    "HALFWIDTH HANGUL ",
    "BOPOMOFO ",
    "THAI ",
    "LAO ",
    "KHMER ",
    "MYANMAR ",
    "TANGUT ",
    "YI ",
)
#: How much of a quote a message shows.
SHOWN_CHARS = 60


@dataclass(frozen=True)
class RejectedQuote:
    """Why a quote is not evidence.

    `reason` completes a sentence whose subject is the quote ("... is not a verbatim fragment
    of fb_001"); `accepted` is a quote of the same row that would have been accepted, when one
    can be named (the quote extended to whole words).
    """

    code: FindingCode
    head: str  # the summary line's phrase for this kind of rejection
    reason: str
    accepted: str | None = None

    def details(self) -> dict[str, Any]:
        """What a finding's `details` add for this rejection."""
        return {} if self.accepted is None else {"accepted": self.accepted}


#: An empty or whitespace-only quote, whatever the row.
EMPTY_QUOTE = RejectedQuote("empty_evidence_text", "empty evidence text", "is empty")


def is_blank(quote: str) -> bool:
    """Whether the quote is empty or whitespace only (`EMPTY_QUOTE`)."""
    return not quote.strip()


def show(text: str) -> str:
    """A quote as messages show it: on one line, in typographic quotation marks, its middle
    left out when it is long (its edges are where a cut goes wrong)."""
    line = " ".join(text.split())
    if len(line) > SHOWN_CHARS:
        half = SHOWN_CHARS // 2
        line = f"{line[:half].rstrip()} … {line[-half:].lstrip()}"
    return f"“{line}”"


def splits_word(text: str, offset: int) -> bool:
    """Whether a quote of `text` that starts or ends at `offset` cuts a word of a script
    that separates words with spaces, or a character (module docstring): the one rule of
    where a quote may be cut."""
    if not 0 < offset < len(text):
        return False
    left, right = text[offset - 1], text[offset]
    if left.isascii() and right.isascii():
        # No ASCII character attaches to another or composes with it, and the ASCII letters
        # and digits are exactly the ASCII characters of words of spaced scripts.
        return left.isalnum() and right.isalnum() and not _long_run(text, offset)
    return _splits_between(text, offset, left, right)


def _splits_between(text: str, offset: int, left: str, right: str) -> bool:
    """`splits_word` of `left` and `right`, the characters either side of `offset`, whatever
    they are."""
    if _splits_character(left, right):
        return True
    if not (_in_spaced_word(_base(text, offset - 1)) and _in_spaced_word(right)):
        return False
    return not _long_run(text, offset)


#: Letters and digits in a row beyond which a run is no word (module docstring).
LONGEST_WORD = 100
_JOINER = "\u200d"
_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)
_EMOJI_MODIFIERS = range(0x1F3FB, 0x1F400)


def _splits_character(left: str, right: str) -> bool:
    """Whether `left` and `right` belong to one character as a reader sees it."""
    if _JOINER in (left, right) or _attaches(right):
        return True
    if ord(left) in _REGIONAL_INDICATORS and ord(right) in _REGIONAL_INDICATORS:
        return True  # a flag is two of them
    return _composes(left, right)


@lru_cache(maxsize=8192)
def _attaches(char: str) -> bool:
    """A mark, a variation selector, an emoji modifier or tag: part of the character before."""
    category = unicodedata.category(char)
    return (
        category[0] == "M"
        or ord(char) in _EMOJI_MODIFIERS
        or 0xE0020 <= ord(char) <= 0xE007F  # tag characters (subdivision flags)
    )


@lru_cache(maxsize=8192)
def _composes(left: str, right: str) -> bool:
    """Whether NFC makes one character of the two (Hangul jamo, a letter and its accent)."""
    return len(unicodedata.normalize("NFC", left + right)) < 2


def _base(text: str, at: int) -> str:
    """The character at `at`, or, for a mark or other attached character, the one it is
    attached to (a letter's accent is part of its word; a variation selector of an emoji is
    not a letter)."""
    while at > 0 and (_attaches(text[at]) or text[at] == _JOINER):
        at -= 1
    return text[at]


def _long_run(text: str, offset: int) -> bool:
    """Whether `offset` lies inside a run of more than `LONGEST_WORD` word characters."""
    length = 0
    at = offset - 1
    while at >= 0 and length <= LONGEST_WORD and _in_spaced_word(text[at]):
        length, at = length + 1, at - 1
    at = offset
    while at < len(text) and length <= LONGEST_WORD and _in_spaced_word(text[at]):
        length, at = length + 1, at + 1
    return length > LONGEST_WORD


def is_strong(quote: str, rules: QuoteRules) -> bool:
    """Whether a verbatim quote is strong enough to be evidence without being the row's whole
    text: `rules.min_length` characters and a letter or digit (in NFC, outer whitespace not
    counted)."""
    return _weakness(_nfc(quote).strip(), rules, "") is None


def judge_quote(
    quote: str, row_text: str, rules: QuoteRules, *, row_id: str, as_markdown: bool = False
) -> QuoteSpan | RejectedQuote:
    """Where `quote` sits as evidence in `row_text` (offsets into its NFC form), or why not.

    `row_id` only names the row in the reasons. With `as_markdown`, the quote was read from
    a Markdown document, and it is compared with the row as a Markdown reader reads it
    (`reading.as_read`: NUL as U+FFFD, CR LF and CR as LF); the offsets are still those of
    the row's NFC form as written.
    """
    if not as_markdown:
        return _judge(_nfc(quote).strip(), _nfc(row_text), rules, row_id)
    # NUL, CR and LF compose with nothing, so reading and NFC may be applied in either order.
    row = _nfc(row_text)
    read = as_read(row)
    verdict = _judge(_nfc(read_markdown(quote)).strip(), read.text, rules, row_id)
    if isinstance(verdict, RejectedQuote):
        return verdict
    return QuoteSpan(read.written(verdict.start), read.written(verdict.end))


def _judge(needle: str, row: str, rules: QuoteRules, row_id: str) -> QuoteSpan | RejectedQuote:
    """`judge_quote` of a quote and a row both in NFC, the quote stripped."""
    if not needle:
        return EMPTY_QUOTE
    first = row.find(needle)
    if first < 0:
        return mismatch(f"is not a verbatim fragment of {row_id}")
    size = len(needle)
    if needle == row.strip():  # the whole text: its first occurrence
        return QuoteSpan(first, first + size)
    weakness = _weakness(needle, rules, row_id)
    if weakness is not None:
        accepted = _word_extension(row, QuoteSpan(first, first + size))
        if accepted == needle or _weakness(accepted, rules, row_id) is not None:
            return _weak(weakness)
        return _weak(f"{weakness}, e.g. {show(accepted)}", accepted)
    # The first occurrence that cuts no word (occurrences found one at a time: usually the
    # first one is).
    start = first
    while start >= 0:
        if not (splits_word(row, start) or splits_word(row, start + size)):
            return QuoteSpan(start, start + size)
        start = row.find(needle, start + 1)
    if not rules.whole_words:
        return QuoteSpan(first, first + size)
    span = QuoteSpan(first, first + size)
    accepted = _word_extension(row, span)
    cut = " and ".join(_cut_edges(row, span))
    return _weak(
        f"{cut} inside a word of {row_id}: quote whole words, e.g. {show(accepted)}", accepted
    )


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def mismatch(reason: str) -> RejectedQuote:
    """A quote that is not the row's words (`evidence_text_mismatch`), for `reason`."""
    return RejectedQuote("evidence_text_mismatch", "text mismatch", reason)


def _weak(reason: str, accepted: str | None = None) -> RejectedQuote:
    return RejectedQuote("weak_evidence_quote", "weak quotes", reason, accepted)


def _weakness(needle: str, rules: QuoteRules, row_id: str) -> str | None:
    """Why a verbatim quote that is not the whole row is too weak to be evidence, or None."""
    if len(needle) < rules.min_length:
        characters = "character" if len(needle) == 1 else "characters"
        return (
            f"is {len(needle)} {characters}, shorter than the minimum of {rules.min_length}, "
            f"and not the whole text of {row_id}: quote at least {rules.min_length} characters"
        )
    if needle[0].isalpha():  # exactly the categories L*: a letter (the usual first one)
        return None
    if not any(unicodedata.category(char)[0] in "LN" for char in needle):
        return (
            f"has no letter or digit and is not the whole text of {row_id}: quote at least one word"
        )
    return None


def _cut_edges(row: str, span: QuoteSpan) -> list[str]:
    """Which ends of the span cut a word of the row: "starts", "ends", both or none."""
    edges = (("starts", span.start), ("ends", span.end))
    return [edge for edge, offset in edges if splits_word(row, offset)]


def _word_extension(row: str, span: QuoteSpan) -> str:
    """The span's text widened until neither end cuts a word."""
    start, end = span.start, span.end
    while splits_word(row, start):
        start -= 1
    while splits_word(row, end):
        end += 1
    return row[start:end]


@lru_cache(maxsize=8192)
def _in_spaced_word(char: str) -> bool:
    """A letter, mark or digit that is not of a script writing words without spaces."""
    if unicodedata.category(char)[0] not in "LMN":
        return False
    return not unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS)
