"""SIGTERM and Ctrl-C stop a run promptly in every phase, and the run ends `cancelled`.

The offline analyst never waits on the network, so before cancellation points existed a
SIGTERM went unnoticed until every batch was analysed. The time limit here is generous (a
loaded CI machine); `benchmarks/bench_cancel.py` measures the actual latency per phase.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import start_run, wait_for_event, write_feedback_csv

LIMIT_SECONDS = 5.0


def _stop(process: subprocess.Popen[str], signum: int) -> float:
    sent = time.monotonic()
    process.send_signal(signum)
    process.wait(timeout=60)
    return time.monotonic() - sent


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_the_batch_phase_cancels_within_seconds(
    tmp_path: Path, large_csv: Path, signum: int
) -> None:
    workspace = tmp_path / "ws"
    process = start_run(workspace, large_csv, "--json")
    wait_for_event(workspace, lambda e: e["type"] == "batch.completed", process)
    elapsed = _stop(process, signum)
    assert process.returncode == 1
    assert elapsed < LIMIT_SECONDS, f"took {elapsed:.1f}s to stop"
    assert process.stdout is not None
    stdout = process.stdout.read()
    assert json.loads(stdout)["status"] == "cancelled"  # --json still prints one object
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "cancelled"
    name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    assert name in record["error_message"]
    plan = {step["id"]: step for step in record["plan"]}
    assert plan["load_feedback"]["status"] == "completed"
    assert plan["analyze_feedback"]["status"] == "failed"
    for step in ("build_backlog", "write_report", "validate_deliverables"):
        assert plan[step]["status"] == "pending", "steps not started stay pending"
    assert not list((workspace / "artifacts").iterdir()), "nothing delivered after the signal"
    assert not (workspace / "runtime" / "lock.json").exists()
    events = [
        json.loads(line)
        for line in (workspace / "runtime" / "events.jsonl").read_bytes().splitlines()
    ]
    assert events[-1]["type"] == "run.cancelled"


def test_sigterm_while_the_input_is_read_cancels(tmp_path: Path) -> None:
    big = write_feedback_csv(tmp_path / "big.csv", 300_000)
    workspace = tmp_path / "ws"
    process = start_run(workspace, big, "--json")
    wait_for_event(workspace, lambda e: e["type"] == "tool.called", process)
    elapsed = _stop(process, signal.SIGTERM)
    assert elapsed < LIMIT_SECONDS, f"took {elapsed:.1f}s to stop"
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "cancelled"
    plan = {step["id"]: step["status"] for step in record["plan"]}
    assert plan["analyze_feedback"] == "pending"
    events = [json.loads(line) for line in (workspace / "runtime" / "events.jsonl").open("rb")]
    types = [event["type"] for event in events]
    assert "batch.completed" not in types
    assert types[-1] == "run.cancelled"
