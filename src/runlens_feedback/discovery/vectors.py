"""Step 3v of theme discovery: topics from sentence vectors (the default when the encoder
is installed, `runlens_feedback.embedding`).

k-means over the encoded rows joined by their concepts, clusters one concept holds together
merged, clusters whose rows share no word cut by sense, the farthest rows left for the
anchors. The package docstring (`runlens_feedback.discovery`) has every rule; the settings
were chosen on development data only (`benchmarks/tune_vector_themes.py`, docs/quality.md).
"""

from __future__ import annotations

import contextvars
import math
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from runlens_feedback.discovery.catalogue import MAX_THEMES
from runlens_feedback.discovery.topics import (
    TOP_LEVEL_THEMES,
    _Model,
    _Node,
    _sample,
    _split,
    _vectorizer,
)
from runlens_feedback.discovery.vocabulary import CONCEPT

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


def _encoded_rows(fit_terms: list[list[str]]) -> list[int]:
    """The fit sample's rows that step 3v encodes: at most `VECTOR_ROWS` of those with
    terms, evenly spaced."""
    with_terms = [j for j, row in enumerate(fit_terms) if row]
    return [with_terms[j] for j in _sample(len(with_terms), VECTOR_ROWS)]


class Encoding:
    """The sentence vectors of the rows step 3v encodes (`_encoded_rows`), computed on a
    thread of their own: the encoder spends its time in numpy, which lets the caller's
    thread tokenise the other rows meanwhile. The thread runs in the caller's context, so a
    cancelled run stops it at its next checkpoint too."""

    def __init__(self, texts: Sequence[str], fit_rows: list[int], fit_terms: list[list[str]]):
        self.chosen = _encoded_rows(fit_terms)
        chosen_texts = [str(texts[fit_rows[j]] or "") for j in self.chosen]
        self._points: Any = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run,
            args=(self._encode, chosen_texts),
            name="runlens-sentence-vectors",
            daemon=True,
        )
        self._thread.start()

    def _encode(self, chosen_texts: list[str]) -> None:
        from runlens_feedback import embedding

        try:
            self._points = embedding.sentence_vectors(chosen_texts)
        except BaseException as error:  # handed to the caller by `points`
            self._error = error

    def done(self) -> bool:
        return not self._thread.is_alive()

    def points(self) -> Any:
        """The vectors, one row per encoded row (waits for the thread)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._points


def _vector_topics(
    texts: Sequence[str],
    fit_rows: list[int],
    fit_terms: list[list[str]],
    usable: int,
    encoding: Encoding | None = None,
) -> tuple[_Node, dict[int, int], Any, Any] | None:
    """Steps 3-4 with sentence vectors: k-means over the vectors of at most `VECTOR_ROWS`
    rows with terms (evenly spaced); the `OUTLIER_SHARE` of them farthest from their
    centre are "other". Returns the word model that places every other row (each topic's
    mean TF-IDF over its rows), the leaf of each encoded row, and the fit sample's leaves
    and TF-IDF matrix (for the anchors of step 4c). `encoding`: the vectors, already being
    computed (`Encoding`); by default they are computed here."""
    import numpy as np
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    from runlens_feedback import embedding

    vectorizer = _vectorizer(usable, max_df=VECTOR_MAX_DF)
    try:
        fit_matrix = vectorizer.fit_transform(fit_terms)
    except ValueError:  # no term survives the document-frequency bounds
        return None
    chosen = encoding.chosen if encoding is not None else _encoded_rows(fit_terms)
    k = min(_vector_components(usable), len(chosen))
    if k < 1:
        return None
    if encoding is not None:
        points = encoding.points()
    else:
        points = embedding.sentence_vectors([str(texts[fit_rows[j]] or "") for j in chosen])
    concepts = _concept_vectors(fit_terms, chosen)
    joined = np.hstack([points, CONCEPT_WEIGHT * concepts]) if CONCEPT_WEIGHT > 0 else points
    k = min(k, len(np.unique(joined.round(6), axis=0)))  # never more topics than distinct rows
    # One BLAS/OpenMP thread, as the encoder: the same clusters on any number of cores, and
    # k-means++ makes many small products, which a thread pool slows down several times
    # over on a busy machine (threads waiting for each other instead of computing).
    with warnings.catch_warnings(), threadpool_limits(limits=1):
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
