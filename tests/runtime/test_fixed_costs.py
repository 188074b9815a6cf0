"""What a run reads or starts once per process instead of once per run, and still gets right."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from contextvars import ContextVar
from pathlib import Path

import pytest

from runlens.runtime import lock as lock_module
from runlens.runtime.lock import WorkspaceLock, read_holder
from runlens.tools.workspace import Workspace
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.runner import run_validators


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_lock_records_the_start_time_of_the_process_that_claims_it(tmp_path: Path) -> None:
    """Read once per process, yet a forked child records its own start, not its parent's."""
    mine = lock_module.process_start_time(os.getpid())
    for name in ("first", "second"):
        held = WorkspaceLock.claim(Workspace(tmp_path / name), f"run_{name}")
        try:
            holder = read_holder(held.path)
            assert holder is not None and holder.process_start == mine
            assert holder.pid == os.getpid()
        finally:
            held.release()
    child = os.fork()
    if child == 0:  # the child: exit 0 only if its lock names its own start
        code = 1
        try:
            lock = WorkspaceLock.claim(Workspace(tmp_path / "child"), "run_child")
            recorded = read_holder(lock.path)
            own = lock_module.process_start_time(os.getpid())
            code = 0 if recorded is not None and recorded.process_start == own else 3
            lock.release()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


class _Recording:
    """Records the thread it ran on and a context variable it saw, then sets that variable."""

    name = "recording"
    seen: ContextVar[str | None] = ContextVar("seen", default=None)

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.saw: list[str | None] = []

    def validate(self, context: ValidationContext) -> ValidatorResult:
        self.threads.append(threading.current_thread())
        self.saw.append(self.seen.get())
        self.seen.set("set by an earlier round")
        return ValidatorResult(validator=self.name, findings=(), summary=None)


class _Hanging:
    name = "hanging"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        time.sleep(0.6)  # past its timeout: abandoned (its exception arrives after the sleep)
        return ValidatorResult(validator=self.name, findings=(), summary=None)


def test_validation_rounds_reuse_an_idle_thread_each_in_a_fresh_context(tmp_path: Path) -> None:
    recording = _Recording()
    context = ValidationContext(workspace=tmp_path, contracts=())

    async def rounds() -> list[list[tuple[ValidatorResult, float]]]:
        return [await run_validators([(recording, 5)], context) for _ in range(3)]

    for results in asyncio.run(rounds()):
        ((result, _),) = results
        assert not result.blocked, result.summary
    assert len(set(recording.threads)) == 1  # one thread, given back between rounds
    assert recording.saw == [None, None, None]  # no round sees what another one set
    # Idle, it is not taken for a validator left running (`runlens` exits past those).
    assert not recording.threads[0].name.startswith("runlens-validators")


def test_an_abandoned_rounds_thread_never_runs_another_round(tmp_path: Path) -> None:
    recording = _Recording()
    context = ValidationContext(workspace=tmp_path, contracts=())

    async def rounds() -> tuple[ValidatorResult, list[tuple[ValidatorResult, float]]]:
        ((timed_out, _),) = await run_validators([(_Hanging(), 0.1)], context)
        later = []
        for _ in range(5):  # rounds after it, while the abandoned thread winds down
            later += await run_validators([(recording, 5)], context)
            await asyncio.sleep(0.15)
        return timed_out, later

    timed_out, later = asyncio.run(rounds())
    assert timed_out.blocked and "timed out" in (timed_out.summary or "")
    assert [result.blocked for result, _ in later] == [False] * 5
