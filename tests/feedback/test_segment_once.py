"""A run segments each row once: theme discovery keeps the Chinese words it found, the
analysis of the same text takes them, and the results are those of segmenting again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from runlens_feedback.analyst import analyze_rows
from runlens_feedback.analyst import tokens as tokens_module
from runlens_feedback.analyst.text import split_clauses
from runlens_feedback.analyst.tokens import (
    cjk_words,
    forget_segmentations,
    kept_segments,
    tokenize,
)
from runlens_feedback.discovery import discover_themes, terms

TEXTS = [
    "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。",
    "登录经常掉线，客服回复很及时，点赞",
    "The export button is hidden；同步到 Slack 的消息有时会丢",
    "手机端闪退\n数据同步延迟严重！！权限设置太复杂了",
    "新版本很好用，界面很清爽，希望增加暗色模式",
    "上传附件经常失败（超过10MB）……搜索结果不准确",
]


@pytest.fixture(autouse=True)
def _nothing_kept() -> Iterator[None]:
    forget_segmentations()
    tokens_module._segment.cache_clear()
    yield
    forget_segmentations()


class _CountingJieba:
    """Counts the runs jieba is asked to segment (wraps the private tokenizer's `lcut`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        tokenizer = tokens_module._jieba()
        original = tokenizer.lcut

        def lcut(*args: Any, **kwargs: Any) -> list[str]:
            self.calls += 1
            words: list[str] = original(*args, **kwargs)
            return words

        monkeypatch.setattr(tokenizer, "lcut", lcut)


def test_kept_words_are_the_words_segmenting_again_gives() -> None:
    for text in TEXTS:
        fresh = [tokenize(text, 0, len(text))]
        cjk_words(text, keep=True)
        segments = kept_segments(text)
        assert segments is not None
        assert [tokenize(text, 0, len(text), segments)] == fresh
        assert kept_segments(text) is None  # taken once


def test_clauses_find_their_runs_among_the_kept_words() -> None:
    for text in TEXTS:
        cjk_words(text, keep=True)
        segments = kept_segments(text)
        for clause in split_clauses(text):
            found = tokenize(text, clause.start, clause.end, segments)
            assert found == tokenize(text, clause.start, clause.end)


def test_a_run_cut_short_is_segmented_afresh() -> None:
    text = TEXTS[0]
    cjk_words(text, keep=True)
    segments = kept_segments(text)
    for start, end in ((0, 7), (8, 18), (19, len(text))):  # ranges that cut runs short
        assert tokenize(text, start, end, segments) == tokenize(text, start, end)


def test_a_text_in_several_rows_is_kept_for_each() -> None:
    text = TEXTS[1]
    cjk_words(text, keep=True)
    cjk_words(text, keep=True)
    assert kept_segments(text) is not None
    assert kept_segments(text) is not None
    assert kept_segments(text) is None
    assert not tokens_module._kept and tokens_module._kept_chars == 0


def test_a_run_seen_before_is_not_segmented_again(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _CountingJieba(monkeypatch)
    first = tokenize(TEXTS[0])
    calls = counting.calls
    assert calls > 0
    assert tokenize(TEXTS[0]) == first
    assert counting.calls == calls


def test_what_is_kept_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    cjk_words(TEXTS[0], keep=True)
    monkeypatch.setattr(tokens_module, "KEPT_CHARS", tokens_module._kept_chars + 10)
    cjk_words(TEXTS[4], keep=True)  # over the bound: not kept
    assert kept_segments(TEXTS[0]) is not None
    assert kept_segments(TEXTS[4]) is None


def test_terms_keep_only_when_asked() -> None:
    terms(TEXTS[0])
    assert kept_segments(TEXTS[0]) is None
    terms(TEXTS[0], keep=True)
    assert kept_segments(TEXTS[0]) is not None


def test_analysis_after_discovery_segments_nothing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = TEXTS * 4
    rows = [{"feedback_id": f"fb_{n}", "text": text} for n, text in enumerate(texts)]
    expected = analyze_rows(rows)
    expected_themes = discover_themes(texts, vectors=False)
    tokens_module._segment.cache_clear()
    counting = _CountingJieba(monkeypatch)
    catalogue = discover_themes(texts, vectors=False, keep_segmentation=True)
    assert counting.calls > 0
    tokens_module._segment.cache_clear()  # what the analysis finds is what discovery kept
    before = counting.calls
    assert analyze_rows(rows) == expected
    assert counting.calls == before  # every row's words were kept by discovery
    assert catalogue.describe() == expected_themes.describe()
    assert not tokens_module._kept


def test_discovery_drops_what_an_earlier_run_kept() -> None:
    cjk_words("一个没有被分析的句子", keep=True)
    discover_themes(TEXTS, vectors=False, keep_segmentation=True)
    assert kept_segments("一个没有被分析的句子") is None


def test_discovery_reads_a_repeated_text_once_and_keeps_its_words_for_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import runlens_feedback.discovery as discovery
    from runlens_feedback.discovery.vocabulary import undamaged_terms as original

    read: list[str] = []

    def counting(text: str, *, keep: bool = False) -> list[str]:
        read.append(text)
        return original(text, keep=keep)

    monkeypatch.setattr(discovery, "undamaged_terms", counting)
    texts = TEXTS * 3
    catalogue = discover_themes(texts, vectors=False, keep_segmentation=True)
    assert sorted(read) == sorted(TEXTS)
    assert catalogue.assignments[: len(TEXTS)] * 3 == catalogue.assignments
    for text in TEXTS:  # every row of a text takes its share of the kept words
        assert tokens_module._kept[text][1] == 3
    fresh = [terms(text) for text in texts]
    monkeypatch.setattr(discovery, "REMEMBERED_TEXTS", 1)  # a memory too small to help
    forget_segmentations()
    read.clear()
    again = discover_themes(texts, vectors=False, keep_segmentation=True)
    assert again.assignments == catalogue.assignments
    assert len(read) == len(texts)
    assert [discovery.terms(text) for text in texts] == fresh
