"""Cutting quotes where the quote check allows: the writers' side of `runlens.validation.quotes`.

Whoever writes a quote (an analyst picking a row's evidence, a report quoting it, a batch
message carrying a long text to a model) cuts it with these functions, and they cut only where
the checker's own rule (`splits_word`: never inside a word of a spaced script, never inside a
character) allows, and keep what its strength rule (`QuoteRules`: a minimum length, a letter
or digit) asks. So a quote RunLens writes is a quote RunLens accepts, on any text: any length,
any script, emoji, one long word.

- `cut_text(text, limit)`: the longest prefix of at most `limit` characters that ends where a
  quote may end (a text carried in a batch message; a quote of the prefix is a quote of the
  text);
- `cut_quote(text, limit)`: a short quote, a prefix of at most `limit` characters, preferably
  a whole clause (after the last clause punctuation inside the limit that keeps a third of it;
  the ASCII ones only before a space, so `3.5` and `v1.2` are never cut; soft punctuation and
  opening marks left at its end are dropped, sentence ends stay), else between tokens;
- `fit_quote(text, start, end, rules)`: the narrowest span around `[start, end)` that the
  rules accept as a quote of `text`: its edges moved off cuts, widened to the minimum length
  and a letter or digit, the whole text when nothing less will do;
- `one_line_quote(quote, rules, avoid)`: the longest line of a quote (or part of a line between the
  characters in `avoid`) the rules accept, for documents that quote one line at a time.

Every prefix is also a fragment of the text in Unicode NFC, as the checker compares.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from itertools import chain

from runlens.contracts.model import QuoteRules
from runlens.validation.quotes import is_strong, splits_word

_DEFAULT_RULES = QuoteRules()
#: Characters that end a clause: a cut right after one reads as a whole clause.
CLAUSE_ENDS = frozenset("，。！？；、：,;:!?.．｡")
#: Clause punctuation dropped from the end of a cut quote (a sentence end is kept).
_SOFT_ENDS = "，,；;：:、 \t"
#: Opening marks and brackets that must not end a quote.
_OPENINGS = "（(「『“‘\"'[【《<"
#: A cut at a clause end must keep at least this fraction of the limit.
_MIN_CLAUSE_SHARE = 3


def cut_text(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` characters ending where a quote may
    end, without trailing whitespace; `text` itself when it fits. When the first word is
    longer than the limit, or the prefix holds no letter or digit that the text has, the
    prefix goes on to the first place after them where a quote may end."""
    if len(text) <= limit:
        return text
    end = next((end for end in range(limit, 0, -1) if not splits_word(text, end)), 0)
    if not _has_word_character(text[:end]):
        end = max(end, _first_word_character(text, limit) + 1)
    while splits_word(text, end):
        end += 1
    return text[:end].rstrip() or text[:end]


def cut_quote(text: str, limit: int, rules: QuoteRules = _DEFAULT_RULES) -> str:
    """A verbatim prefix of `text` of at most `limit` characters, cut at a clause or token
    boundary (module docstring), strong by `rules` (at least their minimum length, a letter
    or digit); the whole stripped text when it fits. When no such prefix fits the limit, the
    first one after it."""
    quote = text.strip()
    if len(quote) <= limit:
        return quote
    whole = unicodedata.normalize("NFC", quote)
    for end in chain(_clause_ends(quote, limit), _token_ends(quote, limit)):
        prefix = _tidy(quote[:end])
        if (
            prefix
            and is_strong(prefix, rules)
            and _verbatim(prefix, whole)
            and not splits_word(quote, len(prefix))
        ):
            return prefix
    prefix = cut_text(quote, limit)
    return quote[slice(*fit_quote(quote, 0, len(prefix), rules))]


def fit_quote(text: str, start: int, end: int, rules: QuoteRules) -> tuple[int, int]:
    """The narrowest span containing `[start, end)` that `rules` accept as a quote of
    `text` (module docstring), without whitespace at its edges."""
    whole = _stripped(text, 0, len(text))
    start, end = _stripped(text, max(0, min(start, len(text))), max(0, min(end, len(text))))
    for _ in range(_WIDENINGS):
        if start >= end:
            return whole
        if not _has_word_character(text[start:end]):
            after = _first_word_character(text, end)
            if after < len(text):
                end = after + 1
            else:
                before = _last_word_character(text, start)
                if before < 0:
                    return whole
                start = before
        if end - start < rules.min_length:
            end = min(len(text), start + rules.min_length)
            start = max(0, end - rules.min_length)
        while splits_word(text, start):
            start -= 1
        while splits_word(text, end):
            end += 1
        start, end = _stripped(text, start, end)
        if (start, end) == whole or is_strong(text[start:end], rules):
            return start, end
        start, end = max(0, start - 1), min(len(text), end + 1)
    return whole


#: Rounds of widening before `fit_quote` settles for the whole text (NFC may shorten a span
#: that looked long enough, and stripping may leave it short).
_WIDENINGS = 4


def _is_word_character(char: str) -> bool:
    return unicodedata.category(char)[0] in "LN"


def _has_word_character(text: str) -> bool:
    return any(_is_word_character(char) for char in text)


def _first_word_character(text: str, start: int) -> int:
    """The offset of the first letter or digit at or after `start`, else `len(text)`."""
    return next((at for at in range(start, len(text)) if _is_word_character(text[at])), len(text))


def _last_word_character(text: str, end: int) -> int:
    """The offset of the last letter or digit before `end`, else -1."""
    return next((at for at in range(end - 1, -1, -1) if _is_word_character(text[at])), -1)


def one_line_quote(
    quote: str, rules: QuoteRules, avoid: Iterable[str] = ()
) -> tuple[int, int] | None:
    """The span of the longest piece of `quote` on one line and without any character of
    `avoid` that `rules` accept (the earliest of equal length); None when there is none.
    A piece's edges are line breaks, characters of `avoid` or the quote's own edges, so a
    piece of a valid quote is cut where a quote may be cut."""
    breaks = "".join(re.escape(char) for char in avoid)
    pattern = re.compile(f"[^{breaks}\\r\\n\\u2028\\u2029\\x0b\\x0c\\x1c\\x1d\\x1e\\x85]+")
    best: tuple[int, int] | None = None
    for match in pattern.finditer(quote):
        start, end = _whole_characters(quote, *_stripped(quote, *match.span()))
        if start == end or not is_strong(quote[start:end], rules):
            continue
        if best is None or end - start > best[1] - best[0]:
            best = (start, end)
    return best


def _whole_characters(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the characters at its edges that belong to a character outside it
    (a combining mark right after a line break is part of the break, as `splits_word` reads
    it), without whitespace at its edges."""
    while start < end and splits_word(text, start):
        start += 1
    while end > start and splits_word(text, end):
        end -= 1
    return _stripped(text, start, end)


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


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


def _token_ends(quote: str, limit: int) -> Iterator[int]:
    """Offsets within the limit between two tokens, the latest first: at a space, or where
    neither side is a letter or digit of a spaced script (`3.5`, `don't`, `e-mail` and
    `(note)` are never cut; Chinese is cut between characters)."""
    return (end for end in range(limit, 0, -1) if _between_tokens(quote, end))


def _spaced(char: str) -> bool:
    """A letter, mark or digit of a script that separates words with spaces."""
    return splits_word(char + char, 1)


def _between_tokens(quote: str, end: int) -> bool:
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
