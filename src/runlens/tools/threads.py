"""Tool calls on a thread the run can abandon: cancellation never waits on a tool.

A tool is the plugin's code. Before, it ran on the run's event loop, so a cancelled run (a
SIGTERM, the wall time) had to wait until the tool reached a cancellation point, and a tool
with none (a C call, a loop someone forgot to instrument) kept the run alive for as long as
it computed. Now every call runs on a daemon thread the run does not wait for, and the run's task
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

The thread is not made per call: a registry (one per run) keeps its tool threads
(`ToolThreads`) and hands each call to an idle one, so a run's calls, made one after another,
all run on one thread. An `async` tool runs on an event loop that lives on that thread, as
`asyncio.run` would run it (tasks it leaves behind are cancelled when it returns), but the
loop is not made per call. A thread whose call was abandoned is never given another: it ends
once its tool returns, and the next call gets another thread. Nor is the thread made per
run: `ToolThreads.close` (the run calls it when it ends) gives its idle threads to the
process's pool (`_POOL`, `IdleThreads`), where the next run's first call takes one
instead of starting a thread (which blocks the event loop until the new thread runs); a
thread idle there for `_LINGER_SECONDS` ends, so a long-lived worker process keeps no
thread of a finished run for long, and none running a finished run's call.
`benchmarks/bench_cancel.py --tool-overhead` measures the cost per call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import inspect
import queue
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from runlens import cancellation
from runlens.atomic import WriteGate, writes_through
from runlens.cancellation import CancelScope
from runlens.idle_threads import IdleThreads
from runlens.models.messages import Message, ModelResponse, ToolSpec
from runlens.tools.base import OnEvidenceIndex, ToolContext, ToolFunction

T = TypeVar("T")

#: How often a tool thread waiting on the run's loop checks whether it was abandoned.
_POLL_SECONDS = 0.25
#: How long an idle tool thread no run holds waits for the next run's call before it ends.
_LINGER_SECONDS = 1.0
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
        #: Held until the call is over on the tool's thread (its result handed over): a
        #: lock, cheaper to make than a `threading.Event`.
        self.running = threading.Lock()
        self.running.acquire()
        #: Set on the run's loop when the tool's outcome arrives there.
        self.settled = False

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
        self,
        thread: _ToolThread,
        function: ToolFunction,
        context: ToolContext,
        arguments: Mapping[str, Any],
    ) -> None:
        try:
            with cancellation.active(self.scope), writes_through(self.gate):
                try:
                    outcome = function(self.context_for_thread(context), **arguments)
                    if inspect.isawaitable(outcome):
                        outcome = thread.run_async(self._run_async(outcome))
                except BaseException as error:  # handed to the run's loop, as the result
                    self._settle(None, error)
                else:
                    self._settle(outcome, None)
        finally:
            self.running.release()

    async def _run_async(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._task = (asyncio.get_running_loop(), task)
        self.scope.checkpoint()  # abandoned before the task was known
        return await awaitable

    def _settle(self, outcome: Any, error: BaseException | None) -> None:
        def settle() -> None:
            self.settled = True
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

        on_index: OnEvidenceIndex | None = routed(context.on_evidence_index)
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


class _ToolThread:
    """A daemon thread running tool calls one after another, and the event loop its `async`
    tools run on (made at the first one)."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[
            tuple[contextvars.Context, _Call, ToolFunction, ToolContext, Mapping[str, Any]] | None
        ] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._serve, name="runlens-tool", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        thread = self.thread
        try:
            while True:
                try:
                    job = self.jobs.get(timeout=_LINGER_SECONDS)
                except queue.Empty:
                    if _POOL.leave(self):  # idle in the pool too long: ends
                        return
                    continue  # a run's own idle thread (its registry not closed): waits on
                if job is None:
                    return
                self._run(thread, job)
                # Nothing of the call is kept while the thread waits for the next one (the
                # run's context, through it the run itself).
                job = None
        finally:
            if self._loop is not None:
                _close_loop(self._loop)

    def _run(
        self,
        thread: threading.Thread,
        job: tuple[contextvars.Context, _Call, ToolFunction, ToolContext, Mapping[str, Any]],
    ) -> None:
        context, call, function, tool_context, arguments = job
        thread.name = f"runlens-tool-{call.name[:40]}"
        # In a copy of the caller's context: the tool sees the run's context variables
        # (its cancel scope among them) as a thread of its own would.
        with contextlib.suppress(BaseException):  # `body` hands the call's errors over
            context.run(call.body, self, function, tool_context, arguments)

    def run_async(self, awaitable: Awaitable[T]) -> T:
        """`asyncio.run(awaitable)` on this thread's loop: the tasks the tool leaves running
        are cancelled (and awaited) before it returns."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        loop = self._loop
        try:
            return loop.run_until_complete(awaitable)
        finally:
            _cancel_leftovers(loop)

    def stop(self) -> None:
        """End the thread once the calls handed to it are over (at once when idle)."""
        self.jobs.put(None)


#: The process's idle tool threads no run holds (a registry gives them back when it closes).
_POOL: IdleThreads[_ToolThread] = IdleThreads()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """What `asyncio.run` does with the tasks still running when its coroutine returns."""
    leftovers = asyncio.all_tasks(loop)
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
    for task in leftovers:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception in a task a tool left running",
                    "exception": task.exception(),
                    "task": task,
                }
            )


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(Exception):
        _cancel_leftovers(loop)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


class ToolThreads:
    """The threads a registry's tool calls run on: one per call under way, reused.

    Idle threads wait for the next call (a run's calls come one after another, so a run
    uses one); a thread whose call was abandoned is dropped and ends when its tool returns.
    A call finding no idle thread here takes one from the process's pool, or starts one.
    `close()` gives the idle threads to the pool; a thread used after it goes there once its
    call is over.
    """

    def __init__(self) -> None:
        self._idle: list[_ToolThread] = []
        self._closed = False

    def close(self) -> None:
        """Give the idle threads back to the process's pool (the run is over), where each
        ends unless another run takes it within `_LINGER_SECONDS`. Calls made later still
        run, each thread going back to the pool when its call returns."""
        self._closed = True
        while self._idle:
            with contextlib.suppress(IndexError):  # another thread took it meanwhile
                _POOL.give(self._idle.pop())

    async def call(
        self, name: str, function: ToolFunction, context: ToolContext, arguments: Mapping[str, Any]
    ) -> Any:
        """`function(context, **arguments)` (awaited if it returns an awaitable) on a tool
        thread; its result or its exception. Cancelled at once when the awaiting task is: the
        call is then abandoned (see the module's docstring) and its thread dropped."""
        call = _Call(asyncio.get_running_loop(), name)
        try:
            thread = self._idle.pop()
        except IndexError:
            thread = _POOL.take() or _ToolThread()
        if not thread.thread.is_alive():  # never expected: a thread that died somehow
            thread = _ToolThread()
        thread.jobs.put((contextvars.copy_context(), call, function, context, arguments))
        try:
            result = await call.result
        except asyncio.CancelledError:
            if call.settled:  # the tool itself stopped (it saw the run cancelled)
                self._release(thread)
                raise
            call.abandon(f"the run stopped waiting for tool {name}")
            thread.stop()  # never given another call: it ends when the tool returns
            if call.running.acquire(timeout=_GRACE_SECONDS):  # the tool wound down
                call.running.release()
            raise
        except BaseException:
            self._release(thread)
            raise
        self._release(thread)
        return result

    def _release(self, thread: _ToolThread) -> None:
        if self._closed:
            _POOL.give(thread)
        else:
            self._idle.append(thread)
