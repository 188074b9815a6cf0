"""Analysing an input larger than any context window: one model call per batch of rows.

The batches are run by RunLens's batch engine (`run_batches`: bounded concurrency, one retry
with the problems listed, `failed_batches`, rows without text never sent, the analysis file
written in input order one item per line). What this module adds is the feedback task's part:
the submit tool, derived from the analysis contract's item schema; the item check, the
contract's own checks (`item_problems`: enums, schema, verbatim quotes); the batch
instructions (`batch_prompt.md`); and a batch message that also carries the input's themes,
discovered once over every row (`discover_themes`), and each row's theme hint.

With 40 rows of a few hundred characters a batch stays far below an 8k-token context, and
the main conversation only ever sees the aggregated summary, so the run's context does not
grow with the input: 100,000 rows are 2,500 independent batch calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, cast

from runlens import (
    NO_TEXT_REASON,
    Batch,
    EvidenceIndex,
    SourceTable,
    ToolContext,
    ValidationContext,
    checkpoint,
    item_problems,
    parse_batch_message,
    run_batches,
    submit_tool_spec,
)
from runlens import batch_message as core_batch_message
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.contracts import ANALYSIS, ANALYSIS_CONTRACT

if TYPE_CHECKING:
    from runlens_feedback.discovery import ThemeCatalogue

SUBMIT_TOOL = "submit_batch_analysis"
#: The item field naming the row, and the field of a `failed_batches` entry listing its rows.
ID_FIELD = "feedback_id"
FAILED_IDS_FIELD = "feedback_ids"

SUBMIT_SPEC = submit_tool_spec(
    ANALYSIS_CONTRACT,
    name=SUBMIT_TOOL,
    description="Submit the analysis of this batch: exactly one item per row of the batch.",
)

__all__ = [
    "NO_TEXT_REASON",
    "SUBMIT_SPEC",
    "SUBMIT_TOOL",
    "analyze_in_batches",
    "batch_instructions",
    "batch_message",
    "check_items",
    "parse_batch_message",
    "remembered_summary",
]

#: `context.state`'s entry of the last summary `analyze_in_batches` returned:
#: `(digest of the analysis file it wrote, total rows, summary)`.
_SUMMARY_STATE = "runlens_feedback.summary"


@cache
def batch_instructions() -> str:
    """The system prompt of every batch call (`batch_prompt.md`)."""
    return files("runlens_feedback").joinpath("batch_prompt.md").read_text(encoding="utf-8")


def check_items(items: Sequence[Any], index: EvidenceIndex) -> list[list[str]]:
    """The problems of each submitted item: the analysis contract's checks on its items."""
    return item_problems(ANALYSIS_CONTRACT, items, index)


async def analyze_in_batches(
    context: ToolContext,
    table: SourceTable,
    index: EvidenceIndex,
    *,
    batch_size: int,
    concurrency: int,
) -> dict[str, Any]:
    """Analyse every row, write the analysis artifact, return the aggregated summary."""
    catalogue = _discover(table, index.text_column)
    themes = catalogue.describe()

    assigned = catalogue.assignments

    def message(batch: Batch) -> str:
        return batch_message(
            batch.rows,
            batch.id_column,
            batch.text_column,
            themes=themes,
            hints=[assigned[at] if at < len(assigned) else None for at in batch.positions],
        )

    result = await run_batches(
        context,
        table,
        index,
        submit=SUBMIT_SPEC,
        system_prompt=batch_instructions(),
        check=check_items,
        artifact=ANALYSIS,
        message=message,
        batch_size=batch_size,
        concurrency=concurrency,
        id_field=ID_FIELD,
        failed_ids_field=FAILED_IDS_FIELD,
    )
    written = _analysis_digest(context)
    summary = summarize_analysis(
        result.items,
        total_rows=table.total_rows,
        failed_batches=result.failed_batches,
        source=table.source,
        row_metadata=table_metadata(table, index),
        catalogue=catalogue,
        row_texts=index,
    )
    if context.warn is not None:  # e.g. the input does not look like product feedback
        for warning in summary.get("warnings", ()):
            context.warn(warning["message"])
    if written is not None:
        context.state[_SUMMARY_STATE] = (written, table.total_rows, summary)
    return {"analysis_path": ANALYSIS, **summary}


def remembered_summary(context: ToolContext, total_rows: int) -> dict[str, Any] | None:
    """The summary `analyze_in_batches` returned in this run, when the analysis file is still
    the one it wrote (the same SHA-256) and `total_rows` is the same; else None.

    For the chart tool, which would otherwise parse the file and summarise it again: every
    field it draws from (the pain points' keys, groups, counts and sentiments, the listed
    groups, the languages, the breakdowns) is the same without the discovered themes and the
    row texts, which only name the themes and mark the quotes."""
    remembered = context.state.get(_SUMMARY_STATE)
    if remembered is None:
        return None
    digest, total, summary = remembered
    if total != total_rows or _analysis_digest(context) != digest:
        return None
    return cast("dict[str, Any]", summary)


def _analysis_digest(context: ToolContext) -> str | None:
    """The SHA-256 of the analysis file, None when it is not a regular file of the workspace
    (`ValidationContext.artifact_file`, as the tools read it) or cannot be read."""
    path = ValidationContext(context.workspace.root, ()).artifact_file(ANALYSIS)
    if path is None:
        return None
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


def _discover(table: SourceTable, text_column: str) -> ThemeCatalogue:
    """The input's themes, discovered once over every row's text (`discover_themes`).

    Theme discovery is imported here: only the offline analyst's batches discover themes,
    and a run whose model writes the analysis itself does not load it."""
    from runlens_feedback.discovery import discover_themes

    texts = table.column(text_column)
    checkpoint()
    return discover_themes(texts, keep_segmentation=True)


def batch_message(
    rows: Sequence[Mapping[str, str]],
    id_column: str,
    text_column: str,
    *,
    themes: Sequence[Mapping[str, Any]] = (),
    hints: Sequence[str | None] = (),
) -> str:
    """The user message of one batch: one JSON document (`runlens.batch_message`).

    `{"task": ..., "themes": [...], "rows": [{"feedback_id", "text", "metadata"?,
    "theme_hint"?}, ...]}`, whatever the input's column names are (the id and text columns
    are carried under these two keys). `themes` are the input's discovered themes
    (`ThemeCatalogue.describe()`), `hints` each row's theme key among them, in row order.
    A reader must use a JSON parser (`parse_batch_message`).
    """
    return core_batch_message(
        rows,
        id_column,
        text_column,
        task=(
            f"Analyse these {len(rows)} feedback rows and call {SUBMIT_TOOL} once with one "
            "item per row, in row order."
        ),
        id_key=ID_FIELD,
        extra={"themes": list(themes)},
        row_extras=[{"theme_hint": hint} if hint else None for hint in hints],
    )
