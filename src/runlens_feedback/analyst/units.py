"""Lexical units: the tokens of a clause, looked up in the lexicon of their script.

A unit is a sentiment word or phrase (with its valence), a modifier (negator, intensifier,
contrast, concessive, barrier, summary, reservation, post) or a plain word. Chinese lexicon
entries of three or more characters, and two-character ones opening with 不/没/无, are also
found as substrings starting at a word boundary, so phrases that jieba splits differently
(登不上, 物超所值, 不对) still count; a word that jieba merged with a modifier
(太慢, 不太好, 很快) is split back into modifier + sentiment word.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.resources import Lexicon, lexicon
from runlens_feedback.analyst.tokens import Token, tokenize

UnitKind = Literal[
    "sentiment",
    "negator",
    "intensifier",
    "contrast",
    "concessive",
    "barrier",
    "summary",
    "reservation",
    "post",
    "word",
]

_MAX_PHRASE_TOKENS = 4
_MIN_SUBSTRING_PHRASE = 3
# English "like" is a comparison or a polite request after these words, not a sentiment.
_LIKE_NEUTRALISERS = frozenset(
    [
        "look",
        "looks",
        "looked",
        "looking",
        "feel",
        "feels",
        "felt",
        "seem",
        "seems",
        "seemed",
        "sound",
        "sounds",
        "just",
        "something",
        "anything",
        "nothing",
        "more",
        "would",
        "i'd",
        "we'd",
        "you'd",
        "things",
        "stuff",
    ]
)


# 好 before 几/多/些/久 is the degree adverb "quite" (好几次, 好多), not "good".
_HAO_DEGREE = frozenset("几多些久像")


@dataclass(frozen=True, slots=True)
class Unit:
    """One lexical unit at `text[start:end]`; `value` is a valence or a multiplier."""

    term: str
    kind: UnitKind
    value: float
    start: int
    end: int


def clause_units(text: str, start: int, end: int, tokens: list[Token] | None = None) -> list[Unit]:
    """The units of `text[start:end]` (whose tokens may be passed in), in order."""
    if tokens is None:
        tokens = tokenize(text, start, end)
    units: list[Unit] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.cjk:
            found, index = _cjk_units(text, tokens, index, end)
        else:
            found, index = _latin_units(tokens, index)
        units.extend(found)
    return _resolve_dual_roles(units)


# --- Chinese -----------------------------------------------------------------------------


@cache
def _zh_phrases() -> dict[str, tuple[UnitKind, float]]:
    zh = lexicon("zh")
    phrases: dict[str, tuple[UnitKind, float]] = {
        word: ("word", 0.0) for word in zh.neutral if _is_substring_phrase(word)
    }
    phrases.update(
        (word, ("sentiment", value))
        for word, value in zh.valences.items()
        if _is_substring_phrase(word)
    )
    for word in zh.modifier_words():
        if len(word) >= _MIN_SUBSTRING_PHRASE:
            phrases[word] = _role(zh, word) or ("word", 0.0)
    return phrases


def _is_substring_phrase(word: str) -> bool:
    """Long entries, and two-character ones that open with a negation (不对, 没用), are also
    found as substrings: jieba often splits them."""
    return len(word) >= _MIN_SUBSTRING_PHRASE or (len(word) == 2 and word[0] in "不没无")


@cache
def _zh_max_phrase() -> int:
    return max((len(word) for word in _zh_phrases()), default=0)


def _cjk_units(text: str, tokens: list[Token], index: int, end: int) -> tuple[list[Unit], int]:
    token = tokens[index]
    phrase = _phrase_at(text, token.start, end)
    if phrase is not None:
        kind, value = _zh_phrases()[phrase]
        stop = token.start + len(phrase)
        following = index
        while following < len(tokens) and tokens[following].start < stop:
            following += 1
        return [Unit(phrase, kind, value, token.start, stop)], following
    return _cjk_word_units(token), index + 1


def _phrase_at(text: str, start: int, end: int) -> str | None:
    phrases = _zh_phrases()
    longest = min(_zh_max_phrase(), end - start)
    for length in range(longest, _MIN_SUBSTRING_PHRASE - 1, -1):
        candidate = text[start : start + length]
        if candidate in phrases:
            return candidate
    return None


def _cjk_word_units(token: Token) -> list[Unit]:
    zh = lexicon("zh")
    known = _lookup(zh, token.norm)
    if known is not None:
        kind, value = known
        return [Unit(token.norm, kind, value, token.start, token.end)]
    split = _split_modifier_prefix(zh, token.norm)
    if split is None:
        return [_head_word_unit(zh, token)]
    prefix, rest = split
    middle = token.start + len(prefix)
    prefix_kind, prefix_value = _role(zh, prefix) or ("word", 0.0)
    head = Unit(prefix, prefix_kind, prefix_value, token.start, middle)
    return [head, *_cjk_word_units(Token(rest, middle, token.end, cjk=True))]


def _head_word_unit(zh: Lexicon, token: Token) -> Unit:
    """A compound jieba did not split ("印刷错误") takes the valence of its head, the known
    word of two or more characters it ends with; otherwise it is a plain word."""
    word = token.norm
    for size in range(len(word) - 1, 1, -1):
        head = word[-size:]
        if head in zh.valences:
            return Unit(word, "sentiment", zh.valences[head], token.start, token.end)
    return Unit(word, "word", 0.0, token.start, token.end)


def _split_modifier_prefix(zh: Lexicon, word: str) -> tuple[str, str] | None:
    """(modifier, rest) when `word` is a negator/intensifier glued to a known word."""
    for size in range(min(3, len(word) - 1), 0, -1):
        prefix, rest = word[:size], word[size:]
        role = _role(zh, prefix)
        if role is None or role[0] not in ("negator", "intensifier"):
            continue
        if _lookup(zh, rest) is not None or _split_modifier_prefix(zh, rest) is not None:
            return prefix, rest
    return None


# --- English -----------------------------------------------------------------------------


def _latin_units(tokens: list[Token], index: int) -> tuple[list[Unit], int]:
    en = lexicon("en")
    zh = lexicon("zh")
    for size in range(_MAX_PHRASE_TOKENS, 0, -1):
        window = tokens[index : index + size]
        if len(window) < size or any(token.cjk for token in window):
            continue
        phrase = " ".join(token.norm for token in window)
        known = _lookup(en, phrase) or (_lookup(zh, phrase) if size == 1 else None)
        if known is not None:
            kind, value = known
            return [Unit(phrase, kind, value, window[0].start, window[-1].end)], index + size
    token = tokens[index]
    return [Unit(token.norm, "word", 0.0, token.start, token.end)], index + 1


def _resolve_dual_roles(units: list[Unit]) -> list[Unit]:
    """Settle words with two roles ("super", "好", "like") by their neighbours."""
    resolved: list[Unit] = []
    for position, unit in enumerate(units):
        following = units[position + 1] if position + 1 < len(units) else None
        previous = resolved[-1] if resolved else None
        lex = lexicon("zh" if unit.term and not unit.term[0].isascii() else "en")
        boosts_next = following is not None and following.kind == "sentiment"
        if unit.kind == "sentiment" and unit.term in lex.intensifiers and boosts_next:
            multiplier = lex.intensifiers[unit.term]
            unit = Unit(unit.term, "intensifier", multiplier, unit.start, unit.end)
        if unit.term == "like" and previous is not None and previous.term in _LIKE_NEUTRALISERS:
            unit = Unit(unit.term, "word", 0.0, unit.start, unit.end)
        if unit.term == "好" and following is not None and following.term[:1] in _HAO_DEGREE:
            unit = Unit(unit.term, "word", 0.0, unit.start, unit.end)
        resolved.append(unit)
    return resolved


# --- lookup ------------------------------------------------------------------------------


def _role(lex: Lexicon, word: str) -> tuple[UnitKind, float] | None:
    if word in lex.negators or (lex.lang == "en" and _is_english_negation(word)):
        return "negator", 1.0
    if word in lex.intensifiers:
        return "intensifier", lex.intensifiers[word]
    if word in lex.contrast:
        return "contrast", 1.0
    if word in lex.concessive:
        return "concessive", 1.0
    if word in lex.barriers:
        return "barrier", 1.0
    if word in lex.summary:
        return "summary", lex.summary[word]
    if word in lex.reservation:
        return "reservation", lex.reservation[word]
    if word in lex.post:
        return "post", lex.post[word]
    return None


def _is_english_negation(word: str) -> bool:
    if " " in word:
        return False
    return word.endswith("n't") or word.replace("'", "") in lexicon("en").negators


def _lookup(lex: Lexicon, word: str) -> tuple[UnitKind, float] | None:
    """A word's valence, else its neutral mark, else its role (`_role`); `lex` is
    `lexicon(lex.lang)`."""
    found = _listed(lex.lang).get(word)
    if found is None and lex.lang == "en" and _is_english_negation(word):
        return "negator", 1.0
    return found


@cache
def _listed(lang: Lang) -> dict[str, tuple[UnitKind, float]]:
    """`_lookup` of every word the lexicon of `lang` lists, as one table: a clause's units
    look up each window of its words in turn, and most windows are in no list."""
    lex = lexicon(lang)
    table: dict[str, tuple[UnitKind, float]] = {}
    for word in lex.modifier_words():
        role = _role(lex, word)
        if role is not None:
            table[word] = role
    table.update((word, ("word", 0.0)) for word in lex.neutral)
    table.update((word, ("sentiment", value)) for word, value in lex.valences.items())
    return table
