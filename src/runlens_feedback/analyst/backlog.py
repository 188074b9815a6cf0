"""The product backlog, written from the aggregated analysis (`runlens_feedback.aggregate`).

One backlog item per pain point of the summary, that is per group with rows reporting a
problem or a request (negative and mixed rows, neutral feature requests, neutral rows with a
severity above low); praise, positive-only groups and empty rows produce no backlog item.

Priority is the summary's (`runlens_feedback.aggregate`: severity, critical, reach and trend
points, with `priority_reason` saying each), recomputed with `priority_for` only for a summary
that lacks one. Items are ordered by priority, then in the summary's order (the order of the
evidence: points, problem rows, high-or-critical rows), and cut to `max_items`. Each cites
the pain point's ids (at most `EVIDENCE_IDS`, 6, most representative first: highest
severity, then strongest sentiment, then input order).

The backlog is written in the report's language (`report_format.report_language`: the
summary's main language, Chinese or English), from the templates of `backlog_words`; a table
theme is named by its label in that language (`lexicon/themes.json`), the priority points are
worded in it (`priority.priority_parts`). Everything an item says comes from its theme's own
evidence, never from a fixed template:

- the title names the theme (its discovered name, or the theme table's title in the language
  for a table theme) and the action its rows call for (fix the complaints, the weak points,
  look into the reports, answer the requests);
- the acceptance criteria: the cited cases are reviewed and their cause recorded; the
  theme's own terms (its discovered keywords, else the most frequent terms of its quotes)
  are traced to causes; when it has high or critical reports, none recurs after the change
  (with today's count); when it is rising, its share of the latest period falls back to its
  earlier share; and the cited cases are re-checked;
- the metric: the theme's share of the analysed rows, with its baseline (its problem rows)
  and target (half), plus its high-or-critical count with target 0 when it has any.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from runlens import as_percent, percent
from runlens_feedback.aggregate import EVIDENCE_IDS, summarize_analysis
from runlens_feedback.analyst.backlog_words import DIRECTIONS_ZH, REASON_ZH, WORDS
from runlens_feedback.analyst.groups import group_keyword, theme_spec
from runlens_feedback.analyst.labels import FEATURE_REQUEST, PRIORITIES
from runlens_feedback.analyst.report_format import report_language
from runlens_feedback.analyst.report_words import (
    SENTIMENT_NAMES,
    SEVERITY_NAMES,
    Phrasebook,
    ReportLanguage,
)
from runlens_feedback.analyst.resources import ThemeSpec
from runlens_feedback.discovery import terms
from runlens_feedback.priority import priority_for, priority_parts
from runlens_feedback.quotes import short_quote
from runlens_feedback.trend import Trend

MAX_EVIDENCE_IDS = EVIDENCE_IDS
MAX_ITEMS = 8
#: The longest problem quote a title holds.
PROBLEM_CHARS = 60
_UNSAFE = frozenset("\"'“”‘’「」『』《》«»`*_[]<>#|\\~")
_TRAILING = " ,.;:，。；：、!！?？"
_LEVELS = ("critical", "high", "medium", "low")
_TERMS = 5
Group = Mapping[str, Any]


def backlog_from_summary(
    summary: Mapping[str, Any], *, max_items: int = MAX_ITEMS
) -> dict[str, Any]:
    """`{"items": [...]}`: one prioritised backlog item per pain point of `summary`, written
    in `report_language(summary)`.

    Each item: `title`, `theme` (the group key), `priority` (P0-P3), `evidence_feedback_ids`
    (non-empty, real ids), `acceptance_criteria` (non-empty list of testable statements),
    `metric` (measurable, with its baseline and target), `rationale` (the counts behind the
    priority) and `mentions` (the problem rows). At most `max_items` items, and never more
    than the summary lists.
    """
    total = int(summary.get("analysed_rows", 0))
    words = _Words(report_language(summary))
    groups = [g for g in summary.get("pain_points", ()) if g.get("feedback_ids")]
    entries = [_entry(group, total, words) for group in groups]
    # Stable: within a priority the summary's order, which is the order of the evidence.
    entries.sort(key=lambda entry: PRIORITIES.index(entry["priority"]))
    return {"items": entries[: max(max_items, 0)]}


def build_backlog(
    items: Sequence[Mapping[str, Any]], *, max_items: int = MAX_ITEMS
) -> dict[str, Any]:
    """The backlog of analysis `items`: `backlog_from_summary(summarize_analysis(items))`."""
    return backlog_from_summary(summarize_analysis(items), max_items=max_items)


class _Words(Phrasebook):
    """The backlog's sentences in one language."""

    def __init__(self, language: ReportLanguage) -> None:
        super().__init__(language, WORDS)

    def listed(self, parts: Sequence[str]) -> str:
        return self.spaced(self.text["sep"].join(parts))

    def spaced(self, name: str) -> str:
        """A name as a Chinese sentence holds it: a space between it and the Chinese words
        next to it when it starts or ends with a Latin letter or a digit."""
        if self.language != "zh" or not name:
            return name
        before = " " if name[0].isascii() and name[0].isalnum() else ""
        after = " " if name[-1].isascii() and name[-1].isalnum() else ""
        return f"{before}{name}{after}"

    def counts(self, counts: Mapping[str, int], names: Mapping[str, str]) -> str:
        return self.text["sep"].join(
            self("count", count=count, name=names.get(label, label))
            for label, count in counts.items()
        )


def _entry(group: Group, total: int, words: _Words) -> dict[str, Any]:
    severity: Mapping[str, int] = group["problem_severity"]
    mentions = int(group["problem_rows"])
    priority, reason = _priority(group, severity, mentions, total, words)
    ids = [str(i) for i in group["feedback_ids"]][:MAX_EVIDENCE_IDS]
    share = percent(mentions, total)
    spec = theme_spec(group)
    name = _theme_name(group, spec, words.language)
    own_terms = _terms(group, name, _theme_name(group, spec, "en"))
    language = words.language
    by_level = {level: int(severity.get(level, 0)) for level in _LEVELS}
    return {
        "title": _title(group, spec, name, words),
        "theme": str(group["key"]),
        "priority": priority,
        "evidence_feedback_ids": ids,
        "acceptance_criteria": _criteria(group, name, own_terms, ids, severity, mentions, words),
        "metric": _metric(name, severity, mentions, total, share, words),
        "rationale": words(
            "rationale",
            mentions=mentions,
            total=total,
            share=share,
            severity=words.counts(by_level, SEVERITY_NAMES[language]),
            sentiment=words.counts(_problem_sentiment(group), SENTIMENT_NAMES[language]),
            priority=priority,
            reason=reason,
        ),
        "mentions": mentions,
    }


def _priority(
    group: Group, severity: Mapping[str, int], mentions: int, total: int, words: _Words
) -> tuple[str, str]:
    """The summary's priority and its reason (recomputed when the summary has none), the
    reason in the backlog's language when the points give that priority."""
    given, reason = group.get("priority"), group.get("priority_reason")
    trend = _trend(group.get("trend"))
    if given in PRIORITIES and isinstance(reason, str) and reason:
        priority = str(given)
    else:
        priority, reason = priority_for(severity, mentions, total, trend)
    if words.language == "zh" and priority_for(severity, mentions, total, trend)[0] == priority:
        reason = _reason_zh(severity, mentions, total, trend)
    return priority, reason


def _trend(trend: object) -> Trend | None:
    """A summary's trend (`Trend.as_dict`) as the priority rule reads it, None without one."""
    return Trend.from_dict(trend) if isinstance(trend, Mapping) else None


def _reason_zh(severity: Mapping[str, int], mentions: int, total: int, trend: Trend | None) -> str:
    """The priority points (`priority.priority_parts`) in Chinese, as `priority_points`
    words them in English."""
    parts = priority_parts(severity, mentions, total, trend)
    critical = severity.get("critical", 0)
    reasons = [
        REASON_ZH["severity"].format(
            points=parts["severity"], mentions=mentions, severe=critical + severity.get("high", 0)
        ),
        REASON_ZH["critical"].format(points=parts["critical"], critical=critical),
        REASON_ZH["reach"].format(points=parts["reach"], share=percent(mentions, total)),
    ]
    if trend is not None:
        reasons.append(
            REASON_ZH["too_few" if trend.direction == "too_few" else "trend"].format(
                points=parts["trend"],
                direction=DIRECTIONS_ZH.get(trend.direction, trend.direction),
                period=trend.period,
                rows=trend.recent_rows,
                recent=as_percent(trend.recent_share),
                before=as_percent(trend.before_share),
            )
        )
    return REASON_ZH["total"].format(
        reasons=REASON_ZH["sep"].join(reasons), points=sum(parts.values())
    )


def _problem_sentiment(group: Group) -> dict[str, int]:
    """Sentiment of the problem rows: every negative and mixed row of a pain point is one;
    the rest are neutral requests or neutral reports above low severity."""
    sentiment = group.get("sentiment", {})
    negative, mixed = int(sentiment.get("negative", 0)), int(sentiment.get("mixed", 0))
    return {
        "negative": negative,
        "mixed": mixed,
        "neutral": max(int(group["problem_rows"]) - negative - mixed, 0),
    }


def _theme_name(group: Group, spec: ThemeSpec | None, language: ReportLanguage) -> str:
    """The theme's name in `language`: a table theme's label in it (the English one only when
    the summary names the theme otherwise), else its discovered name or its keyword."""
    name = group.get("pain_point")
    if spec is not None and (language == "zh" or not isinstance(name, str)):
        return spec.label(language)
    if group.get("grouped_by", "theme") == "theme" and isinstance(name, str) and name.strip():
        return " ".join(name.split())
    return group_keyword(group, language) if spec is None else spec.label(language)


def _terms(group: Group, *names: str) -> list[str]:
    """The theme's own words: its discovered keywords, else the commonest terms of its
    quotes; never the words of its names."""
    named = {word for name in names for word in name.casefold().replace("·", " ").split()}
    named |= {part for name in names for part in name.casefold().split("/")}
    given = [str(k) for k in group.get("keywords") or () if isinstance(k, str)]
    if not given:
        counted: Counter[str] = Counter()
        for example in group.get("examples") or ():
            counted.update(set(terms(str(example.get("evidence_text") or ""))))
        given = [term for term, _ in sorted(counted.items(), key=lambda p: (-p[1], p[0]))]
    kept = [t for t in given if t.casefold() not in named]
    return kept[:_TERMS]


def _title(group: Group, spec: ThemeSpec | None, name: str, words: _Words) -> str:
    """The item's title: the table theme's own title, else the action its rows call for
    with the problem in the customers' words (`_problem`), else the action alone."""
    if spec is not None and spec.backlog_title(words.language):
        return spec.backlog_title(words.language)
    if str(group.get("key")) == FEATURE_REQUEST:
        kind = "requests"
    else:
        sentiment = _problem_sentiment(group)
        if sentiment["neutral"] > sentiment["negative"] + sentiment["mixed"]:
            kind = "reports"
        elif sentiment["mixed"] > sentiment["negative"]:
            kind = "mixed"
        else:
            kind = "complaints"
    problem = _problem(group)
    if problem is None:
        return words(f"title_{kind}", name=name)
    return words(f"title_{kind}_said", name=words.spaced(name), problem=problem).strip()


def _problem(group: Group) -> str | None:
    """The pain point's leading problem as its most representative row says it: its first
    quote, whole (no cut at the start), cut to `PROBLEM_CHARS` at a word or clause boundary
    with an ellipsis, when it holds no quotation mark or Markdown markup (a title is plain
    text the report shows in bold, and reads quotation marks as citations)."""
    for example in group.get("examples") or ():
        quote = " ".join(str(example.get("evidence_text") or "").split())
        if not quote or example.get("cut_start") or _UNSAFE.intersection(quote):
            continue
        short = short_quote(quote, PROBLEM_CHARS)
        cut = len(short) < len(quote) or bool(example.get("shortened"))
        return short.rstrip(_TRAILING) + ("…" if cut else "")
    return None


def _criteria(
    group: Group,
    name: str,
    own_terms: list[str],
    ids: list[str],
    severity: Mapping[str, int],
    mentions: int,
    words: _Words,
) -> list[str]:
    cited = ", ".join(ids[:3])
    named = words.spaced(name)
    criteria = [words("review", name=named, cited=cited)]
    if own_terms:
        criteria.append(words("terms", terms=words.listed(own_terms)))
    severe = int(severity.get("high", 0)) + int(severity.get("critical", 0))
    if severe:
        criteria.append(words("severe", name=named, severe=severe, mentions=mentions))
    trend = group.get("trend")
    rising = Trend.from_dict(trend) if isinstance(trend, Mapping) else None
    if rising is not None and rising.direction == "rising":
        before, recent, period = rising.before_share, rising.recent_share, rising.period
        if before > 0:
            criteria.append(words("falls_back", before=as_percent(before), period=period))
        else:
            criteria.append(words("new_in_period", recent=as_percent(recent), period=period))
    criteria.append(words("recheck", cited=cited))
    return criteria


def _metric(
    name: str,
    severity: Mapping[str, int],
    mentions: int,
    total: int,
    share: str,
    words: _Words,
) -> str:
    metric = words("metric", name=words.spaced(name), mentions=mentions, total=total, share=share)
    severe = int(severity.get("high", 0)) + int(severity.get("critical", 0))
    if severe:
        metric += words("metric_severe", severe=severe)
    return metric
