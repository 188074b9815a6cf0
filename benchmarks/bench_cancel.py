"""How long `runlens run` takes to stop after SIGTERM, in each phase of an offline run.

    python benchmarks/bench_cancel.py [--rows 200000] [--repeat 3] [--phase validating] [--dir DIR]

Generates a feedback CSV (the same generator and cache as `bench_offline.py`), starts
`runlens run feedback-analysis CSV` as a real process, waits until the run's event log shows
the phase (the input being read: `tool.called`; theme discovery: `tool.called` of the batch
tool; the batch phase: the first `batch.completed`; validation: `run.validating`), sends
SIGTERM and measures the time until the run records `run.cancelled`, and until the process
has exited with every record written.
Prints the median and the worst of `--repeat` tries per phase, and the status each run ended
with. The target is one second in every phase. This prints measurements; it asserts nothing.

    python benchmarks/bench_cancel.py --tool-overhead [--calls 2000]

measures instead what running every tool call on a thread the run can abandon costs
(`runlens.tools.threads`): microseconds per call of a trivial tool, sync and async, through
the tool registry, against calling the function directly.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_offline import cached_csv

_DIR = "/dev/shm" if Path("/dev/shm").is_dir() else None

PHASES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "reading the input": lambda event: event["type"] == "tool.called",
    # Theme discovery tokenises every row before the first batch, inside the batch tool.
    "discovering themes": lambda event: (
        event["type"] == "tool.called" and event["data"].get("name") == "analyze_feedback_batches"
    ),
    "analysing batches": lambda event: event["type"] == "batch.completed",
    "validating": lambda event: event["type"] == "run.validating",
}


def _wait_for(path: Path, accept: Callable[[dict[str, Any]], bool], process: Any) -> bool:
    seen = 0
    while process.poll() is None:
        if path.exists():
            lines = path.read_bytes().split(b"\n")
            for line in lines[seen:-1]:
                if accept(json.loads(line)):
                    return True
            seen = max(len(lines) - 1, seen)
        time.sleep(0.005)
    return False


def one(csv_path: Path, phase: str, scratch: Path) -> tuple[tuple[float, float] | None, str]:
    """(seconds to the `run.cancelled` event, seconds to exit), and the status it ended with."""
    workspace = scratch / f"run_{time.monotonic_ns()}"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "runlens", "run", "feedback-analysis", str(csv_path)),
            *("--workspace", str(workspace), "--json"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    if not _wait_for(workspace / "runtime" / "events.jsonl", PHASES[phase], process):
        return None, "ended before the phase"
    sent_at = time.time()
    sent = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    process.wait()
    elapsed = time.perf_counter() - sent
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    last = json.loads((workspace / "runtime" / "events.jsonl").read_bytes().splitlines()[-1])
    recorded = datetime.fromisoformat(last["ts"]).timestamp() - sent_at
    return (recorded, elapsed), str(record["status"])


def tool_overhead(calls: int) -> None:
    """Microseconds per call of a trivial tool: direct, and through `run_checked`."""
    import asyncio

    from runlens.models.messages import ToolCall
    from runlens.tools.base import Tool, ToolContext
    from runlens.tools.registry import ToolRegistry
    from runlens.tools.workspace import Workspace

    def sync_tool(context: ToolContext, value: int = 0) -> int:
        return value + 1

    async def async_tool(context: ToolContext, value: int = 0) -> int:
        return value + 1

    with tempfile.TemporaryDirectory() as scratch:
        context = ToolContext(run_id="bench", workspace=Workspace(Path(scratch)), input_path=Path())
        registry = ToolRegistry(
            [
                Tool("sync_tool", "", {"type": "object"}, sync_tool),
                Tool("async_tool", "", {"type": "object"}, async_tool),
            ]
        )

        async def through_registry(name: str) -> float:
            call = ToolCall("c", name, {"value": 1}, "")
            started = time.perf_counter()
            for _ in range(calls):
                await registry.run_checked(context, call)
            return (time.perf_counter() - started) / calls * 1e6

        async def direct() -> float:
            started = time.perf_counter()
            for _ in range(calls):
                sync_tool(context, value=1)
                await async_tool(context, value=1)
            return (time.perf_counter() - started) / calls * 1e6

        for name in ("sync_tool", "async_tool"):
            micros = asyncio.run(through_registry(name))
            print(f"{name:<11} through the registry: {micros:7.1f} µs/call")
        print(f"{'both':<11} called directly:       {asyncio.run(direct()):7.1f} µs/call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=_DIR, help="where the workspaces go")
    parser.add_argument(
        "--phase", choices=list(PHASES), action="append", help="only this phase (repeatable)"
    )
    parser.add_argument("--tool-overhead", action="store_true", help="measure the tool thread")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    if args.tool_overhead:
        tool_overhead(args.calls)
        return
    csv_path = cached_csv(args.rows, args.seed)
    print(f"input: {csv_path} ({csv_path.stat().st_size / 1e6:.1f} MB, {args.rows} rows)")
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        for phase in args.phase or PHASES:
            tries = [one(csv_path, phase, Path(scratch)) for _ in range(args.repeat)]
            times = [t for t, _ in tries if t is not None]
            statuses = sorted({status for _, status in tries})
            if not times:
                print(f"{phase:<18} not reached ({', '.join(statuses)})")
                continue
            recorded = [r for r, _ in times]
            exited = [e for _, e in times]
            print(
                f"{phase:<18} SIGTERM to run.cancelled: median {statistics.median(recorded):.2f} s"
                f" (worst {max(recorded):.2f}); to exit: median {statistics.median(exited):.2f} s"
                f" (worst {max(exited):.2f}); {len(times)} tries, ended {', '.join(statuses)}"
            )


if __name__ == "__main__":
    main()
