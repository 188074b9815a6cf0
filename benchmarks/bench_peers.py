"""The same agent run in RunLens and in its peers: microseconds per step, side by side.

    python benchmarks/bench_peers.py [--calls 10,100] [--steps 400] [--rounds 5]
        [--peers-python /work/peers-venv/bin/python] [--only runlens,langgraph,...]
        [--database-url postgresql://root@127.0.0.1:5432/test]

The peers' venv: `python3 -m venv /work/peers-venv && /work/peers-venv/bin/pip install -r
benchmarks/requirements-peers.txt`.

The run: a zero-cost fake model asks for one tool call per turn, N times, then gives a final
answer; the tool returns a small dict. Each framework runs it with its own test double:

- RunLens: `runlens.testing.FunctionModel` and `run_plugin`, as in bench_runtime.py (the last
  of the N calls writes the deliverable, which the Stop validators check; hooks, events, trace,
  metrics and manifest are on as in every run). Measured twice: without a run store (a plain
  `run_plugin`), and with the SQLite store mirrored as `runlens run` does (`StoreMirror`
  subscribed to the run, `finish()` at its end: with runs at once, off the loop they share,
  as each of a worker's runs ends on its own thread); `--database-url` adds a PostgreSQL store.
- pydantic-ai: `pydantic_ai.models.function.FunctionModel` and `Agent.run`.
- openai-agents: a `Model` subclass returning canned `ModelResponse`s, tracing disabled,
  `Runner.run`.
- langgraph: `create_react_agent` with a fake chat model (`bind_tools` returns itself; it
  answers from the conversation's length, so one compiled graph serves every run).
- langchain: `langchain.agents.create_agent` (langchain >= 1.0) with the same fake chat model.

Every peer's tool counts its calls: a measurement whose runs did not make exactly N tool calls
each stops the benchmark. RunLens's workspaces go to tmpfs (/dev/shm, or `$BENCH_DIR`).

A step is one model call (N tool calls + the final answer = N + 1 steps); the figure is a
run's wall time over its steps, runs one after another in one event loop. Beside it, the
median gap between two model calls inside a run, where a run's fixed costs (start, end,
records) drop out, and the late gap: the median of the ten gaps before the last one, where
the history is longest. The late gap at 100 calls over the late gap at 10 shows whether a
step gets dearer as the conversation grows.

With `--concurrent C`, C runs at once whose model waits `--latency` before every answer: their
wall time over the ideal (the waits alone), the process's CPU meanwhile, and the time over
the ideal split in three from the times of the answers: until the last run's first answer
(starting), to the last run's last answer (stepping), and to the last run's end (ending).

Every framework runs in a worker process of its own, started once and kept for all rounds:
RunLens under this interpreter (its `src` on PYTHONPATH, or installed), the peers under
`--peers-python` (a venv holding benchmarks/requirements-peers.txt). So RunLens's dependencies
(scikit-learn, SQLAlchemy, dbos, ...) never enter the peers' venv nor the peers' into
RunLens's, each process imports only its own framework (no framework pays for another's
import-time hooks), and the same worker serves old and new RunLens trees (benchmarks/
baseline.py runs it with another PYTHONPATH). Workers time the runs themselves: process
start and imports are not counted. A framework that is not installed prints "not installed".

Rounds are interleaved: in each round every framework measures each size once (the order
rotates), so load on the shared machine hits all of them alike; the ratio of each peer to
RunLens is taken within a round and its median printed. Each worker makes one untimed run
of a size before its first measurement of it. The "Goals" rows at the end (the store's cost
per step, the lead over the fastest peer, the late gap's growth) are what benchmarks/goals.py
gathers. This prints measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextvars
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

DEFAULT_PEERS_PYTHON = "/work/peers-venv/bin/python"
RUNLENS = ("runlens", "runlens-sqlite")
PEERS = ("pydantic-ai", "openai-agents", "langgraph", "langchain")
TEXT = "x" * 40

#: One run of a framework: (tool calls, timestamps list to append model-call times to).
RunOnce = Callable[[int, list[float]], Awaitable[None]]


class Latency:
    """How long every fake model waits before it answers (0 for the per-step figures; the
    concurrent measurement sets it, like a provider's 50 ms)."""

    seconds = 0.0

    @classmethod
    async def wait(cls) -> None:
        if cls.seconds:
            await asyncio.sleep(cls.seconds)


def _gap_us(stamps: list[float]) -> float:
    """Median time between two consecutive model calls of a run, in µs."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(stamps)]
    return statistics.median(gaps) * 1e6 if gaps else 0.0


def _late_gap_us(stamps: list[float]) -> float:
    """Median of the ten gaps between model calls before the last one, in µs: the step's cost
    where the history is longest (the last gap, before the final answer, is left out)."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(stamps)]
    late = gaps[-11:-1] or gaps
    return statistics.median(late) * 1e6 if late else 0.0


# --- RunLens -------------------------------------------------------------------------------


def _runlens(store_url: str | None) -> tuple[RunOnce, Callable[[], None], str]:
    """A RunLens run (no store when `store_url` is None), a clean-up, and the version.

    Written against the public API both of the current tree and of 9f49e1d (the commit before
    the run store): the plugin names its input as `input=TableInput(...)` now and as
    `input_tool=` then.
    """
    import dataclasses
    from importlib.metadata import version

    from runlens.contracts import ArtifactContract, JsonRules
    from runlens.models.messages import ModelResponse, ToolCall
    from runlens.plugins import PlanStep, Plugin, SuccessCriterion
    from runlens.runtime.loop import LoopLimits
    from runlens.runtime.run import RunSettings, run_plugin
    from runlens.testing import FunctionModel
    from runlens.tools.base import Tool

    output = "artifacts/out.json"

    def note(context: Any, text: str) -> dict[str, Any]:
        return {"noted": len(text)}

    tool = Tool(
        "note",
        "Take a note.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        note,
    )
    names = {field.name for field in dataclasses.fields(Plugin)}
    if "input" in names:
        from runlens.inputs import TableInput

        source: dict[str, Any] = {
            "input": TableInput(tool_name="read_rows", id_column="id", text_column="text")
        }
    else:
        source = {"input_tool": "note"}
    plugin = Plugin(
        name="bench",
        description="benchmark",
        skill="Benchmark.",
        prompt_fragments=(),
        contracts=(
            ArtifactContract(name=output, label="Out", schema=JsonRules(required_fields=("done",))),
        ),
        plan=(
            PlanStep(
                "work", "Work", (SuccessCriterion("artifact_validated", output),), tools=("note",)
            ),
        ),
        tools=lambda context: (tool,),
        **source,
    )
    root = Path(tempfile.mkdtemp(prefix="bench_peers_", dir=_tmp_dir()))
    (root / "input.txt").write_text("input", encoding="utf-8")
    store: Any = None
    if store_url is not None:
        from runlens.store.db import open_store
        from runlens.store.engine import store_url as resolve
        from runlens.store.write_first import open_write_first

        url = resolve(store_url if store_url != "sqlite" else None, home=root)
        # Made first, then opened as `runlens run` opens a store at its head.
        open_store(url).close()
        store = open_write_first(url)

    @atexit.register
    def remove_root() -> None:
        """The worker's folder (workspaces, the SQLite store) goes when the worker ends."""
        if store is not None:
            store.close()
        shutil.rmtree(root, ignore_errors=True)

    def model(calls: int, stamps: list[float]) -> Any:
        turns = iter(range(calls + 1))

        async def respond(messages: Any, tools: Any) -> ModelResponse:
            await Latency.wait()
            stamps.append(time.perf_counter())
            done = next(turns)
            if done < calls - 1:
                return ModelResponse(tool_calls=(ToolCall(f"c{done}", "note", {"text": TEXT}),))
            if done == calls - 1:
                content = '{"done": true}'
                arguments = {"path": output, "content": content}
                return ModelResponse(tool_calls=(ToolCall(f"c{done}", "write_file", arguments),))
            return ModelResponse(content="done")

        return FunctionModel(respond)

    async def run_once(calls: int, stamps: list[float]) -> None:
        run_id = f"run_bench_{uuid.uuid4().hex[:12]}"
        workspace = root / run_id
        settings = RunSettings(
            limits=LoopLimits(max_turns=calls + 5, max_tool_calls=calls + 5),
            validator_plugins=False,
        )
        mirror = None
        if store is not None:
            from runlens.store.mirror import StoreMirror

            mirror = StoreMirror(store, run_id, workspace, on_cancel=lambda reason: None).start()
        result = await run_plugin(
            plugin,
            root / "input.txt",
            model(calls, stamps),
            workspace=workspace,
            settings=settings,
            subscribers=[mirror] if mirror is not None else [],
            run_id=run_id,
        )
        if mirror is not None:
            if Latency.seconds:
                # Runs at once: a run's end waits for its store write off the loop the runs
                # share, as each run of a worker does on its own thread (`runlens run` calls
                # it after its loop has ended).
                await asyncio.to_thread(mirror.finish)
            else:
                mirror.finish()
        if result.status.value != "completed":
            raise RuntimeError(f"runlens run ended {result.status.value}: {result.error_message}")

    def clean_up() -> None:
        """Workspaces go after each measurement (outside the timed region); the store stays."""
        for child in root.iterdir():
            if child.is_dir() and child.name.startswith("run_bench_"):
                shutil.rmtree(child)

    return run_once, clean_up, version("runlens")


def _tmp_dir() -> str | None:
    """Workspaces on tmpfs when there is one: the figures are the runtime's, not the disk's."""
    return os.environ.get("BENCH_DIR") or ("/dev/shm" if Path("/dev/shm").is_dir() else None)


# --- the peers -----------------------------------------------------------------------------


class _Counter:
    """Counts the tool's calls: every framework must make exactly N of them per run."""

    calls = 0

    @classmethod
    def note(cls, text: str) -> dict[str, int]:
        """Take a note."""
        cls.calls += 1
        return {"noted": len(text)}


def _pydantic_ai() -> tuple[RunOnce, Callable[[], None], str]:
    from importlib.metadata import version

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    agent: Agent[None, str] = Agent(instructions="Benchmark.")

    @agent.tool_plain
    def note(text: str) -> dict[str, int]:
        """Take a note."""
        return _Counter.note(text)

    async def run_once(calls: int, stamps: list[float]) -> None:
        turns = iter(range(calls + 1))

        async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            await Latency.wait()
            stamps.append(time.perf_counter())
            done = next(turns)
            if done < calls:
                return ModelResponse(
                    parts=[ToolCallPart("note", {"text": TEXT}, tool_call_id=f"c{done}")]
                )
            return ModelResponse(parts=[TextPart("done")])

        limits = UsageLimits(request_limit=calls + 5)
        result = await agent.run("Work.", model=FunctionModel(respond), usage_limits=limits)
        assert result.output == "done", result.output

    return run_once, lambda: None, version("pydantic-ai-slim")


def _openai_agents() -> tuple[RunOnce, Callable[[], None], str]:
    from importlib.metadata import version

    from agents import (
        Agent,
        Model,
        ModelResponse,
        Runner,
        Usage,
        function_tool,
        set_tracing_disabled,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    @function_tool
    def note(text: str) -> dict[str, int]:
        """Take a note."""
        return _Counter.note(text)

    class CannedModel(Model):
        """Answers from a script: N tool calls, then the final text."""

        def __init__(self, calls: int, stamps: list[float]) -> None:
            self.turns = iter(range(calls + 1))
            self.calls = calls
            self.stamps = stamps

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            await Latency.wait()
            self.stamps.append(time.perf_counter())
            done = next(self.turns)
            if done < self.calls:
                item: Any = ResponseFunctionToolCall(
                    arguments=json.dumps({"text": TEXT}),
                    call_id=f"c{done}",
                    name="note",
                    type="function_call",
                    id=f"fc{done}",
                )
            else:
                item = ResponseOutputMessage(
                    id="m",
                    content=[ResponseOutputText(annotations=[], text="done", type="output_text")],
                    role="assistant",
                    status="completed",
                    type="message",
                )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    async def run_once(calls: int, stamps: list[float]) -> None:
        agent = Agent(
            name="bench",
            instructions="Benchmark.",
            tools=[note],
            model=CannedModel(calls, stamps),
        )
        result = await Runner.run(agent, "Work.", max_turns=calls + 5)
        assert result.final_output == "done", result.final_output

    return run_once, lambda: None, version("openai-agents")


#: The list the shared fake chat model appends a run's answer times to (`_graph_runner`).
_ANSWERS: contextvars.ContextVar[list[float]] = contextvars.ContextVar("answers")


def _fake_chat_model() -> Any:
    """A langchain chat model answering from the conversation's length: after k tool results
    it asks for tool call k (stateless, so one compiled graph serves every run)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class FakeToolModel(BaseChatModel):
        calls: int = 10

        @property
        def _llm_type(self) -> str:
            return "fake-tool-model"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> ChatResult:
            _ANSWERS.get().append(time.perf_counter())
            system = 1 if messages and messages[0].type == "system" else 0
            done = (len(messages) - 1 - system) // 2  # [system?, human, (ai, tool) * done]
            if done < self.calls:
                call = {"name": "note", "args": {"text": TEXT}, "id": f"c{done}"}
                message = AIMessage(content="", tool_calls=[call])
            else:
                message = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=message)])

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            return self._reply(messages)

        async def _agenerate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            await Latency.wait()
            return self._reply(messages)

    return FakeToolModel()


def _langchain_tool() -> Any:
    from langchain_core.tools import tool

    @tool
    def note(text: str) -> dict[str, int]:
        """Take a note."""
        return _Counter.note(text)

    return note


def _graph_runner(graph: Any, model: Any, package: str) -> tuple[RunOnce, Callable[[], None], str]:
    from importlib.metadata import version

    async def run_once(calls: int, stamps: list[float]) -> None:
        # The model is shared by every run: each run's answers go to its own list through
        # the run's context (runs at once are tasks of their own, each with a copy).
        model.calls = calls
        _ANSWERS.set(stamps)
        state = await graph.ainvoke(
            {"messages": [("user", "Work.")]}, {"recursion_limit": 2 * calls + 10}
        )
        assert state["messages"][-1].content == "done", state["messages"][-1]

    return run_once, lambda: None, version(package)


def _langgraph() -> tuple[RunOnce, Callable[[], None], str]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of langchain's
        from langgraph.prebuilt import create_react_agent

        model = _fake_chat_model()
        graph = create_react_agent(model, [_langchain_tool()])
    return _graph_runner(graph, model, "langgraph")


def _langchain() -> tuple[RunOnce, Callable[[], None], str]:
    from langchain.agents import create_agent

    model = _fake_chat_model()
    graph = create_agent(model, [_langchain_tool()], system_prompt="Benchmark.")
    return _graph_runner(graph, model, "langchain")


def _setup(name: str) -> tuple[RunOnce, Callable[[], None], str]:
    if name == "runlens":
        return _runlens(None)
    if name == "runlens-sqlite":
        return _runlens("sqlite")
    if name == "runlens-postgresql":
        return _runlens(os.environ["BENCH_DATABASE_URL"])
    return {
        "pydantic-ai": _pydantic_ai,
        "openai-agents": _openai_agents,
        "langgraph": _langgraph,
        "langchain": _langchain,
    }[name]()


# --- the worker ----------------------------------------------------------------------------


def worker(name: str) -> None:
    """Serve measurements on stdin/stdout, one JSON line each way.

    First line out: {"version": ...} or {"missing": reason}. Then for each request
    {"calls": N, "runs": R}: R runs one after another in one event loop, timed together,
    answered with µs per step and the gaps between model calls; for each request
    {"calls": N, "concurrent": C, "latency": L}: C runs at once whose model waits L seconds
    per call, answered with their wall time.
    """
    try:
        run_once, clean_up, version = _setup(name)
    except ImportError as error:
        print(json.dumps({"missing": str(error)}), flush=True)
        return
    print(json.dumps({"version": version}), flush=True)
    warmed: set[int] = set()
    for line in sys.stdin:
        request = json.loads(line)
        if "concurrent" in request:
            print(json.dumps(_concurrent(name, run_once, request)), flush=True)
            clean_up()
            continue
        calls, runs = int(request["calls"]), int(request["runs"])

        async def batch(calls: int = calls, runs: int = runs) -> tuple[float, list[float]]:
            if calls not in warmed:
                await run_once(calls, [])
                warmed.add(calls)
            gaps: list[float] = []
            late_gaps: list[float] = []
            _Counter.calls = 0
            started = time.perf_counter()
            for _ in range(runs):
                stamps: list[float] = []
                await run_once(calls, stamps)
                gaps.append(_gap_us(stamps))
                late_gaps.append(_late_gap_us(stamps))
            wall = time.perf_counter() - started
            if not name.startswith("runlens") and _Counter.calls != calls * runs:
                raise RuntimeError(f"{name}: {_Counter.calls} tool calls, not {calls * runs}")
            return wall, gaps, late_gaps

        wall, gaps, late_gaps = asyncio.run(batch())
        clean_up()
        answer = {
            "us_per_step": wall / (runs * (calls + 1)) * 1e6,
            "gap_us": statistics.median(gaps),
            "late_gap_us": statistics.median(late_gaps),
        }
        print(json.dumps(answer), flush=True)


def _concurrent(name: str, run_once: RunOnce, request: dict[str, Any]) -> dict[str, float]:
    """`concurrent` runs of `calls` tool calls at once, the model waiting `latency` per call."""
    calls, count = int(request["calls"]), int(request["concurrent"])
    Latency.seconds = float(request["latency"])

    async def together() -> dict[str, float]:
        _Counter.calls = 0
        stamps: list[list[float]] = [[] for _ in range(count)]
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(run_once(calls, run) for run in stamps))
        ended = time.perf_counter()
        wall, cpu = ended - started, time.process_time() - cpu
        if not name.startswith("runlens") and _Counter.calls != calls * count:
            raise RuntimeError(f"{name}: {_Counter.calls} tool calls, not {calls * count}")
        return {"wall_s": wall, "cpu_s": cpu, **_excess(stamps, started, ended, calls)}

    try:
        figure = asyncio.run(together())
    finally:
        Latency.seconds = 0.0
    # The process's CPU (every thread) while the runs lasted: with it near the wall time, the
    # runs wait on the CPU, not on each other.
    return {**figure, "ideal_s": (calls + 1) * float(request["latency"])}


def _excess(
    stamps: list[list[float]], started: float, ended: float, calls: int
) -> dict[str, float]:
    """Where the runs at once spent their time beyond the model's waits, from the times of
    their model answers: `start_s`, until the last run had its first answer (less one wait);
    `steps_s`, from there to the last run's last answer (less the `calls` waits between);
    `end_s`, from the last answer to the last run's end. Their sum is the wall time over the
    ideal; the part that grows shows what the runs queue behind (starting, stepping, ending)."""
    wait = Latency.seconds
    first = max(run[0] for run in stamps if run)
    last = max(run[-1] for run in stamps if run)
    return {
        "start_s": first - started - wait,
        "steps_s": last - first - calls * wait,
        "end_s": ended - last,
    }


# --- the driver ----------------------------------------------------------------------------


class Worker:
    """A framework's worker process, kept for every round. `framework` is what it runs
    (`--worker`); `label` names it in the tables (baseline.py runs one framework per tree)."""

    def __init__(self, label: str, framework: str, python: str, env: dict[str, str]) -> None:
        self.label = label
        self.process = subprocess.Popen(
            [python, str(Path(__file__).resolve()), "--worker", framework],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        hello = self._read()
        self.version: str | None = hello.get("version")
        self.missing: str | None = hello.get("missing")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            return {"missing": f"worker exited ({self.process.wait()})"}
        answer: dict[str, Any] = json.loads(line)
        return answer

    def measure(self, calls: int, runs: int) -> dict[str, float]:
        return self.ask({"calls": calls, "runs": runs})

    def ask(self, request: dict[str, Any]) -> dict[str, float]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self._read()
        if "missing" in answer:
            raise RuntimeError(f"{self.label}: {answer['missing']}")
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def start_worker(label: str, framework: str, python: str, env: dict[str, str]) -> Worker | None:
    """A started worker, or None (said on stdout) when its framework is not installed."""
    if not Path(python).exists():
        print(f"  {label:<24} not installed ({python} does not exist)")
        return None
    started = Worker(label, framework, python, env)
    if started.missing:
        print(f"  {label:<24} not installed ({started.missing})")
        started.close()
        return None
    print(f"  {label:<24} {started.version}")
    return started


def runs_for(calls: int, steps: int) -> int:
    """Runs per measurement: about `steps` model calls, at least 2 runs."""
    return max(2, steps // (calls + 1))


Figures = dict[tuple[str, int], list[dict[str, float]]]


def interleaved(workers: dict[str, Worker], sizes: list[int], steps: int, rounds: int) -> Figures:
    """Every worker measures every size once per round, in an order that rotates."""
    names = list(workers)
    figures: Figures = {}
    for number in range(rounds):
        order = names[number % len(names) :] + names[: number % len(names)]
        for calls in sizes:
            for name in order:
                figure = workers[name].measure(calls, runs_for(calls, steps))
                figures.setdefault((name, calls), []).append(figure)
        print(f"  round {number + 1}/{rounds} done", file=sys.stderr, flush=True)
    return figures


def concurrent_rounds(
    workers: dict[str, Worker], count: int, calls: int, latency: float, rounds: int
) -> dict[str, list[dict[str, float]]]:
    """Every worker runs `count` runs at once, once per round, in an order that rotates."""
    names = list(workers)
    figures: dict[str, list[dict[str, float]]] = {}
    request = {"calls": calls, "concurrent": count, "latency": latency}
    for number in range(rounds):
        for name in names[number % len(names) :] + names[: number % len(names)]:
            figures.setdefault(name, []).append(workers[name].ask(request))
        print(f"  concurrent round {number + 1}/{rounds} done", file=sys.stderr, flush=True)
    return figures


def print_concurrent(
    figures: dict[str, list[dict[str, float]]], count: int, calls: int, latency: float
) -> None:
    """Wall time of the runs at once, over the ideal, the process's CPU meanwhile (all its
    threads) and over RunLens's (SQLite store) within a round, and the goal rows: ≤ 1.3× the
    ideal with the SQLite store, ≤ 1.6× with PostgreSQL."""
    ideal = (calls + 1) * latency
    reference = "runlens-sqlite"
    print(
        f"\n{count} runs at once, {calls} tool calls each, the model waiting "
        f"{latency * 1000:.0f} ms per call (ideal {ideal * 1000:.0f} ms)"
    )
    print(
        f"  {'':<24} {'wall ms':>9} {'range':>13} {'x ideal':>8} {'CPU ms':>8} "
        f"{'x ' + reference:>20}   {'over ideal, ms: start':>21} {'steps':>6} {'end':>6}"
    )
    over: dict[str, float] = {}
    for name, rounds in figures.items():
        walls = [figure["wall_s"] for figure in rounds]
        over[name] = statistics.median(wall / ideal for wall in walls)
        ratio = ""
        if reference in figures:
            pairs = zip(walls, figures[reference], strict=True)
            ratio = f"{statistics.median(wall / theirs['wall_s'] for wall, theirs in pairs):.2f}"
        spread = f"{min(walls) * 1000:.0f}-{max(walls) * 1000:.0f}"
        cpu = statistics.median(figure["cpu_s"] for figure in rounds)
        parts = " ".join(
            f"{statistics.median(figure[part] for figure in rounds) * 1000:>{width}.0f}"
            for part, width in (("start_s", 21), ("steps_s", 6), ("end_s", 6))
        )
        print(
            f"  {name:<24} {statistics.median(walls) * 1000:>9.0f} {spread:>13} "
            f"{over[name]:>8.2f} {cpu * 1000:>8.0f} {ratio:>20}   {parts}"
        )
    print("\nGoals\n| goal | figure | comparison | met? |\n| --- | --- | --- | --- |")
    for name, label, limit in (
        ("runlens-sqlite", "SQLite", 1.3),
        ("runlens-postgresql", "PostgreSQL", 1.6),
    ):
        if name in over:
            peers = {peer: over[peer] for peer in PEERS if peer in over}
            best = min(peers, key=peers.__getitem__) if peers else None
            beside = f"; fastest peer {best} ×{peers[best]:.2f}" if best else ""
            goal_row(
                f"{count} concurrent runs, {label} store (≤ {limit}× ideal)",
                f"×{over[name]:.2f} ideal",
                f"ideal {ideal * 1000:.0f} ms; no store ×{over.get('runlens', 0):.2f}{beside}",
                over[name] <= limit,
            )


def print_table(figures: Figures, names: list[str], sizes: list[int], reference: str) -> None:
    """µs per step (median, range), the gap between model calls, and x `reference` (median of
    the ratios taken within each round)."""
    for calls in sizes:
        print(f"\n{calls} tool calls per run ({calls + 1} steps)")
        print(
            f"  {'':<24} {'µs/step':>9} {'range':>15} {'gap µs':>8} {'late gap':>9} "
            f"{'x ' + reference:>20}"
        )
        base = figures.get((reference, calls))
        for name in names:
            rounds = figures.get((name, calls))
            if not rounds:
                continue
            steps = [figure["us_per_step"] for figure in rounds]
            gap = statistics.median(figure["gap_us"] for figure in rounds)
            late = statistics.median(figure["late_gap_us"] for figure in rounds)
            ratio = ""
            if base:
                ratios = [
                    mine["us_per_step"] / theirs["us_per_step"]
                    for mine, theirs in zip(rounds, base, strict=True)
                ]
                ratio = f"{statistics.median(ratios):.2f}"
            spread = f"{min(steps):.0f}-{max(steps):.0f}"
            print(
                f"  {name:<24} {statistics.median(steps):>9.1f} "
                f"{spread:>15} {gap:>8.1f} {late:>9.1f} {ratio:>20}"
            )


def gap_growth(figures: Figures, name: str, sizes: list[int]) -> float | None:
    """Median over rounds of (late gap between model calls at the largest size) / (at the
    smallest): what a step costs where the history is longest."""
    small, large = min(sizes), max(sizes)
    if small == large or (name, small) not in figures or (name, large) not in figures:
        return None
    pairs = zip(figures[(name, small)], figures[(name, large)], strict=True)
    return statistics.median(big["late_gap_us"] / few["late_gap_us"] for few, big in pairs)


def goal_row(goal: str, figure: str, comparison: str, met: bool | None) -> None:
    """One row of the goal table (benchmarks/goals.py gathers these rows from every benchmark):
    `| goal | figure | comparison | met? |`."""
    verdict = "–" if met is None else ("yes" if met else "no")
    print(f"| {goal} | {figure} | {comparison} | {verdict} |")


def print_goals(figures: Figures, peers: list[str], sizes: list[int]) -> None:
    """The goal rows: the store's cost per step, RunLens (SQLite store, the default) against
    the fastest peer, and the gap between model calls at the largest size against the
    smallest."""
    print("\nGoals\n| goal | figure | comparison | met? |\n| --- | --- | --- | --- |")
    for calls in sizes:
        plain = figures.get(("runlens", calls))
        for store, label in (("runlens-sqlite", "SQLite"), ("runlens-postgresql", "PostgreSQL")):
            stored = figures.get((store, calls))
            if plain and stored:
                cost = statistics.median(
                    mine["us_per_step"] / theirs["us_per_step"]
                    for mine, theirs in zip(stored, plain, strict=True)
                )
                goal_row(
                    f"per step with the {label} store, {calls} tool calls"
                    + (" (≤ 1.2× no store)" if label == "SQLite" else ""),
                    f"×{cost:.2f}",
                    "no store, same round",
                    cost <= 1.2 if label == "SQLite" else None,
                )
    for calls in sizes:
        ours = figures.get(("runlens-sqlite", calls))
        theirs = {peer: figures[(peer, calls)] for peer in peers if (peer, calls) in figures}
        if not ours or not theirs:
            continue
        # Within each round: the fastest peer of that round over RunLens.
        leads = [
            min(rounds[index]["us_per_step"] for rounds in theirs.values()) / mine["us_per_step"]
            for index, mine in enumerate(ours)
        ]
        fastest = min(
            theirs,
            key=lambda peer: statistics.median(figure["us_per_step"] for figure in theirs[peer]),
        )
        lead = statistics.median(leads)
        goal_row(
            f"RunLens (SQLite store) faster per step than the fastest peer, {calls} tool calls "
            "(≥ 5×)",
            f"×{lead:.2f} (fastest: {fastest})",
            ", ".join(theirs) + ", same round",
            lead >= 5,
        )
    for name in RUNLENS:
        growth = gap_growth(figures, name, sizes)
        if growth is not None:
            goal_row(
                f"gap between two model calls late in a run of {max(sizes)} tool calls, {name} "
                f"(≤ 1.1× at {min(sizes)})",
                f"×{growth:.2f}",
                f"{min(sizes)} tool calls, same round",
                growth <= 1.1,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", default="10,100", help="tool calls per run, comma-separated")
    parser.add_argument("--steps", type=int, default=400, help="model calls per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers-python", default=DEFAULT_PEERS_PYTHON)
    parser.add_argument("--database-url", help="also measure RunLens with this store (PostgreSQL)")
    parser.add_argument("--only", help="comma-separated frameworks (default: all)")
    parser.add_argument(
        "--concurrent",
        type=int,
        default=100,
        help="runs at once after the per-step rounds (0: none)",
    )
    parser.add_argument("--latency", type=float, default=0.05, help="model wait, concurrent runs")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    names = [*RUNLENS, *PEERS]
    if args.database_url:
        os.environ["BENCH_DATABASE_URL"] = args.database_url
        names.insert(2, "runlens-postgresql")
    if args.only:
        names = [name for name in names if name in args.only.split(",")]
    sizes = [int(size) for size in args.calls.split(",")]
    print(f"python {sys.version.split()[0]}; peers from {args.peers_python}")
    workers: dict[str, Worker] = {}
    for name in names:
        python, env = sys.executable, dict(os.environ)
        if name in PEERS:  # the peers' venv, without RunLens's tree on its path
            python = args.peers_python
            env.pop("PYTHONPATH", None)
        started = start_worker(name, name, python, env)
        if started is not None:
            workers[name] = started
    concurrent: dict[str, list[dict[str, float]]] = {}
    try:
        figures = interleaved(workers, sizes, args.steps, args.rounds)
        if args.concurrent:
            concurrent = concurrent_rounds(
                workers, args.concurrent, min(sizes), args.latency, args.rounds
            )
    finally:
        for started in workers.values():
            started.close()
    print(
        f"\nµs per step: median of {args.rounds} interleaved rounds, each about {args.steps} "
        "steps; gap: median time between two model calls inside a run; late gap: the median "
        "of the ten gaps before the last"
    )
    reference = "runlens-sqlite" if "runlens-sqlite" in workers else next(iter(workers), "")
    print_table(figures, list(workers), sizes, reference)
    print_goals(figures, [name for name in PEERS if name in workers], sizes)
    if concurrent:
        print_concurrent(concurrent, args.concurrent, min(sizes), args.latency)


if __name__ == "__main__":
    main()
