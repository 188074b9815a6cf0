"""Themes discovered from the data: `discover_themes(texts) -> ThemeCatalogue`.

The themes of a run come from all its texts, not from a fixed keyword table, so they fit any
domain (restaurants, phones, books, software) and a word's sense comes from the words around
it: whole rows are clustered, so "the server was rude" lands with the other service rows of a
restaurant, not with billing or outages.

The algorithm (scikit-learn, deterministic):

1. *Terms.* A damaged text (mojibake: ftfy's badness heuristic, a replacement character or
   its GBK reading "锟斤拷") has none, so it is "other", never a theme. Each other text is
   tokenised as the analyst does (`analyst.tokens`: jieba for Chinese runs, a word pattern
   for the rest; English words lower-cased, simple plurals folded).
   Kept are English words of 3+ letters (plurals folded: "chapters", "dishes", and "-ies"
   to the singular the input itself uses) and Chinese words of 2+ characters that are not
   stopwords (scikit-learn's English list, the analyst's `stopwords_en/zh.txt`, a short list
   of generic words here: thing, product, 东西, 感觉 ..., and a review form's labels: 优点,
   缺点, pros, cons ...), not modifiers (very, 非常) and not generic sentiment words:
   `GENERIC_SENTIMENT` below and every sentiment-lexicon word of absolute valence 2 or more
   (good, great, terrible, 不错, 喜欢), except the concrete problem words of the severity
   cues (crash, 崩溃, 闪退). Adjacent kept words also give a bigram ("battery life",
   "服务态度"). So sentiment never defines a theme: "great food" and "terrible food" are both
   about food.
   *Concepts* bridge languages: a kept word that is an unambiguous one-word keyword of the
   analyst's theme table (`lexicon/themes.json`, English and Chinese; not the keywords with
   an everyday sense, `analyst.themes.AMBIGUOUS_KEYWORDS`, and a trailing `*` only for
   inflections) adds the table theme as a concept term ("导出", "export", "exporting" ->
   "≈export"; "扣费", "refund" -> "≈billing_pricing"), once per row, counted `AREA_WEIGHT`
   (2) times for an "area" theme and `PROBLEM_WEIGHT` (3) times for a "problem" theme (a
   wrong charge mentioned beside an email is about the charge). So one topic written in two
   languages shares a term and becomes one theme. Concepts never name a theme.
2. *Vectors.* TF-IDF over those terms (sublinear tf, L2 rows); terms in fewer than 2 rows
   (1 for inputs under 50 rows) or more than half the rows are dropped, at most 20,000 terms.
3. *Topics.* NMF (`init="nndsvda"`, `random_state=0`) with
   `k = min(12, floor(sqrt(n)), max(1, n // 4))` components (12 from 144 usable rows on;
   smaller inputs get more topics than the `sqrt(n / 5)` used before, so a 90-row file is
   not forced into 4), fitted on a deterministic sample of at most `FIT_ROWS` rows (evenly
   spaced).
   Inputs with fewer than 5 usable rows get no themes: everything is "other".
3v. *Topics from sentence vectors* (the default when the encoder is installed: `embedding`,
   the multilingual Universal Sentence Encoder; steps 3-4b above are the fallback, kept with
   `vectors=False`). Of the fit sample's rows with terms, at most `VECTOR_ROWS` (evenly
   spaced) are encoded. Each vector is joined by the row's concepts (step 1; not the
   everyday ones: service, delivery, quality), L2-normalised and weighted `CONCEPT_WEIGHT`,
   and k-means (`KMEANS_STARTS` starts, `random_state=0`) finds
   `k = min(12, sqrt(n / VECTOR_ROWS_PER_TOPIC), n // 4)` topics (no more than the distinct
   rows). Clusters in which one concept is the most held and held by at least
   `CONCEPT_MERGE_SHARE` of the rows of each are one topic ("导出周报太慢" and "Export to
   Excel fails"). A cluster whose rows fall into word groups that share no word (step 4b's
   connected-components test) is cut, the parts that mean the most different things first
   (lowest cosine between their mean vectors), while the themes number under `MAX_THEMES`:
   the "server" of a waiter and of a web service. The `OUTLIER_SHARE` of encoded rows
   farthest from their topic's mean vector are left for step 4c. An encoded row keeps its
   topic; every other row is assigned by step 4 against each topic's mean TF-IDF vector
   over its encoded rows (terms in up to `VECTOR_MAX_DF` of the rows count, so a complaint
   pasted into most rows still has words). Steps 4c-6 follow as below, except that every
   term passing 4c's row count and share anchors its topic (`VECTOR_ANCHOR_TERMS`), and
   without the cohesion test of step 6 (a topic of meaning need not share three words).
   The settings were chosen on development data only (`benchmarks/tune_vector_themes.py`,
   docs/quality.md).
4. *Assignment.* Every row (in chunks of `CHUNK_ROWS`, so memory stays bounded) gets the
   topic whose L2-normalised term weights have the highest cosine with its TF-IDF vector,
   when that cosine is at least `MIN_SIMILARITY`; otherwise it is left for step 4c, and a
   row with no term of the vocabulary is "other".
4b. *Splits: word sense.* A topic of at least 4 x `max(3, 1%)` sample rows is re-vectorised
   over its own rows (a word they all share, like the "server" of a waiter and of a web
   service, then stops counting; so do words of one row) and cut in two: where its rows
   then fall into groups that share no word (a connected-components test), the second
   biggest group and the rest; else with NMF, kept when the halves' top 8 terms share at most 2.
   Both halves need `max(3, 1%)` rows. Cuts are made one at a time, the most distinct
   first (fewest shared terms, then the biggest topic), halves included, while the themes
   number under `min(15, max(k, floor(sqrt(n / 2))))`. A row of a cut topic goes to the
   half its own words are nearest to (the first half when the cut knows none of them).
4c. *Second chance: anchor terms.* A short row often shares one topical word with a theme
   and nothing else, so its cosine stays under the floor. Each theme (leaf) gets anchors
   from the sample rows steps 4-4b placed: of its top `ANCHOR_TERMS` (40) terms by the
   class-based TF-IDF of step 5 over those rows, the ones found in at least
   `ANCHOR_MIN_ROWS` (2) of its placed sample rows and holding at least `ANCHOR_SHARE`
   (25 %) of the term's placed sample rows (a word spread over many themes anchors none),
   each weighted by its score. A row steps 4-4b left out that holds an anchor joins the
   theme whose anchors it holds with the highest summed weight (the lower theme id on a
   tie); a row that holds none stays "other". So a row without a topical word (pure
   sentiment: "Great!", "太差了") is still "other".
5. *Names.* Class-based TF-IDF over the rows steps 4-4b placed (not 4c's: a name says what
   a theme's core rows share; term row-count in the theme over the theme's term total,
   times `log(1 + A / f)`, A the mean terms per theme and f the term's count over all
   themes) ranks each theme's distinctive terms; `keywords` are its top 8 words (concepts
   left out). The name is a phrase of the input, in the language (Chinese or not) the
   theme's top words are mostly written in: its top word, or, when the top term is a
   concept, the theme's own word for that concept held by most of its rows; then, among
   its first `PHRASE_WINDOW` (6) words held by at least `PHRASE_MIN_ROWS` (2) rows, the
   first bigram around that word replaces it ("导出周报", "Battery life"), or else a second
   word of the same concept joins it ("价格与收费", "Login and password"). A word that already
   names another theme names this one only when nothing else is left, so two themes are
   not merged because their top word is the same. Never two unrelated words.
6. *Catch-alls go to "other".* A theme is dissolved into "other" when fewer than
   `max(2, 1%)` of the rows land in it (4c included), or when its top three terms together
   occur in less than `MIN_COHESION` of the rows steps 4-4b placed in it (a topic nobody's
   words agree on); its rows, 4c's included, go to "other". Themes with the same
   name are merged. At most 15 themes remain, ordered by rows (descending), then name.

The key of a theme is its name case-folded with spaces as `_` (what the aggregate's
grouping does to a theme), so a report or figure check that only sees an item's `theme`
still reads the name from the key. A one-word name that is a key with a meaning of its own
(a theme-table key such as "delivery", "praise", "other") gets " theme" appended.

Cost: tokenising is linear in the rows (each sample row is tokenised once); fitting is
bounded by the sample (so are the anchors); assignment is one sparse product per chunk and
per split it passes, plus one for the chunk's rows left to step 4c.
Encoding is bounded by `VECTOR_ROWS` (about 2 ms a short row, 10 ms a long review, on one
core, plus about 1.5 s to load the encoder once per process).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from runlens import checkpoint

OTHER = "other"
MAX_THEMES = 15
#: Topics of the first level; splits (step 4b) may add themes up to MAX_THEMES.
TOP_LEVEL_THEMES = 12
KEYWORDS = 8
FIT_ROWS = 20_000
CHUNK_ROWS = 10_000
MIN_USABLE_ROWS = 5
MIN_SIMILARITY = 0.05
MIN_COHESION = 0.4
#: Step 4c (tuned on training corpora only, docs/quality.md): of a leaf's top ANCHOR_TERMS
#: terms by class-based TF-IDF, the anchors are those in at least ANCHOR_MIN_ROWS of its
#: placed sample rows and with at least ANCHOR_SHARE of the term's placed sample rows.
ANCHOR_TERMS = 40
ANCHOR_MIN_ROWS = 2
ANCHOR_SHARE = 0.25
MAX_FEATURES = 20_000
#: Step 5: a two-word phrase names a theme when at least PHRASE_MIN_ROWS of its rows hold
#: it and it ranks among the theme's first PHRASE_WINDOW words.
PHRASE_MIN_ROWS = 2
PHRASE_WINDOW = 6
#: Rows tokenised between two cancellation checkpoints: tokenising is most of the work, and a
#: cancelled run must stop within a second, not when discovery ends.
CHECKPOINT_ROWS = 200
#: Step 3 with sentence vectors (chosen on development halves only, docs/quality.md): the
#: rows encoded, rows per topic in the count of topics, and the share of encoded rows
#: farthest from their topic's centre that are "other".
VECTOR_ROWS = 4_000
VECTOR_ROWS_PER_TOPIC = 1
OUTLIER_SHARE = 0.05
#: A row's concepts (step 1) join its sentence vector with this weight for k-means.
CONCEPT_WEIGHT = 0.75
#: Two clusters merge when one concept is in at least this share of the rows of each.
CONCEPT_MERGE_SHARE = 0.8
#: With sentence vectors a term may be in up to this share of the rows (step 2's 1/2 would
#: leave a complaint pasted into most rows without a word to name or place it by).
VECTOR_MAX_DF = 0.95
#: With sentence vectors a topic holds what its rows mean, so every term that passes the
#: anchor rule's row count and share may anchor it, not only its top `ANCHOR_TERMS`.
VECTOR_ANCHOR_TERMS = 1_000_000
#: k-means starts (the best of them is kept, `random_state=0`).
KMEANS_STARTS = 10


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words every domain uses: never a theme's defining term.
GENERIC_WORDS = _words(
    """
    thing things stuff product products item items lot lots way ways time times day days
    year years week month today yesterday tomorrow people person guy guys anyone everyone
    something anything everything nothing someone bit kind sort type place part end star
    stars review reviews one two three four five ten also even still really quite pretty
    much many lot little big small get got getting go going went gone make made makes come
    came use used using want wanted like liked know think thought say said tell told feel
    felt look looks looked seem seems seemed give gave take took put let back way well
    just actually definitely probably maybe overall sure able etc though although however
    would could should might must will can may shall don didn doesn isn wasn aren weren
    haven hasn won wouldn couldn shouldn ive im youre thats theres dont cant wont
    东西 感觉 觉得 一个 一下 一点 一些 没有 什么 时候 这个 那个 这样 那样 怎么 真的 还是
    就是 但是 而且 因为 所以 已经 可能 应该 一直 以后 之前 现在 今天 昨天 知道 看到 出来
    起来 进去 不是 不会 不能 还有 非常 比较 特别 有点 有些 实在 确实 简直 总体 整体 方面
    问题 情况 地方 时间 买家 卖家 大家 自己 我们 你们 他们 的话 本来 其实 然后 反正
    优点 缺点 总结 评价 补充 其他 其它 pro pros con cons summary
    只能 不到 每次 经常 需要 能够 以及 或者 还要 总是 不了 不够 得到 进行 一样 这些 那些
    hour hours minute minutes second seconds 小时 分钟 秒钟 两个 几个 几次 一次 两次 好几
    """
)
#: Sentiment words too weak to pass the valence rule but still generic.
GENERIC_SENTIMENT = _words(
    """
    good great bad nice fine okay ok best worst better worse love loved loves hate hated
    like liked awesome amazing excellent terrible horrible awful poor perfect decent
    happy unhappy disappointed disappointing satisfied recommend recommended favorite
    favourite wonderful fantastic lovely worth enjoy enjoyed
    好 不错 很好 挺好 还好 太差 很差 差劲 一般 还行 可以 满意 失望 喜欢 推荐 值得 好评 差评
    垃圾 完美 棒 赞 好用 好看 好吃 难用 难看 难吃 超级 特别好
    """
)
_GENERIC_VALENCE = 2.0


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


# -- terms ----------------------------------------------------------------------------------


@cache
def _excluded() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from runlens_feedback.analyst.resources import impact_cues, lexicon, stopwords

    cues = [
        pattern.lower()
        for lang in ("en", "zh")
        for patterns in impact_cues(lang).values()
        for pattern in patterns
        if " " not in pattern
    ]
    exact = {cue for cue in cues if not cue.endswith("*")}
    prefixes = tuple(cue.rstrip("*") for cue in cues if cue.endswith("*"))

    def concrete(word: str) -> bool:
        return word in exact or word.startswith(prefixes)

    words: set[str] = set(ENGLISH_STOP_WORDS) | GENERIC_WORDS | GENERIC_SENTIMENT
    for lang in ("en", "zh"):
        lex = lexicon(lang)
        words |= stopwords(lang) | lex.modifier_words()
        words |= {
            word
            for word, value in lex.valences.items()
            if abs(value) >= _GENERIC_VALENCE and not concrete(word)
        }
    return frozenset(words)


def _singular(word: str) -> str:
    """Simple plurals folded ("chapters", "dishes"); "-ies" is left to `_plural_folds`,
    which knows the corpus ("movies" -> "movie", "batteries" -> "battery")."""
    if word.endswith("ies"):
        return word
    if word.endswith(("shes", "ches", "sses", "xes", "zzes")) and len(word) > 5:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _kept(word: str, cjk: bool, excluded: frozenset[str]) -> str | None:
    if cjk:
        return word if len(word) >= 2 and word not in excluded else None
    word = word.replace("'", "")
    if len(word) < 3 or not word.isalpha() or word in excluded:
        return None
    single = _singular(word)
    return None if single in excluded else single


def _words_of(text: str) -> list[tuple[str, bool] | None]:
    """(word, is Chinese) in order: the analyst's tokens (`analyst.tokens`) without offsets,
    with None where punctuation or a symbol stands between two words (no phrase spans it)."""
    from runlens_feedback.analyst.tokens import _CJK_RUN, _LATIN_TOKEN, _jieba, normalise_latin

    words: list[tuple[str, bool] | None] = []
    end = 0  # where the last word ended

    def latin_words(stop: int) -> None:
        nonlocal end
        for latin in _LATIN_TOKEN.finditer(text, end, stop):
            if text[end : latin.start()].strip():
                words.append(None)
            words.append((normalise_latin(latin.group()), False))
            end = latin.end()

    for run in _CJK_RUN.finditer(text):
        latin_words(run.start())
        if text[end : run.start()].strip():
            words.append(None)
        words.extend((word, True) for word in _jieba().lcut(run.group()))
        end = run.end()
    latin_words(len(text))
    return words


#: What U+FFFD becomes when UTF-8 is read as GBK, and what the replacement character leaves.
_DAMAGE_MARKS = ("\ufffd", "锟斤拷")


def damaged(text: str) -> bool:
    """Whether a text is mojibake (UTF-8 read in another encoding, by ftfy's badness
    heuristic, or the replacement character and its GBK reading): no theme is made of it."""
    if text.isascii():  # every mojibake pattern of ftfy holds a non-ASCII character
        return False
    import ftfy.badness

    return any(mark in text for mark in _DAMAGE_MARKS) or ftfy.badness.is_bad(text)


#: The prefix of a concept term (step 1): no tokenised word starts with it.
CONCEPT = "≈"
AREA_WEIGHT = 2
PROBLEM_WEIGHT = 3
#: Table themes that name no subject of their own: never a concept.
_NOT_CONCEPTS = frozenset(["feature_request", "praise"])


@cache
def _concept_patterns() -> tuple[
    dict[str, str], tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]
]:
    """The theme table's unambiguous one-word keywords as (exact English words, English
    prefixes, Chinese substrings), each with its concept term (`CONCEPT` + table key)."""
    from runlens_feedback.analyst.resources import themes
    from runlens_feedback.analyst.themes import AMBIGUOUS_KEYWORDS

    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    chinese: list[tuple[str, str]] = []
    for spec in themes():
        if spec.key in _NOT_CONCEPTS:
            continue
        concept = CONCEPT + spec.key
        for pattern in (*spec.keywords_en, *spec.keywords_zh):
            if " " in pattern or pattern in AMBIGUOUS_KEYWORDS:
                continue
            if not pattern.isascii():
                if len(pattern) >= 2:
                    chinese.append((pattern, concept))
            elif pattern.endswith("*"):
                prefixes.append((pattern[:-1].lower(), concept))
            else:
                exact.setdefault(pattern.lower(), concept)
    return exact, tuple(prefixes), tuple(chinese)


#: What a keyword's trailing `*` stands for in a concept (`concept_of`): inflections, so
#: "fee*" takes "fees" but not "feet" or "feeling".
_ENDINGS = _words("s es ed d ing er ers ion ions ation ations ment ments y ies ied ic ics ity") | {
    ""
}


@cache
def _concept_weight(concept: str) -> int:
    """How many times a concept counts in a row: `AREA_WEIGHT` for a table theme of kind
    "area" (export, dashboards), `PROBLEM_WEIGHT` for one of kind "problem" (billing,
    sign-in, crashes), so a row about a wrong charge that mentions an email is billing."""
    from runlens_feedback.analyst.resources import themes

    kinds = {CONCEPT + spec.key: spec.kind for spec in themes()}
    return PROBLEM_WEIGHT if kinds.get(concept) == "problem" else AREA_WEIGHT


@cache
def concept_of(term: str) -> str | None:
    """The concept of a kept word (step 1): the theme-table theme whose unambiguous keyword
    it is ("导出", "export", "exporting" -> "≈export"; "仪表盘", "dashboard" ->
    "≈dashboards_reports"), so one topic written in two languages shares a term."""
    exact, prefixes, chinese = _concept_patterns()
    if term.isascii():
        found = exact.get(term)
        if found is None:
            found = next(
                (
                    c
                    for prefix, c in prefixes
                    if term.startswith(prefix) and term[len(prefix) :] in _ENDINGS
                ),
                None,
            )
        return found
    return next((c for word, c in chinese if word in term), None)


def terms(text: str) -> list[str]:
    """The terms of one text (module docstring, step 1): kept words, adjacent bigrams and the
    words' concepts (`concept_of`, each once); none for a damaged text (`damaged`)."""
    if damaged(text):
        return []
    excluded = _excluded()
    found: list[str] = []
    concepts: dict[str, None] = {}
    previous_cjk: bool | None = None
    previous_term: str | None = None
    for found_word in _words_of(text):
        if found_word is None:  # punctuation: no phrase spans it
            previous_term = None
            continue
        word, cjk = found_word
        term = _kept(word, cjk, excluded)
        if term is None:
            previous_term = None
            previous_cjk = cjk
            continue
        found.append(term)
        concept = concept_of(term)
        if concept is not None:
            concepts[concept] = None
        if previous_term is not None and previous_cjk == cjk and previous_term != term:
            found.append(previous_term + term if cjk else f"{previous_term} {term}")
        previous_cjk, previous_term = cjk, term
    for concept in concepts:
        found.extend([concept] * _concept_weight(concept))
    return found


# -- discovery ------------------------------------------------------------------------------


def _plural_folds(rows: list[list[str]]) -> dict[str, str]:
    """ "-ies" words mapped to the singular the sample uses: "movie" when it has "movie",
    else "battery" when it has "battery"; left alone otherwise."""
    vocabulary = {term for row in rows for term in row if " " not in term}
    folds: dict[str, str] = {}
    for word in vocabulary:
        if word.endswith("ies") and len(word) > 4:
            for singular in (word[:-1], word[:-3] + "y"):
                if singular in vocabulary:
                    folds[word] = singular
                    break
    return folds


def _fold(row: list[str], folds: dict[str, str]) -> list[str]:
    if not folds:
        return row
    return [
        " ".join(folds.get(part, part) for part in term.split(" "))
        if " " in term
        else folds.get(term, term)
        for term in row
    ]


def _components(usable: int) -> int:
    if usable < MIN_USABLE_ROWS:
        return 0
    return min(TOP_LEVEL_THEMES, int(math.sqrt(usable)), max(1, usable // 4))


def _sample(count: int, limit: int) -> list[int]:
    if count <= limit:
        return list(range(count))
    step = count / limit
    return [int(i * step) for i in range(limit)]


def _chunks(count: int) -> Iterator[range]:
    for start in range(0, count, CHUNK_ROWS):
        yield range(start, min(start + CHUNK_ROWS, count))


def _tokenised(
    texts: Sequence[str],
    indices: Sequence[int],
    folds: dict[str, str] | None = None,
    known: dict[int, list[str]] | None = None,
) -> list[list[str]]:
    """`terms` of each text at `indices` (plural-folded with `folds`; `known` rows as they
    are), with a cancellation checkpoint every `CHECKPOINT_ROWS` rows."""
    rows: list[list[str]] = []
    for position, i in enumerate(indices):
        if position % CHECKPOINT_ROWS == 0:
            checkpoint()
        if known is not None and i in known:
            rows.append(known[i])
            continue
        row = terms(str(texts[i] or ""))
        rows.append(row if folds is None else _fold(row, folds))
    return rows


def discover_themes(texts: Sequence[str], *, vectors: bool | None = None) -> ThemeCatalogue:
    """The themes of `texts` and each text's theme (module docstring for the rules).

    `vectors`: topics from sentence vectors (True), from words only (False) or, by default,
    from sentence vectors when the encoder is installed."""
    count = len(texts)
    fit_rows = _sample(count, FIT_ROWS)
    fit_terms = _tokenised(texts, fit_rows)
    folds = _plural_folds(fit_terms)
    fit_terms = [_fold(row, folds) for row in fit_terms]
    usable = sum(1 for row in fit_terms if row)
    k = _components(usable)
    if not k:
        return ThemeCatalogue([], [OTHER] * count)
    if vectors is None:
        from runlens_feedback import embedding

        vectors = embedding.available()
    import numpy as np

    fixed: dict[int, int] = {}  # row -> leaf decided by its sentence vector (-1: an outlier)
    if vectors:
        found = _vector_topics(texts, fit_rows, fit_terms, usable)
        if found is None:
            return ThemeCatalogue([], [OTHER] * count)
        root, fixed, fit_labels, fit_matrix = found
        leaf_count = root.model.k
    else:
        top = _fit(fit_terms, k, usable)
        if top is None:
            return ThemeCatalogue([], [OTHER] * count)
        root = _Node(top, list(range(top.k)))
        leaf_count, fit_labels, fit_matrix = _grow(root, fit_terms)
    vectorizer = root.model.vectorizer
    vocabulary = vectorizer.get_feature_names_out()
    anchors = _anchors(
        fit_matrix, fit_labels, leaf_count, VECTOR_ANCHOR_TERMS if vectors else ANCHOR_TERMS
    )
    del fit_matrix
    labels = np.full(count, -1, dtype=np.int32)
    # term counts per theme (binary per row) over the rows the topics placed (steps 4-4b, not
    # 4c): the class-based TF-IDF's input for names and cohesion
    class_counts = np.zeros((leaf_count, len(vocabulary)), dtype=np.float64)
    core_sizes = np.zeros(leaf_count, dtype=np.int64)
    cached = dict(zip(fit_rows, fit_terms, strict=True))  # at most FIT_ROWS rows
    for chunk in _chunks(count):
        chunk_terms = _tokenised(texts, chunk, folds, cached)
        matrix = vectorizer.transform(chunk_terms)
        chunk_labels = root.assign(chunk_terms, matrix)
        decided = np.zeros(len(chunk), dtype=bool)
        for position, row in enumerate(chunk):
            if row in fixed:  # an outlier (-1) may still join a theme by its anchors (4c)
                chunk_labels[position] = fixed[row]
                decided[position] = fixed[row] >= 0
        present = matrix.copy()
        present.data[:] = 1.0
        for leaf in range(leaf_count):
            members = np.flatnonzero(chunk_labels == leaf)
            if len(members):
                class_counts[leaf] += np.asarray(present[members].sum(axis=0)).ravel()
        placed = chunk_labels[chunk_labels >= 0]
        core_sizes += np.bincount(placed, minlength=leaf_count)
        second = _second_chance(chunk_labels, present, anchors)
        labels[chunk.start : chunk.stop] = np.where(decided, chunk_labels, second)
    sizes = np.bincount(labels[labels >= 0], minlength=leaf_count)
    return _catalogue(
        labels, sizes, core_sizes, class_counts, vocabulary, count, cohesion=not vectors
    )


def _vector_components(usable: int) -> int:
    """Step 3 with sentence vectors: `min(TOP_LEVEL_THEMES, sqrt(n / VECTOR_ROWS_PER_TOPIC),
    n // 4)` topics, at least 1 (splits may add themes up to `MAX_THEMES`)."""
    return max(
        1, min(TOP_LEVEL_THEMES, int(math.sqrt(usable / VECTOR_ROWS_PER_TOPIC)), usable // 4)
    )


def _sense_splits(leaves: Any, rows: list[list[str]], points: Any) -> Any:
    """Step 4b with sentence vectors: a cluster whose rows, once the words most of them
    share are left out, fall into groups that share no word at all (`_split`'s disconnected
    case; each part at least `max(3, 1%)` rows) can be cut in two: the "server" of a waiter
    and of a web service. Cuts are made while the themes number under `MAX_THEMES`, those
    whose parts mean the most different things first (lowest cosine between the parts'
    mean sentence vectors)."""
    import numpy as np

    leaves = leaves.copy()
    minimum = max(3, math.ceil(0.01 * len(rows)))
    count = int(leaves.max()) + 1 if len(leaves) else 0
    cuts = []
    for leaf in range(count):
        members = np.flatnonzero(leaves == leaf)
        if len(members) < 4 * minimum:
            continue
        own = [rows[i] for i in members.tolist()]
        found = _split(own, minimum)
        if found is None or found[1] != 0:
            continue
        split = found[0]
        sides = _Node(split, [0, 1]).assign(own, split.vectorizer.transform(own), top=False)
        if not minimum <= int((sides == 1).sum()) <= len(own) - minimum:
            continue
        halves = [points[members[sides == side]].mean(axis=0) for side in (0, 1)]
        norms = [max(float(np.linalg.norm(half)), 1e-12) for half in halves]
        cosine = float(halves[0] @ halves[1]) / (norms[0] * norms[1])
        cuts.append((cosine, leaf, members[sides == 1]))
    for _, _, moved in sorted(cuts, key=lambda cut: cut[:2]):
        if count >= MAX_THEMES:
            break
        leaves[moved] = count
        count += 1
    return leaves


def _one_per_concept(leaves: Any, concepts: Any) -> Any:
    """Clusters that one concept (step 1, not an everyday one) holds together are one theme:
    two clusters merge when the same concept is in at least `CONCEPT_MERGE_SHARE` of the
    rows of each ("导出周报太慢" and "Export to Excel fails": export). Leaves are renumbered
    from 0 in the order of their lowest old id."""
    import numpy as np

    count = int(leaves.max()) + 1 if len(leaves) else 0
    held = concepts > 0
    parent = list(range(count))

    def root(leaf: int) -> int:
        while parent[leaf] != leaf:
            leaf = parent[leaf]
        return leaf

    owner: dict[int, int] = {}  # concept -> the first cluster it holds together
    for leaf in range(count):
        members = leaves == leaf
        size = int(members.sum())
        if not size:
            continue
        shares = held[members].sum(axis=0) / size
        top = shares.max() if shares.size else 0.0
        for concept in np.flatnonzero((shares >= CONCEPT_MERGE_SHARE) & (shares == top)).tolist():
            if concept in owner:
                low, high = sorted((root(owner[concept]), root(leaf)))
                parent[high] = low
            else:
                owner[concept] = leaf
    roots = sorted({root(leaf) for leaf in range(count)})
    renumber = {old: new for new, old in enumerate(roots)}
    return np.array([renumber[root(int(leaf))] for leaf in leaves], dtype=np.int32)


def _concept_vectors(rows: list[list[str]], chosen: list[int]) -> Any:
    """Each chosen row's concepts (step 1) as an L2-normalised vector of their counts; not
    the everyday ones (service, delivery, quality: `analyst.themes.EVERYDAY_THEMES`), which
    every domain has, so a waiter's and a hotel desk's rows are not drawn together."""
    import numpy as np

    from runlens_feedback.analyst.themes import EVERYDAY_THEMES

    everyday = {CONCEPT + key for key in EVERYDAY_THEMES}
    concepts = sorted(
        {t for j in chosen for t in rows[j] if t.startswith(CONCEPT) and t not in everyday}
    )
    index = {concept: i for i, concept in enumerate(concepts)}
    out = np.zeros((len(chosen), max(1, len(concepts))), dtype=np.float32)
    for position, j in enumerate(chosen):
        for term in rows[j]:
            if term in index:
                out[position, index[term]] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def _vector_topics(
    texts: Sequence[str], fit_rows: list[int], fit_terms: list[list[str]], usable: int
) -> tuple[_Node, dict[int, int], Any, Any] | None:
    """Steps 3-4 with sentence vectors: k-means over the vectors of at most `VECTOR_ROWS`
    rows with terms (evenly spaced); the `OUTLIER_SHARE` of them farthest from their
    centre are "other". Returns the word model that places every other row (each topic's
    mean TF-IDF over its rows), the leaf of each encoded row, and the fit sample's leaves
    and TF-IDF matrix (for the anchors of step 4c)."""
    import numpy as np
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    from runlens_feedback import embedding

    vectorizer = _vectorizer(usable, max_df=VECTOR_MAX_DF)
    try:
        fit_matrix = vectorizer.fit_transform(fit_terms)
    except ValueError:  # no term survives the document-frequency bounds
        return None
    with_terms = [j for j, row in enumerate(fit_terms) if row]
    chosen = [with_terms[j] for j in _sample(len(with_terms), VECTOR_ROWS)]
    k = min(_vector_components(usable), len(chosen))
    if k < 1:
        return None
    chosen_texts = [str(texts[fit_rows[j]] or "") for j in chosen]
    points = embedding.sentence_vectors(chosen_texts)
    concepts = _concept_vectors(fit_terms, chosen)
    joined = np.hstack([points, CONCEPT_WEIGHT * concepts]) if CONCEPT_WEIGHT > 0 else points
    k = min(k, len(np.unique(joined.round(6), axis=0)))  # never more topics than distinct rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct rows than k
        model = KMeans(n_clusters=k, n_init=KMEANS_STARTS, random_state=0).fit(joined)
    leaves = _one_per_concept(model.labels_.astype(np.int32), concepts)
    leaves = _sense_splits(leaves, [fit_terms[j] for j in chosen], points)
    k = int(leaves.max()) + 1
    centres = np.vstack(
        [
            points[leaves == leaf].mean(axis=0) if (leaves == leaf).any() else points[0] * 0
            for leaf in range(k)
        ]
    )
    centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    closeness = np.einsum("ij,ij->i", points, centres[leaves])
    outliers = int(len(chosen) * OUTLIER_SHARE)
    if outliers:
        farthest = np.argsort(closeness, kind="stable")[:outliers]
        leaves[farthest] = -1
    fit_labels = np.full(len(fit_terms), -1, dtype=np.int32)
    fit_labels[chosen] = leaves
    centroids = np.zeros((k, fit_matrix.shape[1]), dtype=np.float32)
    for leaf in range(k):
        members = np.flatnonzero(fit_labels == leaf)
        if len(members):
            centroids[leaf] = np.asarray(fit_matrix[members].mean(axis=0)).ravel()
    norms = np.linalg.norm(centroids, axis=1, keepdims=True)
    words = _Model(vectorizer, centroids / np.where(norms > 0, norms, 1.0), k)
    fixed = {fit_rows[j]: int(leaf) for j, leaf in zip(chosen, leaves.tolist(), strict=True)}
    return _Node(words, list(range(k))), fixed, fit_labels, fit_matrix


@dataclass
class _Model:
    """A TF-IDF vectorizer and its L2-normalised NMF topics."""

    vectorizer: Any
    topics: Any
    k: int

    def assign(self, matrix: Any) -> Any:
        """Each row's topic by cosine, -1 below `MIN_SIMILARITY` (module docstring)."""
        import numpy as np

        scores = np.asarray(matrix @ self.topics.T)
        if not scores.shape[0]:
            return np.zeros(0, dtype=np.int32)
        best = scores.argmax(axis=1)
        strong = scores[np.arange(scores.shape[0]), best] >= MIN_SIMILARITY
        return np.where(strong, best, -1).astype(np.int32)


@dataclass
class _Node:
    """A topic model whose topics are leaves (theme ids) or further splits (step 4b)."""

    model: _Model
    children: list[int | _Node]

    def assign(self, rows: list[list[str]], matrix: Any, *, top: bool = True) -> Any:
        """Each row's leaf id; -1 ("other") only at the top: a row of a split topic whose
        words the split does not know stays in the first half."""
        import numpy as np

        topics = self.model.assign(matrix)
        if not top:
            topics = np.where(topics < 0, 0, topics)
        leaves = np.full(len(rows), -1, dtype=np.int32)
        for index, child in enumerate(self.children):
            picked = np.flatnonzero(topics == index)
            if not len(picked):
                continue
            if isinstance(child, int):
                leaves[picked] = child
            else:
                sub_rows = [rows[i] for i in picked.tolist()]
                sub_matrix = child.model.vectorizer.transform(sub_rows)
                leaves[picked] = child.assign(sub_rows, sub_matrix, top=False)
        return leaves


def _grow(root: _Node, rows: list[list[str]]) -> tuple[int, Any, Any]:
    """Split leaves (step 4b) while the themes number under the budget; the leaf count,
    each row's leaf (-1: left for step 4c) and the rows' TF-IDF matrix."""
    import numpy as np

    usable = sum(1 for row in rows if row)
    budget = min(MAX_THEMES, max(len(root.children), int(math.sqrt(usable / 2))))
    minimum = max(3, math.ceil(0.01 * len(rows)))
    matrix = root.model.vectorizer.transform(rows)
    labels = root.assign(rows, matrix)
    leaf_count = len(root.children)
    parents: dict[int, tuple[_Node, int]] = {
        leaf: (root, index) for index, leaf in enumerate(root.children) if isinstance(leaf, int)
    }
    tried: dict[int, tuple[_Model, int] | None] = {}
    while leaf_count < budget:
        candidates = []
        for leaf in range(leaf_count):
            members = np.flatnonzero(labels == leaf)
            if leaf not in tried:
                tried[leaf] = (
                    _split([rows[i] for i in members.tolist()], minimum)
                    if len(members) >= 4 * minimum
                    else None
                )
            found = tried[leaf]
            if found is not None:
                candidates.append((found[1], -len(members), leaf, found[0]))
        if not candidates:
            break
        # the most distinct halves first (fewest shared top terms), then the biggest theme
        _, _, leaf, model = min(candidates, key=lambda candidate: candidate[:3])
        node = _Node(model, [leaf, leaf_count])
        parent, index = parents[leaf]
        parent.children[index] = node
        parents[leaf], parents[leaf_count] = (node, 0), (node, 1)
        members = np.flatnonzero(labels == leaf)
        sub_rows = [rows[i] for i in members.tolist()]
        labels[members] = node.assign(sub_rows, model.vectorizer.transform(sub_rows), top=False)
        del tried[leaf]
        leaf_count += 1
    return leaf_count, labels, matrix


def _vectorizer(usable: int, *, max_df: float = 0.5, min_df: int | None = None) -> Any:
    """Step 2's TF-IDF (module docstring)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer=_identity,
        min_df=min_df or (2 if usable >= 50 else 1),
        max_df=max_df if usable >= 50 else 1.0,
        max_features=MAX_FEATURES,
        sublinear_tf=True,
        dtype=np.float32,
    )


def _fit(
    rows: list[list[str]], k: int, usable: int, *, max_df: float = 0.5, min_df: int | None = None
) -> _Model | None:
    import numpy as np
    from sklearn.decomposition import NMF

    vectorizer = _vectorizer(usable, max_df=max_df, min_df=min_df)
    try:
        fitted = vectorizer.fit_transform(rows)
    except ValueError:  # no term survives the document-frequency bounds
        return None
    k = min(k, fitted.shape[1], fitted.shape[0])
    if k == 0:
        return None
    model = NMF(n_components=k, init="nndsvda", random_state=0, max_iter=400)
    with warnings.catch_warnings():
        # repeated rows are reconstructed exactly: a rounding residual below zero, harmless
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*[Cc]onverge.*")
        model.fit(fitted)
    topics = model.components_.astype(np.float32)
    norms = np.linalg.norm(topics, axis=1, keepdims=True)
    return _Model(vectorizer, topics / np.where(norms > 0, norms, 1.0), k)


def _split(members: list[list[str]], minimum: int) -> tuple[_Model, int] | None:
    """Two sub-themes of one theme's rows (step 4b), or None when they are one theme.

    Re-vectorised over the theme's own rows, a word they all share (the "server" of a
    waiter and of a web service) stops counting. When the rows then fall apart into groups
    that share no word at all, the second biggest group and the rest are the halves (0
    shared terms); otherwise the two NMF halves are kept apart when their top 8 terms share at
    most 2. Each half needs `minimum` rows. Returns the split and its shared-term count."""
    import numpy as np

    split = _fit(members, 2, len(members), max_df=0.4, min_df=2)
    if split is None or split.k < 2:
        return None
    matrix = split.vectorizer.transform(members)
    sides = _disconnected(matrix, minimum)
    if sides is not None:
        return _centroids(split.vectorizer, matrix, sides), 0
    sides = split.assign(matrix)
    vocabulary = split.vectorizer.get_feature_names_out()
    tops = []
    for side in (0, 1):
        rows = np.flatnonzero(sides == side)
        if len(rows) < minimum:
            return None
        weights = np.asarray(matrix[rows].mean(axis=0)).ravel()
        order = np.argsort(-weights, kind="stable")[:KEYWORDS]
        tops.append({str(vocabulary[i]) for i in order if weights[i] > 0})
    shared = len(tops[0] & tops[1])
    return (split, shared) if shared <= 2 else None


def _disconnected(matrix: Any, minimum: int) -> Any:
    """Sides (1: the second biggest group of rows linked by shared terms, 0: the rest)
    when both have `minimum` rows, else None. Linear in the matrix's entries."""
    import numpy as np
    from scipy.sparse import bmat
    from scipy.sparse.csgraph import connected_components

    rows = matrix.shape[0]
    graph = bmat([[None, matrix], [matrix.T, None]], format="csr")
    _, component = connected_components(graph, directed=False)
    has_terms = np.asarray(matrix.getnnz(axis=1)).ravel() > 0
    counted = np.bincount(component[:rows][has_terms])
    if not counted.size:
        return None
    if counted.size < 2:
        return None
    second = int(np.argsort(-counted, kind="stable")[1])
    sides = np.where((component[:rows] == second) & has_terms, 1, 0).astype(np.int32)
    other = int(sides.sum())
    if other < minimum or rows - other < minimum:
        return None
    return sides


def _centroids(vectorizer: Any, matrix: Any, sides: Any) -> _Model:
    import numpy as np

    centres = np.vstack(
        [np.asarray(matrix[np.flatnonzero(sides == side)].mean(axis=0)).ravel() for side in (0, 1)]
    ).astype(np.float32)
    norms = np.linalg.norm(centres, axis=1, keepdims=True)
    return _Model(vectorizer, centres / np.where(norms > 0, norms, 1.0), 2)


def _identity(row: list[str]) -> list[str]:
    return row


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


def _anchors(matrix: Any, labels: Any, leaf_count: int, top: int = ANCHOR_TERMS) -> Any:
    """Step 4c's term weights (leaves x terms): each leaf's `top` most distinctive terms by
    class-based TF-IDF over the sample rows the topics placed, 0 elsewhere."""
    import numpy as np

    present = matrix.copy()
    present.data[:] = 1.0
    counts = np.zeros((leaf_count, matrix.shape[1]), dtype=np.float64)
    for leaf in range(leaf_count):
        members = np.flatnonzero(labels == leaf)
        if len(members):
            counts[leaf] = np.asarray(present[members].sum(axis=0)).ravel()
    scores = _class_tfidf(counts)
    share = counts / np.maximum(counts.sum(axis=0, keepdims=True), 1.0)
    counts_ok = (counts >= ANCHOR_MIN_ROWS) & (share >= ANCHOR_SHARE)
    weights = np.zeros_like(scores, dtype=np.float32)
    vocabulary_order = np.arange(scores.shape[1])
    for leaf in range(leaf_count):
        order = np.lexsort((vocabulary_order, -scores[leaf]))[:top]
        order = order[(scores[leaf, order] > 0) & counts_ok[leaf, order]]
        weights[leaf, order] = scores[leaf, order]
    return weights


def _second_chance(labels: Any, present: Any, anchors: Any) -> Any:
    """Step 4c: a row the topics left in "other" that holds any anchor term joins the leaf
    whose anchors it holds with the highest summed weight (the lowest leaf on a tie)."""
    import numpy as np

    labels = labels.copy()
    unplaced = np.flatnonzero(labels < 0)
    if not len(unplaced) or not anchors.shape[0]:
        return labels
    scores = np.asarray(present[unplaced] @ anchors.T)
    best = scores.argmax(axis=1)  # the first maximum: the lowest leaf on a tie
    held = scores[np.arange(len(unplaced)), best] > 0
    labels[unplaced[held]] = best[held]
    return labels


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


@cache
def _measure_words() -> frozenset[str]:
    """The words the report's figures are labelled with ("rows", "negative", "严重"): a
    theme named by one would have its figures read as that measure's, so none is a name."""
    from runlens_feedback import figures

    return frozenset(getattr(figures, "_GENERIC_TERMS", frozenset()))


@cache
def _reserved_keys() -> frozenset[str]:
    """Keys with a meaning of their own elsewhere: the analyst's theme table, praise,
    empty, feature requests, "other" and the aggregate's unspecified group."""
    from runlens_feedback.analyst.resources import theme_by_key

    return frozenset([*theme_by_key(), OTHER, "praise", "empty", "feature_request", "unspecified"])


def _key(name: str) -> str:
    return "_".join(name.casefold().split())


def theme_name(key: str) -> str:
    """A theme's name read back from its key ("battery_·_charging" -> "Battery · charging"):
    what a consumer that only sees an item's `theme` shows."""
    words = " ".join(key.replace("_", " ").split())
    return words[:1].upper() + words[1:]


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
