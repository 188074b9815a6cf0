"""A validator nobody waits for any more (timed out, or its run cancelled) is stopped, not
left holding a core and the interpreter lock."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.runner import run_validators


class _Spinning:
    name = "spinning"

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None

    def validate(self, context: ValidationContext) -> ValidatorResult:
        self.thread = threading.current_thread()
        while True:  # pure Python: stoppable at any bytecode
            pass


def _wait_until_dead(thread: threading.Thread | None) -> bool:
    deadline = time.monotonic() + 5
    while thread is not None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread is not None and not thread.is_alive()


def test_a_timed_out_validator_thread_is_stopped(tmp_path: Path) -> None:
    spinning = _Spinning()
    context = ValidationContext(workspace=tmp_path, contracts=())
    ((result, _),) = asyncio.run(run_validators([(spinning, 0.2)], context))
    assert result.summary is not None
    assert result.blocked and "timed out after 0.2s" in result.summary
    assert _wait_until_dead(spinning.thread)


def test_a_cancelled_round_stops_its_validator_thread(tmp_path: Path) -> None:
    spinning = _Spinning()
    context = ValidationContext(workspace=tmp_path, contracts=())

    async def cancel_mid_round() -> None:
        task = asyncio.ensure_future(run_validators([(spinning, 30)], context))
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return
        raise AssertionError("the round was not cancelled")

    asyncio.run(cancel_mid_round())
    assert _wait_until_dead(spinning.thread)
