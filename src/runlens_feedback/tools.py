"""The Feedback Analysis tools: paging through the input and analysing it in batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runlens.errors import InputError, ToolError, UserError
from runlens.evidence import CsvTable, EvidenceIndex, MissingColumnError, check_encoding_name
from runlens.tools.base import Tool, ToolContext
from runlens.validation.base import load_document
from runlens.validation.figures import Figure
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.report import report_language
from runlens_feedback.batches import analyze_in_batches
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.chart import CHART_FILE, chart_svg
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT
from runlens_feedback.figures import SECTIONS, analysis_figures, backlog_figures

#: The input's columns unless the user names others (`--id-column`, `--text-column`).
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

    The input is a CSV file or a sheet of an .xlsx workbook (`context.input_sheet`, else the
    first). Its encoding and delimiter are detected (or the encoding is the one the user
    named, `context.input_encoding`). The text column is `context.input_text_column` or
    `text`; the id column is `context.input_id_column` or `feedback_id`. A named column must
    exist; when none is named and the file has no `feedback_id` column, the rows get ids
    from their row numbers (`row-<n>`, the n-th data row) and the run gets a warning. The
    index records all of that (`index.input_format`), so a rebuild reads the file the same
    way. An unusable input raises `InputError`, which ends the run `failed` at the input step.
    """
    loaded: tuple[CsvTable, EvidenceIndex] | None = context.state.get(_LOADED)
    if loaded is None:
        table = _open_table(context)
        index = table.evidence_index(table.derived_id_column or _id_column(context), _text(context))
        path = context.workspace.evidence_index
        index.write(path)
        if context.on_evidence_index is not None:
            context.on_evidence_index(path)
        loaded = context.state[_LOADED] = (table, index)
    return loaded


def _id_column(context: ToolContext) -> str:
    return context.input_id_column or ID_COLUMN


def _text(context: ToolContext) -> str:
    return context.input_text_column or TEXT_COLUMN


def _open_table(context: ToolContext) -> CsvTable:
    source = context.input_path.name
    if context.input_encoding is not None:
        try:
            check_encoding_name(context.input_encoding)
        except UserError as error:
            raise InputError(f"{source}: {error}", file=source) from None
    id_column, text_column = _id_column(context), _text(context)
    named_id = context.input_id_column is not None
    try:
        table = CsvTable.open(
            context.input_path,
            required_columns=(id_column, text_column) if named_id else (text_column,),
            encoding=context.input_encoding,
            sheet=context.input_sheet,
        )
    except MissingColumnError as error:
        raise _with_option(error, context) from None
    if named_id or id_column in table.columns:
        return table
    if context.warn is not None:
        context.warn(
            f"{table.label} has no {id_column!r} column: rows are identified by their row "
            "number (row-1 is the first data row; blank rows are not counted). Name the id "
            "column with --id-column if the file has one."
        )
    return table.with_row_number_ids(id_column)


def _with_option(error: MissingColumnError, context: ToolContext) -> MissingColumnError:
    """The error, saying which option names the missing column (or named it)."""
    options = {
        _id_column(context): ("--id-column", context.input_id_column is not None),
        _text(context): ("--text-column", context.input_text_column is not None),
    }
    option, named = options.get(error.field or "", ("", False))
    if not option:
        return error
    hint = f"named with {option}" if named else f"name the column to use with {option}"
    return MissingColumnError(
        f"{error}; {hint}", file=error.file or "", field=error.field or "", columns=error.columns
    )


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
        id_column=index.id_column,
        text_column=index.text_column,
        batch_size=batch_size,
        concurrency=concurrency,
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
    links it and the figures it shows."""
    table, index = load_input(context)
    analysed, analysis = load_document(context.workspace.root, ANALYSIS)
    items = analysis.get("items") if analysed and isinstance(analysis, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ToolError(f"{ANALYSIS} is not written yet: call analyze_feedback_batches first")
    failed = analysis.get("failed_batches")
    summary = summarize_analysis(
        items,
        total_rows=len(index),
        failed_batches=failed if isinstance(failed, list) else [],
        source=index.source,
        row_metadata=table_metadata(table, index),
    )
    svg = chart_svg(summary, report_language(summary))
    path = context.workspace.resolve_write(CHART)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")
    return {
        "path": CHART,
        "link": f"![Pain points by rows and sentiment]({CHART_FILE})",
        "pain_points": len(summary["pain_points"]),
        "trend": any(c["kind"] == "trend" for c in summary["breakdowns"]["columns"]),
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
                "Read the run's input (a CSV file or a workbook sheet) one page at a time. The "
                "first call checks the columns "
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
