"""`analyze_rows`: one analysis item per feedback row, each row on its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runlens_feedback.analyst.document import Document, parse
from runlens_feedback.analyst.evidence import pick_evidence
from runlens_feedback.analyst.labels import EMPTY_THEME, PRAISE_THEME, Lang
from runlens_feedback.analyst.resources import theme_by_key
from runlens_feedback.analyst.severity import assess_severity
from runlens_feedback.analyst.text import detect_language
from runlens_feedback.analyst.themes import ThemeChoice, choose_theme
from runlens_feedback.analyst.tokens import release_segments
from runlens_feedback.theme_keys import OTHER_THEME as OTHER
from runlens_feedback.theme_keys import theme_name

_SNIPPET = {"zh": 30, "en": 80}
EMPTY_TEXT_FLAG = "empty_text"
#: Texts whose analysis one `analyze_rows` call (or one run's `memory`) remembers (the most
#: recent ones, about 20 MB): feedback repeats itself ("很好用", "Great app", a form's stock
#: answers), and a row's analysis depends on its text and theme hint alone, so a repeated
#: text is analysed once. The memory lasts one call, or the run its caller keeps it for:
#: nothing an earlier run computed is handed to a later one.
REMEMBERED_TEXTS = 16_384

#: Remembered analyses: (text, theme hint) -> the item without its `feedback_id`.
Memory = dict[tuple[str, str | None], dict[str, Any]]


def analyze_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_column: str = "feedback_id",
    text_column: str = "text",
    memory: Memory | None = None,
) -> list[dict[str, Any]]:
    """One analysis item per row, in input order; each row is analysed on its own.

    A row's `theme_hint` (a theme key of the run's discovered catalogue,
    `runlens_feedback.discovery`) is its theme when present: the keyword table is then not
    used, so a word's sense comes from the themes the whole input formed ("the server was
    rude" stays with the restaurant's service rows). The pain point is the theme's name and
    the row's own words ("Server · waiter: the server was rude"); praise is labelled as
    praise, never as a problem. A row hinted "other" (no discovered theme fits it) takes a
    theme of the keyword table when it names one in its sense (`analyst.themes`), praise
    when it is positive, else stays "other", labelled with its most salient word; so the
    groups stay few (discovered themes, table themes, other) on any input size.

    Item keys: `feedback_id` (the row's id, unchanged), `sentiment` (positive, neutral,
    negative, mixed), `severity` (low, medium, high, critical), `theme` (the row's
    `theme_hint`, else a key of the theme table, `praise`, `topic:<keyword>` or `empty`),
    `pain_point` (a short summary in the row's language), `evidence_text` (a verbatim
    fragment of the text: `evidence_text in text`), `suggested_action`, `language` (zh or
    en), `sentiment_score` (the signed lexicon score) and `flags` (`["empty_text"]` for a
    whitespace-only text, whose evidence is the text itself).

    `memory`: the analyses of repeated texts to reuse and add to (at most `REMEMBERED_TEXTS`,
    the oldest dropped first), for a caller that analyses one run's rows in many calls and
    keeps it for that run only (`offline.OfflineAnalyst`); by default one call's own.

    Raises `KeyError` when a row lacks the id column. A missing or None text counts as empty.
    """
    remembered: Memory = {} if memory is None else memory
    return [
        _item(
            _feedback_id(row, id_column, position),
            _text(row, text_column),
            _hint(row.get("theme_hint")),
            remembered,
        )
        for position, row in enumerate(rows)
    ]


def _hint(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def analyze_text(feedback_id: str, text: str, *, theme_hint: str | None = None) -> dict[str, Any]:
    """The analysis item of one feedback text (see `analyze_rows`)."""
    return _item(feedback_id, text, theme_hint, None)


def _item(
    feedback_id: str,
    text: str,
    theme_hint: str | None,
    remembered: Memory | None,
) -> dict[str, Any]:
    """`analyze_text`, taking a repeated text's analysis from `remembered`."""
    if not text.strip():
        return _empty_item(feedback_id, text)
    key = (text, theme_hint)
    analysis = remembered.get(key) if remembered is not None else None
    if analysis is None:
        analysis = _analysis(text, theme_hint)
        if remembered is not None:
            if len(remembered) >= REMEMBERED_TEXTS:
                del remembered[next(iter(remembered))]
            remembered[key] = analysis
    else:
        release_segments(text)
    item = {"feedback_id": feedback_id, **analysis}
    item["flags"] = list(analysis["flags"])
    return item


def _analysis(text: str, theme_hint: str | None) -> dict[str, Any]:
    """The item of a non-empty text without its `feedback_id`."""
    doc = parse(text)
    choice = _hinted(doc, theme_hint) if theme_hint else choose_theme(doc)
    evidence = pick_evidence(doc, choice.key)
    return {
        "sentiment": doc.sentiment.label,
        "severity": assess_severity(doc),
        "theme": choice.key,
        "pain_point": _pain_point(doc, choice, evidence),
        "evidence_text": evidence,
        "suggested_action": _action(doc, choice),
        "language": doc.lang,
        "sentiment_score": round(doc.sentiment.score, 3),
        "flags": [],
    }


def _feedback_id(row: Mapping[str, Any], id_column: str, position: int) -> str:
    if id_column not in row:
        raise KeyError(f"row {position} has no {id_column!r} column")
    return str(row[id_column])


def _text(row: Mapping[str, Any], text_column: str) -> str:
    value = row.get(text_column)
    return "" if value is None else str(value)


def _empty_item(feedback_id: str, text: str) -> dict[str, Any]:
    lang = detect_language(text)
    return {
        "feedback_id": feedback_id,
        "sentiment": "neutral",
        "severity": "low",
        "theme": EMPTY_THEME,
        "pain_point": "空反馈（无文字）" if lang == "zh" else "Empty feedback (no text)",
        "evidence_text": text,
        "suggested_action": "No action: the row has no text to analyse.",
        "language": lang,
        "sentiment_score": 0.0,
        "flags": [EMPTY_TEXT_FLAG],
    }


def _hinted(doc: Document, hint: str) -> ThemeChoice:
    """The theme a hint gives: the discovered theme; for "other", a theme of the keyword
    table the row names in its sense (or praise), else "other" with the row's own word."""
    if hint.casefold() == OTHER:
        return choose_theme(doc, unmatched=OTHER)
    return ThemeChoice(hint, discovered=True)


def _label(choice: ThemeChoice, lang: Lang) -> str:
    if choice.discovered:
        return theme_name(choice.key)
    spec = theme_by_key().get(choice.key)
    if spec is not None:
        return spec.label(lang)
    keyword = choice.keyword or ("其他" if lang == "zh" else "other")
    return f"关于“{keyword}”" if lang == "zh" else f"About “{keyword}”"


def _pain_point(doc: Document, choice: ThemeChoice, evidence: str) -> str:
    snippet = _shorten(" ".join(evidence.split()), _SNIPPET[doc.lang])
    label = _label(choice, doc.lang)
    separator = "：" if doc.lang == "zh" else ": "
    if doc.sentiment.label == "positive":
        prefix = "正面评价" if doc.lang == "zh" else "Praise"
        label = prefix if choice.key == PRAISE_THEME else f"{prefix}（{label}）"
    return f"{label}{separator}{snippet}"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _action(doc: Document, choice: ThemeChoice) -> str:
    zh = doc.lang == "zh"
    if doc.sentiment.label == "positive" and choice.key != PRAISE_THEME:
        if zh:
            return "保持这方面的优势，并把好评同步给团队。"
        return "Keep this strength and share the praise with the team."
    if choice.discovered:
        name = theme_name(choice.key)
        if zh:
            return f"跟进“{name}”方面的反馈：核实所述问题，找出原因并评估改进方案。"
        return f"Follow up on the “{name}” feedback: confirm what this row reports and size a fix."
    spec = theme_by_key().get(choice.key)
    if spec is not None:
        return spec.action(doc.lang)
    keyword = choice.keyword or ("这类问题" if zh else "this")
    if zh:
        return f"跟进关于“{keyword}”的反馈：确认问题、找出原因并评估改进方案。"
    return (
        f"Follow up on the feedback about “{keyword}”: confirm the problem, find the cause "
        "and size a fix."
    )
