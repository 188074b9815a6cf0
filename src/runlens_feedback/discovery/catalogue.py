"""Steps 5-6 of theme discovery: the themes found, their names and the catalogue.

`Theme` and `ThemeCatalogue` are what discovery returns; `_catalogue` names each topic
from its distinctive terms (class-based TF-IDF), dissolves catch-alls into "other" and
merges topics of the same name. The package docstring (`runlens_feedback.discovery`) has
every rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from runlens_feedback.discovery.vocabulary import CONCEPT, concept_of
from runlens_feedback.figure_labels import GENERIC_TERMS
from runlens_feedback.theme_keys import OTHER_THEME as OTHER
from runlens_feedback.theme_keys import theme_key as _key
from runlens_feedback.theme_keys import theme_name

MAX_THEMES = 15
KEYWORDS = 8
MIN_COHESION = 0.4
#: Step 5: a two-word phrase names a theme when at least PHRASE_MIN_ROWS of its rows hold
#: it and it ranks among the theme's first PHRASE_WINDOW words.
PHRASE_MIN_ROWS = 2
PHRASE_WINDOW = 6

__all__ = ["OTHER", "Theme", "ThemeCatalogue", "theme_name"]


@dataclass(frozen=True)
class Theme:
    """One discovered theme: `rows` is the number of input texts assigned to it."""

    key: str
    name: str
    keywords: tuple[str, ...]
    rows: int


@dataclass(frozen=True)
class ThemeCatalogue:
    """The themes of an input and each text's theme key ("other" when none fits)."""

    themes: list[Theme]
    assignments: list[str] = field(repr=False)

    def by_key(self) -> dict[str, Theme]:
        return {theme.key: theme for theme in self.themes}

    def name(self, key: str) -> str | None:
        """The theme's name, None for "other" and unknown keys."""
        theme = self.by_key().get(key)
        return theme.name if theme else None

    @property
    def other_rows(self) -> int:
        return len(self.assignments) - sum(theme.rows for theme in self.themes)

    def describe(self) -> list[dict[str, Any]]:
        """Compact JSON for a batch message: each theme, then "other" when rows fell there."""
        listed: list[dict[str, Any]] = [
            {"key": t.key, "name": t.name, "keywords": list(t.keywords), "rows": t.rows}
            for t in self.themes
        ]
        if self.other_rows:
            listed.append(
                {
                    "key": OTHER,
                    "name": "Other (no common theme)",
                    "keywords": [],
                    "rows": self.other_rows,
                }
            )
        return listed


def _class_tfidf(class_counts: Any) -> Any:
    """Class-based TF-IDF (step 5): a topic's term row-count over the topic's term total,
    times log(1 + A / f), A the mean terms per topic, f the term's count over all topics."""
    import numpy as np

    totals = class_counts.sum(axis=1, keepdims=True)
    tf = class_counts / np.where(totals > 0, totals, 1.0)
    frequency = class_counts.sum(axis=0)
    average = totals.mean() if totals.size else 0.0
    idf = np.log(1.0 + average / np.where(frequency > 0, frequency, np.inf))
    return tf * idf


def _ranked_terms(class_counts: Any, vocabulary: Any) -> list[list[str]]:
    """Each topic's terms by class-based TF-IDF, most distinctive first."""
    import numpy as np

    scores = _class_tfidf(class_counts)
    ranked = []
    for topic in range(class_counts.shape[0]):
        order = np.lexsort((vocabulary, -scores[topic]))  # ties by term, for determinism
        ranked.append([str(vocabulary[i]) for i in order[: KEYWORDS * 3] if scores[topic, i] > 0])
    return ranked


def _cjk(term: str) -> bool:
    return not term.isascii()


def _phrase_of(term: str, word: str) -> bool:
    """Whether `term` is a two-word phrase around `word` ("battery life", "导出周报")."""
    if not _cjk(term):
        return len(term.split(" ")) == 2 and word in term.split(" ")
    return len(term) > len(word) and (term.startswith(word) or term.endswith(word))


def _name(
    ranked: list[str], rows_with: dict[str, float], taken: set[str] | frozenset[str] = frozenset()
) -> tuple[str, tuple[str, ...]]:
    """A theme's name and keywords from its ranked terms (step 5). Concepts are neither.
    The name is in the language most of the theme's top terms are written in (by the rows
    holding them): its top word, or the phrase of two adjacent words around that word
    ("导出周报", "battery life") when at least `PHRASE_MIN_ROWS` of the theme's rows hold it."""
    measures = _measure_words()
    words = [t for t in ranked if not t.startswith(CONCEPT) and t.casefold() not in measures]
    chinese = sum(rows_with.get(t, 0.0) for t in words[:KEYWORDS] if _cjk(t))
    latin = sum(rows_with.get(t, 0.0) for t in words[:KEYWORDS] if not _cjk(t))
    own = [t for t in words if _cjk(t) == (chinese > latin)] or words
    concept = ranked[0] if ranked and ranked[0].startswith(CONCEPT) else None
    if concept is not None:  # the theme's own words for its concept, most held first
        named = [t for t in own if " " not in t and concept_of(t) == concept]
        named.sort(key=lambda t: -rows_with.get(t, 0.0))  # stable: by rank on a tie
        own = named + [t for t in own if t not in named]
    # a word that already names another theme names this one only as a last resort
    own = [t for t in own if _key(t) not in taken] + [t for t in own if _key(t) in taken]
    title = own[0] if own else ""
    for term in own[1:PHRASE_WINDOW]:
        if rows_with.get(term, 0.0) < PHRASE_MIN_ROWS:
            continue
        if _phrase_of(term, title):
            title = term
            break
        if concept is not None and concept_of(term) == concept and title not in term:
            joint = "与" if _cjk(title) else " and "
            title = f"{title}{joint}{term}"
            break
    chosen: list[str] = []
    for term in words:
        if any(term in other or other in term for other in chosen):
            continue
        chosen.append(term)
        if len(chosen) == KEYWORDS:
            break
    if title and (_key(title) in _reserved_keys() or title.startswith("topic:")):
        title += "主题" if _cjk(title) else " theme"  # never a key of the table, "other" ...
    return title[:1].upper() + title[1:], tuple(chosen)


def _measure_words() -> frozenset[str]:
    """The words the report's figures are labelled with ("rows", "negative", "严重"): a
    theme named by one would have its figures read as that measure's, so none is a name."""
    return GENERIC_TERMS


@cache
def _reserved_keys() -> frozenset[str]:
    """Keys with a meaning of their own elsewhere: the analyst's theme table, praise,
    empty, feature requests, "other" and the aggregate's unspecified group."""
    from runlens_feedback.analyst.resources import theme_by_key

    return frozenset([*theme_by_key(), OTHER, "praise", "empty", "feature_request", "unspecified"])


def _cohesive(topic: int, top: list[str], class_counts: Any, vocabulary: Any, size: int) -> bool:
    """Whether the topic's top three terms, together, occur in at least MIN_COHESION of its
    rows (an upper bound from their row counts, capped at the size)."""
    index = {str(term): i for i, term in enumerate(vocabulary)}
    covered = sum(class_counts[topic, index[t]] for t in top[:3] if t in index)
    return size > 0 and min(covered, size) / size >= MIN_COHESION


def _catalogue(
    labels: Any,
    sizes: Any,
    core_sizes: Any,
    class_counts: Any,
    vocabulary: Any,
    count: int,
    *,
    cohesion: bool = True,
) -> ThemeCatalogue:
    ranked = _ranked_terms(class_counts, vocabulary)
    index = {str(term): i for i, term in enumerate(vocabulary)}
    minimum = max(2, math.ceil(0.01 * count))
    named: dict[str, tuple[str, tuple[str, ...], list[int]]] = {}
    for topic, size in enumerate(sizes.tolist()):
        if size < minimum or not ranked[topic]:
            continue
        if cohesion and not _cohesive(
            topic, ranked[topic], class_counts, vocabulary, int(core_sizes[topic])
        ):
            continue
        held = {term: float(class_counts[topic, index[term]]) for term in ranked[topic]}
        name, keywords = _name(ranked[topic], held, set(named))
        if not name:  # nothing but measure words: not a topic
            continue
        key = _key(name)
        if key in named:
            named[key][2].append(topic)
        else:
            named[key] = (name, keywords, [topic])
    topic_key: dict[int, str] = {}
    themes = []
    for key, (name, keywords, topics) in named.items():
        rows = int(sum(int(sizes[t]) for t in topics))
        themes.append(Theme(key, name, keywords, rows))
        topic_key.update(dict.fromkeys(topics, key))
    themes.sort(key=lambda theme: (-theme.rows, theme.name))
    themes = themes[:MAX_THEMES]
    kept = {theme.key for theme in themes}
    assignments = [
        topic_key[label] if topic_key.get(label) in kept else OTHER for label in labels.tolist()
    ]
    return ThemeCatalogue(themes, assignments)
