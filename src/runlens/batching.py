"""The batch engine: a row-by-row deliverable over an input larger than any context window.

    result = await run_batches(
        context, table, index,
        submit=submit_tool_spec(CONTRACT, name="submit_rows"),
        system_prompt=INSTRUCTIONS,
        check=lambda items, index: item_problems(CONTRACT, items, index),
        artifact=CONTRACT.name,
    )

Each batch is a short, focused conversation: the plugin's batch instructions (the system
prompt), the batch's rows (the message builder's user message, by default one JSON document:
`batch_message`), and one tool, `submit`, whose arguments are the batch's items. The items are
checked on the spot: each must be an object naming a row of the batch by `id_field`, and pass
the plugin's item checker (`runlens.validation.items.item_problems` runs the deliverable's own
checks). The model gets one more attempt with the problems listed; rows still without a valid
item are recorded in `failed_batches` with the reason, never a crash. A model exception is
retried once too; a `ProviderError` is not (the provider already retried). A row whose text is
empty or whitespace only has nothing a quote could cite, so it is never sent: it is recorded
in `failed_batches` with the reason `NO_TEXT_REASON`.

Batches run with bounded concurrency; every finished batch is a `batch.completed` or
`batch.failed` event. The artifact `{"items": [...], "failed_batches": [...]}` is written
atomically in input order whatever order the batches finish in, one entry per line. When some
batches failed the run gets a warning; when every batch that had rows to analyse failed,
`TaskError` ends the run with the cause (the artifact, every row in `failed_batches`, stays).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runlens.atomic import write_atomic
from runlens.batch_protocol import (
    MAX_METADATA_CHARS,
    MAX_TEXT_CHARS,
    Row,
    artifact_json,
    batch_message,
    parse_batch_message,
)
from runlens.errors import ProviderError, TaskError
from runlens.evidence import EvidenceIndex, SourceTable
from runlens.models.messages import (
    Message,
    ModelResponse,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from runlens.tools.base import ToolContext
from runlens.validation.items import item_fields

#: The `failed_batches` reason of rows with no text to quote (never sent to the model).
NO_TEXT_REASON = "row has no text to quote"
#: Model calls per batch: the first, and one retry with the problems listed.
MAX_ATTEMPTS = 2
#: Problems listed in one retry message.
_SHOWN_PROBLEMS = 20

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_METADATA_CHARS",
    "MAX_TEXT_CHARS",
    "NO_TEXT_REASON",
    "Batch",
    "BatchResult",
    "ItemChecker",
    "MessageBuilder",
    "Row",
    "artifact_json",
    "batch_message",
    "has_text",
    "parse_batch_message",
    "run_batches",
]

#: `check(items, index)`: the problems of each submitted item, in order (empty: accepted).
ItemChecker = Callable[[Sequence[Any], EvidenceIndex], Sequence[Sequence[str]]]


@dataclass(frozen=True, slots=True)
class Batch:
    """One batch as its message is built: the rows to analyse (those with text).

    `number` counts from 1; `offset` is the table position of the batch's first row;
    `positions` the table position of each of `rows` (rows are dicts by column name, the id
    under `id_column`, the text under `text_column`).
    """

    number: int
    offset: int
    rows: Sequence[Row]
    positions: tuple[int, ...]
    id_column: str
    text_column: str

    @property
    def row_ids(self) -> list[str]:
        return [row[self.id_column] for row in self.rows]


MessageBuilder = Callable[[Batch], str]


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What `run_batches` delivered: the accepted items in input order, the `failed_batches`
    entries, the number of batches, and the artifact written."""

    artifact: str
    items: list[dict[str, Any]]
    failed_batches: list[dict[str, Any]]
    batches: int


def has_text(text: str) -> bool:
    """Whether a row's text holds anything a quote could cite (not empty or whitespace)."""
    return bool(text.strip())


async def run_batches(
    context: ToolContext,
    table: SourceTable,
    index: EvidenceIndex,
    *,
    submit: ToolSpec,
    system_prompt: str,
    check: ItemChecker,
    artifact: str,
    message: MessageBuilder | None = None,
    batch_size: int = 40,
    concurrency: int = 4,
    id_field: str = "row_id",
    failed_ids_field: str = "row_ids",
    field_name: str = "items",
) -> BatchResult:
    """Analyse every row of `table` in batches and write `artifact` (module docstring).

    `submit` is the tool each batch's model calls with `{field_name: [...]}` (e.g.
    `submit_tool_spec(contract)`); when its items declare properties, only those fields of an
    accepted item are kept. `check` finds each item's problems; `message` builds a batch's
    user message (default: `batch_message` with the ids under `id_field`). Items name their
    row by `id_field`; `failed_batches` entries list theirs under `failed_ids_field`.
    """
    if context.call_model is None:
        raise RuntimeError("run_batches needs a run context with call_model")
    if batch_size < 1 or concurrency < 1:
        raise ValueError("batch_size and concurrency must be at least 1")
    engine = _Engine(
        context,
        index,
        submit=submit,
        system_prompt=system_prompt,
        check=check,
        message=message or _default_message(submit, id_field),
        id_field=id_field,
        failed_ids_field=failed_ids_field,
        field_name=field_name,
    )
    offsets = range(0, table.total_rows, batch_size)
    limiter = asyncio.Semaphore(concurrency)

    async def one(number: int, offset: int) -> _Outcome:
        async with limiter:
            # Suspend once a batch holds its slot: a model that answers without suspending
            # (an offline one) would otherwise run every batch in one loop pass.
            await asyncio.sleep(0)
            rows = table.page(offset, batch_size)["rows"]
            outcome = await engine.run(number, offset, rows)
        engine.emit(outcome, len(offsets))
        return outcome

    outcomes = await asyncio.gather(*(one(n, o) for n, o in enumerate(offsets, start=1)))
    items = [item for outcome in outcomes for item in outcome.items]
    failed = [entry for outcome in outcomes for entry in engine.failures(outcome)]
    write_atomic(
        context.workspace.resolve_write(artifact), artifact_json(items, failed, field_name)
    )
    _report_failures(context, outcomes, failed, len(offsets), artifact, failed_ids_field)
    return BatchResult(artifact, items, failed, len(offsets))


@dataclass
class _Outcome:
    """What became of one batch: its accepted items, and why any row has none."""

    number: int
    offset: int
    rows: Sequence[Row]
    items: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    #: Ids of the rows with no text to quote; never sent to the model.
    no_text: list[str] = field(default_factory=list)


class _Engine:
    """The batch conversation and its checks, shared by every batch of one run."""

    def __init__(
        self,
        context: ToolContext,
        index: EvidenceIndex,
        *,
        submit: ToolSpec,
        system_prompt: str,
        check: ItemChecker,
        message: MessageBuilder,
        id_field: str,
        failed_ids_field: str,
        field_name: str,
    ) -> None:
        self.context = context
        self.index = index
        self.submit = submit
        self.system_prompt = system_prompt
        self.check = check
        self.message = message
        self.id_field = id_field
        self.failed_ids_field = failed_ids_field
        self.field_name = field_name
        self.id_column = index.id_column
        self.text_column = index.text_column
        self.kept_fields = item_fields(submit, field_name)

    async def run(self, number: int, offset: int, rows: Sequence[Row]) -> _Outcome:
        call_model = self.context.call_model
        assert call_model is not None
        outcome = _Outcome(number, offset, rows)
        ids, texts = self.id_column, self.text_column
        outcome.no_text = [row[ids] for row in rows if not has_text(row[texts])]
        kept = [n for n, row in enumerate(rows) if has_text(row[texts])]
        if not kept:
            return outcome
        batch = Batch(
            number,
            offset,
            [rows[n] for n in kept],
            tuple(offset + n for n in kept),
            ids,
            texts,
        )
        messages: list[Message] = [
            SystemMessage(self.system_prompt),
            UserMessage(self.message(batch)),
        ]
        wanted = batch.row_ids
        for _attempt in range(MAX_ATTEMPTS):
            try:
                response: ModelResponse = await call_model(messages, [self.submit], purpose="batch")
            except ProviderError as error:
                # The provider already retried; another attempt would only repeat that.
                outcome.error = f"model provider error: {error}"
                return outcome
            except Exception as error:  # the model itself failed on this batch: once more
                outcome.error = f"analyst error: {type(error).__name__}: {error}"
                continue
            outcome.error = None
            accepted, problems = self.accept(response, wanted)
            self._merge(outcome, accepted)
            outcome.problems = problems
            if not problems:
                return outcome
            messages.extend(_retry_messages(response, problems))
        return outcome

    def accept(
        self, response: ModelResponse, wanted: Sequence[str]
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """Split the submitted items into accepted ones and problems, one line each."""
        submitted = self._submitted(response)
        if submitted is None:
            return [], [f"no {self.submit.name} call with an {self.field_name!r} list was made"]
        wanted_set = set(wanted)
        checked = self.check(submitted, self.index)
        accepted: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        mentioned: set[str] = set()
        for position, item in enumerate(submitted):
            where = f"{self.field_name}[{position}]"
            row_id = item.get(self.id_field) if isinstance(item, dict) else None
            if not isinstance(item, dict):
                problems.append(f"{where} is not an object")
            elif not isinstance(row_id, str) or row_id not in wanted_set:
                problems.append(f"{where}.{self.id_field} {row_id!r} is not a row of this batch")
            elif position < len(checked) and checked[position]:
                mentioned.add(row_id)
                problems.extend(f"{row_id}: {problem}" for problem in checked[position])
            elif row_id not in accepted:
                accepted[row_id] = self._kept(item)
        problems.extend(
            f"no item for row {row_id}"
            for row_id in wanted
            if row_id not in accepted and row_id not in mentioned
        )
        return list(accepted.values()), problems

    def _kept(self, item: Mapping[str, Any]) -> dict[str, Any]:
        if self.kept_fields is None:
            return dict(item)
        return {key: item[key] for key in self.kept_fields if key in item}

    def _submitted(self, response: ModelResponse) -> list[Any] | None:
        for call in response.tool_calls:
            if call.name == self.submit.name and call.arguments is not None:
                items = call.arguments.get(self.field_name)
                if isinstance(items, list):
                    return items
        return None

    def _merge(self, outcome: _Outcome, accepted: list[dict[str, Any]]) -> None:
        """Add newly accepted items; keep the batch's items in row order."""
        known = {item[self.id_field] for item in outcome.items}
        outcome.items.extend(item for item in accepted if item[self.id_field] not in known)
        order = {row[self.id_column]: n for n, row in enumerate(outcome.rows)}
        outcome.items.sort(key=lambda item: order.get(item[self.id_field], len(order)))

    def failures(self, outcome: _Outcome) -> list[dict[str, Any]]:
        """The batch's `failed_batches` entries: rows without text, then rows the model could
        not analyse (each entry lists its rows' ids and one reason)."""
        entries = []
        if outcome.no_text:
            entries.append(self._entry(outcome, outcome.no_text, NO_TEXT_REASON))
        covered = {item[self.id_field] for item in outcome.items} | set(outcome.no_text)
        missing = [
            row[self.id_column] for row in outcome.rows if row[self.id_column] not in covered
        ]
        if missing:
            reason = outcome.error or "; ".join(outcome.problems[:5]) or "no analysis returned"
            entries.append(self._entry(outcome, missing, reason))
        return entries

    def _entry(self, outcome: _Outcome, row_ids: list[str], reason: str) -> dict[str, Any]:
        return {
            "batch": outcome.number,
            "offset": outcome.offset,
            "rows": len(outcome.rows),
            self.failed_ids_field: row_ids,
            "reason": reason,
        }

    def emit(self, outcome: _Outcome, batches: int) -> None:
        """`batch.completed`, or `batch.failed` with the reason, for one finished batch."""
        if self.context.emit is None:
            return
        data: dict[str, Any] = {
            "batch": outcome.number,
            "batches": batches,
            "offset": outcome.offset,
            "rows": len(outcome.rows),
            "items": len(outcome.items),
            "no_text": len(outcome.no_text),
        }
        failed = [f for f in self.failures(outcome) if f["reason"] != NO_TEXT_REASON]
        if not failed:
            self.context.emit("batch.completed", data)
            return
        unanalysed = len(failed[0][self.failed_ids_field])
        self.context.emit(
            "batch.failed", {**data, "reason": failed[0]["reason"], "unanalysed": unanalysed}
        )


def _default_message(submit: ToolSpec, id_field: str) -> MessageBuilder:
    def message(batch: Batch) -> str:
        task = (
            f"Analyse these {len(batch.rows)} rows and call {submit.name} once with one item "
            "per row, in row order."
        )
        return batch_message(
            batch.rows, batch.id_column, batch.text_column, task=task, id_key=id_field
        )

    return message


def _retry_messages(response: ModelResponse, problems: list[str]) -> list[Message]:
    text = (
        "Some items were not accepted; submit again with every problem fixed (quotes must "
        "be copied verbatim from the row):\n- " + "\n- ".join(problems[:_SHOWN_PROBLEMS])
    )
    calls = list(response.tool_calls)
    if not calls:
        return [response.to_message(), UserMessage(text)]
    results: list[Message] = [
        ToolResultMessage(call.tool_call_id, call.name, text, True) for call in calls
    ]
    return [response.to_message(), *results]


def _report_failures(
    context: ToolContext,
    outcomes: Sequence[_Outcome],
    failed: Sequence[Mapping[str, Any]],
    batches: int,
    artifact: str,
    failed_ids_field: str,
) -> None:
    """Tell the user what the model could not do, with the cause.

    Some batches failed: a run warning (the verdict shows it) counting the batches and rows
    and giving the first reason; the other batches' items are delivered. Every batch that
    had rows to analyse failed: `TaskError`, so the run fails with the cause as its
    `error_message`.
    """
    model_failures = [entry for entry in failed if entry["reason"] != NO_TEXT_REASON]
    if not model_failures:
        return
    rows = sum(len(entry[failed_ids_field]) for entry in model_failures)
    numbers = sorted({entry["batch"] for entry in model_failures})
    reason = model_failures[0]["reason"]
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
            f"{artifact}."
        )
