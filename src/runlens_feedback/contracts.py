"""The Feedback Analysis deliverables, declared once (SPEC section 8).

The same contracts drive the Stop validators, the manifest, the UI metadata and the part of the
system prompt that tells a model what will be checked.
"""

from __future__ import annotations

from typing import Literal

from runlens import (
    ArtifactContract,
    Coverage,
    EvidenceQuote,
    HeadingRules,
    JsonRules,
    MarkdownCitations,
    TableInput,
)

Sentiment = Literal["positive", "neutral", "negative", "mixed"]
Severity = Literal["low", "medium", "high", "critical"]
Priority = Literal["P0", "P1", "P2", "P3"]

#: The closed value sets of the deliverables, here only (the analyst's labels use these).
SENTIMENTS: tuple[Sentiment, ...] = ("positive", "neutral", "negative", "mixed")
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")
PRIORITIES: tuple[Priority, ...] = ("P0", "P1", "P2", "P3")
REPORT_HEADINGS = (
    "# FeedbackLens Insight Report",
    "## Product Context",
    "## Executive Summary",
    "## Top Pain Points",
    "## Evidence",
    "## Recommended Actions",
    "## Risks And Unknowns",
)

#: The input, read by `read_feedback_csv`: its rows are identified by `feedback_id` and quoted
#: from `text`, unless the user names other columns (`--id-column`, `--text-column`).
INPUT = TableInput(tool_name="read_feedback_csv", id_column="feedback_id", text_column="text")

ANALYSIS = "artifacts/feedback_analysis.json"
BACKLOG = "artifacts/product_backlog.json"
REPORT = "artifacts/insight_report.md"
CHART = "artifacts/insight_chart.svg"

_NON_EMPTY_STRING = {"type": "string", "minLength": 1}
#: A string with at least one character that is not whitespace.
_TEXT = {"type": "string", "pattern": "\\S"}

ANALYSIS_CONTRACT = ArtifactContract(
    name=ANALYSIS,
    label="Feedback Analysis JSON",
    description=(
        "One item per analysed feedback row: sentiment, severity, the pain point in a few words "
        "and a verbatim quote of the row as evidence; plus the batches that could not be analysed."
    ),
    audience="developer",
    sensitivity="internal",
    required=True,
    schema=JsonRules(
        required_fields=("items", "failed_batches"),
        enum_fields={"items.sentiment": SENTIMENTS, "items.severity": SEVERITIES},
    ),
    json_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["items", "failed_batches"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "feedback_id",
                        "sentiment",
                        "severity",
                        "pain_point",
                        "evidence_text",
                    ],
                    # The one declaration of an analysis item's fields: the batch tool's
                    # submit schema is derived from it, and only these fields are kept.
                    "properties": {
                        "feedback_id": _NON_EMPTY_STRING,
                        "sentiment": {"type": "string"},
                        "severity": {"type": "string"},
                        "pain_point": _TEXT,
                        "evidence_text": {"type": "string"},
                        # Optional: they feed the summary's grouping, its language counts and
                        # its choice of representative quotes.
                        "theme": {"type": "string"},
                        "suggested_action": {"type": "string"},
                        "language": {"type": "string"},
                        "sentiment_score": {"type": "number"},
                    },
                },
            },
            "failed_batches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["reason"],
                    "properties": {
                        "reason": _NON_EMPTY_STRING,
                        "feedback_ids": {"type": "array", "items": _NON_EMPTY_STRING},
                    },
                },
            },
        },
    },
    evidence_fields=("items.feedback_id",),
    evidence_quotes=(EvidenceQuote(text="items.evidence_text", id="items.feedback_id"),),
    coverage=Coverage(ids="items.feedback_id", excused_ids="failed_batches.feedback_ids"),
    row_fields=("items.sentiment", "items.severity", "items.theme", "items.pain_point"),
)

BACKLOG_CONTRACT = ArtifactContract(
    name=BACKLOG,
    label="Product Backlog JSON",
    description=(
        "Prioritised backlog items, each citing the feedback ids that justify it, with testable "
        "acceptance criteria and a success metric."
    ),
    audience="user",
    sensitivity="internal",
    required=True,
    schema=JsonRules(required_fields=("items",), enum_fields={"items.priority": PRIORITIES}),
    json_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "title",
                        "priority",
                        "evidence_feedback_ids",
                        "acceptance_criteria",
                        "metric",
                    ],
                    "properties": {
                        "title": _NON_EMPTY_STRING,
                        "priority": {"type": "string"},
                        "evidence_feedback_ids": {
                            "type": "array",
                            "minItems": 1,
                            "items": _NON_EMPTY_STRING,
                        },
                        "acceptance_criteria": {
                            "type": "array",
                            "minItems": 1,
                            "items": _NON_EMPTY_STRING,
                        },
                        "metric": _NON_EMPTY_STRING,
                    },
                },
            },
        },
    },
    evidence_fields=("items.evidence_feedback_ids",),
)

REPORT_CONTRACT = ArtifactContract(
    name=REPORT,
    label="Insight Report",
    description=(
        "The Markdown report a product manager reads: context, summary, top pain points with "
        "verbatim evidence, recommended actions, risks and unknowns."
    ),
    audience="user",
    sensitivity="internal",
    required=True,
    required_headings=REPORT_HEADINGS,
    heading_rules=HeadingRules(ordered=True, unique=True),
    # The report writes priorities in prose and tables: never a row id, whatever the ids are.
    citations=MarkdownCitations(evidence_sections=("## Evidence",), own_words=PRIORITIES),
)

CHART_CONTRACT = ArtifactContract(
    name=CHART,
    label="Insight Chart",
    description=(
        "An SVG chart of the pain points by rows and sentiment (and rows over time when the "
        "input has a date column), linked from the report. Draw it with write_insight_chart; "
        "a report may link it only once drawn. Every number in it is checked against the data."
    ),
    audience="user",
    sensitivity="internal",
    required=False,
)

#: The deliverables every run is judged on, in the order verdicts and manifests list them.
#: The chart is optional (`required=False`): a run that does not draw it completes, with the
#: chart listed as `missing` and no finding. It has no built-in rules; the plugin's own
#: `ChartValidator` checks it (linked but missing, unsafe, or stating a wrong figure) and
#: attributes its findings to it, so a bad chart rejects the chart, not the report.
CONTRACTS = (ANALYSIS_CONTRACT, BACKLOG_CONTRACT, REPORT_CONTRACT, CHART_CONTRACT)
