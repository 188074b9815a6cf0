"""HookManager: callbacks on runtime events, some of which can veto (SPEC section 6).

- `PreToolUse` is blocking and stops at the first hook that blocks: the tool does not run and
  the model gets the reason as the tool result.
- `Stop` is blocking and runs every validator, none skipped because an earlier one blocked;
  the findings are aggregated by the runtime.
- `RunStart`, `PostToolUse` and `RunEnd` observe; a failure there is recorded, not fatal.

Hooks fail closed: a blocking hook that raises or exceeds its timeout blocks, and says so.
Validators are synchronous and deterministic; they run in a worker thread so a slow one can
be timed out without stalling the event loop. All of one round's validators share one trip to
that thread (see `_ValidatorBatch`): a trip costs more than a built-in validator's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runlens.hooks.findings import Finding
from runlens.hooks.validators.base import ValidationContext, Validator, ValidatorResult


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
        return HookOutcome(hook.name, decision)

    async def run_stop(self, context: ValidationContext) -> list[tuple[ValidatorResult, float]]:
        """Run every Stop validator; return each result with its duration in seconds.

        Each validator keeps its own fail-closed timeout. One that overruns it gets a blocking
        `hook_error` result and is left behind in its thread (a thread cannot be stopped); the
        validators after it go on in a fresh thread.
        """
        results: list[tuple[ValidatorResult, float]] = []
        pending = self._validators
        while pending:
            batch = _ValidatorBatch(pending, context)
            hung = await self._watch(batch)
            finished = batch.results if hung is None else batch.results[:hung]
            results.extend((result, seconds) for result, seconds, _ in finished)
            if hung is None:
                break
            validator, timeout = pending[hung]
            limit = self._limit(timeout)
            results.append(
                (_error_result(validator.name, f"timed out after {limit:g}s"), batch.overrun(hung))
            )
            pending = pending[hung + 1 :]
        return results

    def _limit(self, timeout: float | None) -> float:
        return timeout if timeout is not None else self.default_timeout

    async def _watch(self, batch: _ValidatorBatch) -> int | None:
        """Run `batch` in a worker thread; return the index of a validator that overran, or None.

        The event loop sleeps until the batch ends or the running validator's deadline passes,
        so a normal round costs one thread trip and no polling.
        """
        future = _in_daemon_thread(batch.run)
        try:
            while not future.done():
                index = len(batch.results)  # validators [0, index) are done; `index` is running
                if index == len(batch.validators):
                    await future  # the thread is returning
                    break
                deadline = batch.started_at(index) + self._limit(batch.validators[index][1])
                # `asyncio.wait` leaves the future running when it times out.
                await asyncio.wait((future,), timeout=max(deadline - time.perf_counter(), 0))
                if not future.done() and len(batch.results) == index:
                    batch.abandoned = True  # no progress: `index` overran its limit
                    return index
        except asyncio.CancelledError:
            batch.abandoned = True
            raise
        future.result()  # a bug in `run` itself should surface, not pass as "all validated"
        return None


def _in_daemon_thread(function: Callable[[], None]) -> asyncio.Future[None]:
    """Run `function` in a new daemon thread; the future resolves when it returns.

    A daemon thread, not the loop's executor: a validator that hangs past its timeout is
    abandoned, and must not keep the process from exiting once the run has failed it.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    def target() -> None:
        error: BaseException | None = None
        try:
            function()
        except BaseException as raised:  # handed to the awaiting coroutine
            error = raised
        with contextlib.suppress(RuntimeError):  # the loop may be closed by now
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=target, name="runlens-validators", daemon=True).start()
    return future


class _ValidatorBatch:
    """Validators run one after another in one worker thread, watched by the event loop.

    Shared between the two threads: `results` (append-only, one entry per finished validator,
    appended by the worker) and `abandoned` (set by the loop when it stops waiting, so the
    worker does not go on running validators nobody will read).
    """

    def __init__(
        self, validators: Sequence[tuple[Validator, float | None]], context: ValidationContext
    ) -> None:
        self.validators = tuple(validators)
        self.context = context
        #: (result, seconds it ran, perf_counter when it finished)
        self.results: list[tuple[ValidatorResult, float, float]] = []
        self.abandoned = False
        # A validator's clock starts when the previous one finished, the first one's when the
        # batch is handed to the thread pool: waiting for a free thread counts, as it did when
        # each validator had its own trip.
        self._submitted = time.perf_counter()

    def started_at(self, index: int) -> float:
        return self.results[index - 1][2] if index else self._submitted

    def overrun(self, index: int) -> float:
        """Seconds validator `index` has been running (or waiting for a thread) so far."""
        return time.perf_counter() - self.started_at(index)

    def run(self) -> None:
        """In the worker thread."""
        for validator, _ in self.validators:
            if self.abandoned:
                return
            started = time.perf_counter()
            result = _validate(validator, self.context)
            finished = time.perf_counter()
            self.results.append((result, finished - started, finished))


def _validate(validator: Validator, context: ValidationContext) -> ValidatorResult:
    try:
        return validator.validate(context)
    except Exception as error:
        return _error_result(validator.name, f"failed: {type(error).__name__}: {error}")


def _error_result(validator_name: str, what: str) -> ValidatorResult:
    """A validator that cannot give a verdict blocks (fail closed)."""
    message = f"validator {validator_name} {what}"
    finding = Finding(validator=validator_name, artifact="", code="hook_error", message=message)
    return ValidatorResult(validator=validator_name, findings=(finding,), summary=message)
