"""The AgentLoop: model turns and tool calls until a final answer or a limit.

Nothing a model sends crashes a run: unknown tools, arguments that fail the tool's schema, tool
exceptions and hook vetoes all go back to the model as tool errors, and are recorded. What
does end the loop early is a limit (turns, tool calls, wall time), a provider that stays down
after its retries (`ProviderError`), or an unusable input (`InputError`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from runlens.hooks.manager import HookEvent, HookManager
from runlens.models.base import Model
from runlens.models.messages import (
    Message,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from runlens.models.retry import RetryAttempt, RetryPolicy, complete_with_retries
from runlens.records.catalogue import ModelCalled, ModelRetried
from runlens.records.events import EventLog
from runlens.runtime.journal import (
    Journal,
    JsonObject,
    RequestDigests,
    digest,
    error_from_json,
    error_to_json,
    response_from_json,
    response_to_json,
)
from runlens.runtime.plan import PlanTracker
from runlens.tools.base import ToolContext
from runlens.tools.registry import ToolOutcome, ToolRegistry

EMPTY_ANSWER_NUDGE = (
    "Your last answer was empty. Either call a tool to continue the task, or, when every "
    "deliverable is written, reply with a short final message."
)
_PREVIEW_CHARS = 600


@dataclass(frozen=True, slots=True)
class LoopLimits:
    max_turns: int = 60
    max_tool_calls: int = 400
    wall_time_seconds: float = 3600.0
    max_empty_answers: int = 3


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    content: str


@dataclass(frozen=True, slots=True)
class LimitReached:
    reason: str


LoopOutcome = FinalAnswer | LimitReached


class AgentLoop:
    """Drives one conversation. Counters persist across repair rounds: limits are per run."""

    def __init__(
        self,
        *,
        model: Model,
        tools: ToolRegistry,
        hooks: HookManager,
        context: ToolContext,
        events: EventLog,
        plan: PlanTracker,
        limits: LoopLimits,
        retry: RetryPolicy,
        journal: Journal | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.tools = tools
        self.hooks = hooks
        self.context = context
        self.events = events
        self.plan = plan
        self.limits = limits
        self.retry = retry
        self.journal = journal or Journal()
        self._digests = RequestDigests()
        self._clock = clock
        self._deadline = clock() + limits.wall_time_seconds
        self.turns = 0
        self.tool_calls = 0
        self.model_calls = 0

    async def run(self, messages: list[Message]) -> LoopOutcome:
        empty_answers = 0
        while True:
            limit = self._limit_reached()
            if limit is not None:
                return limit
            self.turns += 1
            response = await self.call_model(messages, self.tools.specs, turn=self.turns)
            messages.append(response.to_message())
            if response.is_final:
                if (response.content or "").strip():
                    return FinalAnswer(response.content or "")
                empty_answers += 1
                if empty_answers >= self.limits.max_empty_answers:
                    return LimitReached(f"the model gave {empty_answers} empty answers in a row")
                messages.append(UserMessage(EMPTY_ANSWER_NUDGE))
                continue
            empty_answers = 0
            for call in response.tool_calls:
                if self.tool_calls >= self.limits.max_tool_calls:
                    return LimitReached(
                        f"loop limit: max tool calls ({self.limits.max_tool_calls}) reached"
                    )
                messages.append(await self.execute(call))

    async def run_within_wall_time(self, messages: list[Message]) -> LoopOutcome:
        """`run`, stopped when the run's wall time is up, even inside a model or tool call."""
        try:
            async with asyncio.timeout(max(self._deadline - self._clock(), 0)) as scope:
                return await self.run(messages)
        except TimeoutError:
            if not scope.expired():
                raise
            return self._wall_time_exceeded()

    def _wall_time_exceeded(self) -> LimitReached:
        return LimitReached(f"loop limit: wall time ({self.limits.wall_time_seconds:g}s) exceeded")

    def _limit_reached(self) -> LimitReached | None:
        if self.turns >= self.limits.max_turns:
            return LimitReached(f"loop limit: max turns ({self.limits.max_turns}) reached")
        if self._clock() > self._deadline:
            return self._wall_time_exceeded()
        return None

    async def call_model(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        turn: int | None = None,
        purpose: str = "turn",
    ) -> ModelResponse:
        """One model call with retries, recorded as `model.called` (or `model.failed`): a step
        of the run's journal, so a durable run never sends a call that was answered before."""
        self.model_calls += 1
        durable = self.journal.durable

        async def body() -> JsonObject:
            started = time.perf_counter()
            retries: list[ModelRetried] = []

            def on_retry(attempt: RetryAttempt) -> None:
                retried: ModelRetried = {
                    "attempt": attempt.attempt,
                    "delay_seconds": attempt.delay,
                    "error": str(attempt.error),
                    "status_code": attempt.error.status_code,
                    "purpose": purpose,
                }
                retries.append(retried)
                self.events.publish("model.retried", retried)

            try:
                response = await complete_with_retries(
                    self.model, messages, tools, self.retry, on_retry=on_retry
                )
            except Exception as error:
                if not durable:
                    raise
                # Checkpointed like an answer: a replay fails the same way, without a call.
                return {"error": error_to_json(error), "retries": retries}
            answer: JsonObject = {
                "retries": retries,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            }
            if durable or not _as_from_json(response):
                answer["response"] = response_to_json(response)
            else:  # nothing keeps this step: the response as it is, without a JSON round trip
                answer["answer"] = response
            return answer

        # The request's digest names a durable step (a replay asking another question is
        # refused); a journal that keeps nothing needs no name worth computing.
        name = f"model.{purpose}"
        if durable:
            name = f"{name}.{self._digests(messages, tools)}"
        try:
            result, replayed = await self.journal.step(name, body)
            if replayed:  # the retries happened before: their events are published again
                for retried in result["retries"]:
                    self.events.publish("model.retried", retried)
            if "error" in result:
                raise error_from_json(result["error"])
        except Exception as error:
            self.events.publish("model.failed", {"error": str(error), "purpose": purpose})
            raise
        answer = result.get("answer")
        response = answer if answer is not None else response_from_json(result["response"])
        called: ModelCalled = {
            "turn": turn,
            "purpose": purpose,
            "duration_ms": result["duration_ms"],
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
            "finish_reason": response.finish_reason,
            "tool_calls": [call.name for call in response.tool_calls],
            "content": _preview(response.content),
        }
        if response.notes:  # what the provider repaired in the answer (e.g. lone surrogates)
            called["notes"] = list(response.notes)
        self.events.publish("model.called", called)
        return response

    async def execute(self, call: ToolCall) -> ToolResultMessage:
        """Run one tool call through PreToolUse, the tool and PostToolUse."""
        self.tool_calls += 1
        started = time.perf_counter()
        self.events.publish(
            "tool.called",
            {
                "tool_call_id": call.tool_call_id,
                "name": call.name,
                "arguments": _preview_arguments(call.arguments, call.raw_arguments),
            },
        )
        path = (call.arguments or {}).get("path")
        self.plan.on_tool(call.name, path if isinstance(path, str) else None)
        outcome = self.tools.check_call(call)
        if outcome is None:
            outcome = await self._pre_tool_use(call)
        if outcome is None:
            outcome = await self.tools.run_checked(self.context, call)
        self._record_tool_result(call, outcome, started)
        if self.journal.durable:
            await self.journal.check(
                f"tool.{call.name[:80]}",
                {
                    "tool_call_id": call.tool_call_id,
                    "is_error": outcome.is_error,
                    "content": digest(outcome.content),
                },
            )
        if self.hooks.hooks_for(HookEvent.POST_TOOL_USE):
            await self._post_tool_use(call, outcome)
        return ToolResultMessage(call.tool_call_id, call.name, outcome.content, outcome.is_error)

    async def _pre_tool_use(self, call: ToolCall) -> ToolOutcome | None:
        if not self.hooks.hooks_for(HookEvent.PRE_TOOL_USE):
            return None
        payload = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_call_id": call.tool_call_id,
            "run_id": self.context.run_id,
        }
        for outcome in await self.hooks.dispatch(HookEvent.PRE_TOOL_USE, payload):
            if outcome.decision.blocked:
                self.events.publish(
                    "hook.blocked",
                    {
                        "event": HookEvent.PRE_TOOL_USE.value,
                        "hook": outcome.hook,
                        "tool_name": call.name,
                        "tool_call_id": call.tool_call_id,
                        "reason": outcome.decision.reason,
                        "hooks_blocked": 1,
                    },
                )
                return ToolOutcome(
                    f"blocked by hook {outcome.hook}: {outcome.decision.reason}", True, "blocked"
                )
        return None

    async def _post_tool_use(self, call: ToolCall, outcome: ToolOutcome) -> None:
        payload = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_call_id": call.tool_call_id,
            "run_id": self.context.run_id,
            "tool_response": {"content": _preview(outcome.content), "is_error": outcome.is_error},
        }
        for result in await self.hooks.dispatch(HookEvent.POST_TOOL_USE, payload):
            if result.error:
                self.events.publish(
                    "hook.failed",
                    {"event": "PostToolUse", "hook": result.hook, "error": result.error},
                )

    def _record_tool_result(self, call: ToolCall, outcome: ToolOutcome, started: float) -> None:
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        if outcome.is_error:
            self.events.publish(
                "tool.failed",
                {
                    "tool_call_id": call.tool_call_id,
                    "name": call.name,
                    "duration_ms": duration_ms,
                    "error": outcome.content,
                    "error_kind": outcome.error_kind,
                },
            )
        else:
            self.events.publish(
                "tool.completed",
                {
                    "tool_call_id": call.tool_call_id,
                    "name": call.name,
                    "duration_ms": duration_ms,
                    "result": _preview(outcome.content),
                    "result_chars": len(outcome.content),
                },
            )


def _as_from_json(response: ModelResponse) -> bool:
    """Whether `response` is built of exactly the types `response_from_json` rebuilds it
    from (then the round trip through JSON would give an equal response, and is skipped)."""
    return (
        type(response) is ModelResponse
        and type(response.tool_calls) is tuple
        and all(type(call) is ToolCall for call in response.tool_calls)
        and type(response.usage) is Usage
        and type(response.notes) is tuple
    )


def _preview(text: str | None) -> str | None:
    if text is None or len(text) <= _PREVIEW_CHARS:
        return text
    return f"{text[:_PREVIEW_CHARS]}… [{len(text)} characters]"


def _preview_arguments(arguments: dict[str, Any] | None, raw: str) -> Any:
    if arguments is None:
        return {"_raw": _preview(raw)}
    return {
        key: _preview(value) if isinstance(value, str) else value
        for key, value in arguments.items()
    }
