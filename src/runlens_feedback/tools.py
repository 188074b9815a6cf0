"""The Feedback Analysis tools: paging through the input and analysing it in batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runlens.errors import ToolError
from runlens.evidence import CsvTable, EvidenceIndex
from runlens.tools.base import Tool, ToolContext
from runlens_feedback.batches import analyze_in_batches

ID_COLUMN = "feedback_id"
TEXT_COLUMN = "text"
MAX_PAGE = 200
_LOADED = "feedback_input"


def load_input(context: ToolContext) -> tuple[CsvTable, EvidenceIndex]:
    """Open the input once per run: check columns, build and record the Evidence Index.

    An unusable input raises `InputError`, which ends the run `failed` at the input step.
    """
    loaded: tuple[CsvTable, EvidenceIndex] | None = context.state.get(_LOADED)
    if loaded is None:
        table = CsvTable.open(context.input_path, required_columns=(ID_COLUMN, TEXT_COLUMN))
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
                f"several at once), check each batch's items, and write {_analysis_path()} "
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
    )


def _analysis_path() -> str:
    from runlens_feedback.contracts import ANALYSIS

    return ANALYSIS
