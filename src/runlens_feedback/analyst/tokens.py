"""Tokenisation: jieba for runs of Chinese characters, a simple word pattern for the rest.

jieba is initialised lazily, once per process, as a private `jieba.Tokenizer` (so words other
code adds to jieba's global tokenizer cannot change our results) with its logging silenced.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
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


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The tokens of `text[start:end]`, with offsets into `text`, in order."""
    stop = len(text) if end is None else end
    tokens: list[Token] = []
    position = start
    for run in _CJK_RUN.finditer(text, start, stop):
        tokens.extend(_latin_tokens(text, position, run.start()))
        tokens.extend(_cjk_tokens(run.group(), run.start()))
        position = run.end()
    tokens.extend(_latin_tokens(text, position, stop))
    return tokens


def _latin_tokens(text: str, start: int, end: int) -> list[Token]:
    return [
        Token(normalise_latin(match.group()), match.start(), match.end(), cjk=False)
        for match in _LATIN_TOKEN.finditer(text, start, end)
    ]


def _cjk_tokens(run: str, offset: int) -> list[Token]:
    return [
        Token(word, offset + begin, offset + finish, cjk=True)
        for word, begin, finish in _jieba().tokenize(run)
    ]


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
