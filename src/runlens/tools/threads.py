"""Tool calls on a thread the run can abandon: cancellation never waits on a tool.

A tool is the plugin's code. Before, it ran on the run's event loop, so a cancelled run (a
SIGTERM, the wall time) had to wait until the tool reached a cancellation point, and a tool
with none (a C call, a loop someone forgot to instrument) kept the run alive for as long as
it computed. Now `call_tool` runs every call on a daemon thread of its own, and the run's task
only awaits its result: cancelling the task abandons the call, gives it 0.2 s to wind down
(a cooperating tool stops there, an `async` tool's tasks are cancelled) and returns; the run
records `cancelled`, releases its workspace and exits, and a tool still running is left to die
with the process.

An abandoned tool must not touch the run afterwards, so the thread gets:

- its own `CancelScope`, set when the call is abandoned (or the run cancelled):
  `checkpoint()` in the tool raises there, so a cooperating tool also stops early;
- a `WriteGate` (`runlens.atomic`): once the call is abandoned, every atomic write of the
  thread (an artifact, the Evidence Index) is refused before its rename, and `abandon` waits
  for a rename already under way, so nothing lands in the workspace after the verdict;
- a `ToolContext` whose callbacks into the run (`emit`, `warn`, `on_evidence_index`,
  `call_model`) run on the run's own event loop, where the run's records live, and are
  refused once the call is abandoned. Model calls made by the tool (a batch engine) become
  tasks of the run's loop, cancelled with the call.

The cost is one thread per call, and one event loop per call for an `async` tool:
`benchmarks/bench_cancel.py --tool-overhead` measures it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from runlens import cancellation
from runlens.atomic import WriteGate, writes_through
from runlens.cancellation import CancelScope
from runlens.models.messages import Message, ModelResponse, ToolSpec
from runlens.tools.base import ToolContext, ToolFunction

T = TypeVar("T")

#: How often a tool thread waiting on the run's loop checks whether it was abandoned.
_POLL_SECONDS = 0.25
#: How long an abandoned call is given to wind down (a tool that reaches a cancellation
#: point, an `async` tool whose tasks are cancelled) before the run goes on without it:
#: what it leaves running is otherwise still alive when the process exits.
_GRACE_SECONDS = 0.2


class _ToolScope(CancelScope):
    """A tool call's scope: cancelled when the call is abandoned, or with the run's."""

    def __init__(self, parent: CancelScope | None) -> None:
        super().__init__()
        self._parent = parent

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self._parent is not None and self._parent.cancelled)

    def checkpoint(self) -> None:
        if self._parent is not None:
            self._parent.checkpoint()
        super().checkpoint()


class _Call:
    """One tool call running on its thread, seen from the run's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, name: str) -> None:
        self.loop = loop
        self.name = name
        self.scope = _ToolScope(cancellation.current())
        self.gate = WriteGate()
        self.result: asyncio.Future[Any] = loop.create_future()
        #: Model calls the tool made, running as tasks of the run's loop.
        self.dispatched: set[concurrent.futures.Future[Any]] = set()
        #: An `async` tool's task, on its thread's own loop.
        self._task: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None

    def abandon(self, reason: str) -> None:
        """From the run's loop: the call's result is no longer wanted."""
        self.scope.cancel(reason)
        self.gate.close()  # returns once a rename under way has finished
        for future in list(self.dispatched):
            future.cancel()
        if self._task is not None:  # the tool's own tasks stop at their next await
            loop, task = self._task
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(task.cancel)

    # -- on the tool's thread ---------------------------------------------------------------

    def body(
        self, function: ToolFunction, context: ToolContext, arguments: Mapping[str, Any]
    ) -> None:
        with cancellation.active(self.scope), writes_through(self.gate):
            try:
                outcome = function(self.context_for_thread(context), **arguments)
                if inspect.isawaitable(outcome):
                    outcome = asyncio.run(self._run_async(outcome))
            except BaseException as error:  # handed to the run's loop, as the call's result
                self._settle(None, error)
            else:
                self._settle(outcome, None)

    async def _run_async(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._task = (asyncio.get_running_loop(), task)
        self.scope.checkpoint()  # abandoned before the task was known
        return await awaitable

    def _settle(self, outcome: Any, error: BaseException | None) -> None:
        def settle() -> None:
            if self.result.done():
                return
            if isinstance(error, asyncio.CancelledError):  # the tool saw the run cancelled
                self.result.cancel()
            elif error is not None:
                self.result.set_exception(error)
            else:
                self.result.set_result(outcome)

        # A closed loop: the run has ended, nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(settle)

    def on_loop(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` run on the run's loop, its result; CancelledError once the call
        is abandoned (also while waiting)."""
        self.scope.checkpoint()
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            if self.scope.cancelled:
                done.set_exception(asyncio.CancelledError("the tool call was abandoned"))
                return
            try:
                done.set_result(function(*args))
            except BaseException as error:
                done.set_exception(error)

        try:
            self.loop.call_soon_threadsafe(run)
        except RuntimeError:
            raise asyncio.CancelledError("the run has ended") from None
        while True:
            try:
                return done.result(timeout=_POLL_SECONDS)
            except concurrent.futures.TimeoutError:
                self.scope.checkpoint()

    def context_for_thread(self, context: ToolContext) -> ToolContext:
        """`context` with its callbacks into the run routed to the run's loop."""

        def routed(callback: Callable[..., Any] | None) -> Any:
            if callback is None:
                return None
            return lambda *args: self.on_loop(callback, *args)

        call_model = context.call_model
        routed_model = None
        if call_model is not None:

            async def routed_model(
                messages: Sequence[Message], tools: Sequence[ToolSpec], *, purpose: str
            ) -> ModelResponse:
                self.scope.checkpoint()
                future = self.on_loop(
                    self._dispatch, lambda: call_model(messages, tools, purpose=purpose)
                )
                try:
                    return await asyncio.wrap_future(future)
                finally:
                    self.dispatched.discard(future)

        on_index: Callable[[Path], None] | None = routed(context.on_evidence_index)
        return dataclasses.replace(
            context,
            emit=routed(context.emit),
            warn=routed(context.warn),
            on_evidence_index=on_index,
            call_model=routed_model,
        )

    def _dispatch(
        self, start: Callable[[], Awaitable[ModelResponse]]
    ) -> concurrent.futures.Future[Any]:
        """On the run's loop: start the model call there, tracked so `abandon` can cancel
        it (started here, so a refused call leaves no coroutine behind)."""
        future = asyncio.run_coroutine_threadsafe(_awaited(start()), self.loop)
        self.dispatched.add(future)
        return future


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


async def call_tool(
    name: str, function: ToolFunction, context: ToolContext, arguments: Mapping[str, Any]
) -> Any:
    """`function(context, **arguments)` (awaited if it returns an awaitable) on a thread of
    its own; its result or its exception. Cancelled at once when the awaiting task is: the
    call is then abandoned (see the module's docstring)."""
    call = _Call(asyncio.get_running_loop(), name)
    thread = threading.Thread(
        target=contextvars.copy_context().run,
        args=(call.body, function, context, arguments),
        name=f"runlens-tool-{name[:40]}",
        daemon=True,  # an abandoned tool never keeps the process alive
    )
    thread.start()
    try:
        return await call.result
    except asyncio.CancelledError:
        call.abandon(f"the run stopped waiting for tool {name}")
        thread.join(_GRACE_SECONDS)
        raise
