"""Tokenisation: jieba for runs of Chinese characters, a simple word pattern for the rest.

jieba is initialised lazily, once per process, as a private `jieba.Tokenizer` (so words other
code adds to jieba's global tokenizer cannot change our results) with its logging silenced.

Segmenting is the costliest step of reading a row, and a run reads each row twice: theme
discovery first (over every row), then the analysis of each row. So discovery keeps what it
segmented (`cjk_words(text, keep=True)`) and the analysis takes it (`kept_segments`):
jieba sees each row once per run. The words of a run of Chinese characters depend on that
run's characters alone, so a kept segmentation is the one jieba would give again. What is kept
is bounded (`KEPT_CHARS`) and packed (one string per text); `forget_segmentations` drops it
all, as discovery does when it starts.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jieba

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*|[:;]-?[()DdPp](?![A-Za-z])")
# Parts of speech (jieba's ICTCLAS-style tags) that mark a noun-like word.
_NOUN_FLAGS = ("n", "nz", "vn", "ng", "nt", "eng")

_lock = threading.Lock()
_tokenizer: jieba.Tokenizer | None = None
_pos_tokenizer: Any = None

#: Characters (texts and their packed words) the kept segmentations may hold: 100,000 rows of
#: feedback of ordinary length, about 50 MB.
KEPT_CHARS = 24_000_000
#: Kept segmentations: text -> (the words of its Chinese runs, packed; how many rows of the
#: text are yet to take them).
_kept: dict[str, tuple[str, int]] = {}
_kept_chars = 0
#: Runs of Chinese characters whose words `_segment` remembers (about 20 MB).
SEGMENTED_RUNS = 65_536
_RUN_BREAK = "\n"  # between the runs of a packed segmentation (no run holds one)
_WORD_BREAK = " "  # between the words of a run (no run holds one)


@dataclass(frozen=True, slots=True)
class Token:
    """One word of a text at `text[start:end]`; `norm` is its lookup form."""

    norm: str
    start: int
    end: int
    cjk: bool


def _jieba() -> jieba.Tokenizer:
    global _tokenizer
    with _lock:
        if _tokenizer is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            tokenizer.initialize()
            _tokenizer = tokenizer
        return _tokenizer


def _pos() -> Any:
    global _pos_tokenizer
    tokenizer = _jieba()
    with _lock:
        if _pos_tokenizer is None:
            import jieba.posseg

            _pos_tokenizer = jieba.posseg.POSTokenizer(tokenizer)
        return _pos_tokenizer


def normalise_latin(word: str) -> str:
    """Lower-case a Latin word and use a straight apostrophe."""
    return word.lower().replace("’", "'")


def tokenize(
    text: str,
    start: int = 0,
    end: int | None = None,
    segments: dict[tuple[int, int], list[str]] | None = None,
) -> list[Token]:
    """The tokens of `text[start:end]`, with offsets into `text`, in order.

    `segments` (from `kept_segments`) has the words of Chinese runs by where they start and
    end in `text`; the runs it lacks (a run cut short by `start` or `end`) are segmented
    here."""
    stop = len(text) if end is None else end
    tokens: list[Token] = []
    position = start
    for run in _CJK_RUN.finditer(text, start, stop):
        tokens.extend(_latin_tokens(text, position, run.start()))
        words: Sequence[str] | None = segments.get(run.span()) if segments is not None else None
        if words is None:
            words = _segment(run.group())
        tokens.extend(_cjk_tokens(words, run.start()))
        position = run.end()
    tokens.extend(_latin_tokens(text, position, stop))
    return tokens


def _latin_tokens(text: str, start: int, end: int) -> list[Token]:
    return [
        Token(normalise_latin(match.group()), match.start(), match.end(), cjk=False)
        for match in _LATIN_TOKEN.finditer(text, start, end)
    ]


def _cjk_tokens(words: Sequence[str], offset: int) -> list[Token]:
    tokens: list[Token] = []
    for word in words:
        end = offset + len(word)
        tokens.append(Token(word, offset, end, cjk=True))
        offset = end
    return tokens


@lru_cache(maxsize=SEGMENTED_RUNS)
def _segment(run: str) -> tuple[str, ...]:
    """jieba's words of one run of Chinese characters. The most recent runs are remembered:
    short runs (太慢了, 很好用, 登录失败) recur across rows, and their words are the same
    wherever they occur."""
    return tuple(_jieba().lcut(run))


def cjk_words(text: str, *, keep: bool = False) -> list[tuple[str, ...]]:
    """jieba's words of each run of Chinese characters in `text`, in order (the runs
    `_CJK_RUN` finds). `keep`: keep them for the analysis of the same text (`kept_segments`)
    while the kept ones hold fewer than `KEPT_CHARS` characters."""
    global _kept_chars
    found = [_segment(run.group()) for run in _CJK_RUN.finditer(text)]
    if keep and found:
        packed = _RUN_BREAK.join(_WORD_BREAK.join(words) for words in found)
        size = len(text) + len(packed)
        with _lock:
            kept = _kept.get(text)
            if kept is not None:  # the same text in another row
                _kept[text] = (kept[0], kept[1] + 1)
            elif _kept_chars + size <= KEPT_CHARS:
                _kept[text] = (packed, 1)
                _kept_chars += size
    return found


def kept_segments(text: str) -> dict[tuple[int, int], list[str]] | None:
    """The kept words of `text`'s Chinese runs (`cjk_words(keep=True)`) by where each run
    starts and ends, for `tokenize`; None when none are kept. Taken once for each row that
    kept them: they are dropped when every row of that text has taken them."""
    packed = _take(text)
    if packed is None:
        return None
    runs = packed.split(_RUN_BREAK)
    spans = [run.span() for run in _CJK_RUN.finditer(text)]
    if len(spans) != len(runs):  # never expected: the same text has the same runs
        return None
    return {span: run.split(_WORD_BREAK) for span, run in zip(spans, runs, strict=True)}


def release_segments(text: str) -> None:
    """Count a row of `text` as having taken its kept words without reading them (its
    analysis is already known), so that they are dropped when no row needs them."""
    _take(text)


def _take(text: str) -> str | None:
    """One row's share of `text`'s kept words (packed), dropped once every row of that text
    has taken its share; None when none are kept."""
    global _kept_chars
    if not _kept:
        return None
    with _lock:
        kept = _kept.get(text)
        if kept is None:
            return None
        packed, rows = kept
        if rows > 1:
            _kept[text] = (packed, rows - 1)
        else:
            del _kept[text]
            _kept_chars -= len(text) + len(packed)
    return packed


def forget_segmentations() -> None:
    """Drop every kept segmentation (a run's discovery starts afresh)."""
    global _kept_chars
    with _lock:
        _kept.clear()
        _kept_chars = 0


def cjk_nouns(text: str) -> list[tuple[str, int]]:
    """Noun-like words of the Chinese runs of `text`, each with its offset, in order."""
    nouns: list[tuple[str, int]] = []
    for run in _CJK_RUN.finditer(text):
        position = run.start()
        for pair in _pos().cut(run.group()):
            word, flag = pair.word, pair.flag
            if flag in _NOUN_FLAGS:
                nouns.append((word, position))
            position += len(word)
    return nouns
