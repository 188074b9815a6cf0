"""A small linear sentiment model per language, learned offline, applied in plain Python.

Features of a text (the same function builds them for training and at run time):

- `w:<term>` for every lexical unit of a clause (words, lexicon phrases, modifiers), written
  `n:<term>` inside a negation scope (after a negator, up to a contrast word or barrier);
- `b:<term> <term>` for each pair of adjacent units in a clause;
- Chinese only: `c:<two characters>` for each pair of adjacent Chinese characters;
- `q` when a clause asks a question.

Each distinct feature counts once, with the value 1/sqrt(number of distinct features) (an
L2-normalised binary vector), so long texts do not outweigh short ones. Two further inputs
come from the lexicon and rules (`sentiment.py`): `lex_pos` = log(1 + positive weight) and
`lex_neg` = log(1 + negative weight). The model's logit is `bias + sum(weight * value)`.

The weights are fitted by `benchmarks/train_sentiment.py` (scikit-learn logistic regression,
seeded, on training corpora only; see docs/quality.md) and shipped as
`lexicon/sentiment_model_<lang>.txt`: `#` comment lines, then `feature<TAB>weight` rows; the
special rows `__bias__`, `__lex_pos__`, `__lex_neg__`, `__neutral_margin__` hold the
intercept, the two lexicon weights and the neutral margin chosen on training data.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from itertools import chain
from types import MappingProxyType

from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.text import Clause
from runlens_feedback.analyst.units import Unit

_DATA = "runlens_feedback.analyst.lexicon"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_SCOPE_ENDS = frozenset({"contrast", "concessive", "barrier"})
BIAS, LEX_POS, LEX_NEG, NEUTRAL_MARGIN = (
    "__bias__",
    "__lex_pos__",
    "__lex_neg__",
    "__neutral_margin__",
)


@dataclass(frozen=True)
class LinearModel:
    """Weights of one language's model."""

    lang: Lang
    weights: Mapping[str, float]
    bias: float
    lex_pos: float
    lex_neg: float
    neutral_margin: float
    #: `weights.get` of a plain copy: a read-only view's `get` costs a second lookup, and the
    #: model reads a weight for every feature of every row.
    weight: Callable[[str, float], float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "weight", dict(self.weights).get)


@dataclass(frozen=True, slots=True)
class ModelScore:
    """The model's logit for a text and each clause's share of its text features."""

    logit: float
    clause_parts: tuple[float, ...]


def clause_features(
    text: str, lang: Lang, clauses: Sequence[Clause], units: Sequence[Sequence[Unit]]
) -> list[list[str]]:
    """The features of each clause, in order (a feature may repeat across clauses)."""
    return [
        _features_of(text, lang, clause, clause_units)
        for clause, clause_units in zip(clauses, units, strict=True)
    ]


def _features_of(text: str, lang: Lang, clause: Clause, units: Sequence[Unit]) -> list[str]:
    """The features of one clause and its units, in order."""
    features: list[str] = []
    negated = False
    previous = ""
    for unit in units:
        term = unit.term.lower()
        if unit.kind in _SCOPE_ENDS:
            negated = False
        features.append(("n:" if negated else "w:") + term)
        if previous:
            features.append(f"b:{previous} {term}")
        previous = term
        if unit.kind == "negator":
            negated = not negated
    if lang == "zh":
        for run in _CJK.finditer(text, clause.start, clause.end):
            chars = run.group()
            features.extend(f"c:{chars[i : i + 2]}" for i in range(len(chars) - 1))
    if clause.asks:
        features.append("q")
    return features


#: Clauses whose distinct features `score` remembers with their weights (the most recent
#: ones): feedback repeats its clauses, and a clause's features depend on its characters
#: (its units do, `document.parse`), the language and whether it asks.
REMEMBERED_CLAUSES = 32_768
_distinct: dict[tuple[str, Lang, bool], tuple[LinearModel, tuple[str, ...], tuple[float, ...]]] = {}


def _weighed_features(
    model: LinearModel, text: str, clause: Clause, units: Sequence[Unit]
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The distinct features of one clause in first-seen order and the model's weight of
    each (0 when it has none), remembered by the clause."""
    key = (text[clause.start : clause.end], model.lang, clause.asks)
    found = _distinct.get(key)
    if found is None or found[0] is not model:
        # one string per feature for every clause remembered: most recur ("w:慢", "b:too slow")
        features = tuple(
            dict.fromkeys(map(sys.intern, _features_of(text, model.lang, clause, units)))
        )
        weight = model.weight
        found = (model, features, tuple(weight(f, 0.0) for f in features))
        if len(_distinct) >= REMEMBERED_CLAUSES:
            # another thread may have dropped it meanwhile
            with suppress(KeyError, RuntimeError, StopIteration):
                del _distinct[next(iter(_distinct))]
        _distinct[key] = found
    return found[1], found[2]


def text_features(
    text: str, lang: Lang, clauses: Sequence[Clause], units: Sequence[Sequence[Unit]]
) -> dict[str, float]:
    """The L2-normalised binary feature vector of a text (training uses this too)."""
    distinct = {f for features in clause_features(text, lang, clauses, units) for f in features}
    if not distinct:
        return {}
    value = 1.0 / math.sqrt(len(distinct))
    return dict.fromkeys(sorted(distinct), value)


def lexicon_inputs(positive: float, negative: float) -> tuple[float, float]:
    return math.log1p(max(positive, 0.0)), math.log1p(max(negative, 0.0))


def score(
    model: LinearModel,
    text: str,
    clauses: Sequence[Clause],
    units: Sequence[Sequence[Unit]],
    positive: float,
    negative: float,
) -> ModelScore:
    """The logit of `text` (positive means positive) and the per-clause feature parts."""
    # Distinct features in first-seen order (not set order, which varies with the hash seed
    # and would make float sums differ between processes).
    per_clause = [
        _weighed_features(model, text, clause, clause_units)
        for clause, clause_units in zip(clauses, units, strict=True)
    ]
    occurrences = Counter(chain.from_iterable(features for features, _ in per_clause))
    value = 1.0 / math.sqrt(len(occurrences)) if occurrences else 0.0
    parts = tuple(
        math.fsum([w * value / occurrences[f] for f, w in zip(features, weights, strict=True)])
        for features, weights in per_clause
    )
    lex_pos, lex_neg = lexicon_inputs(positive, negative)
    logit = math.fsum((model.bias, *parts, model.lex_pos * lex_pos, model.lex_neg * lex_neg))
    return ModelScore(logit=logit, clause_parts=parts)


@cache
def load_model(lang: Lang) -> LinearModel:
    """The shipped model of `lang`, read once per process."""
    raw = files(_DATA).joinpath(f"sentiment_model_{lang}.txt").read_text(encoding="utf-8")
    weights: dict[str, float] = {}
    for line in raw.splitlines():
        if line and not line.startswith("#"):
            feature, _, weight = line.rpartition("\t")
            weights[feature] = float(weight)
    special = {key: weights.pop(key, 0.0) for key in (BIAS, LEX_POS, LEX_NEG, NEUTRAL_MARGIN)}
    return LinearModel(
        lang=lang,
        weights=MappingProxyType(weights),
        bias=special[BIAS],
        lex_pos=special[LEX_POS],
        lex_neg=special[LEX_NEG],
        neutral_margin=special[NEUTRAL_MARGIN],
    )
