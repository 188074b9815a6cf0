"""The aggregated analysis: what the backlog and the report are written from.

`summarize_analysis(items, ...)` is the one aggregate of analysis items. The batch tool
returns it to the main conversation (so a model with an 8k-token context can write the
backlog and the report from it), and the offline analyst writes its deliverables from it.
Its size is bounded whatever the input's size: at most `TOP_GROUPS` pain points, each with
at most `EVIDENCE_IDS` ids and `EXAMPLES` verbatim quotes (one past the first
`LEADING_GROUPS`) of at most `QUOTE_CHARS` characters (cut between words, see
`short_quote`), and at most `FAILURE_LINES` failure reasons and entries: about 7 KB of JSON,
whether 100 rows or 100,000 are analysed. Every count is exact.

Items are grouped by `theme` when they carry one (trimmed, case-folded, spaces as `_`), else
by their normalised `pain_point`, so items from a model that gives no theme still group by
what they say. A group's rows that report a problem or a request are its *problem rows*
(`is_actionable`); only groups with problem rows are pain points.

Priority of a pain point, where `n` is its problem rows, `share` is `n` over all analysed
rows, and `critical`/`high` count its problem rows of that severity:

- P0: critical >= 2, or critical >= 1 and share >= 10%;
- P1: critical >= 1, or high >= 3, or high >= 1 and share >= 15%;
- P2: high >= 1, or share >= 10%, or n >= 3;
- P3: anything else.

Pain points are listed by priority, then problem rows (descending), then key; the groups
left out are counted in `other_groups`. Shape:

    {source, total_rows, analysed_rows, unanalysed_rows, problem_rows,
     sentiment: {positive, neutral, negative, mixed}, severity: {low, medium, high, critical},
     languages: {zh: n, en: n, ...}  (only the languages items declare),
     groups, grouped_by: {theme, pain_point},
     pain_points: [{key, grouped_by, pain_point, count, share, problem_rows, priority,
                    priority_reason, sentiment (all rows), problem_severity (problem rows),
                    feedback_ids (problem rows),
                    examples: [{feedback_id, evidence_text, shortened, sentiment,
                                severity}],
                    suggested_action}],
     other_groups: {groups, rows, problem_rows},
     positive: {rows, examples},
     failed_batches: {batches, rows, reasons: [{reason, batches, rows}], entries: [...]}}
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from runlens.validation.quotes import splits_word
from runlens_feedback.contracts import SENTIMENTS, SEVERITIES

Priority = Literal["P0", "P1", "P2", "P3"]
Item = Mapping[str, Any]

TOP_GROUPS = 8
#: Quotes per pain point: EXAMPLES for the first LEADING_GROUPS, one for the others.
EXAMPLES = 2
LEADING_GROUPS = 3
EVIDENCE_IDS = 6
QUOTE_CHARS = 80
LABEL_CHARS = 60
ACTION_CHARS = 100
FAILURE_LINES = 3
REASON_CHARS = 200
#: Theme of positive rows that name no product area (never a pain point).
PRAISE_THEME = "praise"
#: Theme of rows without text (never a pain point).
EMPTY_THEME = "empty"
#: Theme of suggestions and requests (a pain point even when neutral).
FEATURE_REQUEST = "feature_request"
_UNSPECIFIED = "unspecified"


# -- one item -------------------------------------------------------------------------------


def group_key(item: Item) -> tuple[str, Literal["theme", "pain_point"]]:
    """The item's group: its theme when it has one, else its normalised pain point (both
    cut to `LABEL_CHARS`, so very long wordings that start alike share a group)."""
    theme = item.get("theme")
    if isinstance(theme, str) and theme.strip():
        return "_".join(theme.casefold().split())[:LABEL_CHARS], "theme"
    wording = _normalised(str(item.get("pain_point") or ""))[:LABEL_CHARS].rstrip()
    return wording or _UNSPECIFIED, "pain_point"


def _normalised(text: str) -> str:
    words = unicodedata.normalize("NFKC", text).casefold().split()
    return "".join(_strip_punctuation(" ".join(words)))


def _strip_punctuation(text: str) -> str:
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start])[0] in "PZ":
        start += 1
    while end > start and unicodedata.category(text[end - 1])[0] in "PZ":
        end -= 1
    return text[start:end]


def severity_rank(item: Item) -> int:
    """0 (low) .. 3 (critical); unknown values rank as low."""
    severity = item.get("severity")
    return SEVERITIES.index(severity) if severity in SEVERITIES else 0


def is_actionable(item: Item) -> bool:
    """Whether an item reports a problem or a request worth a backlog entry.

    Negative and mixed items are; neutral ones when they are feature requests or have a
    severity above low; positive items, praise and empty rows never are.
    """
    theme = group_key(item)[0]
    if theme in (PRAISE_THEME, EMPTY_THEME):
        return False
    sentiment = item.get("sentiment")
    if sentiment in ("negative", "mixed"):
        return True
    return sentiment == "neutral" and (theme == FEATURE_REQUEST or severity_rank(item) > 0)


def _score(item: Item) -> float:
    value = item.get("sentiment_score", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def representative_order(items: Sequence[Item]) -> list[Item]:
    """Most representative first: highest severity, then strongest sentiment, then input order."""
    ranked = sorted(
        enumerate(items), key=lambda pair: (-severity_rank(pair[1]), -abs(_score(pair[1])), pair[0])
    )
    return [item for _, item in ranked]


def priority_for(severity: Mapping[str, int], mentions: int, total: int) -> tuple[Priority, str]:
    """The priority of a pain point and the reason (module docstring), from the severity
    counts of its problem rows, their number and the number of analysed rows."""
    share = mentions / total if total else 0.0
    critical, high = severity.get("critical", 0), severity.get("high", 0)
    if critical >= 2:
        return "P0", f"{critical} critical reports"
    if critical >= 1 and share >= 0.10:
        return "P0", "a critical report in a theme raised by at least 10% of rows"
    if critical >= 1:
        return "P1", "a critical report"
    if high >= 3:
        return "P1", f"{high} high-severity reports"
    if high >= 1 and share >= 0.15:
        return "P1", "a high-severity report in a theme raised by at least 15% of rows"
    if high >= 1:
        return "P2", "a high-severity report"
    if share >= 0.10 or mentions >= 3:
        return "P2", "recurring reports (at least 3, or at least 10% of rows)"
    return "P3", "few reports, none high or critical"


# -- quotes ---------------------------------------------------------------------------------


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A verbatim prefix of `text` of at most `limit` characters, without outer whitespace.

    The cut falls between words, never inside one of a script that separates words with
    spaces (a quote that ends inside a word is not evidence, see
    `runlens.validation.quotes`); a first word longer than `limit` is kept whole for the same
    reason. The prefix is also a fragment of the text in Unicode NFC (so the cut never
    separates a letter from its combining accent), as the evidence check compares.
    """
    quote = text.strip()
    if len(quote) <= limit:
        return quote
    whole = unicodedata.normalize("NFC", quote)
    for end in range(limit, 0, -1):
        prefix = quote[:end].rstrip()
        if not splits_word(quote, end) and unicodedata.normalize("NFC", prefix) in whole:
            return prefix
    end = limit
    while splits_word(quote, end):
        end += 1
    return quote[:end].rstrip()  # one long word, or no prefix survives NFC (split Hangul)


def _example(item: Item) -> dict[str, Any]:
    evidence = str(item.get("evidence_text") or "")
    quote = short_quote(evidence)
    return {
        "feedback_id": str(item.get("feedback_id")),
        "evidence_text": quote,
        "shortened": quote != evidence.strip(),
        "sentiment": item.get("sentiment"),
        "severity": item.get("severity"),
    }


def _quotable(item: Item) -> bool:
    return bool(str(item.get("evidence_text") or "").strip())


def _examples(items: Iterable[Item], limit: int = EXAMPLES) -> list[dict[str, Any]]:
    return [_example(item) for item in items if _quotable(item)][:limit]


# -- groups ---------------------------------------------------------------------------------


def _counts(items: Iterable[Item], key: str, names: Sequence[str]) -> dict[str, int]:
    counted = Counter(str(item.get(key)) for item in items)
    return {name: counted.get(name, 0) for name in names}


def _most_common(values: Iterable[Any], limit: int) -> str | None:
    counted = Counter(str(v) for v in values if isinstance(v, str) and v.strip())
    return short_quote(counted.most_common(1)[0][0], limit) if counted else None


def _pain_point(
    key: str, grouped_by: str, members: list[Item], analysed: int
) -> dict[str, Any] | None:
    """The summary of one group, or None when none of its rows reports a problem."""
    problems = [m for m in members if is_actionable(m)]
    if not problems:
        return None
    ranked = representative_order(problems)
    problem_severity = _counts(problems, "severity", SEVERITIES)
    priority, reason = priority_for(problem_severity, len(problems), analysed)
    return {
        "key": key,
        "grouped_by": grouped_by,
        "pain_point": _most_common((m.get("pain_point") for m in ranked), LABEL_CHARS),
        "count": len(members),
        "share": round(len(members) / analysed, 4) if analysed else 0.0,
        "problem_rows": len(problems),
        "priority": priority,
        "priority_reason": reason,
        "sentiment": _counts(members, "sentiment", SENTIMENTS),
        "problem_severity": problem_severity,
        "feedback_ids": list(dict.fromkeys(str(m.get("feedback_id")) for m in ranked))[
            :EVIDENCE_IDS
        ],
        "examples": _examples(ranked),
        "suggested_action": _most_common((m.get("suggested_action") for m in ranked), ACTION_CHARS),
    }


def _pain_order(group: Mapping[str, Any]) -> tuple[str, int, str]:
    return (group["priority"], -group["problem_rows"], group["key"])


def group_items(items: Sequence[Item]) -> dict[tuple[str, str], list[Item]]:
    """The items of each group, by `(key, grouped_by)` (`group_key`), in first-seen order."""
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault(group_key(item), []).append(item)
    return groups


def _positive(items: Sequence[Item]) -> dict[str, Any]:
    praise = [i for i in items if i.get("sentiment") == "positive"]
    ordered = sorted(praise, key=lambda i: (group_key(i)[0] != PRAISE_THEME, -abs(_score(i))))
    return {"rows": len(praise), "examples": _examples(ordered)}


# -- failures -------------------------------------------------------------------------------


def _unanalysed(entry: Mapping[str, Any]) -> int | None:
    ids = entry.get("feedback_ids")
    return len(ids) if isinstance(ids, list) else None


def _entry_line(entry: Mapping[str, Any]) -> dict[str, Any]:
    scalars = {
        key: short_quote(value, REASON_CHARS) if isinstance(value, str) else value
        for key, value in entry.items()
        if isinstance(value, str | int | float | bool) and key != "reason"
    }
    line = {**scalars, "reason": _reason(entry)}
    unanalysed = _unanalysed(entry)
    if unanalysed is not None:
        line["unanalysed_rows"] = unanalysed
    return line


def _reason(entry: Mapping[str, Any]) -> str:
    return short_quote(str(entry.get("reason") or "unknown reason"), REASON_CHARS)


def _failures(failed_batches: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_reason: dict[str, list[Mapping[str, Any]]] = {}
    for entry in failed_batches:
        by_reason.setdefault(_reason(entry), []).append(entry)
    reasons: list[dict[str, Any]] = [
        {
            "reason": reason,
            "batches": len(entries),
            "rows": sum(_unanalysed(e) or 0 for e in entries),
        }
        for reason, entries in by_reason.items()
    ]
    reasons.sort(key=lambda r: (-r["rows"], -r["batches"], r["reason"]))
    return {
        "batches": len({e.get("batch", n) for n, e in enumerate(failed_batches)}),
        "rows": sum(_unanalysed(e) or 0 for e in failed_batches),
        "reasons": reasons[:FAILURE_LINES],
        "entries": [_entry_line(e) for e in failed_batches[:FAILURE_LINES]],
    }


# -- the summary ----------------------------------------------------------------------------


def summarize_analysis(
    items: Sequence[Item],
    *,
    total_rows: int | None = None,
    failed_batches: Sequence[Mapping[str, Any]] = (),
    source: str = "",
) -> dict[str, Any]:
    """The bounded aggregate of analysis `items` (module docstring for the shape and rules).

    `total_rows` is the input's row count (default: the number of items); rows not among
    the items are `unanalysed_rows`. `failed_batches` are the analysis file's entries.
    """
    analysed = len(items)
    total = analysed if total_rows is None else total_rows
    groups = group_items(items)
    pains = [_pain_point(k, by, members, analysed) for (k, by), members in groups.items()]
    ranked = sorted((p for p in pains if p is not None), key=_pain_order)
    listed, rest = ranked[:TOP_GROUPS], ranked[TOP_GROUPS:]
    for group in listed[LEADING_GROUPS:]:
        del group["examples"][1:]
    listed_keys = {(p["key"], p["grouped_by"]) for p in listed}
    return {
        "source": source,
        "total_rows": total,
        "analysed_rows": analysed,
        "unanalysed_rows": max(total - analysed, 0),
        "problem_rows": sum(1 for item in items if is_actionable(item)),
        "sentiment": _counts(items, "sentiment", SENTIMENTS),
        "severity": _counts(items, "severity", SEVERITIES),
        "languages": dict(sorted(Counter(_languages(items)).items(), key=_by_count)),
        "groups": len(groups),
        "grouped_by": {
            "theme": sum(len(m) for (_, by), m in groups.items() if by == "theme"),
            "pain_point": sum(len(m) for (_, by), m in groups.items() if by == "pain_point"),
        },
        "pain_points": listed,
        "other_groups": {
            "groups": len(groups) - len(listed),
            "rows": sum(len(m) for key, m in groups.items() if key not in listed_keys),
            "problem_rows": sum(p["problem_rows"] for p in rest),
        },
        "positive": _positive(items),
        "failed_batches": _failures(failed_batches),
    }


def _languages(items: Iterable[Item]) -> Iterable[str]:
    return (item["language"] for item in items if isinstance(item.get("language"), str))


def _by_count(pair: tuple[str, int]) -> tuple[int, str]:
    return (-pair[1], pair[0])
