"""The record of a validation round's citations (`runtime/citations.json`), built from its
report: the verified quotes with the spans the Markdown grammar found, the ids cited without
a quote, and where each Markdown citation that failed is written."""

from __future__ import annotations

from runlens.records.citations import (
    CitationRecord,
    CitationsRecord,
    FailedCitationRecord,
    TextSpanRecord,
)
from runlens.validation.base import TextSpan
from runlens.validation.runner import ValidationReport


def citations_record(report: ValidationReport | None) -> CitationsRecord:
    """The citations `report` verified (none without a report), and its failed spans."""
    if report is None:
        return CitationsRecord(citations=[])
    quotes = [
        CitationRecord(
            artifact=quote.artifact,
            location=quote.path,
            row_id=quote.row_id,
            quote=quote.quote,
            start=quote.start,
            end=quote.end,
            line=quote.line,
            column=quote.column,
            span=_span(quote.span),
            id_span=_span(quote.id_span),
        )
        for quote in report.quotes
    ]
    ids = [
        CitationRecord(
            artifact=cited.artifact,
            location=cited.path,
            row_id=cited.row_id,
            quote=None,
            start=None,
            end=None,
            line=None,
            column=None,
        )
        for cited in report.id_citations
    ]
    failed = [
        FailedCitationRecord(
            artifact=cited.artifact,
            location=f"line {cited.line}",
            row_id=cited.row_id,
            line=cited.line,
            column=cited.column,
            span=TextSpanRecord(start=cited.span.start, end=cited.span.end, line=cited.span.line),
            id_span=_span(cited.id_span),
        )
        for cited in report.failed_spans
    ]
    return CitationsRecord(citations=[*quotes, *ids], failed=failed)


def _span(span: TextSpan | None) -> TextSpanRecord | None:
    return None if span is None else TextSpanRecord(start=span.start, end=span.end, line=span.line)
