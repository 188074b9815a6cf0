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

Cost: tokenising is linear in the rows (each sample row is tokenised once, and a repeated
text once among the last `REMEMBERED_TEXTS`); fitting is bounded by the sample (so are the
anchors); assignment is one sparse product per chunk and per split it passes, plus one for
the chunk's rows left to step 4c.
Encoding is bounded by `VECTOR_ROWS` (about 2 ms a short row, 10 ms a long review, on one
core, plus about 1.5 s to load the encoder once per process); it runs on a thread of its own
while up to `AHEAD_CHUNKS` chunks of rows are tokenised, and k-means runs on one BLAS/OpenMP
thread.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from runlens import checkpoint
from runlens_feedback.discovery.catalogue import (
    KEYWORDS,
    MAX_THEMES,
    MIN_COHESION,
    OTHER,
    PHRASE_MIN_ROWS,
    PHRASE_WINDOW,
    Theme,
    ThemeCatalogue,
    _catalogue,
    _measure_words,
    theme_name,
)
from runlens_feedback.discovery.topics import (
    ANCHOR_MIN_ROWS,
    ANCHOR_SHARE,
    ANCHOR_TERMS,
    MAX_FEATURES,
    MIN_SIMILARITY,
    TOP_LEVEL_THEMES,
    _anchors,
    _fit,
    _grow,
    _Node,
    _sample,
    _second_chance,
)
from runlens_feedback.discovery.vectors import (
    CONCEPT_MERGE_SHARE,
    CONCEPT_WEIGHT,
    KMEANS_STARTS,
    OUTLIER_SHARE,
    VECTOR_ANCHOR_TERMS,
    VECTOR_MAX_DF,
    VECTOR_ROWS,
    VECTOR_ROWS_PER_TOPIC,
    Encoding,
    _vector_topics,
)
from runlens_feedback.discovery.vocabulary import (
    AREA_WEIGHT,
    CONCEPT,
    GENERIC_SENTIMENT,
    GENERIC_WORDS,
    PROBLEM_WEIGHT,
    _fold,
    _plural_folds,
    concept_of,
    damaged,
    terms,
    undamaged_terms,
)

FIT_ROWS = 20_000
CHUNK_ROWS = 10_000
MIN_USABLE_ROWS = 5
#: Rows tokenised between two cancellation checkpoints: tokenising is most of the work, and a
#: cancelled run must stop within a second, not when discovery ends.
CHECKPOINT_ROWS = 200
#: Texts whose terms one discovery remembers (the most recent ones, about 16 MB): feedback
#: repeats itself ("很好用", "Great app", a form's stock answers), and a text's terms
#: depend on the text alone, so a repeated text is tokenised once.
REMEMBERED_TEXTS = 16_384
#: Chunks tokenised ahead while the sentence encoder runs on its own thread (step 3v).
AHEAD_CHUNKS = 4

__all__ = [
    "ANCHOR_MIN_ROWS",
    "ANCHOR_SHARE",
    "ANCHOR_TERMS",
    "AREA_WEIGHT",
    "CHECKPOINT_ROWS",
    "CHUNK_ROWS",
    "CONCEPT",
    "CONCEPT_MERGE_SHARE",
    "CONCEPT_WEIGHT",
    "FIT_ROWS",
    "GENERIC_SENTIMENT",
    "GENERIC_WORDS",
    "KEYWORDS",
    "KMEANS_STARTS",
    "MAX_FEATURES",
    "MAX_THEMES",
    "MIN_COHESION",
    "MIN_SIMILARITY",
    "MIN_USABLE_ROWS",
    "OTHER",
    "OUTLIER_SHARE",
    "PHRASE_MIN_ROWS",
    "PHRASE_WINDOW",
    "PROBLEM_WEIGHT",
    "TOP_LEVEL_THEMES",
    "VECTOR_ANCHOR_TERMS",
    "VECTOR_MAX_DF",
    "VECTOR_ROWS",
    "VECTOR_ROWS_PER_TOPIC",
    "Theme",
    "ThemeCatalogue",
    "_measure_words",
    "concept_of",
    "damaged",
    "discover_themes",
    "terms",
    "theme_name",
]


def _components(usable: int) -> int:
    if usable < MIN_USABLE_ROWS:
        return 0
    return min(TOP_LEVEL_THEMES, int(math.sqrt(usable)), max(1, usable // 4))


def _chunks(count: int) -> Iterator[range]:
    for start in range(0, count, CHUNK_ROWS):
        yield range(start, min(start + CHUNK_ROWS, count))


def _tokenised(
    texts: Sequence[str],
    indices: Sequence[int],
    folds: dict[str, str] | None = None,
    known: dict[int, list[str]] | None = None,
    *,
    keep: bool = False,
    memory: dict[str, tuple[tuple[str, ...], bool]] | None = None,
) -> list[list[str]]:
    """`terms` of each text at `indices` (plural-folded with `folds`; `known` rows as they
    are), with a cancellation checkpoint every `CHECKPOINT_ROWS` rows. `keep`: keep each
    text's segmentation for its analysis (`terms`), once per row. `memory`: the terms of
    texts seen before, and whether each was segmented (not `damaged`), to reuse and add to
    (at most `REMEMBERED_TEXTS`, the oldest dropped first)."""
    from runlens_feedback.analyst.tokens import cjk_words

    rows: list[list[str]] = []
    for position, i in enumerate(indices):
        if position % CHECKPOINT_ROWS == 0:
            checkpoint()
        if known is not None and i in known:
            rows.append(known[i])
            continue
        text = str(texts[i] or "")
        seen = memory.get(text) if memory is not None else None
        if seen is None:
            segmented = not damaged(text)
            row = undamaged_terms(text, keep=keep) if segmented else []
            if memory is not None:
                if len(memory) >= REMEMBERED_TEXTS:
                    del memory[next(iter(memory))]
                memory[text] = (tuple(row), segmented)
        else:
            row = list(seen[0])
            if keep and seen[1]:
                cjk_words(text, keep=True)  # this row's share of the kept segmentation
        rows.append(row if folds is None else _fold(row, folds))
    return rows


def discover_themes(
    texts: Sequence[str], *, vectors: bool | None = None, keep_segmentation: bool = False
) -> ThemeCatalogue:
    """The themes of `texts` and each text's theme (package docstring for the rules).

    `vectors`: topics from sentence vectors (True), from words only (False) or, by default,
    from sentence vectors when the encoder is installed. `keep_segmentation`: keep each
    text's segmentation for the analysis of its row that follows (`analyst.tokens`), so a
    run segments each row once; segmentations kept before are dropped first."""
    if keep_segmentation:
        from runlens_feedback.analyst.tokens import forget_segmentations

        forget_segmentations()
    count = len(texts)
    fit_rows = _sample(count, FIT_ROWS)
    memory: dict[str, tuple[tuple[str, ...], bool]] = {}
    fit_terms = _tokenised(texts, fit_rows, keep=keep_segmentation, memory=memory)
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

    cached = dict(zip(fit_rows, fit_terms, strict=True))  # at most FIT_ROWS rows
    fixed: dict[int, int] = {}  # row -> leaf decided by its sentence vector (-1: an outlier)
    # chunk start -> its rows' terms, tokenised while the sentence encoder runs (3v)
    ahead: dict[int, list[list[str]]] = {}
    if vectors:
        encoding = Encoding(texts, fit_rows, fit_terms)
        for chunk in _chunks(count):
            if encoding.done() or len(ahead) >= AHEAD_CHUNKS:
                break
            ahead[chunk.start] = _tokenised(
                texts, chunk, folds, cached, keep=keep_segmentation, memory=memory
            )
        found = _vector_topics(texts, fit_rows, fit_terms, usable, encoding)
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
    for chunk in _chunks(count):
        chunk_terms = ahead.pop(chunk.start, None)
        if chunk_terms is None:
            chunk_terms = _tokenised(
                texts, chunk, folds, cached, keep=keep_segmentation, memory=memory
            )
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
