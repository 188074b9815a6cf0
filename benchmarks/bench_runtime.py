"""Runtime overhead per agent step, and many concurrent runs.

    python benchmarks/bench_runtime.py [--runs 200] [--steps 10] [--concurrent 100] [--repeat 5]

1. Per-step overhead: a zero-latency function model makes N tool calls (one per turn), then a
   final answer; hooks, events, trace, metrics, manifest and validation are all on, as in any
   run. Printed: microseconds per step (run wall time / model calls) and CPU microseconds per
   step (the whole process, so the validators' worker thread counts too), runs per second,
   peak memory, and the same for a bare Python loop doing the same message bookkeeping.
   Repeated with 10x the steps to show the cost per step stays flat as the history grows; the
   last line is the cost of each extra step between the two sizes (fixed costs cancel out).
2. Record writes: what one short run (one tool call, then the final answer) writes, counted
   from Python's audit events (`open` for writing, `os.rename` for the atomic writes' renames),
   and its wall time on each `--fixed-dirs` folder (tmpfs and a real disk): the difference is
   what the disk adds to every run.
3. Concurrency: 100 runs at once whose model sleeps 50 ms per call (11 calls each); wall time
   against the ideal 11 x 50 ms.
4. `runlens --help` start-up time.
5. The run store (`--only store`, stores from `--store none,sqlite,postgresql`): per-step
   microseconds at N and 10N tool calls, and the concurrent runs, each with the run mirrored
   into the store as `runlens run` mirrors it (a `StoreMirror` subscribed to the run, started
   before it and finished after it; a concurrent run finishes its mirror off the event loop).
   SQLite is a fresh file under `--dir` for every round; PostgreSQL a fresh schema of
   `$RUNLENS_BENCH_POSTGRES` (default: the `test` database at 127.0.0.1:5432), dropped after
   the round (skipped, saying so, when unreachable). The stores take turns within each round,
   and every ratio is taken within a round (the median of the rounds' ratios).

Timings are medians over `--repeat` rounds, with the fastest and slowest round's wall time
beside them: on a shared machine one round can be slowed by other work, and the median is
what a run sees typically. Deleting a round's workspaces afterwards is not part of any run and
is left out of the timed region.

Workspaces go to `--dir` (default: /dev/shm when it exists), so the figures measure the
runtime rather than the disk; section 2 measures the disk's share. `--only` runs one section.

Targets (issue: Agent runtime): <= 0.25 ms per step; 100 concurrent runs within 20 % of the
ideal; `runlens --help` under 0.3 s. With the store (issue: Fast again): per step with SQLite
<= 1.2x the same run without a store; 100 concurrent runs <= 1.3x ideal with SQLite, <= 1.6x
with PostgreSQL. This prints measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.contracts import ArtifactContract, JsonRules
from runlens.inputs import TableInput
from runlens.models.messages import ModelResponse, ToolCall
from runlens.plugins import PlanStep, Plugin, SuccessCriterion
from runlens.runtime.loop import LoopLimits
from runlens.runtime.run import RunSettings, run_plugin
from runlens.testing import FunctionModel
from runlens.tools.base import Tool

if TYPE_CHECKING:
    from runlens.store.db import RunStore

OUTPUT = "artifacts/out.json"
#: The stores section 5 can mirror runs into (`none`: no store, the baseline).
STORES = ("none", "sqlite", "postgresql")
POSTGRES = os.environ.get(
    "RUNLENS_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
#: A provider key as `runlens run` finds one in its environment: every record is redacted.
SECRET = "bench-key-" + "0" * 24
#: The runs whose mirror failed a write (said on stderr): counted beside the figures.
_FAILED_MIRRORS: list[str] = []
_DIR: str | None = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _plugin() -> Plugin:
    def note(context: Any, text: str) -> dict[str, Any]:
        return {"noted": len(text)}

    tool = Tool(
        "note",
        "Take a note.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        note,
    )
    contract = ArtifactContract(
        name=OUTPUT, label="Out", schema=JsonRules(required_fields=("done",))
    )
    return Plugin(
        name="bench",
        description="benchmark",
        skill="Benchmark.",
        prompt_fragments=(),
        contracts=(contract,),
        plan=(
            PlanStep(
                "work", "Work", (SuccessCriterion("artifact_validated", OUTPUT),), tools=("note",)
            ),
        ),
        # Declared, never called: the model below takes notes, so the figures are the
        # runtime's own rather than the input tool's (bench_evidence.py times that).
        input=TableInput(tool_name="read_rows", id_column="id", text_column="text"),
        tools=lambda context: (tool,),
    )


def _model(steps: int, latency: float) -> FunctionModel:
    calls = iter(range(1 << 30))

    async def respond(messages: Any, tools: Any) -> ModelResponse:
        if latency:
            await asyncio.sleep(latency)
        done = next(calls)
        if done < steps - 1:
            return ModelResponse(tool_calls=(ToolCall(f"c{done}", "note", {"text": "x" * 40}),))
        if done == steps - 1:
            return ModelResponse(
                tool_calls=(
                    ToolCall(
                        f"c{done}", "write_file", {"path": OUTPUT, "content": '{"done": true}'}
                    ),
                )
            )
        return ModelResponse(content="done")

    return FunctionModel(respond)


async def _one_run(plugin: Plugin, root: Path, number: int, steps: int, latency: float) -> str:
    source = root / "input.txt"
    settings = RunSettings(
        limits=LoopLimits(max_turns=steps + 5, max_tool_calls=steps + 5), validator_plugins=False
    )
    result = await run_plugin(
        plugin, source, _model(steps, latency), workspace=root / f"run_{number}", settings=settings
    )
    return result.status.value


@contextlib.contextmanager
def _folder() -> Iterator[Path]:
    """A fresh folder under `_DIR` holding the input file; removed afterwards."""
    with tempfile.TemporaryDirectory(dir=_DIR) as folder:
        root = Path(folder)
        (root / "input.txt").write_text("input", encoding="utf-8")
        yield root


def _bare_loop(steps: int) -> None:
    """The same message bookkeeping with nothing else: the floor a runtime is measured on."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    calls = iter(range(1 << 30))

    def model(history: list[dict[str, Any]]) -> dict[str, Any]:
        done = next(calls)
        if done < steps:
            return {
                "role": "assistant",
                "tool_calls": [{"id": f"c{done}", "name": "note", "arguments": {"text": "x" * 40}}],
            }
        return {"role": "assistant", "content": "done"}

    while True:
        reply = model(messages)
        messages.append(reply)
        if "tool_calls" not in reply:
            return
        for call in reply["tool_calls"]:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": str({"noted": len(call["arguments"]["text"])}),
                }
            )


def _measure(
    label: str, runs: int, steps: int, fn: Callable[[Path], object], repeat: int
) -> dict[str, float]:
    """Time `fn` `repeat` times without tracing, then once more under tracemalloc for memory.

    Each round gets a fresh folder with the input file; creating it and deleting the
    workspaces afterwards is not part of a run, so it is outside the timed region.
    """
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        with _folder() as root:
            gc.collect()
            started = time.perf_counter()
            cpu_started = time.process_time()
            fn(root)
            cpus.append(time.process_time() - cpu_started)
            walls.append(time.perf_counter() - started)
    with _folder() as root:
        gc.collect()
        tracemalloc.start()
        fn(root)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    calls = runs * (steps + 1)
    wall = statistics.median(walls)
    figures = {
        "us_per_step": wall / calls * 1e6,
        "cpu_us_per_step": statistics.median(cpus) / calls * 1e6,
        "runs_per_s": runs / wall,
        "peak_mib": peak / 2**20,
    }
    spread = f"{min(walls) / calls * 1e6:.1f}-{max(walls) / calls * 1e6:.1f}"
    print(
        f"{label:<34} {figures['us_per_step']:>10.1f} {figures['cpu_us_per_step']:>10.1f} "
        f"{figures['runs_per_s']:>10.1f} {figures['peak_mib']:>9.1f} {spread:>15}"
    )
    return figures


def per_step(runs: int, steps: int, repeat: int) -> None:
    plugin = _plugin()
    print(
        f"\nPer-step overhead ({runs} sequential runs; steps = model calls incl. final; "
        f"median of {repeat})"
    )
    print(
        f"{'':<34} {'µs/step':>10} {'cpu µs':>10} {'runs/s':>10} {'peak MiB':>9} "
        f"{'µs/step range':>15}"
    )
    per_run: list[tuple[int, dict[str, float]]] = []
    for n_steps, n_runs in ((steps, runs), (steps * 10, max(runs // 10, 1))):

        def sequential(root: Path, n_steps: int = n_steps, n_runs: int = n_runs) -> None:
            async def all_runs() -> None:
                for number in range(n_runs):
                    status = await _one_run(plugin, root, number, n_steps, 0.0)
                    assert status == "completed", status

            asyncio.run(all_runs())

        def bare(root: Path, n_steps: int = n_steps, n_runs: int = n_runs) -> None:
            for _ in range(n_runs * 10):
                _bare_loop(n_steps)

        figures = _measure(
            f"runlens, {n_steps} tool calls/run", n_runs, n_steps, sequential, repeat
        )
        per_run.append((n_steps + 1, figures))
        _measure(f"bare loop, {n_steps} tool calls/run", n_runs * 10, n_steps, bare, repeat)
    _print_marginal(per_run)


def _print_marginal(per_run: list[tuple[int, dict[str, float]]]) -> None:
    """Cost of one more step, from the two run sizes: a run's fixed costs cancel out."""
    (small, few), (large, many) = per_run
    for key, label in (("us_per_step", "wall"), ("cpu_us_per_step", "cpu")):
        extra = (many[key] * large - few[key] * small) / (large - small)
        fixed = (few[key] - extra) * small
        print(
            f"  each step beyond {small - 1} tool calls: {extra:.1f} µs {label} "
            f"(a run's fixed cost: {fixed / 1000:.2f} ms)"
        )


class _WriteCounter:
    """Counts, from audit events, the files opened for writing and the renames under a folder.

    An audit hook cannot be removed: it stays installed and counts only while `active`.
    """

    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.opened: Counter[str] = Counter()
        self.folder = ""
        self.active = False
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "os.rename" and str(args[1]).startswith(self.folder):
            self.counts["renames (atomic writes)"] += 1
            self.opened[Path(str(args[1])).name] += 1
        elif event == "open" and str(args[0]).startswith(self.folder):
            mode, flags = args[1], args[2]
            writing = (
                any(c in mode for c in "wax+")
                if isinstance(mode, str)
                else bool(flags & self._WRITE_FLAGS)
            )
            if writing:
                self.counts["files opened for writing"] += 1


_COUNTER: _WriteCounter | None = None


def record_writes(dirs: list[str], runs: int, repeat: int) -> None:
    """Section 2: the writes of one short run, and its wall time per folder."""
    global _COUNTER, _DIR
    plugin = _plugin()
    counter = _COUNTER = _COUNTER or _WriteCounter()
    saved = _DIR
    print(f"\nRecord writes of one run (1 tool call + final answer; median of {repeat} x {runs})")
    try:
        for folder in dirs:
            _DIR = folder
            with _folder() as root:
                counter.counts.clear()
                counter.opened.clear()
                counter.folder, counter.active = str(root.resolve()), True
                status = asyncio.run(_one_run(plugin, root, 0, 1, 0.0))
                counter.active = False
                assert status == "completed", status
            rounds: list[float] = []
            cpus: list[float] = []
            for _ in range(repeat):
                with _folder() as root:

                    async def all_runs(root: Path = root) -> None:
                        for number in range(runs):
                            await _one_run(plugin, root, number, 1, 0.0)

                    gc.collect()
                    started, cpu_started = time.perf_counter(), time.process_time()
                    asyncio.run(all_runs())
                    cpus.append((time.process_time() - cpu_started) / runs)
                    rounds.append((time.perf_counter() - started) / runs)
            counts = ", ".join(f"{n} {what}" for what, n in sorted(counter.counts.items()))
            renamed = ", ".join(
                f"{name} x{n}" if n > 1 else name for name, n in sorted(counter.opened.items())
            )
            print(
                f"  {folder:<20} wall {statistics.median(rounds) * 1000:6.2f} ms/run "
                f"(best {min(rounds) * 1000:.2f}, worst {max(rounds) * 1000:.2f}), "
                f"cpu {statistics.median(cpus) * 1000:.2f} ms/run; {counts}"
            )
            print(f"  {'':<20} atomic writes: {renamed}")
    finally:
        _DIR = saved


def concurrent(count: int, steps: int, latency: float, repeat: int) -> None:
    plugin = _plugin()
    ideal = (steps + 1) * latency
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        with _folder() as root:

            async def all_runs(root: Path = root) -> list[str]:
                return await asyncio.gather(
                    *(_one_run(plugin, root, n, steps, latency) for n in range(count))
                )

            gc.collect()
            started = time.perf_counter()
            cpu_started = time.process_time()
            statuses = asyncio.run(all_runs())
            cpus.append(time.process_time() - cpu_started)
            walls.append(time.perf_counter() - started)
        assert statuses == ["completed"] * count
    wall = statistics.median(walls)
    print(
        f"\n{count} concurrent runs, model sleeps {latency * 1000:.0f} ms per call, "
        f"{steps + 1} calls each (median of {repeat})"
    )
    print(
        f"  wall {wall * 1000:.0f} ms (range {min(walls) * 1000:.0f}-{max(walls) * 1000:.0f}), "
        f"ideal {ideal * 1000:.0f} ms, {(wall / ideal - 1) * 100:+.1f} % over ideal "
        f"(target: within +20 %); CPU {statistics.median(cpus) * 1000:.0f} ms"
    )


def startup(repeat: int) -> None:
    timings = []
    for _ in range(max(repeat, 5)):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "runlens", "--help"], check=True, capture_output=True)
        timings.append(time.perf_counter() - started)
    print(
        f"\n`python -m runlens --help`: median {statistics.median(timings) * 1000:.0f} ms "
        f"over {len(timings)} (target: under 300 ms)"
    )


def _postgres_note() -> str | None:
    """Why PostgreSQL cannot be measured here; None when it can."""
    import sqlalchemy as sa

    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as error:
        return f"no PostgreSQL at {POSTGRES} ({type(error).__name__}): skipped"
    finally:
        engine.dispose()
    return None


@contextlib.contextmanager
def _store(kind: str, root: Path) -> Iterator[RunStore | None]:
    """A fresh store of `kind` for one round (None for `none`), closed (and a PostgreSQL
    schema dropped) afterwards."""
    if kind == "none":
        yield None
        return
    import sqlalchemy as sa

    from runlens.store.db import open_store

    if kind == "sqlite":
        store = open_store(f"sqlite:///{root / 'store' / 'runlens.db'}")
        try:
            yield store
        finally:
            store.close()
        return
    schema = f"rl_bench_{secrets.token_hex(6)}"
    admin = sa.create_engine(POSTGRES)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        store = open_store(f"{POSTGRES}?options=-csearch_path%3D{schema}")
        try:
            yield store
        finally:
            store.close()
    finally:
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


async def _mirrored_run(
    plugin: Plugin,
    root: Path,
    number: int,
    steps: int,
    latency: float,
    store: RunStore | None,
    *,
    finish_in_thread: bool = False,
) -> str:
    """One run as `runlens run` executes it: a `StoreMirror` subscribed to the run (started
    before it, finished after it), the environment's provider key redacted everywhere."""
    from runlens.records.io import new_run_id
    from runlens.secrets import redactor

    settings = RunSettings(
        limits=LoopLimits(max_turns=steps + 5, max_tool_calls=steps + 5),
        validator_plugins=False,
        secrets=(SECRET,),
    )
    workspace = root / f"run_{number}"
    if store is None:
        result = await run_plugin(
            plugin, root / "input.txt", _model(steps, latency), workspace=workspace,
            settings=settings,
        )  # fmt: skip
        return result.status.value
    from runlens.store.mirror import StoreMirror

    run_id = new_run_id()
    mirror = StoreMirror(
        store,
        run_id,
        workspace,
        on_cancel=lambda _reason: None,
        origin="cli",
        redact=redactor(settings.secrets),
    ).start()
    try:
        result = await run_plugin(
            plugin, root / "input.txt", _model(steps, latency), workspace=workspace,
            settings=settings, subscribers=[mirror], run_id=run_id,
        )  # fmt: skip
    finally:
        if finish_in_thread:
            await asyncio.to_thread(mirror.finish)
        else:
            mirror.finish()
    if not mirror.healthy:
        _FAILED_MIRRORS.append(run_id)
    return result.status.value


def _usable_stores(kinds: list[str]) -> list[str]:
    usable = []
    for kind in kinds:
        if kind == "postgresql" and (note := _postgres_note()) is not None:
            print(f"  {note}")
            continue
        usable.append(kind)
    return usable


def store_steps(kinds: list[str], runs: int, steps: int, repeat: int) -> None:
    """Section 5a: per-step cost with each store, the stores taking turns in every round."""
    plugin = _plugin()
    print(
        f"\nPer step with the run store ({runs} sequential runs of {steps} tool calls, "
        f"{max(runs // 10, 1)} of {steps * 10}; median of {repeat} rounds, stores in turn)"
    )
    kinds = _usable_stores(kinds)
    print(f"{'':<36} {'µs/step':>9} {'cpu µs':>9} {'x none':>7} {'cpu x':>7} {'µs/step range':>15}")
    for kind in kinds:  # untimed: the first run of each kind pays its imports and compiles
        with _folder() as root, _store(kind, root) as store:
            asyncio.run(_mirrored_run(plugin, root, 0, steps, 0.0, store))
    for n_steps, n_runs in ((steps, runs), (steps * 10, max(runs // 10, 1))):
        walls: dict[str, list[float]] = {kind: [] for kind in kinds}
        cpus: dict[str, list[float]] = {kind: [] for kind in kinds}
        failed = dict.fromkeys(kinds, 0)
        for _ in range(repeat):
            for kind in kinds:
                with _folder() as root, _store(kind, root) as store:

                    async def all_runs(
                        root: Path = root,
                        store: RunStore | None = store,
                        n: int = n_steps,
                        runs: int = n_runs,
                    ) -> None:
                        for number in range(runs):
                            status = await _mirrored_run(plugin, root, number, n, 0.0, store)
                            assert status == "completed", status

                    gc.collect()
                    _FAILED_MIRRORS.clear()
                    started, cpu_started = time.perf_counter(), time.process_time()
                    asyncio.run(all_runs())
                    cpus[kind].append(time.process_time() - cpu_started)
                    walls[kind].append(time.perf_counter() - started)
                    failed[kind] += len(_FAILED_MIRRORS)
        calls = n_runs * (n_steps + 1)
        for kind in kinds:
            wall = statistics.median(walls[kind]) / calls * 1e6
            cpu = statistics.median(cpus[kind]) / calls * 1e6
            ratio, cpu_ratio = (
                (_ratio(walls[kind], walls["none"]), _ratio(cpus[kind], cpus["none"]))
                if "none" in walls
                else (float("nan"), float("nan"))
            )
            spread = f"{min(walls[kind]) / calls * 1e6:.1f}-{max(walls[kind]) / calls * 1e6:.1f}"
            goal = " (goal <= 1.2)" if kind == "sqlite" else ""
            if failed[kind]:
                goal += f"; {failed[kind]} mirrors failed a write"
            print(
                f"{f'{kind}, {n_steps} tool calls/run':<36} {wall:>9.1f} {cpu:>9.1f} "
                f"{ratio:>7.2f} {cpu_ratio:>7.2f} {spread:>15}{goal}"
            )


def _ratio(figures: list[float], bases: list[float]) -> float:
    """The median of the rounds' ratios (each taken within its round)."""
    return statistics.median(f / base for f, base in zip(figures, bases, strict=True))


def _failures(failed: int, runs: int) -> str:
    return f"; {failed} of {runs} mirrors failed a write" if failed else ""


def store_concurrent(kinds: list[str], count: int, steps: int, latency: float, repeat: int) -> None:
    """Section 5b: `count` concurrent runs with each store, the stores taking turns."""
    plugin = _plugin()
    ideal = (steps + 1) * latency
    print(
        f"\n{count} concurrent runs with the run store, model sleeps {latency * 1000:.0f} ms "
        f"per call, {steps + 1} calls each (median of {repeat} rounds, stores in turn)"
    )
    kinds = _usable_stores(kinds)
    walls: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpus: dict[str, list[float]] = {kind: [] for kind in kinds}
    failed = dict.fromkeys(kinds, 0)
    for _ in range(repeat):
        for kind in kinds:
            with _folder() as root, _store(kind, root) as store:

                async def all_runs(root: Path = root, store: RunStore | None = store) -> list[str]:
                    return await asyncio.gather(
                        *(
                            _mirrored_run(
                                plugin, root, n, steps, latency, store, finish_in_thread=True
                            )
                            for n in range(count)
                        )
                    )

                gc.collect()
                _FAILED_MIRRORS.clear()
                started, cpu_started = time.perf_counter(), time.process_time()
                statuses = asyncio.run(all_runs())
                cpus[kind].append(time.process_time() - cpu_started)
                walls[kind].append(time.perf_counter() - started)
                failed[kind] += len(_FAILED_MIRRORS)
            assert statuses == ["completed"] * count
    goals = {"none": "", "sqlite": " (goal <= 1.3)", "postgresql": " (goal <= 1.6)"}
    for kind in kinds:
        wall = statistics.median(walls[kind])
        print(
            f"  {kind:<11} wall {wall * 1000:6.0f} ms "
            f"(range {min(walls[kind]) * 1000:.0f}-{max(walls[kind]) * 1000:.0f}), "
            f"{wall / ideal:.2f}x ideal {ideal * 1000:.0f} ms{goals.get(kind, '')}; "
            f"CPU {statistics.median(cpus[kind]) * 1000:.0f} ms"
            + (
                f"; {failed[kind]} of {count * repeat} mirrors failed a write"
                if failed[kind]
                else ""
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--dir", default=_DIR, help="where run workspaces are created")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per figure (median)")
    parser.add_argument(
        "--fixed-dirs",
        default=",".join(d for d in ("/dev/shm", tempfile.gettempdir()) if Path(d).is_dir()),
        help="comma-separated folders for section 2 (e.g. tmpfs and a real disk)",
    )
    parser.add_argument(
        "--store",
        default=",".join(STORES),
        help=f"comma-separated stores for section 5, of {', '.join(STORES)}",
    )
    parser.add_argument("--only", choices=("steps", "writes", "concurrent", "startup", "store"))
    args = parser.parse_args()
    kinds = [kind.strip() for kind in args.store.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(STORES))
    if unknown:
        parser.error(f"--store: unknown {', '.join(unknown)} (of {', '.join(STORES)})")
    globals()["_DIR"] = args.dir
    print(f"workspaces under {args.dir or tempfile.gettempdir()}")
    if args.only in (None, "steps"):
        per_step(args.runs, args.steps, args.repeat)
    if args.only in (None, "writes"):
        record_writes(args.fixed_dirs.split(","), max(args.runs // 4, 1), args.repeat)
    if args.only in (None, "concurrent"):
        concurrent(args.concurrent, args.steps, args.latency, max(args.repeat // 2, 1))
    if args.only in (None, "startup"):
        startup(args.repeat)
    if args.only in (None, "store"):
        store_steps(kinds, args.runs, args.steps, args.repeat)
        store_concurrent(kinds, args.concurrent, args.steps, args.latency, max(args.repeat // 2, 1))


if __name__ == "__main__":
    main()
