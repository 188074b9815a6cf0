"""Cancellation never waits on a tool: a run ends `cancelled` within a second whatever its tool
is doing, and the abandoned tool writes nothing afterwards.

The tool here never cooperates: it spins in pure Python (or sleeps) for a minute with no
cancellation point. Before, SIGTERM waited for it to return; now every tool call runs on a
thread the run abandons (`runlens.tools.threads`). The plugin is installed the way a
third-party one is, through an entry point (a `.dist-info` folder on PYTHONPATH).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import textwrap
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from runlens.atomic import WriteRefused, write_atomic
from runlens.models.messages import ToolCall
from runlens.tools.base import Tool, ToolContext
from runlens.tools.registry import ToolRegistry
from runlens.tools.workspace import Workspace

from .conftest import SAMPLE, child_env, runlens_command, wait_for_event

PLUGIN = textwrap.dedent(
    '''
    """A feedback plugin with one more tool, which never reaches a cancellation point."""
    import dataclasses
    import time
    from pathlib import Path

    from runlens import Tool
    from runlens_feedback import plugin as feedback


    def crunch(context, seconds: float = 60, mode: str = "spin"):
        end = time.monotonic() + seconds
        if mode == "sleep":
            time.sleep(seconds)
        else:
            while time.monotonic() < end:
                pass
        # Reached only if the run waited for the tool: the test would see this file.
        late = context.workspace.artifacts / "late.txt"
        late.write_text("written after the verdict")
        return "done"


    CRUNCH = Tool(
        name="crunch",
        description="Compute for a while.",
        parameters={
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "mode": {"type": "string"}},
        },
        function=crunch,
    )


    def _tools(context):
        return (*feedback.tools(context), CRUNCH)


    plugin = dataclasses.replace(feedback, name="slow-tools", tools=_tools)
    '''
)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the `slow-tools` plugin and its entry point."""
    site = tmp_path_factory.mktemp("site")
    (site / "slowtools_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "slowtools-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: slowtools\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[runlens.plugins]\nslow-tools = slowtools_plugin:plugin\n", encoding="utf-8"
    )
    return site


@pytest.mark.parametrize("mode", ["spin", "sleep"])
def test_sigterm_during_a_tool_that_never_cooperates_cancels_within_a_second(
    tmp_path: Path, plugin_path: Path, mode: str
) -> None:
    script = tmp_path / "model.json"
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_feedback_csv", "arguments": {}}]},
        {"tool_calls": [{"name": "crunch", "arguments": {"seconds": 60, "mode": mode}}]},
        {"content": "Done."},
    ]
    script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    workspace = tmp_path / "ws"
    pythonpath = os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])
    command = runlens_command(
        "run", "slow-tools", SAMPLE, "--model", f"scripted:{script}", "--workspace", workspace
    )
    process = subprocess.Popen(
        [*command, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(None, PYTHONPATH=pythonpath),
    )
    wait_for_event(
        workspace,
        lambda e: e["type"] == "tool.called" and e["data"]["name"] == "crunch",
        process,
    )
    time.sleep(0.3)  # inside the tool
    sent_at = time.time()
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    elapsed = time.monotonic() - sent
    assert process.returncode == 1, stderr
    assert elapsed < 2.0, f"the process took {elapsed:.2f}s to exit"
    assert json.loads(stdout)["status"] == "cancelled"
    events = [json.loads(line) for line in (workspace / "runtime" / "events.jsonl").open("rb")]
    assert events[-1]["type"] == "run.cancelled"
    recorded = datetime.fromisoformat(events[-1]["ts"]).timestamp() - sent_at
    assert recorded < 1.0, f"run.cancelled recorded {recorded:.2f}s after SIGTERM"
    assert "tool.completed" not in [e["type"] for e in events if e["data"].get("name") == "crunch"]
    record = json.loads((workspace / "runtime" / "run.json").read_text("utf-8"))
    assert record["status"] == "cancelled" and "SIGTERM" in record["error_message"]
    assert not (workspace / "runtime" / "lock.json").exists()
    assert not (workspace / "artifacts" / "late.txt").exists()


def test_an_abandoned_tool_can_neither_write_nor_publish(tmp_path: Path) -> None:
    """In one process (a worker's case: the process lives on): the call is abandoned at once;
    when the tool wakes up, its atomic write and its event are refused."""
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    release = threading.Event()
    seen: dict[str, BaseException | None] = {}
    published: list[str] = []

    def slow(context: ToolContext) -> str:
        release.wait(30)
        try:
            write_atomic(context.workspace.artifacts / "late.json", b"{}")
        except BaseException as error:  # what the tool sees
            seen["write"] = error
        try:
            assert context.emit is not None
            context.emit("late", {})
        except BaseException as error:
            seen["emit"] = error
        return "done"

    registry = ToolRegistry([Tool("slow", "", {"type": "object"}, slow)])
    context = ToolContext(
        run_id="r",
        workspace=workspace,
        input_path=tmp_path / "in.csv",
        emit=lambda name, data: published.append(name),
    )

    async def scenario() -> float:
        call = ToolCall("c1", "slow", {}, "{}")
        task = asyncio.create_task(registry.run_checked(context, call))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 0.5  # the grace given to a tool to wind down: 0.2 s
    release.set()
    for thread in threading.enumerate():
        if thread.name == "runlens-tool-slow":
            thread.join(10)
    assert isinstance(seen["write"], WriteRefused)
    assert isinstance(seen["emit"], asyncio.CancelledError)
    assert published == []
    assert list(workspace.artifacts.iterdir()) == []  # no file, no temporary file either


def test_a_tool_on_its_thread_returns_its_result_errors_and_events(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    published: list[tuple[str, int]] = []
    threads: list[str] = []

    def sync_tool(context: ToolContext, value: int) -> dict[str, int]:
        threads.append(threading.current_thread().name)
        assert context.emit is not None
        context.emit("seen", {"value": value})
        write_atomic(context.workspace.artifacts / "out.json", b"[]")
        return {"value": value * 2}

    async def async_tool(context: ToolContext, value: int) -> int:
        await asyncio.sleep(0)
        if value < 0:
            raise ValueError("negative")
        return value + 1

    registry = ToolRegistry(
        [
            Tool("double", "", {"type": "object"}, sync_tool),
            Tool("inc", "", {"type": "object"}, async_tool),
        ]
    )
    context = ToolContext(
        run_id="r",
        workspace=workspace,
        input_path=tmp_path / "in.csv",
        emit=lambda name, data: published.append((name, data["value"])),
    )

    async def scenario() -> list[Any]:
        return [
            await registry.run_checked(context, ToolCall("1", "double", {"value": 4}, "")),
            await registry.run_checked(context, ToolCall("2", "inc", {"value": 4}, "")),
            await registry.run_checked(context, ToolCall("3", "inc", {"value": -1}, "")),
        ]

    double, inc, failed = asyncio.run(scenario())
    assert (double.content, double.is_error) == ('{"value": 8}', False)
    assert (inc.content, inc.is_error) == ("5", False)
    assert failed.is_error and failed.content == "inc failed: ValueError: negative"
    assert published == [("seen", 4)]
    assert threads == ["runlens-tool-double"]
    assert (workspace.artifacts / "out.json").read_bytes() == b"[]"
