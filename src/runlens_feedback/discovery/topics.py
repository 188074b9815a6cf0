"""Steps 2-4c of theme discovery with words only: TF-IDF, NMF topics, splits by word
sense and the second chance by anchor terms.

`_Model` is a vectorizer with its topics, `_Node` a topic model whose topics are themes or
further splits; `_anchors` and `_second_chance` place the rows the topics left out. The
package docstring (`runlens_feedback.discovery`) has every rule.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

from runlens_feedback.discovery.catalogue import KEYWORDS, MAX_THEMES, _class_tfidf

#: Topics of the first level; splits (step 4b) may add themes up to MAX_THEMES.
TOP_LEVEL_THEMES = 12
MIN_SIMILARITY = 0.05
#: Step 4c (tuned on training corpora only, docs/quality.md): of a leaf's top ANCHOR_TERMS
#: terms by class-based TF-IDF, the anchors are those in at least ANCHOR_MIN_ROWS of its
#: placed sample rows and with at least ANCHOR_SHARE of the term's placed sample rows.
ANCHOR_TERMS = 40
ANCHOR_MIN_ROWS = 2
ANCHOR_SHARE = 0.25
MAX_FEATURES = 20_000


def _sample(count: int, limit: int) -> list[int]:
    if count <= limit:
        return list(range(count))
    step = count / limit
    return [int(i * step) for i in range(limit)]


@dataclass
class _Model:
    """A TF-IDF vectorizer and its L2-normalised NMF topics."""

    vectorizer: Any
    topics: Any
    k: int

    def assign(self, matrix: Any) -> Any:
        """Each row's topic by cosine, -1 below `MIN_SIMILARITY` (package docstring)."""
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
    """Step 2's TF-IDF (package docstring)."""
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
