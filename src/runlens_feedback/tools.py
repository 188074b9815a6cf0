"""The Feedback Analysis tools: paging through the input and analysing it in batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runlens.errors import InputError, ToolError, UserError
from runlens.evidence import CsvTable, EvidenceIndex, check_encoding_name
from runlens.tools.base import Tool, ToolContext
from runlens.validation.base import load_document
from runlens.validation.figures import Figure
from runlens_feedback.batches import analyze_in_batches
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT
from runlens_feedback.figures import SECTIONS, analysis_figures, backlog_figures

ID_COLUMN = "feedback_id"
TEXT_COLUMN = "text"
MAX_PAGE = 200
_LOADED = "feedback_input"
#: Labels a `report_figures` result shows per figure (the most readable come first).
SHOWN_LABELS = 3
FIGURE_RULE = (
    f"Every number in {', '.join(SECTIONS)} of {REPORT} must be one of these figures, written "
    "as its `text`, in the same clause as one of its labels (for a theme: the theme's name "
    "and the measure; the name may come earlier in the same sentence). Dates, ids and numbers "
    "inside quotations are not figures."
)


def load_input(context: ToolContext) -> tuple[CsvTable, EvidenceIndex]:
    """Open the input once per run: check columns, build and record the Evidence Index.

    The encoding and the delimiter are detected (or the encoding is the one the user named,
    `context.input_encoding`); the index records them (`index.input_format`). An unusable
    input raises `InputError`, which ends the run `failed` at the input step.
    """
    loaded: tuple[CsvTable, EvidenceIndex] | None = context.state.get(_LOADED)
    if loaded is None:
        if context.input_encoding is not None:
            try:
                check_encoding_name(context.input_encoding)
            except UserError as error:
                raise InputError(f"{context.input_path.name}: {error}") from None
        table = CsvTable.open(
            context.input_path,
            required_columns=(ID_COLUMN, TEXT_COLUMN),
            encoding=context.input_encoding,
        )
        index = table.evidence_index(ID_COLUMN, TEXT_COLUMN)
        path = context.workspace.evidence_index
        index.write(path)
        if context.on_evidence_index is not None:
            context.on_evidence_index(path)
        loaded = context.state[_LOADED] = (table, index)
    return loaded


def read_feedback_csv(context: ToolContext, offset: int = 0, limit: int = 100) -> dict[str, Any]:
    table, _ = load_input(context)
    if offset > table.total_rows:
        raise ToolError(f"offset {offset} is past the last row ({table.total_rows} rows)")
    return table.page(offset, min(limit, MAX_PAGE))


async def analyze_feedback_batches(
    context: ToolContext, batch_size: int = 40, concurrency: int = 4
) -> dict[str, Any]:
    table, index = load_input(context)
    return await analyze_in_batches(
        context,
        table,
        index,
        id_column=ID_COLUMN,
        text_column=TEXT_COLUMN,
        batch_size=batch_size,
        concurrency=concurrency,
    )


def report_figures(context: ToolContext) -> dict[str, Any]:
    """The figures the report may state, from the analysis and backlog written so far: the
    same figures the report's figure check recomputes, for the pain points the aggregated
    analysis lists (the report's other groups are counted as one)."""
    _, index = load_input(context)
    analysed, analysis = load_document(context.workspace.root, ANALYSIS)
    if not analysed:
        raise ToolError(f"{ANALYSIS} is not written yet: call analyze_feedback_batches first")
    backlog_written, backlog = load_document(context.workspace.root, BACKLOG)
    figures = [
        *analysis_figures(analysis, len(index), all_themes=False),
        *(backlog_figures(backlog) if backlog_written else ()),
    ]
    return {
        "rule": FIGURE_RULE,
        "not_written_yet": [] if backlog_written else [BACKLOG],
        "figures": [_shown(figure) for figure in figures],
    }


def _shown(figure: Figure) -> dict[str, Any]:
    return {
        "key": figure.key,
        "text": figure.text,
        "value": figure.value,
        "labels": [" + ".join(label) for label in figure.labels[:SHOWN_LABELS]],
    }


def build_tools(context: ToolContext) -> Sequence[Tool]:
    return (
        Tool(
            name="read_feedback_csv",
            description=(
                "Read the run's input CSV one page at a time. The first call checks the columns "
                "and builds the Evidence Index that every citation is checked against. Returns "
                "{source, total_rows, columns, rows, next_offset}; next_offset is null after "
                "the last page."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "offset": {"type": "integer", "minimum": 0, "default": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 100},
                },
                "additionalProperties": False,
            },
            function=read_feedback_csv,
        ),
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
    )
