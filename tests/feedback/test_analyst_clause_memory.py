"""What the analyst remembers of a clause gives what reading it afresh gives.

`parse` remembers each clause's reading (tokens, units, words), the sentiment rules what a
clause contributes and the model its distinct features, all by the clause's characters. The
code those memories replaced is kept here as it was (the model's score, a clause's
contributions); every test reads generated hostile texts (both languages mixed, odd
characters, every kind of punctuation, long texts) with every memory emptied before each
text, and again with the memories filled by other texts holding the same clauses elsewhere
(so a remembered clause is moved to where it starts), and the two readings must be equal,
and equal to the earlier code's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hostile import sentences, texts

from runlens_feedback.analyst import document, sentiment, sentiment_model
from runlens_feedback.analyst import units as units_module
from runlens_feedback.analyst.document import Document, parse
from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.matching import clause_words
from runlens_feedback.analyst.rows import analyze_text
from runlens_feedback.analyst.sentiment import (
    _ALL_CAPS,
    _CLAUSE_FINAL,
    _COMPLAINT_QUESTION,
    _EXCESS,
    _EXCESS_FALSE_FRIENDS,
    _EXCLAMATION,
    _NEGATED_ACTION,
    _WINDOW,
    _has_question_word,
    _is_excess,
    _is_negated_action,
    _is_shouted,
    _modified,
    _Raw,
)
from runlens_feedback.analyst.sentiment_model import (
    LinearModel,
    ModelScore,
    clause_features,
    lexicon_inputs,
)
from runlens_feedback.analyst.text import Clause
from runlens_feedback.analyst.tokens import forget_segmentations, tokenize
from runlens_feedback.analyst.units import Unit

# -- the earlier code, as it was ------------------------------------------------------------


def _old_score(
    model: LinearModel,
    text: str,
    clauses: Sequence[Clause],
    units: Sequence[Sequence[Unit]],
    positive: float,
    negative: float,
) -> ModelScore:
    per_clause = [list(dict.fromkeys(f)) for f in clause_features(text, model.lang, clauses, units)]
    occurrences: dict[str, int] = {}
    for features in per_clause:
        for feature in features:
            occurrences[feature] = occurrences.get(feature, 0) + 1
    value = 1.0 / math.sqrt(len(occurrences)) if occurrences else 0.0
    weights = model.weights
    parts = tuple(
        math.fsum(weights.get(f, 0.0) * value / occurrences[f] for f in features)
        for features in per_clause
    )
    lex_pos, lex_neg = lexicon_inputs(positive, negative)
    logit = math.fsum((model.bias, *parts, model.lex_pos * lex_pos, model.lex_neg * lex_neg))
    return ModelScore(logit=logit, clause_parts=parts)


def _old_clause_contributions(
    text: str, lang: Lang, index: int, clause: Clause, units: list[Unit]
) -> list[_Raw]:
    found: list[_Raw] = []
    for position, unit in enumerate(units):
        if unit.kind == "sentiment":
            value = _modified(units, position, _WINDOW[lang])
            if not unit.term.isupper() and _is_shouted(text, unit, lang):
                value *= _ALL_CAPS
            found.append(_Raw(index, unit, value))
        elif _is_excess(units, position, lang):
            found.append(_Raw(index, units[position + 1], _EXCESS[unit.term]))
        elif _is_negated_action(units, position, lang):
            found.append(_Raw(index, units[position + 1], _NEGATED_ACTION))
    if clause.exclaims:
        found = [_Raw(item.clause_index, item.unit, item.value * _EXCLAMATION) for item in found]
    if clause.asks and _has_question_word(text[clause.start : clause.end]):
        anchor = Unit("?", "word", 0.0, clause.start, clause.end)
        found.append(_Raw(index, anchor, _COMPLAINT_QUESTION))
    found.extend(_old_merged_excess(units, index))
    return found


def _old_merged_excess(units: list[Unit], index: int) -> list[_Raw]:
    found: list[_Raw] = []
    for position, unit in enumerate(units):
        term = unit.term
        if unit.kind != "word" or not term.startswith("太") or not 2 <= len(term) <= 3:
            continue
        if term in _EXCESS_FALSE_FRIENDS:
            continue
        after = units[position + 1] if position + 1 < len(units) else None
        if after is None or after.term in _CLAUSE_FINAL:
            found.append(_Raw(index, unit, _EXCESS["太"]))
    return found


# -- helpers --------------------------------------------------------------------------------


def _forget() -> None:
    forget_segmentations()
    document._remembered.clear()
    sentiment._remembered.clear()
    sentiment_model._distinct.clear()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _forget()
    yield
    _forget()


def _reading(doc: Document) -> dict[str, Any]:
    """Everything a parsed text holds, in plain values."""
    return {
        "lang": doc.lang,
        "clauses": doc.clauses,
        "tokens": doc.tokens,
        "units": doc.units,
        "sentiment": doc.sentiment,
        "words": [doc.clause_words(index) for index in range(len(doc.clauses))],
    }


def _fresh_reading(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reading and the analysis item of `text` with every memory emptied first."""
    _forget()
    reading = _reading(parse(text))
    _forget()
    return reading, analyze_text("id", text)


_EXTRA = ["好的，", "Well. ", "OK!! ", "\n", "为什么？", "WHY? "]

hostile_texts = st.lists(st.one_of(texts(), sentences()), min_size=1, max_size=6)
examples = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the tests ------------------------------------------------------------------------------


@examples
@given(hostile_texts)
def test_a_remembered_clause_reads_as_a_fresh_one(batch: list[str]) -> None:
    fresh = [_fresh_reading(text) for text in batch]
    _forget()
    # the same clauses seen first elsewhere: shifted, in an upper-case text, after a "!"
    for text in batch:
        for extra in _EXTRA:
            parse(extra + text)
            parse(text + extra)
        parse(text.upper())
    for text, (reading, item) in zip(batch, fresh, strict=True):
        assert _reading(parse(text)) == reading
        assert analyze_text("id", text) == item


@examples
@given(hostile_texts)
def test_a_clause_reads_as_its_tokens_and_units(batch: list[str]) -> None:
    for text in batch:
        doc = parse(text)
        for index, clause in enumerate(doc.clauses):
            tokens = tokenize(text, clause.start, clause.end)
            assert list(doc.tokens[index]) == tokens
            assert list(doc.units[index]) == units_module.clause_units(
                text, clause.start, clause.end, tokens
            )
            assert doc.clause_words(index) == clause_words(doc.clause_text(index), tokens)


@examples
@given(hostile_texts)
def test_the_sentiment_is_the_earlier_codes(
    batch: list[str],
) -> None:
    for text in [*batch, *(extra + text for text in batch for extra in _EXTRA)]:
        doc = parse(text)
        clauses, units = list(doc.clauses), [list(u) for u in doc.units]
        model = sentiment_model.load_model(doc.lang)
        lexical = sentiment.lexicon_score(text, doc.lang, clauses, units)
        assert sentiment_model.score(
            model, text, clauses, units, lexical.positive, lexical.negative
        ) == _old_score(model, text, clauses, units, lexical.positive, lexical.negative)
        old = [
            _old_clause_contributions(text, doc.lang, index, clause, units[index])
            for index, clause in enumerate(clauses)
        ]
        new = [
            sentiment._clause_contributions(text, doc.lang, index, clause, units[index])
            for index, clause in enumerate(clauses)
        ]
        assert new == old


def test_a_shouted_word_counts_unless_the_whole_text_shouts() -> None:
    """The same clause weighs more in a text that is not all upper-case."""
    calm = parse("SLOW EXPORT. it is bad")
    shouting = parse("SLOW EXPORT. IT IS BAD")
    assert calm.clause_text(0) == shouting.clause_text(0)
    assert calm.sentiment.clause_signal(0, 0) > shouting.sentiment.clause_signal(0, 0) > 0


def _old_lookup(lex: Any, word: str) -> Any:
    """`units._lookup` as it was: each list asked in turn."""
    if word in lex.valences:
        return "sentiment", lex.valences[word]
    if word in lex.neutral:
        return "word", 0.0
    return units_module._role(lex, word)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_word_is_looked_up_as_each_list_asked_in_turn(lang: Lang) -> None:
    from runlens_feedback.analyst.resources import lexicon

    lex = lexicon(lang)
    listed = set(lex.valences) | lex.neutral | lex.modifier_words()
    odd = {"isn't", "dont", "won't", "can't", "n't", "", "ok", "不", "没有", "很好", "xyz"}
    for word in sorted(listed | odd | {w + "n't" for w in list(listed)[:200]}):
        assert units_module._lookup(lex, word) == _old_lookup(lex, word), word
