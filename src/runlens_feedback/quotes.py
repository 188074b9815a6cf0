"""How the aggregated analysis quotes rows: at most `QUOTE_CHARS` characters of one line of
a row's evidence, cut where the report contract's quote check allows (`example_quote`), and
at most `EXAMPLES` quotes of distinct rows and words per group (`_examples`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from runlens import MarkdownCitations, cut_quote, one_line_quote
from runlens_feedback.contracts import REPORT_CONTRACT

Item = Mapping[str, Any]
#: How the report quotes rows: its contract's citation rules and closing quotation marks.
_REPORT_QUOTES = REPORT_CONTRACT.citations or MarkdownCitations()
_CLOSING = tuple(closing for _, closing in _REPORT_QUOTES.quote_marks)
#: Quotes per pain point: EXAMPLES (of distinct rows) for the first groups, one for the
#: others (`runlens_feedback.aggregate.LEADING_GROUPS`).
EXAMPLES = 3
QUOTE_CHARS = 80


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A verbatim prefix of `text` of at most `limit` characters, cut at a clause or word
    boundary where the quote check allows (`runlens.cut_quote`)."""
    return cut_quote(text, limit)


def example_quote(evidence: str) -> tuple[str, bool, bool] | None:
    """How a report quotes an evidence text: `(quote, cut_start, cut_end)`, or None when no
    part of it can be quoted on one line as evidence.

    The quote is the evidence's longest line that the report contract's quote rules accept
    (a Markdown citation quotes one line); when that line holds every closing quotation mark
    of the contract, its longest part between them (no mark could close the quotation); then
    `short_quote`. Each cut falls where the quote check allows one: at a line break, at a
    quotation mark, or where `short_quote` cuts. `cut_start` / `cut_end`: whether something
    of the evidence was left out before / after the quote (the report writes an ellipsis
    there)."""
    stripped = evidence.strip()
    span = one_line_quote(stripped, _REPORT_QUOTES)
    if span is not None and all(mark in stripped[span[0] : span[1]] for mark in _CLOSING):
        inner = one_line_quote(stripped[span[0] : span[1]], _REPORT_QUOTES, avoid=_CLOSING)
        span = None if inner is None else (span[0] + inner[0], span[0] + inner[1])
    if span is None:
        return None
    start, end = span
    quote = cut_quote(stripped[start:end], QUOTE_CHARS, _REPORT_QUOTES)
    return quote, bool(stripped[:start].strip()), start + len(quote) < len(stripped)


class RowTexts(Protocol):
    """Where a row's whole text is read (the Evidence Index): KeyError for an unknown id."""

    def text(self, row_id: str) -> str: ...


def cut_from_row(evidence: str, row: str) -> tuple[bool, bool]:
    """Whether the row says something before / after the evidence quote (a letter or a digit,
    not only punctuation): where the report's quote of it needs an ellipsis. `(False,
    False)` when the quote is not verbatim in the row."""
    at = row.find(evidence.strip())
    if at < 0 or not evidence.strip():
        return False, False
    after = row[at + len(evidence.strip()) :]
    return _says_something(row[:at]), _says_something(after)


def _says_something(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _example(
    item: Item, quote: tuple[str, bool, bool], row_texts: RowTexts | None = None
) -> dict[str, Any]:
    text, cut_start, cut_end = quote
    if row_texts is not None:
        try:
            row = row_texts.text(str(item.get("feedback_id")))
        except KeyError:
            row = ""
        before, after = cut_from_row(str(item.get("evidence_text") or ""), row)
        cut_start, cut_end = cut_start or before, cut_end or after
    example = {
        "feedback_id": str(item.get("feedback_id")),
        "evidence_text": text,
        "shortened": cut_end,
        "sentiment": item.get("sentiment"),
        "severity": item.get("severity"),
    }
    if cut_start:  # rare (a quote of a later line): the summary stays small
        example["cut_start"] = True
    return example


def _examples(
    items: Iterable[Item], limit: int = EXAMPLES, row_texts: RowTexts | None = None
) -> list[dict[str, Any]]:
    """Up to `limit` quotes, in the items' order, each of another row and other words; with
    `row_texts`, each says where it was cut from its row, not only from its evidence."""
    examples: list[dict[str, Any]] = []
    rows: set[str] = set()
    quotes: set[str] = set()
    for item in items:
        if len(examples) >= limit:
            break
        quote = example_quote(str(item.get("evidence_text") or ""))
        if quote is None:
            continue
        example = _example(item, quote, row_texts)
        said = " ".join(example["evidence_text"].casefold().split())
        if example["feedback_id"] in rows or said in quotes:
            continue
        rows.add(example["feedback_id"])
        quotes.add(said)
        examples.append(example)
    return examples
