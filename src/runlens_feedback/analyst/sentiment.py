"""Sentiment of one text: lexicon and rules, combined with a small learned linear model.

`score_text` first scores the text with the lexicon and rules below (`lexicon_score`), then
feeds the lexicon's positive and negative weights together with the text's word and character
features to the language's linear model (`sentiment_model.py`, weights learned offline on
training corpora only, see docs/quality.md). The label (`_combined_label`):

- the lexicon's own label is `neutral` (no cue, or only a weak one such as 可以) and the text
  is a request (希望, 建议, please add, ...) or only asks questions: `neutral`;
- no cue and the model's logit within its neutral margin: `neutral`;
- a cue, and the model's logit within its margin (the model is unsure): the lexicon's own
  label when it is `positive`, `negative` or `mixed` (so a domain the training reviews never
  covered, "经常闪退", still gets the lexicon's judgement);
- otherwise the sign of the model's logit: `positive` or `negative`. Text with a sentiment cue
  is never `neutral`.

`score` is the model's logit (log-odds of positive; 0 and `neutral` for a text with no word the
lexicon or the model knows); `positive` and `negative` stay the lexicon's weighted sums, and
`contributions` the lexicon's, plus the model's per-clause parts when the lexicon has nothing
of the label's sign (so evidence can still point at a clause).

Lexicon rules, in the order they apply to each sentiment word or phrase:

1. its valence comes from the lexicon of its script (Chinese or English);
2. modifiers in the few units before it (4 for Chinese, 3 for English; not past another
   sentiment word, a contrast word or a barrier such as 就/and) apply: intensifiers multiply
   (很 1.3, 非常 1.6, very 1.3, 有点 0.7, slightly 0.6 ...), an odd number of negators flips it
   (a negated positive keeps 80% of its strength, a negated negative becomes a mild positive
   at 50%: "not bad", "没有问题");
3. cues without a sentiment word: 太/too or 有点 before a plain word ("太小了", "too small",
   "有点薄") add -1.2/-1/-0.8 (Chinese uses 有点 almost only for unwelcome qualities); a verb
   or noun negated outright ("不充电了", "没有发票", "doesn't sync", "can't log in") adds -0.8;
4. emphasis: a clause that ends with "!" weighs 1.25, an ALL-CAPS English word 1.3;
5. complaint questions: a clause ending in "?" with 为什么/怎么/难道/why/how come adds -1;
6. discourse: after 总之/总的来说/overall everything weighs 1.5; a clause with a reservation
   marker (就是 at its start, 美中不足, 唯一的缺点, only complaint, minor) weighs 0.5; 了点 after
   a word dampens it to 0.6 ("慢了点");
7. contrast: in a sentence with 但是/但/可是/却/不过/然而/but/however ..., what precedes the last
   contrast word weighs 0.5 and what follows weighs 1.5; a sentence that opens with one halves
   the sentence before it; a concessive clause (虽然/尽管/although/though) weighs 0.5.

The lexicon score is the sum; `positive` and `negative` are the weighted sums of each sign. The
lexicon's own label:
`mixed` when both weighted sides reach 1 and the weaker is at least half the stronger;
otherwise `positive` for a score >= 0.5, `negative` for <= -0.5, and in between `mixed` when
both sides are present, else `neutral`.
"""

from __future__ import annotations

import math
from contextlib import suppress
from dataclasses import dataclass

from runlens_feedback.analyst import sentiment_model
from runlens_feedback.analyst import units as _units
from runlens_feedback.analyst.labels import Lang, Sentiment
from runlens_feedback.analyst.resources import stopwords
from runlens_feedback.analyst.text import Clause, detect_language, split_clauses
from runlens_feedback.analyst.tokens import tokenize
from runlens_feedback.analyst.units import Unit

_WINDOW = {"zh": 4, "en": 3}
_NEGATED_POSITIVE = -0.8
_NEGATED_NEGATIVE = -0.5
_EXCLAMATION = 1.25
_ALL_CAPS = 1.3
_BEFORE_CONTRAST = 0.5
_AFTER_CONTRAST = 1.5
_CONCESSIVE = 0.5
_EXCESS = {"太": -1.2, "too": -1.0, "有点": -0.8, "有点儿": -0.8, "有一点": -0.8}
_NEGATED_ACTION = -0.8
# English negators that negate a following verb ("doesn't sync"); "no"/"without" take nouns.
_VERB_NEGATORS = frozenset({"not", "never", "cannot", "cant", "dont", "doesnt", "didnt", "wont"})
_COMPLAINT_QUESTION = -1.0
_LABEL_THRESHOLD = 0.5
_MIXED_MINIMUM = 1.0
_MIXED_BALANCE = 0.5

_QUESTION_WORDS = ("为什么", "为何", "怎么", "难道", "凭什么", "咋", "why", "how come", "seriously")
# Contrast words that work anywhere in a clause; the others only near its start.
_CONTRAST_ANYWHERE = frozenset({"but", "however", "却", "但是", "但", "可是", "然而"})
_EXCESS_FALSE_FRIENDS = frozenset(
    {"太阳", "太太", "太空", "太平", "太极", "太子", "太后", "太原", "太湖"}
)
# "too many steps", "too long": excess even though these are stopwords elsewhere.
_QUANTITIES = frozenset({"many", "much", "few", "long", "little", "late", "early", "often"})
_CLAUSE_FINAL = frozenset({"了", "啦", "吧", "啊", "呀", "的"})
# A text with no sentiment cue that contains one of these asks for something: neutral.
_REQUEST_MARKERS = (
    "希望",
    "建议",
    "能不能",
    "能否",
    "可不可以",
    "可否",
    "请增加",
    "请加",
    "please add",
    "please make",
    "could you add",
    "can you add",
    "would be nice",
    "feature request",
    "i wish",
    "we wish",
)


@dataclass(frozen=True, slots=True)
class Contribution:
    """The weighted part one unit (or one rule) adds to a clause's score."""

    clause_index: int
    start: int
    end: int
    value: float


@dataclass(frozen=True)
class SentimentResult:
    """The sentiment of one text and the per-clause contributions behind it."""

    label: Sentiment
    score: float
    positive: float
    negative: float
    contributions: tuple[Contribution, ...]
    #: The model's probability that the text is positive (0.5 for the lexicon alone).
    probability: float = 0.5

    def clause_signal(self, clause_index: int, sign: int) -> float:
        """Magnitude of the clause's contributions of one sign (+1, -1) or of both (0)."""
        return sum(
            abs(c.value)
            for c in self.contributions
            if c.clause_index == clause_index and (sign == 0 or c.value * sign > 0)
        )


@dataclass(frozen=True, slots=True)
class _Raw:
    clause_index: int
    unit: Unit
    value: float


def score_text(
    text: str, lang: Lang, clauses: list[Clause], units: list[list[Unit]]
) -> SentimentResult:
    """The sentiment of `text` from its clauses and their units (see the module docstring)."""
    lexical = lexicon_score(text, lang, clauses, units)
    model = sentiment_model.load_model(lang)
    scored = sentiment_model.score(model, text, clauses, units, lexical.positive, lexical.negative)
    logit = scored.logit
    label = _combined_label(text, clauses, lexical, logit, model.neutral_margin)
    if not any(scored.clause_parts) and not lexical.contributions:
        # Nothing the lexicon or the model knows ("!!!", "12345"): no evidence either way.
        label, logit = "neutral", 0.0
    contributions = lexical.contributions
    sign = {"positive": 1, "negative": -1}.get(label, 0)
    if sign and not any(c.value * sign > 0 for c in contributions):
        contributions += tuple(
            Contribution(index, clause.start, clause.end, part)
            for index, (clause, part) in enumerate(zip(clauses, scored.clause_parts, strict=True))
            if part * sign > 0
        )
    return SentimentResult(
        label=label,
        score=round(logit, 6),
        positive=lexical.positive,
        negative=lexical.negative,
        contributions=contributions,
        probability=round(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit)))), 6),
    )


def training_row(text: str) -> tuple[Lang, dict[str, float], float, float]:
    """What the model sees of `text`: its language, its features and the two lexicon inputs
    (used by benchmarks/train_sentiment.py, so training and inference share one code path)."""
    lang = detect_language(text)
    clauses = split_clauses(text)
    units = [
        _units.clause_units(
            text, clause.start, clause.end, tokenize(text, clause.start, clause.end)
        )
        for clause in clauses
    ]
    lexical = lexicon_score(text, lang, clauses, units)
    features = sentiment_model.text_features(text, lang, clauses, units)
    lex_pos, lex_neg = sentiment_model.lexicon_inputs(lexical.positive, lexical.negative)
    return lang, features, lex_pos, lex_neg


def _combined_label(
    text: str, clauses: list[Clause], lexical: SentimentResult, logit: float, margin: float
) -> Sentiment:
    has_cue = lexical.positive > 0 or lexical.negative > 0
    asks_only = bool(clauses) and all(c.asks for c in clauses if c.ends_sentence)
    if lexical.label == "neutral" and (asks_only or _is_request(text)):
        return "neutral"
    if not has_cue:
        if abs(logit) < margin:
            return "neutral"
    elif abs(logit) < margin and lexical.label != "neutral":
        return lexical.label
    return "positive" if logit > 0 else "negative"


def _is_request(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _REQUEST_MARKERS)


def lexicon_score(
    text: str, lang: Lang, clauses: list[Clause], units: list[list[Unit]]
) -> SentimentResult:
    """The lexicon-and-rules sentiment of `text` alone (see the module docstring)."""
    raw: list[_Raw] = []
    for index, (clause, clause_units) in enumerate(zip(clauses, units, strict=True)):
        raw.extend(_clause_contributions(text, lang, index, clause, clause_units))
    weights = _contrast_weights(clauses, units, raw)
    _apply_discourse_markers(units, raw, weights)
    contributions = tuple(
        Contribution(item.clause_index, item.unit.start, item.unit.end, item.value * weight)
        for item, weight in zip(raw, weights, strict=True)
    )
    return _result(contributions)


#: Clauses whose contributions `_clause_contributions` remembers (the most recent ones):
#: feedback repeats its clauses, and what a clause contributes depends on its characters
#: (its units do, `units.clause_units`), the language, its separator's "!" and "?", and,
#: for English, whether the whole text is upper-case (no word of it then counts as shouted).
REMEMBERED_CLAUSES = 32_768
_remembered: dict[tuple[str, Lang, bool, bool, bool], tuple[tuple[int, float], ...]] = {}


def _clause_contributions(
    text: str, lang: Lang, index: int, clause: Clause, units: list[Unit]
) -> list[_Raw]:
    key = (
        text[clause.start : clause.end],
        lang,
        clause.exclaims,
        clause.asks,
        lang == "en" and text.isupper(),
    )
    parts = _remembered.get(key)
    if parts is None:
        parts = _clause_parts(text, lang, clause, units)
        if len(_remembered) >= REMEMBERED_CLAUSES:
            # another thread may have dropped it meanwhile
            with suppress(KeyError, RuntimeError, StopIteration):
                del _remembered[next(iter(_remembered))]
        _remembered[key] = parts
    return [
        _Raw(
            index,
            units[position] if position >= 0 else Unit("?", "word", 0.0, clause.start, clause.end),
            value,
        )
        for position, value in parts
    ]


def _clause_parts(
    text: str, lang: Lang, clause: Clause, units: list[Unit]
) -> tuple[tuple[int, float], ...]:
    """What one clause contributes: (the position of the unit it is anchored on, or -1 for
    the whole clause, value), in order."""
    found: list[tuple[int, float]] = []
    for position, unit in enumerate(units):
        if unit.kind == "sentiment":
            value = _modified(units, position, _WINDOW[lang])
            if not unit.term.isupper() and _is_shouted(text, unit, lang):
                value *= _ALL_CAPS
            found.append((position, value))
        elif _is_excess(units, position, lang):
            found.append((position + 1, _EXCESS[unit.term]))
        elif _is_negated_action(units, position, lang):
            found.append((position + 1, _NEGATED_ACTION))
    if clause.exclaims:
        found = [(position, value * _EXCLAMATION) for position, value in found]
    if clause.asks and _has_question_word(text[clause.start : clause.end]):
        found.append((-1, _COMPLAINT_QUESTION))
    found.extend((position, _EXCESS["太"]) for position in _merged_excess(units))
    return tuple(found)


def _modified(units: list[Unit], position: int, window: int) -> float:
    value = units[position].value
    negated = False
    for previous in reversed(units[max(0, position - window) : position]):
        if previous.kind in ("sentiment", "contrast", "concessive", "barrier"):
            break
        if previous.kind == "negator":
            negated = not negated
        elif previous.kind == "intensifier":
            value *= previous.value
    following = units[position + 1] if position + 1 < len(units) else None
    if following is not None and following.kind == "post":
        value *= following.value
    if negated:
        return value * (_NEGATED_POSITIVE if value > 0 else _NEGATED_NEGATIVE)
    return value


def _is_shouted(text: str, unit: Unit, lang: Lang) -> bool:
    original = text[unit.start : unit.end]
    return lang == "en" and len(original) > 1 and original.isupper() and not text.isupper()


def _is_excess(units: list[Unit], position: int, lang: Lang) -> bool:
    """太/too/有点 followed by a plain word that is not a stopword: "太小了", "too small"."""
    return units[position].term in _EXCESS and _plain_word_follows(units, position)


def _is_negated_action(units: list[Unit], position: int, lang: Lang) -> bool:
    """A negator directly before a plain word: "不充电了", "没有发票", "doesn't sync"."""
    unit = units[position]
    if unit.kind != "negator":
        return False
    english = not _is_cjk_unit(unit)
    if (
        english
        and unit.term.replace("'", "") not in _VERB_NEGATORS
        and not unit.term.endswith("n't")
    ):
        return False
    return _plain_word_follows(units, position)


def _plain_word_follows(units: list[Unit], position: int) -> bool:
    """The next unit is a plain content word; for Chinese it must also end the clause."""
    if position + 1 >= len(units):
        return False
    following = units[position + 1]
    if following.kind != "word":
        return False
    if not _is_cjk_unit(following):
        if following.term in _QUANTITIES:
            return True
        return following.term.isalpha() and following.term not in stopwords("en")
    if following.term in stopwords("zh"):
        return False
    after = units[position + 2] if position + 2 < len(units) else None
    return after is None or after.term in _CLAUSE_FINAL


def _is_cjk_unit(unit: Unit) -> bool:
    return bool(unit.term) and not unit.term[0].isascii()


def _merged_excess(units: list[Unit]) -> list[int]:
    """A word jieba merged with 太 ("太小", "太多") at the end of a clause or before 了: the
    positions of such words."""
    found: list[int] = []
    for position, unit in enumerate(units):
        term = unit.term
        if unit.kind != "word" or not term.startswith("太") or not 2 <= len(term) <= 3:
            continue
        if term in _EXCESS_FALSE_FRIENDS:
            continue
        after = units[position + 1] if position + 1 < len(units) else None
        if after is None or after.term in _CLAUSE_FINAL:
            found.append(position)
    return found


def _has_question_word(clause_text: str) -> bool:
    lowered = clause_text.lower()
    return any(word in lowered for word in _QUESTION_WORDS)


def _contrast_weights(
    clauses: list[Clause], units: list[list[Unit]], raw: list[_Raw]
) -> list[float]:
    weights = [1.0] * len(raw)
    sentence: list[int] = []
    previous_sentence: list[int] = []
    for index, clause in enumerate(clauses):
        sentence.append(index)
        if clause.ends_sentence or index == len(clauses) - 1:
            _weigh_sentence(sentence, previous_sentence, units, raw, weights)
            previous_sentence, sentence = sentence, []
    return weights


def _weigh_sentence(
    sentence: list[int],
    previous_sentence: list[int],
    units: list[list[Unit]],
    raw: list[_Raw],
    weights: list[float],
) -> None:
    markers = [
        unit
        for index in sentence
        for position, unit in enumerate(units[index])
        if unit.kind == "contrast" and (unit.term in _CONTRAST_ANYWHERE or position < 2)
    ]
    if markers:
        pivot = markers[-1].start
        for item_index, item in enumerate(raw):
            if item.clause_index in sentence:
                after = item.unit.start >= pivot
                weights[item_index] *= _AFTER_CONTRAST if after else _BEFORE_CONTRAST
        if _opens_with_contrast(units[sentence[0]]):
            for item_index, item in enumerate(raw):
                if item.clause_index in previous_sentence:
                    weights[item_index] *= _BEFORE_CONTRAST
        return
    for index in sentence:
        if any(unit.kind == "concessive" for unit in units[index][:3]):
            for item_index, item in enumerate(raw):
                if item.clause_index == index:
                    weights[item_index] *= _CONCESSIVE


def _apply_discourse_markers(
    units: list[list[Unit]], raw: list[_Raw], weights: list[float]
) -> None:
    """Summary markers (总之, overall) raise what follows them in the text; reservation
    markers (就是, 美中不足, only complaint) lower their own clause."""
    for clause_index, clause_units in enumerate(units):
        for position, unit in enumerate(clause_units):
            if unit.kind == "summary" and position < 2:
                for item_index, item in enumerate(raw):
                    if item.unit.start >= unit.start:
                        weights[item_index] *= unit.value
            elif unit.kind == "reservation" and (position < 2 or unit.term != "就是"):
                for item_index, item in enumerate(raw):
                    if item.clause_index == clause_index:
                        weights[item_index] *= unit.value


def _opens_with_contrast(units: list[Unit]) -> bool:
    return any(unit.kind == "contrast" for unit in units[:2])


def _result(contributions: tuple[Contribution, ...]) -> SentimentResult:
    positive = float(sum(c.value for c in contributions if c.value > 0))
    negative = float(-sum(c.value for c in contributions if c.value < 0))
    score = positive - negative
    return SentimentResult(
        label=_label(score, positive, negative),
        score=round(score, 6),
        positive=round(positive, 6),
        negative=round(negative, 6),
        contributions=contributions,
    )


def _label(score: float, positive: float, negative: float) -> Sentiment:
    weaker, stronger = sorted((positive, negative))
    if weaker >= _MIXED_MINIMUM and weaker >= _MIXED_BALANCE * stronger:
        return "mixed"
    if score >= _LABEL_THRESHOLD:
        return "positive"
    if score <= -_LABEL_THRESHOLD:
        return "negative"
    return "mixed" if positive > 0 and negative > 0 else "neutral"
