"""The sentence encoder behind theme discovery, and discovery with and without it."""

from __future__ import annotations

from collections import Counter

import pytest

from runlens_feedback import discovery, embedding
from runlens_feedback.discovery import OTHER, discover_themes

from .corpus import mixed_corpus


def test_the_encoder_is_installed_and_loads() -> None:
    assert embedding.available()


def test_one_topic_in_two_languages_is_near_and_other_topics_are_far() -> None:
    texts = [
        "导出周报太慢了，每次都要等三分钟。",
        "Exporting the weekly report is far too slow.",
        "The waiter forgot our order and the soup came cold.",
        "电池一晚上就没电了。",
    ]
    vectors = embedding.sentence_vectors(texts)
    assert vectors.shape == (4, embedding.DIMENSIONS)
    similarity = vectors @ vectors.T
    assert abs(float(similarity[0, 0]) - 1.0) < 1e-4  # L2-normalised
    assert similarity[0, 1] > similarity[0, 2] + 0.1
    assert similarity[0, 1] > similarity[0, 3] + 0.1
    assert similarity[1, 0] > similarity[1, 2]


def test_what_is_encoded_is_bounded_and_never_empty() -> None:
    long = "word " * 10_000
    assert len(embedding.prepared(long)) == embedding.TEXT_CHARS
    assert embedding.prepared("  a \n\t b  ") == "a b"
    vectors = embedding.sentence_vectors(["", "   ", long])
    assert vectors.shape == (3, embedding.DIMENSIONS)
    assert (abs((vectors**2).sum(axis=1) - 1.0) < 1e-4).all()


def test_vectors_are_deterministic() -> None:
    texts, _ = mixed_corpus(20)
    first = embedding.sentence_vectors(texts[:50])
    again = embedding.sentence_vectors(texts[:50])
    assert (first == again).all()


@pytest.mark.parametrize("vectors", [True, False])
def test_both_ways_give_each_domain_its_themes(vectors: bool) -> None:
    texts, domains = mixed_corpus()
    catalogue = discover_themes(texts, vectors=vectors)
    by_theme: dict[str, Counter[str]] = {}
    for key, domain in zip(catalogue.assignments, domains, strict=True):
        by_theme.setdefault(key, Counter())[domain] += 1
    leaders = {by_theme[t.key].most_common(1)[0][0] for t in catalogue.themes}
    assert leaders == set(domains)
    for theme in catalogue.themes:
        assert by_theme[theme.key].most_common(1)[0][1] >= 0.9 * theme.rows, theme.name


def test_without_the_encoder_discovery_falls_back_to_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts, _ = mixed_corpus()
    monkeypatch.setattr(embedding, "available", lambda: False)

    def no_vectors(texts: object) -> object:
        raise AssertionError("the encoder is not used when it is not available")

    monkeypatch.setattr(embedding, "sentence_vectors", no_vectors)
    catalogue = discover_themes(texts)
    assert catalogue.themes
    assert catalogue.assignments == discover_themes(texts, vectors=False).assignments


def test_a_pasted_row_repeated_hundreds_of_times_is_one_theme_not_all() -> None:
    texts, _ = mixed_corpus()
    pasted = ["The hostess ignored us for twenty minutes at the door."] * 600
    catalogue = discover_themes(texts + pasted)
    keys = Counter(catalogue.assignments[len(texts) :])
    assert len(keys) == 1 and OTHER not in keys
    assert len(catalogue.themes) >= 6  # the other domains keep their themes


def test_outliers_are_a_bounded_share() -> None:
    texts, _ = mixed_corpus()
    catalogue = discover_themes(texts)
    assert catalogue.other_rows <= (discovery.OUTLIER_SHARE + 0.05) * len(texts)


def _fake_vectors(texts: list[str]) -> object:
    """Vectors that depend on the text only (no encoder), L2-normalised."""
    import numpy as np

    out = np.zeros((len(texts), embedding.DIMENSIONS), dtype=np.float32)
    for row, text in enumerate(texts):
        out[row, sum(map(ord, text)) % embedding.DIMENSIONS] = 1.0
    return out


def test_the_encoder_thread_runs_in_the_callers_context_and_hands_back_its_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Discovery encodes on a thread of its own while it tokenises: the thread sees the run's
    cancellation scope, its vectors are the ones encoding in place gives, and its failure is
    the caller's."""
    from runlens.cancellation import CancelScope, active, current

    texts = mixed_corpus(per_domain=40)[0]
    seen: list[object] = []

    def recording(texts: list[str]) -> object:
        seen.append(current())
        return _fake_vectors(texts)

    monkeypatch.setattr(embedding, "sentence_vectors", recording)
    scope = CancelScope()
    with active(scope):
        threaded = discover_themes(texts, vectors=True)
    assert seen == [scope]
    in_place = discovery.vectors._vector_topics
    monkeypatch.setattr(
        discovery,
        "_vector_topics",
        lambda texts, rows, terms, usable, encoding: in_place(texts, rows, terms, usable),
    )
    assert discover_themes(texts, vectors=True).assignments == threaded.assignments

    def failing(texts: list[str]) -> object:
        raise RuntimeError("the encoder broke")

    monkeypatch.setattr(discovery, "_vector_topics", in_place)
    monkeypatch.setattr(embedding, "sentence_vectors", failing)
    with pytest.raises(RuntimeError, match="the encoder broke"):
        discover_themes(texts, vectors=True)
