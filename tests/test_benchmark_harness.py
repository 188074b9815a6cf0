"""The harness the speed goals are measured with (benchmarks/bench_peers.py, goals.py) runs
against the current tree: a RunLens run completes, with and without the run store, and the
goal rows a benchmark prints are gathered. Timings themselves are printed by the benchmarks,
never asserted."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from runlens.store.db import open_store
from runlens.store.engine import store_url

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bench_peers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.setenv("BENCH_DIR", str(tmp_path))
    return _load("bench_peers")


def test_runlens_worker_runs_the_requested_tool_calls_without_a_store(
    bench_peers: ModuleType, tmp_path: Path
) -> None:
    run_once, clean_up, _version = bench_peers._setup("runlens")
    stamps: list[float] = []
    asyncio.run(run_once(3, stamps))
    assert len(stamps) == 4  # three tool calls, then the final answer
    (root,) = tmp_path.iterdir()
    assert [child.name for child in root.iterdir() if child.name.startswith("run_")] != []
    assert not (root / "runlens.db").exists()
    clean_up()
    assert [child.name for child in root.iterdir() if child.name.startswith("run_")] == []


def test_runlens_worker_mirrors_each_run_into_the_sqlite_store(
    bench_peers: ModuleType, tmp_path: Path
) -> None:
    run_once, _clean_up, _version = bench_peers._setup("runlens-sqlite")
    asyncio.run(run_once(2, []))
    asyncio.run(run_once(2, []))
    (root,) = tmp_path.iterdir()
    store = open_store(store_url(None, home=root))
    try:
        runs, total = store.list_runs()
    finally:
        store.close()
    assert total == 2
    assert {summary.status for summary in runs} == {"completed"}


def test_concurrent_runs_are_timed_with_the_cpu_the_process_spent(
    bench_peers: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs at once report their wall time, the ideal and the process's CPU meanwhile; the
    table prints that CPU beside the wall time."""
    run_once, _clean_up, _version = bench_peers._setup("runlens")
    request = {"calls": 2, "concurrent": 3, "latency": 0.01}
    figure = bench_peers._concurrent("runlens", run_once, request)
    assert figure["ideal_s"] == pytest.approx(0.03)
    assert figure["wall_s"] >= figure["ideal_s"]
    assert 0 < figure["cpu_s"] < 60
    bench_peers.print_concurrent({"runlens": [figure]}, 3, 2, 0.01)
    header, row = capsys.readouterr().out.splitlines()[2:4]
    assert "CPU ms" in header
    assert row.split()[0] == "runlens" and row.split()[4] == f"{figure['cpu_s'] * 1000:.0f}"
    # The time over the ideal, split into starting, stepping and ending, adds up.
    parts = figure["start_s"] + figure["steps_s"] + figure["end_s"]
    assert parts == pytest.approx(figure["wall_s"] - figure["ideal_s"])
    assert figure["end_s"] >= 0
    assert [float(cell) for cell in row.split()[-3:]] == [
        float(f"{figure[part] * 1000:.0f}") for part in ("start_s", "steps_s", "end_s")
    ]


def test_time_over_the_ideal_is_split_at_the_last_first_and_last_answers(
    bench_peers: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of two tool calls, the model waiting 10 ms: the later run answers first at
    14 ms (4 ms to start), last at 40 ms (6 ms of steps beyond the two waits), and the runs
    end at 43 ms (3 ms to end)."""
    monkeypatch.setattr(bench_peers.Latency, "seconds", 0.01)
    stamps = [[1.011, 1.022, 1.033], [1.014, 1.027, 1.040]]
    parts = bench_peers._excess(stamps, 1.0, 1.043, 2)
    assert parts == pytest.approx({"start_s": 0.004, "steps_s": 0.006, "end_s": 0.003})


def test_gap_is_the_median_time_between_model_calls(bench_peers: ModuleType) -> None:
    assert bench_peers._gap_us([0.0, 0.001, 0.003, 0.004]) == pytest.approx(1000.0)
    assert bench_peers._gap_us([0.0]) == 0.0


def test_late_gap_leaves_out_the_last_gap_and_the_early_ones(bench_peers: ModuleType) -> None:
    # Twelve gaps of 1 ms, then ten of 3 ms, then a last one of 50 ms (before the answer).
    stamps = [0.0]
    for gap in [0.001] * 12 + [0.003] * 10 + [0.05]:
        stamps.append(stamps[-1] + gap)
    assert bench_peers._late_gap_us(stamps) == pytest.approx(3000.0)
    assert bench_peers._late_gap_us([0.0, 0.002]) == pytest.approx(2000.0)


def test_goal_rows_are_gathered_after_the_goals_line() -> None:
    goals = _load("goals")
    output = "\n".join(
        [
            "| a table row before the goals | x | y | – |",
            "Goals",
            "| goal | figure | comparison | met? |",
            "| --- | --- | --- | --- |",
            "| per step with the SQLite store | ×1.10 | no store, same round | yes |",
            "a closing remark",
        ]
    )
    assert goals.goal_rows(output) == [
        "| per step with the SQLite store | ×1.10 | no store, same round | yes |"
    ]
    assert goals.goal_rows("no goals here\n| a | b | c | d |") == []


def test_import_families_add_up_each_modules_own_time() -> None:
    bench_imports = _load("bench_imports")
    trace = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 |       sqlalchemy.sql",
            "import time:        50 |        150 |     sqlalchemy",
            "import time:        20 |        170 |   runlens.store.engine",
            "import time:        30 |         30 |   pydantic",
            "import time:         5 |        205 | runlens.store.db",
            "import time:         7 |          7 | json",
        ]
    )
    needing = {"sqlalchemy", "sqlalchemy.sql", "runlens.store.engine", "runlens.store.db"}
    spent = bench_imports.importtime_by_family(trace, needing)
    assert spent[bench_imports.SQLALCHEMY] == pytest.approx(175e-6)
    assert spent["pydantic"] == pytest.approx(30e-6)
    assert spent["the standard library and the rest"] == pytest.approx(7e-6)
    assert spent["RunLens and its plugin (own modules)"] == 0
