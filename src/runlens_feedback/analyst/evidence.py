"""Evidence quote selection: a verbatim slice of the row's text.

The quote is the sentence of the clause with the strongest signal: its sentiment weight of
the row's polarity (negative for complaints, positive for praise, both for neutral rows), plus
half a point for each keyword of the row's theme and each critical/blocking impact cue in it;
ties go to the clause with more sentiment, then to the earlier one. A quote keeps its point:
the whole sentence when it has at most `SENTENCE_CHARS` characters (so "担心数据泄露" comes
with what the worry is about, "小团队很吃亏" with what costs them), else the clause widened
by its neighbours in the sentence, earlier ones first (they hold the subject and a negation),
as far as that limit; a clause shorter than the minimum (6 characters of Chinese, 15 of
English) is widened to its neighbours on the same line even beyond the sentence. Texts of at
most 20 characters, or of a single clause, are quoted whole. The quote never has surrounding
whitespace and is always `text[start:end]`.

Whitespace-only text: there is nothing to quote, so the text itself is returned unchanged (the
row is flagged `empty_text` by the caller). In a run such a row never reaches the analyst: the
batch tool records it in `failed_batches` as "row has no text to quote", since any quote of it
would be rejected as `empty_evidence_text`.
"""

from __future__ import annotations

from runlens import fit_quote
from runlens_feedback.analyst.document import Document
from runlens_feedback.analyst.severity import clause_impact
from runlens_feedback.analyst.text import strip_span
from runlens_feedback.analyst.themes import theme_hits
from runlens_feedback.contracts import ANALYSIS_CONTRACT
from runlens_feedback.quotes import QUOTE_CHARS

#: The analysis contract's rules for its quotes (the one the evidence check applies).
_RULES = ANALYSIS_CONTRACT.evidence_quotes[0]
_SHORT_TEXT = 20
_KEYWORD_WEIGHT = 0.5
_MIN_QUOTE = {"zh": 6, "en": 15}
#: The longest sentence quoted whole: what the report quotes of a row on one line.
SENTENCE_CHARS = QUOTE_CHARS


def pick_evidence(doc: Document, theme_key: str) -> str:
    """The evidence quote of a parsed row (see the module docstring), always one that the
    analysis contract's quote rules accept (`runlens.fit_quote`: never a cut word or
    character, never too short, never without a letter or digit)."""
    text = doc.text
    start, end = strip_span(text, 0, len(text))
    if start == end:
        return text
    if end - start <= _SHORT_TEXT or len(doc.clauses) <= 1:
        return text[start:end]
    sign = _SIGNS.get(doc.sentiment.label, -1)
    best = max(range(len(doc.clauses)), key=lambda index: _rank(doc, index, theme_key, sign))
    first, last = _widen(doc, *_sentence_around(doc, best))
    start, end = fit_quote(text, doc.clauses[first].start, doc.clauses[last].end, _RULES)
    return text[start:end]


#: The sign of the contributions a clause is ranked by, by the row's sentiment (else -1).
_SIGNS = {"positive": 1, "neutral": 0}


def _rank(doc: Document, index: int, theme_key: str, sign: int) -> tuple[float, float, int]:
    """How well a clause speaks for the row: its signal (its contributions of the row's
    sign, its theme keywords and, unless the row is positive, its impact cues), then its
    contributions alone, then the earlier clause."""
    polar = doc.sentiment.clause_signal(index, sign)
    signal = (
        polar
        + _KEYWORD_WEIGHT * theme_hits(doc, index, theme_key)
        + (_KEYWORD_WEIGHT * clause_impact(doc, index) if sign <= 0 else 0)
    )
    return signal, polar, -index


def _sentence_around(doc: Document, index: int) -> tuple[int, int]:
    """The clauses [first, last] of the clause's sentence, or as many of them around it as
    `SENTENCE_CHARS` allows (earlier ones first)."""
    first = last = index
    while True:
        earlier = first > 0 and not doc.clauses[first - 1].ends_sentence
        later = not doc.clauses[last].ends_sentence and last + 1 < len(doc.clauses)
        if earlier and _length(doc, first - 1, last) <= SENTENCE_CHARS:
            first -= 1
        elif later and _length(doc, first, last + 1) <= SENTENCE_CHARS:
            last += 1
        else:
            return first, last


def _widen(doc: Document, first: int, last: int) -> tuple[int, int]:
    """Grow [first, last] over neighbouring clauses until the quote is long enough."""
    minimum = _MIN_QUOTE[doc.lang]
    while _length(doc, first, last) < minimum:
        if last + 1 < len(doc.clauses) and _same_line(doc, last, last + 1):
            last += 1
        elif first > 0 and _same_line(doc, first - 1, first):
            first -= 1
        else:
            break
    return first, last


def _length(doc: Document, first: int, last: int) -> int:
    return doc.clauses[last].end - doc.clauses[first].start


def _same_line(doc: Document, left: int, right: int) -> bool:
    gap = doc.text[doc.clauses[left].end : doc.clauses[right].start]
    return "\n" not in gap and "\r" not in gap
