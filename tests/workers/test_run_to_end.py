"""A worker's run ends with its records whichever way a cancel reaches it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runlens import cancellation
from runlens.models.messages import Message, ToolSpec
from runlens.plugins import load_plugin
from runlens.runtime.run import Run, RunSettings
from runlens.testing import FunctionModel
from runlens.workers.workflow import run_to_end

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


class SlowToClose(FunctionModel):
    """Closing takes a moment: a cancellation still on its way arrives during it."""

    async def aclose(self) -> None:
        await asyncio.sleep(0.05)


def test_a_cancel_delivered_twice_still_ends_the_run_cancelled(tmp_path: Path) -> None:
    runs: list[Run] = []

    async def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        # What the store's cancel does from the mirror's thread, met by synchronous work
        # that checks before the task's own cancellation is delivered.
        runs[0].cancel("cancelled on request")
        cancellation.checkpoint()
        return {"content": "never reached"}

    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=SAMPLE,
        model=SlowToClose(answer),
        workspace=tmp_path / "ws",
        settings=RunSettings(validator_plugins=False),
    )
    runs.append(run)
    result = run_to_end(run)
    assert result.status == "cancelled"
    assert result.error_message == "cancelled on request"
    assert (tmp_path / "ws" / "manifest.json").is_file()
