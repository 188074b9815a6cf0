"""A run's tool calls share one tool thread; an abandoned call's thread is replaced; the
next run takes the thread a finished run gave back, and an idle one ends.

Every tool call runs on a thread the run can abandon (`runlens.tools.threads`). Making that
thread (and, for an `async` tool, an event loop) per call cost most of a millisecond, so a
registry keeps its thread for the next call and gives it up only when a call is abandoned;
when the run ends, the thread waits in the process's pool for the next run a short while.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from runlens import cancellation
from runlens.cancellation import CancelScope
from runlens.models.messages import ToolCall
from runlens.tools import threads as tool_threads
from runlens.tools.base import Tool, ToolContext
from runlens.tools.registry import ToolRegistry
from runlens.tools.workspace import Workspace


def _context(tmp_path: Path) -> ToolContext:
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    return ToolContext(run_id="r", workspace=workspace, input_path=tmp_path / "in.csv")


def _tool_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("runlens-tool")]


def _wait_ended(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()


@pytest.fixture(autouse=True)
def _no_pooled_thread() -> None:
    """Each test starts with no idle tool thread left in the process's pool by another."""
    pooled = []
    while (thread := tool_threads._POOL.take()) is not None:
        thread.stop()
        pooled.append(thread.thread)
    _wait_ended(pooled)


def test_a_run_with_many_tool_calls_uses_one_tool_thread(tmp_path: Path) -> None:
    seen: list[tuple[str, threading.Thread, CancelScope | None]] = []
    left_behind: list[asyncio.Task[None]] = []

    def sync_tool(context: ToolContext, value: int) -> int:
        seen.append(("sync", threading.current_thread(), cancellation.current()))
        return value + 1

    async def async_tool(context: ToolContext, value: int) -> int:
        seen.append(("async", threading.current_thread(), cancellation.current()))
        # A task the tool leaves running is cancelled when it returns, as asyncio.run would.
        left_behind.append(asyncio.create_task(asyncio.sleep(60)))
        await asyncio.sleep(0)
        return value + 2

    registry = ToolRegistry(
        [
            Tool("sync_tool", "", {"type": "object"}, sync_tool),
            Tool("async_tool", "", {"type": "object"}, async_tool),
        ]
    )
    context = _context(tmp_path)
    run_scope = CancelScope()

    async def scenario() -> list[str]:
        contents = []
        with cancellation.active(run_scope):
            for number in range(50):
                name = "sync_tool" if number % 2 else "async_tool"
                call = ToolCall(str(number), name, {"value": number}, "")
                outcome = await registry.run_checked(context, call)
                assert not outcome.is_error, outcome.content
                contents.append(outcome.content)
        return contents

    before = set(_tool_threads())
    try:
        contents = asyncio.run(scenario())
        assert contents == [str(n + (1 if n % 2 else 2)) for n in range(50)]
        threads = {thread for _, thread, _ in seen}
        assert len(seen) == 50 and len(threads) == 1  # one thread for all fifty calls
        (thread,) = threads
        assert thread is not threading.current_thread() and thread not in before
        assert thread.name == "runlens-tool-sync_tool"  # named after its latest call
        # Each call has a scope of its own, chained to the run's (cancellation inherited).
        scopes = [scope for _, _, scope in seen]
        assert len({id(scope) for scope in scopes}) == 50
        assert all(getattr(scope, "_parent", None) is run_scope for scope in scopes)
        assert all(task.cancelled() for task in left_behind)
    finally:
        registry.close()
    _wait_ended([thread])  # the run is over: its tool thread ends
    assert set(_tool_threads()) <= before


def test_a_new_thread_replaces_an_abandoned_one(tmp_path: Path) -> None:
    release = threading.Event()
    threads: list[threading.Thread] = []

    def record(context: ToolContext) -> str:
        threads.append(threading.current_thread())
        return "ok"

    def stuck(context: ToolContext) -> str:
        threads.append(threading.current_thread())
        release.wait(30)  # no cancellation point: the call can only be abandoned
        return "late"

    registry = ToolRegistry(
        [
            Tool("record", "", {"type": "object"}, record),
            Tool("stuck", "", {"type": "object"}, stuck),
        ]
    )
    context = _context(tmp_path)

    async def scenario() -> float:
        assert not (await registry.run_checked(context, ToolCall("1", "record", {}, ""))).is_error
        task = asyncio.create_task(registry.run_checked(context, ToolCall("2", "stuck", {}, "")))
        while len(threads) < 2:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        waited = time.monotonic() - started
        for number in range(3, 6):
            call = ToolCall(str(number), "record", {}, "")
            assert (await registry.run_checked(context, call)).content == "ok"
        return waited

    try:
        assert asyncio.run(scenario()) < 0.5
        first, abandoned, *after = threads
        assert abandoned is first  # the stuck call ran on the run's tool thread
        assert len(set(after)) == 1 and after[0] is not abandoned  # replaced, then reused
        assert abandoned.is_alive()  # still inside the tool: left to finish on its own
        release.set()
        _wait_ended([abandoned])  # its tool returned: the abandoned thread ends
        assert after[0].is_alive()
    finally:
        release.set()
        registry.close()
    _wait_ended([after[0]])


def test_calls_after_close_still_run_and_leave_no_thread(tmp_path: Path) -> None:
    threads: list[threading.Thread] = []

    async def async_tool(context: ToolContext) -> str:
        threads.append(threading.current_thread())
        return "ok"

    registry = ToolRegistry([Tool("async_tool", "", {"type": "object"}, async_tool)])
    registry.close()
    context = _context(tmp_path)
    outcome = asyncio.run(registry.run_checked(context, ToolCall("1", "async_tool", {}, "")))
    assert outcome.content == "ok"
    _wait_ended(threads)


def test_the_next_run_takes_the_thread_a_finished_run_gave_back(tmp_path: Path) -> None:
    threads: list[threading.Thread] = []

    def record(context: ToolContext) -> str:
        threads.append(threading.current_thread())
        return "ok"

    context = _context(tmp_path)
    for _ in range(3):  # three runs, one after the other, each with its own registry
        registry = ToolRegistry([Tool("record", "", {"type": "object"}, record)])
        try:
            for number in range(2):
                call = ToolCall(str(number), "record", {}, "")
                assert asyncio.run(registry.run_checked(context, call)).content == "ok"
        finally:
            registry.close()
    assert len(threads) == 6 and len(set(threads)) == 1  # started once, for the first run
    _wait_ended(threads[:1])  # idle in the pool, with no run to take it: it ends


def test_an_idle_pooled_thread_ends_after_its_linger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_threads, "_LINGER_SECONDS", 0.05)
    threads: list[threading.Thread] = []

    def record(context: ToolContext) -> str:
        threads.append(threading.current_thread())
        return "ok"

    registry = ToolRegistry([Tool("record", "", {"type": "object"}, record)])
    context = _context(tmp_path)
    try:
        assert asyncio.run(registry.run_checked(context, ToolCall("1", "record", {}, ""))).content
        time.sleep(0.3)  # held by its run (the registry is open): it waits on past the linger
        assert threads[0].is_alive()
    finally:
        registry.close()
    _wait_ended(threads)  # in the pool now: it ends after the linger
    assert tool_threads._POOL.take() is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_finds_no_pooled_thread(tmp_path: Path) -> None:
    registry = ToolRegistry([Tool("record", "", {"type": "object"}, lambda context: "ok")])
    context = _context(tmp_path)
    assert asyncio.run(registry.run_checked(context, ToolCall("1", "record", {}, ""))).content
    registry.close()  # its thread waits in the pool
    pooled = tool_threads._POOL.take()
    assert pooled is not None
    tool_threads._POOL.give(pooled)
    child = os.fork()
    if child == 0:  # the thread was not copied: the child's pool must not hand it out
        os._exit(0 if tool_threads._POOL.take() is None else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _wait_ended([pooled.thread])
