"""Analysing an input larger than any context window: one model call per batch of rows.

Each batch is a short, focused conversation: the batch instructions, the rows as JSON lines,
and one tool (`submit_batch_analysis`) whose arguments are the batch's items. The items are
checked on the spot (every row covered once, enums, verbatim quotes) and the model gets one
more attempt with the problems listed; rows still without a valid item are recorded in
`failed_batches` with the reason, never a crash. A row whose text is empty or whitespace only
has nothing a quote could cite, so it is not sent to the model at all: it is recorded in
`failed_batches` with the reason "row has no text to quote" (an analysis item for it could
only fail validation with `empty_evidence_text`). Batches run with bounded concurrency, and the
analysis file is written in input order whatever order they finish in, one item per line.

With 40 rows of a few hundred characters a batch stays far below an 8k-token context, and
the main conversation only ever sees the aggregated summary, so the run's context does not
grow with the input: 100,000 rows are 2,500 independent batch calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from runlens.atomic import write_atomic
from runlens.cancellation import checkpoint
from runlens.errors import ProviderError, TaskError
from runlens.evidence import CsvTable, EvidenceIndex
from runlens.models.messages import (
    Message,
    ModelResponse,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from runlens.tools.base import ToolContext
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.contracts import ANALYSIS, SENTIMENTS, SEVERITIES
from runlens_feedback.discovery import ThemeCatalogue, discover_themes

SUBMIT_TOOL = "submit_batch_analysis"
NO_TEXT_REASON = "row has no text to quote"
MAX_ATTEMPTS = 2
MAX_TEXT_CHARS = 2000
#: Metadata values longer than this (free text) are left out of the batch message.
MAX_METADATA_CHARS = 40
_REQUIRED_FIELDS = ("feedback_id", "sentiment", "severity", "pain_point", "evidence_text")
#: Kept when a model gives them with the right type (the offline analyst does): they feed
#: the summary's language counts and its choice of representative quotes.
_OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "theme": str,
    "suggested_action": str,
    "language": str,
    "sentiment_score": (int, float),
}

SUBMIT_SPEC = ToolSpec(
    name=SUBMIT_TOOL,
    description="Submit the analysis of this batch: exactly one item per row of the batch.",
    parameters={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "feedback_id": {"type": "string"},
                        "sentiment": {"type": "string", "enum": list(SENTIMENTS)},
                        "severity": {"type": "string", "enum": list(SEVERITIES)},
                        "pain_point": {"type": "string"},
                        "evidence_text": {"type": "string"},
                        "theme": {"type": "string"},
                        "suggested_action": {"type": "string"},
                    },
                    "required": [
                        "feedback_id",
                        "sentiment",
                        "severity",
                        "pain_point",
                        "evidence_text",
                    ],
                },
            }
        },
        "required": ["items"],
    },
)


@cache
def batch_instructions() -> str:
    """The system prompt of every batch call (`batch_prompt.md`)."""
    return files("runlens_feedback").joinpath("batch_prompt.md").read_text(encoding="utf-8")


@dataclass
class BatchOutcome:
    """What became of one batch: its accepted items, and why any row has none."""

    number: int
    offset: int
    rows: Sequence[Mapping[str, str]]
    items: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    #: Ids of the rows with no text to quote; never sent to the model.
    no_text: list[str] = field(default_factory=list)

    def failures(self, id_column: str) -> list[dict[str, Any]]:
        """The `failed_batches` entries of this batch: rows without text, then rows the
        model could not analyse (each entry lists its rows' ids and one reason)."""
        entries = []
        if self.no_text:
            entries.append(self._entry(self.no_text, NO_TEXT_REASON))
        covered = {item["feedback_id"] for item in self.items} | set(self.no_text)
        missing = [row[id_column] for row in self.rows if row[id_column] not in covered]
        if missing:
            reason = self.error or "; ".join(self.problems[:5]) or "no analysis returned"
            entries.append(self._entry(missing, reason))
        return entries

    def _entry(self, feedback_ids: list[str], reason: str) -> dict[str, Any]:
        return {
            "batch": self.number,
            "offset": self.offset,
            "rows": len(self.rows),
            "feedback_ids": feedback_ids,
            "reason": reason,
        }


async def analyze_in_batches(
    context: ToolContext,
    table: CsvTable,
    index: EvidenceIndex,
    *,
    id_column: str,
    text_column: str,
    batch_size: int,
    concurrency: int,
) -> dict[str, Any]:
    """Analyse every row, write the analysis artifact, return the aggregated summary."""
    if context.call_model is None:
        raise RuntimeError("analyze_in_batches needs a run context with call_model")
    offsets = range(0, table.total_rows, batch_size)
    limiter = asyncio.Semaphore(concurrency)
    catalogue = _discover(table, text_column)
    themes = catalogue.describe()

    async def one(number: int, offset: int) -> BatchOutcome:
        async with limiter:
            # Suspend once a batch holds its slot: a model that answers without suspending
            # (the offline analyst) would otherwise run every batch in one loop pass.
            await asyncio.sleep(0)
            rows = table.page(offset, batch_size)["rows"]
            hints = catalogue.assignments[offset : offset + len(rows)]
            outcome = await _run_batch(
                context,
                index,
                rows,
                number,
                offset,
                id_column=id_column,
                text_column=text_column,
                themes=themes,
                hints=hints,
            )
        _emit(context, outcome, len(offsets), id_column)
        return outcome

    outcomes = await asyncio.gather(*(one(n, o) for n, o in enumerate(offsets, start=1)))
    items = [item for outcome in outcomes for item in outcome.items]
    failed = [entry for outcome in outcomes for entry in outcome.failures(id_column)]
    target = context.workspace.resolve_write(ANALYSIS)
    write_atomic(target, analysis_json(items, failed))
    _report_failures(context, outcomes, failed, len(offsets))
    summary = summarize_analysis(
        items,
        total_rows=table.total_rows,
        failed_batches=failed,
        source=table.source,
        row_metadata=table_metadata(table, index),
        catalogue=catalogue,
    )
    if context.warn is not None:  # e.g. the input does not look like product feedback
        for warning in summary.get("warnings", ()):
            context.warn(warning["message"])
    return {"analysis_path": ANALYSIS, **summary}


def _report_failures(
    context: ToolContext,
    outcomes: Sequence[BatchOutcome],
    failed: Sequence[Mapping[str, Any]],
    batches: int,
) -> None:
    """Tell the user what the analyst could not do, with the cause.

    Some batches failed: a run warning (the verdict shows it) counting the batches and rows
    and giving the first reason; the other batches' items are delivered. Every batch that
    had rows to analyse failed: `TaskError`, so the run fails with the cause as its
    `error_message` (the analysis file, with every row in `failed_batches`, stays).
    """
    analyst_failures = [entry for entry in failed if entry["reason"] != NO_TEXT_REASON]
    if not analyst_failures:
        return
    rows = sum(len(entry["feedback_ids"]) for entry in analyst_failures)
    numbers = sorted({entry["batch"] for entry in analyst_failures})
    reason = analyst_failures[0]["reason"]
    attempted = [outcome for outcome in outcomes if len(outcome.no_text) < len(outcome.rows)]
    if not any(outcome.items for outcome in attempted):
        raise TaskError(
            f"analysis failed: every batch failed ({len(numbers)} of {batches}; "
            f"{rows} rows not analysed): {reason}"
        )
    if context.warn is not None:
        shown = ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")
        context.warn(
            f"{rows} rows were not analysed: {len(numbers)} of {batches} batches failed "
            f"(batch {shown}); first reason: {reason}. They are listed in failed_batches of "
            f"{ANALYSIS}."
        )


def analysis_json(items: Sequence[Any], failed_batches: Sequence[Any]) -> bytes:
    """The analysis file: `{"items": [...], "failed_batches": [...]}` with one entry per line.

    Each entry is encoded on its own (by the C encoder), so even 100,000 items never become
    one giant string (a single emoji would make it four bytes per character), and the file
    reads and diffs line by line.
    """

    return b"".join(
        (
            b'{"items": ',
            *_json_lines(items),
            b',\n"failed_batches": ',
            *_json_lines(failed_batches),
            b"}\n",
        )
    )


def _json_lines(values: Sequence[Any]) -> tuple[bytes, ...]:
    """A JSON array as parts to join, one value per line."""
    if not values:
        return (b"[]",)
    body = b",\n".join(json.dumps(v, ensure_ascii=False).encode("utf-8") for v in values)
    return (b"[\n", body, b"\n]")


def _emit(context: ToolContext, outcome: BatchOutcome, batches: int, id_column: str) -> None:
    if context.emit is None:
        return
    data = {
        "batch": outcome.number,
        "batches": batches,
        "offset": outcome.offset,
        "rows": len(outcome.rows),
        "items": len(outcome.items),
        "no_text": len(outcome.no_text),
    }
    failed = [f for f in outcome.failures(id_column) if f["reason"] != NO_TEXT_REASON]
    if not failed:
        context.emit("batch.completed", data)
    else:
        context.emit(
            "batch.failed",
            {**data, "reason": failed[0]["reason"], "unanalysed": len(failed[0]["feedback_ids"])},
        )


def has_text(text: str) -> bool:
    """Whether a row's text holds anything a quote could cite (not empty or whitespace)."""
    return bool(text.strip())


def _discover(table: CsvTable, text_column: str) -> ThemeCatalogue:
    """The input's themes, discovered once over every row's text (`discover_themes`)."""
    position = table.columns.index(text_column)
    texts = [table.row_values(at)[position] for at in range(table.total_rows)]
    checkpoint()
    return discover_themes(texts)


def batch_message(
    rows: Sequence[Mapping[str, str]],
    id_column: str,
    text_column: str,
    *,
    themes: Sequence[Mapping[str, Any]] = (),
    hints: Sequence[str | None] = (),
) -> str:
    """The user message of one batch: one JSON document, never lines to split.

    `{"task": ..., "themes": [...], "rows": [{"feedback_id", "text", "metadata"?,
    "theme_hint"?}, ...]}`, whatever the input's column names are (the id and text columns
    are carried under these two keys). `themes` are the input's discovered themes
    (`ThemeCatalogue.describe()`), `hints` each row's theme key among them, in row order.
    Texts are carried as JSON strings, so every character a CSV cell can hold (line and
    paragraph separators, U+0085, form feeds, NUL) arrives intact; a reader must use a JSON
    parser (`parse_batch_message`). Rows are written one per line only for a human reading
    the log: the line breaks are JSON whitespace between values.
    """
    entries = []
    for position, row in enumerate(rows):
        entry: dict[str, Any] = {
            "feedback_id": row[id_column],
            "text": row[text_column][:MAX_TEXT_CHARS],
        }
        hint = hints[position] if position < len(hints) else None
        metadata = {
            key: value
            for key, value in row.items()
            if key not in (id_column, text_column) and value and len(value) <= MAX_METADATA_CHARS
        }
        if metadata:
            entry["metadata"] = metadata
        if hint:
            entry["theme_hint"] = hint
        entries.append(json.dumps(entry, ensure_ascii=False))
    task = json.dumps(
        f"Analyse these {len(rows)} feedback rows and call {SUBMIT_TOOL} once with one item "
        "per row, in row order.",
        ensure_ascii=False,
    )
    body = ",\n".join(entries)
    listed = json.dumps(list(themes), ensure_ascii=False)
    return f'{{"task": {task},\n"themes": {listed},\n"rows": [\n{body}\n]}}'


def parse_batch_message(content: str) -> list[dict[str, Any]]:
    """The rows of a `batch_message`; ValueError when `content` is not one."""
    document = json.loads(content)
    rows = document.get("rows") if isinstance(document, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError("not a batch message: no 'rows' list of objects")
    return rows


async def _run_batch(
    context: ToolContext,
    index: EvidenceIndex,
    rows: Sequence[Mapping[str, str]],
    number: int,
    offset: int,
    *,
    id_column: str,
    text_column: str,
    themes: Sequence[Mapping[str, Any]] = (),
    hints: Sequence[str | None] = (),
) -> BatchOutcome:
    assert context.call_model is not None
    outcome = BatchOutcome(number, offset, rows)
    outcome.no_text = [row[id_column] for row in rows if not has_text(row[text_column])]
    kept = [n for n, row in enumerate(rows) if has_text(row[text_column])]
    if not kept:
        return outcome
    quotable = [rows[n] for n in kept]
    message = batch_message(
        quotable,
        id_column,
        text_column,
        themes=themes,
        hints=[hints[n] if n < len(hints) else None for n in kept],
    )
    messages: list[Message] = [SystemMessage(batch_instructions()), UserMessage(message)]
    wanted = [row[id_column] for row in quotable]
    for _attempt in range(MAX_ATTEMPTS):
        try:
            response: ModelResponse = await context.call_model(
                messages, [SUBMIT_SPEC], purpose="batch"
            )
        except ProviderError as error:
            # The provider already retried; another attempt would only repeat that.
            outcome.error = f"model provider error: {error}"
            return outcome
        except Exception as error:  # the model itself failed on this batch: try it once more
            outcome.error = f"analyst error: {type(error).__name__}: {error}"
            continue
        outcome.error = None
        accepted, problems = check_batch(response, wanted, index)
        _merge(outcome, accepted, id_column)
        outcome.problems = problems
        if not problems:
            return outcome
        messages.extend(_retry_messages(response, problems))
    return outcome


def _merge(outcome: BatchOutcome, accepted: list[dict[str, Any]], id_column: str) -> None:
    """Add newly accepted items; keep the batch's items in row order."""
    known = {item["feedback_id"] for item in outcome.items}
    outcome.items.extend(item for item in accepted if item["feedback_id"] not in known)
    order = {row[id_column]: n for n, row in enumerate(outcome.rows)}
    outcome.items.sort(key=lambda item: order.get(item["feedback_id"], len(order)))


def _retry_messages(response: ModelResponse, problems: list[str]) -> list[Message]:
    text = (
        "Some items were not accepted; submit again with every problem fixed (quotes must "
        "be copied verbatim from the row):\n- " + "\n- ".join(problems[:20])
    )
    calls = list(response.tool_calls)
    if not calls:
        return [response.to_message(), UserMessage(text)]
    results: list[Message] = [
        ToolResultMessage(call.tool_call_id, call.name, text, True) for call in calls
    ]
    return [response.to_message(), *results]


def check_batch(
    response: ModelResponse, wanted: Sequence[str], index: EvidenceIndex
) -> tuple[list[dict[str, Any]], list[str]]:
    """Split the submitted items into accepted ones and problems, one line each."""
    submitted = _submitted_items(response)
    if submitted is None:
        return [], [f"no {SUBMIT_TOOL} call with an 'items' list was made"]
    wanted_set = set(wanted)
    accepted: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for position, item in enumerate(submitted):
        problem = _item_problem(item, wanted_set, index)
        if problem is not None:
            problems.append(f"items[{position}]: {problem}")
        elif item["feedback_id"] not in accepted:
            accepted[item["feedback_id"]] = _accepted_item(item)
    problems.extend(
        f"no item for row {row_id}"
        for row_id in wanted
        if row_id not in accepted
        and not any(p.startswith("items[") and row_id in p for p in problems)
    )
    return list(accepted.values()), problems


def _accepted_item(item: Mapping[str, Any]) -> dict[str, Any]:
    kept = {key: item[key] for key in _REQUIRED_FIELDS}
    for key, kind in _OPTIONAL_FIELDS.items():
        value = item.get(key)
        if isinstance(value, kind) and not isinstance(value, bool):
            kept[key] = value
    return kept


def _submitted_items(response: ModelResponse) -> list[Any] | None:
    for call in response.tool_calls:
        if call.name == SUBMIT_TOOL and call.arguments is not None:
            items = call.arguments.get("items")
            if isinstance(items, list):
                return items
    return None


def _item_problem(item: Any, wanted: set[str], index: EvidenceIndex) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    feedback_id = item.get("feedback_id")
    if not isinstance(feedback_id, str) or feedback_id not in wanted:
        return f"feedback_id {feedback_id!r} is not a row of this batch"
    if item.get("sentiment") not in SENTIMENTS:
        return f"{feedback_id}: sentiment must be one of {', '.join(SENTIMENTS)}"
    if item.get("severity") not in SEVERITIES:
        return f"{feedback_id}: severity must be one of {', '.join(SEVERITIES)}"
    if not isinstance(item.get("pain_point"), str) or not item["pain_point"].strip():
        return f"{feedback_id}: pain_point must be a non-empty string"
    quote = item.get("evidence_text")
    if not isinstance(quote, str) or not quote.strip():
        return f"{feedback_id}: evidence_text must be a non-empty verbatim quote"
    if index.locate(feedback_id, quote) is None:
        return f"{feedback_id}: evidence_text is not a verbatim fragment of the row's text"
    return None
