"""Short verbatim quotes: where a long piece of feedback is cut so a reader still reads words.

`short_quote(text, limit)` is a verbatim prefix of `text` of at most `limit` characters
(outer whitespace not counted). Where it has to cut, it cuts, in this order of preference:

1. after the last clause punctuation inside the limit (`，。！？；、：` and `, . ; : ! ?`, the
   ASCII ones only before a space, so `3.5` and `v1.2` are never cut), when that keeps at least
   a third of the limit; soft punctuation the cut leaves at the end (`，,；;：:、`, an opening
   bracket or quotation mark) is dropped, sentence ends (`。！？.!?`) stay;
2. else between tokens: at a space, never inside a word or number of a script that separates
   words with spaces (`3.5`, `don't` and `e-mail` stay whole), so English is never cut
   mid-word; Chinese and other scripts without spaces are cut at a character boundary;
3. a first word longer than the limit is kept whole (a cut word is no evidence).

The prefix is also a fragment of the text in Unicode NFC (a cut never separates a letter from
its combining accent), as the evidence check compares. Whether a quote was shortened is
`quote != text.strip()`; the report then writes an ellipsis outside the quotation marks
(`“we lost two days”…`), never inside them, so the quoted text stays the row's own words.
"""

from __future__ import annotations

import unicodedata

from runlens import splits_word

#: Characters that end a clause: a cut right after one reads as a whole clause.
CLAUSE_ENDS = frozenset("，。！？；、：,;:!?.．｡")
#: Clause punctuation dropped from the end of a cut quote (a sentence end is kept).
_SOFT_ENDS = "，,；;：:、 \t"
#: Opening marks and brackets that must not end a quote.
_OPENINGS = "（(「『“‘\"'[【《<"
#: A cut at a clause end must keep at least this fraction of the limit.
_MIN_CLAUSE_SHARE = 3


def short_quote(text: str, limit: int) -> str:
    """A verbatim prefix of `text` of at most `limit` characters, cut at a clause or word
    boundary (module docstring); the whole stripped text when it fits."""
    quote = text.strip()
    if len(quote) <= limit:
        return quote
    whole = unicodedata.normalize("NFC", quote)
    for end in _clause_ends(quote, limit):
        prefix = _tidy(quote[:end])
        if prefix and _verbatim(prefix, whole) and not splits_word(quote, len(prefix)):
            return prefix
    for end in range(limit, 0, -1):
        if not _between_tokens(quote, end):
            continue
        prefix = _tidy(quote[:end])
        if prefix and _verbatim(prefix, whole) and not splits_word(quote, len(prefix)):
            return prefix
    end = limit
    while splits_word(quote, end):
        end += 1
    return quote[:end].rstrip()  # one long word, or no prefix survives NFC (split Hangul)


def _clause_ends(quote: str, limit: int) -> list[int]:
    """Offsets just after clause punctuation within the limit, the latest first."""
    shortest = max(limit // _MIN_CLAUSE_SHARE, 1)
    ends = []
    for end in range(min(limit, len(quote) - 1), shortest - 1, -1):
        char = quote[end - 1]
        if char not in CLAUSE_ENDS:
            continue
        if char.isascii() and not quote[end].isspace():
            continue  # 3.5, 1,000, 09:30, v1.2, a?b: inside a token, not the end of a clause
        ends.append(end)
    return ends


def _spaced(char: str) -> bool:
    """A letter, mark or digit of a script that separates words with spaces."""
    return splits_word(char + char, 1)


def _between_tokens(quote: str, end: int) -> bool:
    """Whether a cut at `end` falls between two tokens: at a space, or where neither side is
    a letter or digit of a spaced script (inside Chinese text, at a character boundary).
    `3.5`, `don't`, `e-mail` and `(note)` are never cut."""
    left, right = quote[end - 1], quote[end]
    if left.isspace() or right.isspace():
        return True
    return not _spaced(left) and not _spaced(right)


def _tidy(prefix: str) -> str:
    """The prefix without trailing whitespace, soft clause punctuation or opening marks."""
    tidy = prefix.rstrip()
    while tidy and (tidy[-1] in _SOFT_ENDS or tidy[-1] in _OPENINGS):
        tidy = tidy[:-1].rstrip()
    return tidy


def _verbatim(prefix: str, whole_nfc: str) -> bool:
    return unicodedata.normalize("NFC", prefix) in whole_nfc
