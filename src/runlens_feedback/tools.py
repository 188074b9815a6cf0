"""The Feedback Analysis tools: paging through the input and analysing it in batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runlens import (
    EvidenceIndex,
    Figure,
    SourceTable,
    Tool,
    ToolContext,
    ToolError,
    load_document,
    write_atomic,
)
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.report_format import report_language
from runlens_feedback.batches import analyze_in_batches, remembered_summary
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.chart import CHART_FILE, chart_svg
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, INPUT, REPORT
from runlens_feedback.figures import SECTIONS, analysis_figures, backlog_figures

MAX_PAGE = INPUT.max_page
#: Labels a `report_figures` result shows per figure (the most readable come first).
SHOWN_LABELS = 3
FIGURE_RULE = (
    f"Every number in {', '.join(SECTIONS)} of {REPORT} must be one of these figures, written "
    "as its `text`, in the same clause as one of its labels (for a theme: the theme's name "
    "and the measure; the name may come earlier in the same sentence), or in its `place`: the "
    "table introduced by 'By `column`:', the row whose first cell is `row`, the column whose "
    "header names it. Dates, ids and numbers inside quotations are not figures."
)


def load_input(context: ToolContext) -> tuple[SourceTable, EvidenceIndex]:
    """The run's input, opened once per run and indexed (`TableInput.load`)."""
    return INPUT.load(context)


async def analyze_feedback_batches(
    context: ToolContext, batch_size: int = 40, concurrency: int = 4
) -> dict[str, Any]:
    table, index = load_input(context)
    return await analyze_in_batches(
        context, table, index, batch_size=batch_size, concurrency=concurrency
    )


def report_figures(context: ToolContext) -> dict[str, Any]:
    """The figures the report may state, from the analysis and backlog written so far: the
    same figures the report's figure check recomputes, for the pain points the aggregated
    analysis lists (the report's other groups are counted as one)."""
    table, index = load_input(context)
    analysed, analysis = load_document(context.workspace.root, ANALYSIS)
    if not analysed:
        raise ToolError(f"{ANALYSIS} is not written yet: call analyze_feedback_batches first")
    backlog_written, backlog = load_document(context.workspace.root, BACKLOG)
    metadata = table_metadata(table, index)
    figures = [
        *analysis_figures(analysis, len(index), all_themes=False, row_metadata=metadata),
        *(backlog_figures(backlog) if backlog_written else ()),
    ]
    return {
        "rule": FIGURE_RULE,
        "not_written_yet": [] if backlog_written else [BACKLOG],
        "figures": [_shown(figure) for figure in figures],
    }


def write_insight_chart(context: ToolContext) -> dict[str, Any]:
    """Write the insight chart (`runlens_feedback.chart`) from the analysis written so far
    and the input's metadata columns, deterministically; return where it is, how the report
    links it and the figures it shows. In a run whose batch tool wrote the analysis file as
    it stands, its summary is drawn (`remembered_summary`) rather than worked out again."""
    table, index = load_input(context)
    summary = remembered_summary(context, len(index))
    if summary is None:
        summary = _summary(context, table, index)
    svg = chart_svg(summary, report_language(summary))
    path = context.workspace.resolve_write(CHART)
    write_atomic(path, svg.encode("utf-8"), mode=0o644)
    return {
        "path": CHART,
        "link": f"![Pain points by rows and sentiment]({CHART_FILE})",
        "pain_points": len(summary["pain_points"]),
        "trend": any(c["kind"] == "trend" for c in summary["breakdowns"]["columns"]),
    }


def _summary(context: ToolContext, table: SourceTable, index: EvidenceIndex) -> dict[str, Any]:
    """The aggregate of the analysis file as written (the chart's figures)."""
    analysed, analysis = load_document(context.workspace.root, ANALYSIS)
    items = analysis.get("items") if analysed and isinstance(analysis, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ToolError(f"{ANALYSIS} is not written yet: call analyze_feedback_batches first")
    failed = analysis.get("failed_batches")
    return summarize_analysis(
        items,
        total_rows=len(index),
        failed_batches=failed if isinstance(failed, list) else [],
        source=index.source,
        row_metadata=table_metadata(table, index),
    )


def _shown(figure: Figure) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "key": figure.key,
        "text": figure.text,
        "value": float(figure.exact),
        "exact": str(figure.exact),
        "labels": [" + ".join(label) for label in figure.labels[:SHOWN_LABELS]],
    }
    place = figure.place
    if place is not None:  # a breakdown cell: the table, the row's first cell, the header
        shown["place"] = {
            "table": " ".join(place.table[0]) if place.table else "",
            "row": place.rows[0] if place.rows else "",
            "column": " ".join(place.columns[0]) if place.columns else "",
        }
    return shown


def build_tools(context: ToolContext) -> Sequence[Tool]:
    """Every tool of the plugin: the input tool, then its own (`own_tools`)."""
    return (INPUT.tool(), *own_tools(context))


def own_tools(context: ToolContext) -> Sequence[Tool]:
    """The plugin's tools besides its input tool (`Plugin.tools`)."""
    return (
        Tool(
            name="analyze_feedback_batches",
            description=(
                "Analyse every row of the input in batches (one focused model call per batch, "
                f"several at once), check each batch's items, and write {ANALYSIS} "
                "with all items and the batches that failed. Returns the aggregated analysis "
                "(counts, pain points with representative verbatim quotes) to build the "
                "backlog and the report from."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "batch_size": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_PAGE,
                        "default": 40,
                    },
                    "concurrency": {"type": "integer", "minimum": 1, "maximum": 16, "default": 4},
                },
                "additionalProperties": False,
            },
            function=analyze_feedback_batches,
        ),
        Tool(
            name="report_figures",
            description=(
                f"The figures the insight report may state, recomputed from {ANALYSIS} and "
                f"{BACKLOG} as written so far (call it after writing the backlog, before the "
                "report). Returns {rule, not_written_yet, figures: [{key, text, value, "
                "labels}]}: write each number as its `text`, next to one of its labels "
                "(terms joined by +)."
            ),
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            function=report_figures,
        ),
        Tool(
            name="write_insight_chart",
            description=(
                f"Draw {CHART} from {ANALYSIS} as written (pain points by rows and sentiment, "
                "and rows over time when the input has a date column), deterministically. "
                "Call it after analyze_feedback_batches; link the chart from the report with "
                "the returned `link`. Returns {path, link, pain_points, trend}."
            ),
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            function=write_insight_chart,
        ),
    )
