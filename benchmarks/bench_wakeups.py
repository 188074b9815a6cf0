"""What waking up costs on this machine: the CPU a run takes when its model makes it wait.

    PYTHONPATH=src python benchmarks/bench_wakeups.py [--runs 40] [--gaps 0,1,5,20,50]

The per-step benchmarks (bench_peers.py, baseline.py) answer their fake model at once, so a
run never sleeps. A real model makes every run wait, and in `--concurrent` the hundred runs
wait 50 ms a call. This prints, for each gap (ms) between two pieces of work:

- `asyncio.sleep`: the CPU one `await asyncio.sleep(gap)` costs the process;
- the same piece of Python work (encoding, parsing and sorting small records), timed on its
  own thread right after a sleep of the gap: how much dearer work is once the process has
  been idle;
- a thread hand-over round trip (a job put on a queue, run by a thread, the result handed
  back to the event loop with `call_soon_threadsafe`), followed by a sleep of the gap: what
  each tool call of a run costs;
- one RunLens run of 10 tool calls without a store (bench_peers.py's), its model waiting the
  gap before each answer: the process's CPU per run (every thread) and the event loop's
  thread's own.

It prints figures, no goal: docs/performance.md reads them beside the 100 concurrent runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402  (the run is the peers benchmark's own)

_RECORDS = [{"seq": i, "type": "tool.completed", "data": {"text": "x" * 40}} for i in range(60)]


def _work() -> None:
    """A fixed piece of Python work, about what a run does around a step."""
    for _ in range(3):
        decoded = json.loads(json.dumps(_RECORDS))
        decoded.sort(key=lambda record: -record["seq"])


async def _sleep_cost(gap: float, repeat: int) -> float:
    """CPU µs of one `asyncio.sleep(gap)`."""
    started = time.process_time()
    for _ in range(repeat):
        await asyncio.sleep(gap)
    return (time.process_time() - started) / repeat * 1e6


async def _work_after(gap: float, repeat: int) -> float:
    """CPU µs of `_work` right after a sleep of `gap` (median)."""
    costs = []
    for _ in range(repeat):
        await asyncio.sleep(gap)
        started = time.thread_time()
        _work()
        costs.append(time.thread_time() - started)
    return statistics.median(costs) * 1e6


async def _hand_over(gap: float, repeat: int) -> float:
    """Process CPU µs of a thread hand-over round trip and a sleep of `gap`, less the sleep."""
    jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def serve() -> None:
        while (job := jobs.get()) is not None:
            job()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    loop = asyncio.get_running_loop()
    started = time.process_time()
    for _ in range(repeat):
        done = loop.create_future()
        jobs.put(lambda done=done: loop.call_soon_threadsafe(done.set_result, None))
        await done
        await asyncio.sleep(gap)
    spent = (time.process_time() - started) / repeat * 1e6
    jobs.put(None)
    thread.join()
    return spent - await _sleep_cost(gap, repeat)


def _run_cost(runs: int, gap: float) -> tuple[float, float]:
    """(process CPU ms, event loop thread CPU ms) per 10-call RunLens run without a store."""
    run_once, _clean_up, _version = bench_peers._setup("runlens")

    async def many(count: int) -> None:
        for _ in range(count):
            await run_once(10, [])

    bench_peers.Latency.seconds = gap
    try:
        asyncio.run(many(3))  # threads started, caches filled
        process, thread = time.process_time(), time.thread_time()
        asyncio.run(many(runs))
        return (
            (time.process_time() - process) / runs * 1e3,
            (time.thread_time() - thread) / runs * 1e3,
        )
    finally:
        bench_peers.Latency.seconds = 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="RunLens runs per gap")
    parser.add_argument("--gaps", default="0,1,5,20,50", help="gaps between work, ms")
    parser.add_argument("--repeat", type=int, default=100, help="samples per micro-figure")
    args = parser.parse_args()
    gaps = [float(gap) / 1000 for gap in args.gaps.split(",")]
    print(f"python {sys.version.split()[0]}; CPU µs unless said")
    print(
        f"  {'gap ms':>7} {'sleep':>8} {'work after':>11} {'hand-over':>10} "
        f"{'run CPU ms':>11} {'loop thread ms':>15}"
    )
    for gap in gaps:
        sleep = asyncio.run(_sleep_cost(gap, args.repeat))
        work = asyncio.run(_work_after(gap, args.repeat))
        hand = asyncio.run(_hand_over(gap, args.repeat))
        process, thread = _run_cost(args.runs, gap)
        print(
            f"  {gap * 1000:>7.0f} {sleep:>8.0f} {work:>11.0f} {hand:>10.0f} "
            f"{process:>11.2f} {thread:>15.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
