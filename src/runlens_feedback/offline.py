"""The offline analyst: a deterministic model that needs no network and no key.

It is a `Model` like any other: it sees the same conversation and tools and answers with tool
calls, so it drives the same loop, the same tools and the same validators as an LLM. Its
analysis is heuristic (lexicons, rules and word segmentation, see `runlens_feedback.analyst`),
not a language model's; it exists so RunLens works out of the box and so every part of a run
can be exercised without a provider.

Conversation, as an LLM would hold it:
1. read the first page of the input (builds the Evidence Index);
2. analyse every row in batches (each batch call is answered by `analyze_rows`);
3. write the backlog and the report from the aggregated analysis the batch tool returned;
4. give a final answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from runlens import (
    AssistantMessage,
    Message,
    Model,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    checkpoint,
)
from runlens_feedback.batches import SUBMIT_TOOL, parse_batch_message
from runlens_feedback.chart import CHART_FILE
from runlens_feedback.contracts import BACKLOG, REPORT

if TYPE_CHECKING:
    from runlens_feedback.analyst.rows import Memory

BATCH_SIZE = 200
#: Rows analysed between two returns to the event loop (a few milliseconds of work).
ROWS_PER_SLICE = 20


class OfflineAnalyst(Model):
    """The offline model. It remembers the analyses of one run's repeated texts across that
    run's batches (`analyze_rows`'s `memory`); a run starts with a fresh memory, and the
    memory is let go once the analysis is done."""

    spec = "offline"

    def __init__(self) -> None:
        self._memory: Memory = {}

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        if any(tool.name == SUBMIT_TOOL for tool in tools):
            return await self._answer_batch(messages)
        return self._next_step(messages)

    # -- batches ---------------------------------------------------------------------------

    async def _answer_batch(self, messages: Sequence[Message]) -> ModelResponse:
        from runlens_feedback.analyst import analyze_rows

        prompt = next(m.content for m in reversed(messages) if isinstance(m, UserMessage))
        rows = parse_batch_message(prompt)
        items: list[dict[str, Any]] = []
        # The analysis is pure computation: hand the event loop back every few rows, so a
        # cancellation (SIGTERM, Ctrl-C) and the other batches get their turn.
        for start in range(0, len(rows), ROWS_PER_SLICE):
            checkpoint()
            items.extend(analyze_rows(rows[start : start + ROWS_PER_SLICE], memory=self._memory))
            await asyncio.sleep(0)
        return _call(SUBMIT_TOOL, {"items": items}, "batch")

    # -- the main conversation -------------------------------------------------------------

    def _next_step(self, messages: Sequence[Message]) -> ModelResponse:
        results = {m.name: m for m in messages if isinstance(m, ToolResultMessage)}
        read = results.get("read_feedback_csv")
        if read is None:  # a run starts: nothing an earlier run analysed is reused
            self._memory = {}
            return _call("read_feedback_csv", {"offset": 0, "limit": 20}, "read")
        if read.is_error:
            return _final(f"I could not read the input: {read.content}")
        analysed = results.get("analyze_feedback_batches")
        if analysed is None:
            return _call("analyze_feedback_batches", {"batch_size": BATCH_SIZE}, "analyze")
        self._memory = {}  # the rows are analysed
        if analysed.is_error:
            return _final(f"The analysis could not run: {analysed.content}")
        if "write_file" not in results:
            return self._write_deliverables(json.loads(analysed.content))
        if _after_final(messages):
            return _final(
                "The deliverables were written deterministically from the data; "
                "rewriting them would produce the same files."
            )
        return _final(_closing_note(json.loads(analysed.content)))

    def _write_deliverables(self, summary: dict[str, Any]) -> ModelResponse:
        from runlens_feedback.analyst import backlog_from_summary, report_from_summary

        backlog = backlog_from_summary(summary)
        report = report_from_summary(summary, backlog, chart=CHART_FILE)
        calls = (
            ToolCall("offline_write_chart", "write_insight_chart", {}),
            ToolCall(
                "offline_write_backlog",
                "write_file",
                {"path": BACKLOG, "content": json.dumps(backlog, ensure_ascii=False, indent=2)},
            ),
            ToolCall("offline_write_report", "write_file", {"path": REPORT, "content": report}),
        )
        return ModelResponse(content=None, tool_calls=calls, model_name="offline")


def _call(name: str, arguments: dict[str, Any], call_id: str) -> ModelResponse:
    return ModelResponse(
        content=None,
        tool_calls=(ToolCall(f"offline_{call_id}", name, arguments),),
        model_name="offline",
    )


def _final(text: str) -> ModelResponse:
    return ModelResponse(content=text, model_name="offline", finish_reason="stop")


def _after_final(messages: Sequence[Message]) -> bool:
    """True when a final answer was already given (a repair round is asking again)."""
    return any(isinstance(m, AssistantMessage) and not m.tool_calls and m.content for m in messages)


def _closing_note(summary: dict[str, Any]) -> str:
    top = summary.get("pain_points", [])[:3]
    themes = ", ".join(f"{p.get('pain_point') or p['key']} ({p['problem_rows']})" for p in top)
    return (
        f"Analysed {summary.get('analysed_rows')} of {summary.get('total_rows')} rows; "
        f"wrote {BACKLOG} and {REPORT}. Top pain points: {themes or 'none'}."
    )
