"""Keyword patterns shared by the theme table and the severity cues.

English patterns match whole lower-cased tokens or token phrases; a trailing `*` matches any
ending ("crash*" matches crashes, crashed). Patterns with Chinese characters match substrings
when they have two or more characters and whole segmented words when they have one (a word
with a glued-on modifier or particle counts: 太慢 and 慢得 match 慢). Latin patterns listed with
the Chinese keywords ("PDF", "SSO") match as English ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache, lru_cache

from runlens_feedback.analyst.resources import lexicon
from runlens_feedback.analyst.tokens import Token

_PARTICLES = "了得的"
#: Clauses whose scan each keyword set remembers (the most recent ones): feedback repeats
#: its clauses ("太慢了", "the export fails"), and a scan depends on the clause alone.
SCANNED_CLAUSES = 16_384


@dataclass(frozen=True, slots=True)
class ClauseWords:
    """One clause as the patterns read it, made once per clause (`clause_words`) and shared
    by every keyword set scanned over it: its Latin words and the cores of its Chinese words
    (`_core`), each with its offset from the clause's first token, and their sets and the
    words joined (" w1 w2 ...") so that a set with no pattern in the clause is passed over
    in a few C calls.

    Every keyword set remembers its scans by clause (`KeywordSet.scanned`): the hash is
    worked out once, and `clause_words` gives equal clauses as one object, so that a scan
    remembered is found by identity rather than by comparing every field."""

    text: str
    words: tuple[str, ...]
    offsets: tuple[int, ...]
    word_set: frozenset[str]
    joined: str
    cores: tuple[tuple[str, int], ...]
    core_set: frozenset[str]
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields = (self.text, self.words, self.offsets, self.word_set, self.joined, self.cores)
        object.__setattr__(self, "_hash", hash((*fields, self.core_set)))

    def __hash__(self) -> int:
        return self._hash


#: The clauses read most recently, each its own key (`SCANNED_CLAUSES`, oldest dropped first).
_READ: dict[ClauseWords, ClauseWords] = {}


def clause_words(clause_text: str, tokens: Sequence[Token]) -> ClauseWords:
    """The `ClauseWords` of a clause and its tokens (the object made for an equal clause read
    recently, when there is one)."""
    clause_start = tokens[0].start if tokens else 0
    latin = [token for token in tokens if not token.cjk]
    words = tuple(token.norm for token in latin)
    cores = tuple((_core(token.norm), token.start - clause_start) for token in tokens if token.cjk)
    clause = ClauseWords(
        text=clause_text,
        words=words,
        offsets=tuple(token.start - clause_start for token in latin),
        word_set=frozenset(words),
        joined="".join(" " + word for word in words),
        cores=cores,
        core_set=frozenset(core for core, _ in cores),
    )
    read = _READ.get(clause)
    if read is None:
        if len(_READ) >= SCANNED_CLAUSES:
            # another thread may have dropped it meanwhile
            with suppress(KeyError, RuntimeError, StopIteration):
                del _READ[next(iter(_READ))]
        read = _READ.setdefault(clause, clause)
    return read


@dataclass(frozen=True)
class KeywordSet:
    """A compiled set of patterns; `scan` counts matches in one clause in a single pass."""

    substrings: tuple[str, ...]
    chars: frozenset[str]
    phrases: dict[str, tuple[tuple[str, ...], ...]]  # first word -> rest of each phrase
    prefixes: tuple[tuple[str, tuple[str, ...]], ...]  # (prefix of first word, rest)
    # Fast rejection only (the analyst spends most of its time here): the first characters
    # of the substrings, every first-word prefix as one tuple for str.startswith, the first
    # words of the phrases, and a pattern finding a word with one of the prefixes in
    # `ClauseWords.joined`.
    initials: frozenset[str] = frozenset()
    any_prefix: tuple[str, ...] = ()
    heads: frozenset[str] = frozenset()
    prefix_pattern: re.Pattern[str] | None = None
    #: The scans of the clauses seen most recently (`SCANNED_CLAUSES`, oldest dropped first).
    scanned: dict[ClauseWords, tuple[int, int]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def scan(self, clause_text: str, tokens: Sequence[Token]) -> tuple[int, int]:
        """(number of matches, offset in the clause of the first one, or len(clause) if none)."""
        return self.scan_words(clause_words(clause_text, tokens))

    def scan_words(self, clause: ClauseWords) -> tuple[int, int]:
        """`scan` of a clause read once (`clause_words`); a clause scanned before is not
        scanned again."""
        scanned = self.scanned
        found = scanned.get(clause)
        if found is None:
            found = self._scan(clause)
            if len(scanned) >= SCANNED_CLAUSES:
                # another thread may have dropped it meanwhile
                with suppress(KeyError, RuntimeError, StopIteration):
                    del scanned[next(iter(scanned))]
            scanned[clause] = found
        return found

    def _scan(self, clause: ClauseWords) -> tuple[int, int]:
        text = clause.text
        count, first = 0, len(text)
        if not self.initials.isdisjoint(text):
            for word in self.substrings:
                found = text.find(word)
                if found >= 0:
                    count += text.count(word)
                    first = min(first, found)
        if self.chars and not self.chars.isdisjoint(clause.core_set):
            for core, offset in clause.cores:
                if core in self.chars:
                    count += 1
                    first = min(first, offset)
        heads = not self.heads.isdisjoint(clause.word_set)
        prefixed = self.prefix_pattern is not None and (
            self.prefix_pattern.search(clause.joined) is not None
        )
        if heads or prefixed:
            words = clause.words
            for index, word in enumerate(words):
                hits = 0
                if heads:
                    hits = sum(
                        1 for rest in self.phrases.get(word, ()) if _rest_at(words, index, rest)
                    )
                if prefixed and word.startswith(self.any_prefix):
                    hits += sum(
                        1
                        for prefix, rest in self.prefixes
                        if word.startswith(prefix) and _rest_at(words, index, rest)
                    )
                if hits:
                    count += hits
                    first = min(first, clause.offsets[index])
        return count, first

    def count(self, clause_text: str, tokens: Sequence[Token]) -> int:
        return self.scan(clause_text, tokens)[0]

    def count_words(self, clause: ClauseWords) -> int:
        return self.scan_words(clause)[0]


def compile_keywords(patterns: Iterable[str]) -> KeywordSet:
    """Compile patterns (duplicates and case variants of Latin ones count once)."""
    substrings: dict[str, None] = {}
    chars: set[str] = set()
    phrases: dict[str, list[tuple[str, ...]]] = {}
    prefixes: dict[tuple[str, tuple[str, ...]], None] = {}
    for pattern in patterns:
        if not pattern.isascii():
            if len(pattern) >= 2:
                substrings[pattern] = None
            else:
                chars.add(pattern)
            continue
        head, *rest = pattern.lower().split()
        if head.endswith("*"):
            prefixes[(head[:-1], tuple(rest))] = None
        elif tuple(rest) not in phrases.setdefault(head, []):
            phrases[head].append(tuple(rest))
    return KeywordSet(
        substrings=tuple(substrings),
        chars=frozenset(chars),
        phrases={head: tuple(rests) for head, rests in phrases.items()},
        prefixes=tuple(prefixes),
        initials=frozenset(word[0] for word in substrings),
        any_prefix=tuple(prefix for prefix, _ in prefixes),
        heads=frozenset(phrases),
        prefix_pattern=(
            re.compile(" (?:" + "|".join(re.escape(prefix) for prefix, _ in prefixes) + ")")
            if prefixes
            else None
        ),
    )


def _rest_at(words: Sequence[str], index: int, rest: tuple[str, ...]) -> bool:
    if index + 1 + len(rest) > len(words):
        return False
    for offset, part in enumerate(rest, start=index + 1):
        word = words[offset]
        if part.endswith("*"):
            if not word.startswith(part[:-1]):
                return False
        elif word != part:
            return False
    return True


@lru_cache(maxsize=65_536)
def _core(word: str) -> str:
    """A Chinese word without a glued-on modifier or particle: 太慢 -> 慢, 慢得 -> 慢."""
    if len(word) > 1 and word[-1] in _PARTICLES:
        word = word[:-1]
    modifiers = _zh_prefixes()
    for size in range(min(3, len(word) - 1), 0, -1):
        if word[:size] in modifiers:
            return word[size:]
    return word


@cache
def _zh_prefixes() -> frozenset[str]:
    zh = lexicon("zh")
    return zh.negators | frozenset(zh.intensifiers)
