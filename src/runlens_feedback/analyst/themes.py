"""Theme assignment: the keyword table first, then a keyword of the row's own.

A row's theme is the table theme with the most keyword matches in the clauses that carry the
row's sentiment (its negative clauses for a complaint, its positive ones for praise; all clauses
when those match nothing). Ties go to a `problem` theme (slow, crash, wrong charge) over an
`area` theme (export, dashboards, mobile), then to the theme mentioned first in the text, then
to the one listed first in `lexicon/themes.json`. `feature_request` is only given to rows that
are not positive; a neutral row with a request cue (希望, 建议, would like) is a feature request.
A row that matches no theme gets `praise` when it is positive, else `topic:<keyword>` from its
most salient noun-like word (stopwords and sentiment words removed), so feedback on unknown
domains still groups; `topic:general` when there is no such word.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from runlens_feedback.analyst.document import Document
from runlens_feedback.analyst.labels import FEATURE_REQUEST, PRAISE_THEME, TOPIC_PREFIX
from runlens_feedback.analyst.matching import KeywordSet, compile_keywords
from runlens_feedback.analyst.resources import lexicon, stopwords, themes
from runlens_feedback.analyst.tokens import cjk_nouns

_DETERMINERS = frozenset(
    [
        "the",
        "a",
        "an",
        "my",
        "our",
        "your",
        "their",
        "this",
        "that",
        "these",
        "those",
        "his",
        "her",
        "its",
        "every",
        "each",
        "no",
        "any",
    ]
)
_GENERAL = "general"


@dataclass(frozen=True)
class ThemeChoice:
    """The theme of one row; `keyword` is set for `topic:` themes."""

    key: str
    keyword: str | None = None


@cache
def _patterns() -> tuple[tuple[str, KeywordSet], ...]:
    return tuple(
        (spec.key, compile_keywords((*spec.keywords_en, *spec.keywords_zh))) for spec in themes()
    )


@cache
def _keywords(theme_key: str) -> KeywordSet | None:
    return dict(_patterns()).get(theme_key)


def theme_hits(doc: Document, clause_index: int, theme_key: str) -> int:
    """Keyword matches of one theme in one clause."""
    keywords = _keywords(theme_key)
    if keywords is None:
        return 0
    return keywords.count(doc.clause_text(clause_index), doc.tokens[clause_index])


def choose_theme(doc: Document) -> ThemeChoice:
    """The theme of a parsed row (see the module docstring)."""
    label = doc.sentiment.label
    positive = label == "positive"
    excluded = {FEATURE_REQUEST, PRAISE_THEME} if positive else {PRAISE_THEME}
    everything = list(range(len(doc.clauses)))
    if label == "neutral" and _matches(doc, FEATURE_REQUEST, everything)[0]:
        return ThemeChoice(FEATURE_REQUEST)
    for clauses in (_focus_clauses(doc), everything):
        best = _best_table_theme(doc, clauses, excluded)
        if best is not None:
            return ThemeChoice(best)
    if positive:
        return ThemeChoice(PRAISE_THEME)
    keyword = salient_keyword(doc)
    return ThemeChoice(TOPIC_PREFIX + (keyword or _GENERAL), keyword)


def _focus_clauses(doc: Document) -> list[int]:
    sign = 1 if doc.sentiment.label == "positive" else -1
    return [
        index for index in range(len(doc.clauses)) if doc.sentiment.clause_signal(index, sign) > 0
    ]


def _best_table_theme(doc: Document, clauses: list[int], excluded: set[str]) -> str | None:
    ranked = []
    for order, spec in enumerate(themes()):
        if spec.key in excluded:
            continue
        count, first = _matches(doc, spec.key, clauses)
        if count:
            ranked.append((-count, spec.kind != "problem", first, order, spec.key))
    return min(ranked)[-1] if ranked else None


def _matches(doc: Document, theme_key: str, clauses: list[int]) -> tuple[int, int]:
    """(matches of a theme in the clauses, text offset of the first one or len(text))."""
    keywords = _keywords(theme_key)
    count, first = 0, len(doc.text)
    if keywords is None:
        return count, first
    for index in clauses:
        found, offset = keywords.scan(doc.clause_text(index), doc.tokens[index])
        if found:
            count += found
            first = min(first, doc.clauses[index].start + offset)
    return count, first


def salient_keyword(doc: Document) -> str | None:
    """The first noun-like content word of the row's strongest clause, then of the others."""
    order = sorted(
        range(len(doc.clauses)),
        key=lambda index: (-doc.sentiment.clause_signal(index, 0), index),
    )
    for index in order:
        keyword = _clause_keyword(doc, index)
        if keyword is not None:
            return keyword
    return None


def _clause_keyword(doc: Document, index: int) -> str | None:
    clause = doc.clauses[index]
    if doc.lang == "zh":
        zh = lexicon("zh")
        for word, _ in cjk_nouns(doc.text[clause.start : clause.end]):
            if len(word) >= 2 and word not in stopwords("zh") and word not in zh.valences:
                return word
    return _english_keyword([token.norm for token in doc.tokens[index] if not token.cjk])


def _english_keyword(words: list[str]) -> str | None:
    en = lexicon("en")
    excluded = stopwords("en") | en.modifier_words()
    candidates = [
        (position, word)
        for position, word in enumerate(words)
        if word.isalpha()
        and len(word) >= 3
        and word not in excluded
        and word not in en.valences
        and not word.endswith("ly")
    ]
    after_determiner = [
        word for position, word in candidates if position and words[position - 1] in _DETERMINERS
    ]
    chosen = after_determiner[0] if after_determiner else (candidates[0][1] if candidates else None)
    return _singular(chosen) if chosen else None


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
