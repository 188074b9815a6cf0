"""Severity of one row, from its sentiment and impact cues (`lexicon/impact.txt`).

The rule:

- positive rows are `low` (praise is not a problem, whatever words it uses: "never crashes");
- the base level: `negative` -> `medium`, or `high` when its negative weight is 4 or more
  (strong or repeated complaints: "太慢了，非常失望"); `mixed` -> `medium`; `neutral` -> `low`;
- a critical cue (data loss/数据丢失, security/泄露, money taken wrongly/重复扣费, outage/宕机)
  makes a negative or mixed row `critical`, a neutral one at least `high`;
- a blocking cue (crash/崩溃/闪退, cannot log in/登不上, unusable/用不了, export failed/导出失败,
  影响工作) makes a negative or mixed row at least `high`, a neutral one at least `medium`;
- a scale cue (every day/每天, always/总是, team/团队, customers/客户) raises a negative or mixed
  row by one level, but never to `critical` (critical needs a critical cue).
"""

from __future__ import annotations

from functools import cache

from runlens_feedback.analyst.document import Document
from runlens_feedback.analyst.labels import SEVERITIES, Lang, Severity
from runlens_feedback.analyst.matching import KeywordSet, compile_keywords
from runlens_feedback.analyst.resources import impact_cues

_STRONG_NEGATIVE = 4.0
_LANGS: tuple[Lang, ...] = ("zh", "en")


@cache
def _cues(kinds: tuple[str, ...]) -> KeywordSet:
    return compile_keywords(
        pattern for lang in _LANGS for kind in kinds for pattern in impact_cues(lang).get(kind, ())
    )


def _count(doc: Document, kinds: tuple[str, ...], clauses: range | list[int]) -> int:
    cues = _cues(kinds)
    return sum(cues.count_words(doc.clause_words(index)) for index in clauses)


def impact_signals(doc: Document) -> dict[str, int]:
    """Matches of each cue kind (`critical`, `blocking`, `scale`) over the whole row."""
    everything = range(len(doc.clauses))
    return {kind: _count(doc, (kind,), everything) for kind in ("critical", "blocking", "scale")}


def clause_impact(doc: Document, index: int) -> int:
    """Critical and blocking cue matches in one clause (used to pick the evidence quote)."""
    return _count(doc, ("critical", "blocking"), [index])


def assess_severity(doc: Document) -> Severity:
    """The severity of a parsed row (see the module docstring)."""
    label = doc.sentiment.label
    if label == "positive":
        return "low"
    signals = impact_signals(doc)
    problem = label in ("negative", "mixed")
    level = _base_level(doc)
    if signals["critical"]:
        level = _at_least(level, "critical" if problem else "high")
    if signals["blocking"]:
        level = _at_least(level, "high" if problem else "medium")
    if signals["scale"] and problem and level != "critical":
        level = _raise(level)
    return level


def _base_level(doc: Document) -> Severity:
    label = doc.sentiment.label
    if label == "negative":
        return "high" if doc.sentiment.negative >= _STRONG_NEGATIVE else "medium"
    if label == "mixed":
        return "medium"
    return "low"


def _at_least(level: Severity, floor: Severity) -> Severity:
    return level if SEVERITIES.index(level) >= SEVERITIES.index(floor) else floor


def _raise(level: Severity) -> Severity:
    return SEVERITIES[min(SEVERITIES.index(level) + 1, SEVERITIES.index("high"))]
