"""When a quote is evidence: the one quote check of every validator that checks quotes.

A quote is evidence of a row when it is a verbatim fragment of the row's text and too strong
to be a coincidence. Verbatim: both sides in Unicode NFC, the whitespace around the quote not
part of it, everything inside it exactly as in the row. Strong (`QuoteRules`): at least
`min_length` characters and at least one letter or digit (`","`, `"…"` or `"了"` occur in
almost any row, so they prove nothing), unless the quote is the row's whole text; and with
`whole_words`, a quote in a script that puts spaces between words (Latin, Cyrillic, Greek, ...)
neither starts nor ends inside a word ("xport is slo" is a cut, not a quote). Scripts that
write words without spaces (Chinese, Japanese, Korean as the contract rules read it, Thai, Lao,
Khmer, Myanmar) have no word edges to respect.

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
    """Whether cutting `text` at `offset` splits a word of a script that separates words
    with spaces (for writers of quotes that must pass `whole_words`)."""
    return 0 < offset < len(text) and _joins_word(text[offset - 1], text[offset])


def judge_quote(
    quote: str, row_text: str, rules: QuoteRules, *, row_id: str
) -> QuoteSpan | RejectedQuote:
    """Where `quote` sits as evidence in `row_text` (offsets into its NFC form), or why not.

    `row_id` only names the row in the reasons.
    """
    needle = _nfc(quote).strip()
    if not needle:
        return EMPTY_QUOTE
    row = _nfc(row_text)
    spans = [QuoteSpan(start, start + len(needle)) for start in _occurrences(row, needle)]
    if not spans:
        return mismatch(f"is not a verbatim fragment of {row_id}")
    if needle == row.strip():
        return spans[0]
    weakness = _weakness(needle, rules, row_id)
    if weakness is not None:
        accepted = _word_extension(row, spans[0])
        if accepted == needle or _weakness(accepted, rules, row_id) is not None:
            return _weak(weakness)
        return _weak(f"{weakness}, e.g. {show(accepted)}", accepted)
    whole = next((span for span in spans if not _cut_edges(row, span)), None)
    if whole is not None or not rules.whole_words:
        return whole or spans[0]
    accepted = _word_extension(row, spans[0])
    cut = " and ".join(_cut_edges(row, spans[0]))
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


def _occurrences(row: str, needle: str) -> list[int]:
    """Every offset where `needle` starts in `row`, overlapping ones included."""
    starts = []
    start = row.find(needle)
    while start >= 0:
        starts.append(start)
        start = row.find(needle, start + 1)
    return starts


def _weakness(needle: str, rules: QuoteRules, row_id: str) -> str | None:
    """Why a verbatim quote that is not the whole row is too weak to be evidence, or None."""
    if len(needle) < rules.min_length:
        characters = "character" if len(needle) == 1 else "characters"
        return (
            f"is {len(needle)} {characters}, shorter than the minimum of {rules.min_length}, "
            f"and not the whole text of {row_id}: quote at least {rules.min_length} characters"
        )
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


def _joins_word(left: str, right: str) -> bool:
    """Whether two adjacent characters belong to one word of a space-separated script."""
    return _in_spaced_word(left) and _in_spaced_word(right)


@lru_cache(maxsize=8192)
def _in_spaced_word(char: str) -> bool:
    """A letter, mark or digit that is not of a script writing words without spaces."""
    if unicodedata.category(char)[0] not in "LMN":
        return False
    return not unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS)
