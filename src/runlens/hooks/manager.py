"""HookManager: callbacks on runtime events, some of which can veto (SPEC section 6).

- `PreToolUse` is blocking and stops at the first hook that blocks: the tool does not run and
  the model gets the reason as the tool result.
- `Stop` is blocking and runs every validator, none skipped because an earlier one blocked;
  the findings are aggregated by the runtime.
- `RunStart`, `PostToolUse` and `RunEnd` observe; a failure there (an exception, a timeout,
  a decision to block, which they cannot) is the outcome's `error`, not fatal.

Hooks fail closed: a blocking hook that raises or exceeds its timeout blocks, and says so.
Stop validators run through `runlens.validation.run_validators`, the same runner
`runlens validate` uses, each with its own timeout (a command hook's follows its `timeout`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runlens.validation.base import ValidationContext, Validator, ValidatorResult
from runlens.validation.runner import run_validators


class HookEvent(StrEnum):
    RUN_START = "RunStart"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"
    RUN_END = "RunEnd"


BLOCKING_EVENTS = frozenset({HookEvent.PRE_TOOL_USE, HookEvent.STOP})


@dataclass(frozen=True, slots=True)
class HookDecision:
    blocked: bool = False
    reason: str = ""

    @classmethod
    def allow(cls) -> HookDecision:
        return cls()

    @classmethod
    def block(cls, reason: str) -> HookDecision:
        return cls(True, reason)


#: A hook receives the event payload (a JSON-able dict) and may return a decision.
HookFunction = Callable[[dict[str, Any]], "HookDecision | Awaitable[HookDecision | None] | None"]


@dataclass(frozen=True, slots=True)
class RegisteredHook:
    name: str
    event: HookEvent
    function: HookFunction
    timeout: float | None = None
    #: For tool events: tool names this hook applies to (empty = every tool).
    tools: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class HookOutcome:
    hook: str
    decision: HookDecision
    error: str | None = None


class HookManager:
    def __init__(self, *, default_timeout: float = 30.0) -> None:
        self.default_timeout = default_timeout
        self._hooks: dict[HookEvent, list[RegisteredHook]] = {event: [] for event in HookEvent}
        self._validators: list[tuple[Validator, float | None]] = []

    def register(
        self,
        event: HookEvent | str,
        function: HookFunction,
        *,
        name: str | None = None,
        timeout: float | None = None,
        tools: frozenset[str] | set[str] | tuple[str, ...] = (),
    ) -> None:
        event = HookEvent(event)
        label = name or str(getattr(function, "__name__", type(function).__name__))
        self._hooks[event].append(RegisteredHook(label, event, function, timeout, frozenset(tools)))

    def register_validator(self, validator: Validator, *, timeout: float | None = None) -> None:
        """Register a Stop validator (built-in, plugin-provided or a command wrapper)."""
        self._validators.append((validator, timeout))

    @property
    def validators(self) -> tuple[Validator, ...]:
        return tuple(validator for validator, _ in self._validators)

    def hooks_for(self, event: HookEvent) -> tuple[RegisteredHook, ...]:
        return tuple(self._hooks[event])

    async def dispatch(self, event: HookEvent, payload: dict[str, Any]) -> list[HookOutcome]:
        """Run the hooks of one event. Blocking events stop at the first block (PreToolUse)."""
        outcomes: list[HookOutcome] = []
        tool_name = payload.get("tool_name")
        for hook in self._hooks[event]:
            if hook.tools and tool_name not in hook.tools:
                continue
            outcome = await self._call(hook, payload)
            outcomes.append(outcome)
            if event in BLOCKING_EVENTS and outcome.decision.blocked:
                break
        return outcomes

    async def _call(self, hook: RegisteredHook, payload: dict[str, Any]) -> HookOutcome:
        timeout = hook.timeout if hook.timeout is not None else self.default_timeout
        fail_closed = hook.event in BLOCKING_EVENTS
        try:
            result = hook.function(payload)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, timeout)
        except TimeoutError:
            reason = f"hook {hook.name} timed out after {timeout:g}s"
            return HookOutcome(hook.name, HookDecision(fail_closed, reason), reason)
        except Exception as error:
            reason = f"hook {hook.name} failed: {type(error).__name__}: {error}"
            return HookOutcome(hook.name, HookDecision(fail_closed, reason), reason)
        decision = result if isinstance(result, HookDecision) else HookDecision.allow()
        if decision.blocked and not fail_closed:
            # An observing hook cannot block; its reason (a command's timeout or exit code)
            # is recorded as the hook's failure instead of being dropped.
            return HookOutcome(hook.name, HookDecision.allow(), decision.reason)
        return HookOutcome(hook.name, decision)

    async def run_stop(self, context: ValidationContext) -> list[tuple[ValidatorResult, float]]:
        """Run every Stop validator through the one validation runner (`run_validators`).

        A validator registered without a timeout that has a `stop_timeout(context)` method
        (a Stop command hook: its own timeout per artifact) gets that budget instead of the
        default. When the round ends, however it ends (done, cancelled, a validator abandoned
        past its timeout), each validator with an `end_round(context)` method is told, so
        nothing it started for the round (a command hook's processes) outlives it.
        """
        timed = [
            (validator, self._stop_timeout(validator, timeout, context))
            for validator, timeout in self._validators
        ]
        try:
            return await run_validators(timed, context, default_timeout=self.default_timeout)
        finally:
            for validator, _ in self._validators:
                end_round = getattr(validator, "end_round", None)
                if callable(end_round):
                    end_round(context)

    @staticmethod
    def _stop_timeout(
        validator: Validator, timeout: float | None, context: ValidationContext
    ) -> float | None:
        if timeout is not None:
            return timeout
        budget = getattr(validator, "stop_timeout", None)
        return float(budget(context)) if callable(budget) else None
