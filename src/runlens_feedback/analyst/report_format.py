"""How the insight report (`runlens_feedback.analyst.report`) writes what it says: its
language (`report_language`), its sentences in that language (`ReportWords`), counts, labels
and table cells on one line, and each quote as a citation of the contract's form, escaped so
feedback text cannot add markup to the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runlens import CITATION_BRACKETS as BRACKETS
from runlens import MarkdownCitations, percent
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.analyst.report_words import (
    LANGUAGE_NAMES,
    SENTIMENT_NAMES,
    SEVERITY_NAMES,
    SKIP_REASONS_ZH,
    WORDS,
    Phrasebook,
    ReportLanguage,
)
from runlens_feedback.breakdowns import SPECIAL_LABELS
from runlens_feedback.contracts import REPORT_CONTRACT

_QUOTE_MARKS = (REPORT_CONTRACT.citations or MarkdownCitations()).quote_marks
#: ASCII punctuation that could start Markdown markup inside a quoted line.
_MARKUP = frozenset("\\`*_[]<>&~|")
_ID_MARKUP = _MARKUP - {"_"}
_OPENING_MARKS = frozenset(opening for opening, _ in _QUOTE_MARKS)
_SINGLE_MARKS = str.maketrans({"“": "‘", "”": "’", '"': "'", "「": "『", "」": "』"})

Summary = Mapping[str, Any]


def report_language(summary: Summary) -> ReportLanguage:
    """The language most analysed items declare (`summary["languages"]`, most first; a tie
    goes to the code first in alphabetical order), when it is Chinese; else English."""
    languages = summary.get("languages") or {}
    ranked = sorted(languages.items(), key=lambda pair: (-pair[1], pair[0]))
    return "zh" if ranked and ranked[0][0] == "zh" else "en"


class ReportWords(Phrasebook):
    """The report's sentences in one language, and its ways of writing counts."""

    def __init__(self, language: ReportLanguage) -> None:
        super().__init__(language, WORDS)

    def rows(self, count: int) -> str:
        if self.language == "zh":
            return f"{count} 条"
        return f"{count} {_noun(count)}"

    def sentiment(self, label: object) -> str:
        return SENTIMENT_NAMES[self.language].get(str(label), _plain(label))

    def severity(self, level: object) -> str:
        return SEVERITY_NAMES[self.language].get(str(level), _plain(level))

    def language_name(self, code: str) -> str:
        return LANGUAGE_NAMES[self.language].get(code, _plain(code))

    def level(self, name: str) -> str:
        """A sentiment or severity as a list item starts: `Positive`, `正面`."""
        return name.capitalize() if self.language == "en" else name

    def skip_reason(self, reason: str) -> str:
        return SKIP_REASONS_ZH.get(reason, reason) if self.language == "zh" else reason

    def special(self, special: str) -> str:
        english, chinese = SPECIAL_LABELS[special]
        return chinese if self.language == "zh" else english


def _pct(count: int, total: int) -> str:
    """`count` of `total` as the figure check reads it back (`runlens.percent`)."""
    return percent(count, total)


def _noun(count: int) -> str:
    return "row" if count == 1 else "rows"


def _plain(text: object) -> str:
    """Text safe inside inline code and on one line: no line breaks, no backticks."""
    return " ".join(str(text).split()).replace("`", "'")


def _cell(text: object) -> str:
    return _plain(text).replace("|", "\\|")


def _label(group: Mapping[str, Any], words: ReportWords) -> str:
    return _plain(group_label(group, words.language))


def _quote_line(example: Mapping[str, Any], words: ReportWords) -> str:
    """The example as a citation of the contract's form, `> “quote” — id (sentiment,
    severity)`: verbatim, with Markdown characters escaped so the reader sees the row's
    words, in quotation marks the quote does not close early (the summary's quote is one
    line and leaves one closing mark out, `quotes.example_quote`). Where the quote was
    cut an ellipsis outside the marks says so: before the opening mark for a cut at the
    start, after the closing mark for one at the end.
    """
    quote = str(example.get("evidence_text") or "")
    cut_start, cut_end = bool(example.get("cut_start")), bool(example.get("shortened"))
    opening, closing = _quote_marks(quote)
    tail = words(
        "quote_tail",
        sentiment=words.sentiment(example.get("sentiment")),
        severity=words.severity(example.get("severity")),
    )
    return (
        f"> {'… ' if cut_start else ''}{opening}{_escaped(quote)}{closing}"
        f"{' …' if cut_end else ''} {_attribution(str(example.get('feedback_id')))} {tail}"
    )


def _attribution(row_id: str) -> str:
    """How a citation names its row: `— id`, or `[id]` for an id the dash form cannot carry
    (one with spaces or quotation marks), with Markdown characters escaped so the reader
    sees the id as it is."""
    shown = "".join(f"\\{char}" if char in _ID_MARKUP else char for char in row_id)
    # An underscore inside a word is no emphasis; one at either edge may be.
    if shown.startswith("_"):
        shown = "\\" + shown
    if shown.endswith("_"):
        shown = shown[:-1] + "\\_"
    if not any(char.isspace() or char in _OPENING_MARKS for char in row_id):
        return f"— {shown}"
    left, right = next(
        ((left, right) for left, right in BRACKETS if right not in row_id), BRACKETS[0]
    )
    return f"{left}{shown}{right}"


def _quote_marks(quote: str) -> tuple[str, str]:
    """The first of the contract's quotation-mark pairs whose closing mark is not in `quote`
    (else the first pair)."""
    return next((pair for pair in _QUOTE_MARKS if pair[1] not in quote), _QUOTE_MARKS[0])


def _escaped(quote: str) -> str:
    """`quote` with every character Markdown could read as markup backslash-escaped."""
    return "".join(f"\\{char}" if char in _MARKUP else char for char in quote)


def _unquoted(text: str) -> str:
    """`text` with quotation marks made single (“x” -> ‘x’): in an evidence section a
    quotation must cite a row, and a label quotes none."""
    return text.translate(_SINGLE_MARKS)
