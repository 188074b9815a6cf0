"""One run per workspace, and runs whose process died (`kill -9`) shown as `interrupted`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from runlens.errors import UserError
from runlens.runtime import lock as lock_module
from runlens.runtime.lock import LockHolder, WorkspaceLock, holder_is_alive, read_holder
from runlens.tools.workspace import Workspace

from .conftest import SAMPLE, runlens, runlens_command, start_run, wait_for_event


def _events(workspace: Path) -> list[dict[str, Any]]:
    path = workspace / "runtime" / "events.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.mark.parametrize("round_number", range(3))
def test_racing_runs_on_one_workspace_exactly_one_proceeds(
    tmp_path: Path, round_number: int
) -> None:
    workspace = tmp_path / "ws"
    processes = [start_run(workspace, SAMPLE, "--max-turns", "1", "--json") for _ in range(3)]
    outcomes = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in processes]  # type: ignore[union-attr]
    ran = [o for o in outcomes if o[0] != 2]
    refused = [o for o in outcomes if o[0] == 2]
    assert len(ran) == 1, outcomes
    assert len(refused) == 2
    for _, stdout, stderr in refused:
        assert "workspace already holds a run" in stderr
        assert "Traceback" not in stderr
        assert stdout == ""
    events = _events(workspace)
    assert {event["run_id"] for event in events} == {json.loads(ran[0][1])["run_id"]}
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["run_id"] == json.loads(ran[0][1])["run_id"]
    assert not (workspace / "runtime" / "lock.json").exists(), "the finished run released it"


def test_a_finished_workspace_is_refused_with_exit_code_2(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    first = runlens("run", "feedback-analysis", SAMPLE, "--workspace", workspace, "--json")
    assert first.returncode == 0, first.stderr
    second = runlens("run", "feedback-analysis", SAMPLE, "--workspace", workspace)
    assert second.returncode == 2
    assert "workspace already holds a run" in second.stderr
    assert "Traceback" not in second.stderr
    events = _events(workspace)
    assert len({event["run_id"] for event in events}) == 1


def test_the_lock_names_its_holder_and_claims_are_exclusive(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    held = WorkspaceLock.claim(workspace, "run_a")
    try:
        holder = read_holder(workspace.runtime / "lock.json")
        assert holder is not None
        assert (holder.run_id, holder.pid, holder.host) == (
            "run_a",
            os.getpid(),
            socket.gethostname(),
        )
        assert holder_is_alive(holder)
        with pytest.raises(UserError, match=r"run run_a, in progress, pid \d+"):
            WorkspaceLock.claim(workspace, "run_b")
    finally:
        held.release()
    assert not (workspace.runtime / "lock.json").exists()
    again = WorkspaceLock.claim(workspace, "run_c")  # released: claimable again (no run.json)
    again.release()


def test_the_heartbeat_keeps_the_lock_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lock_module, "HEARTBEAT_SECONDS", 0.05)
    workspace = Workspace(tmp_path / "ws")
    held = WorkspaceLock.claim(workspace, "run_a")
    try:
        path = workspace.runtime / "lock.json"
        os.utime(path, (1_000_000, 1_000_000))
        deadline = time.monotonic() + 5
        while path.stat().st_mtime == 1_000_000 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert path.stat().st_mtime > time.time() - 5
    finally:
        held.release()


def test_liveness_by_pid_on_this_host_and_by_heartbeat_elsewhere() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    here = socket.gethostname()
    now = time.time()
    assert holder_is_alive(LockHolder("r", os.getpid(), here, None, None, 0.0))
    assert not holder_is_alive(LockHolder("r", dead.pid, here, None, None, now))
    # The pid exists but started at another time: reused by an unrelated process.
    mine = lock_module.process_start_time(os.getpid())
    if mine is not None:
        assert not holder_is_alive(LockHolder("r", os.getpid(), here, mine + 1, None, now))
    elsewhere = "another-host.invalid"
    assert holder_is_alive(LockHolder("r", 1, elsewhere, None, None, now - 5))
    stale = now - lock_module.STALE_SECONDS - 1
    assert not holder_is_alive(LockHolder("r", 1, elsewhere, None, None, stale))


def _kill_mid_analysis(tmp_path: Path, large_csv: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    workspace = home / "run_killed"
    process = start_run(workspace, large_csv)
    wait_for_event(workspace, lambda e: e["type"] == "batch.completed", process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return home, workspace


def test_kill_9_leaves_a_run_that_is_shown_and_recorded_as_interrupted(
    tmp_path: Path, large_csv: Path
) -> None:
    home, workspace = _kill_mid_analysis(tmp_path, large_csv)
    runtime = workspace / "runtime"
    assert (runtime / "lock.json").exists()
    before = json.loads((runtime / "run.json").read_text(encoding="utf-8"))
    assert before["status"] == "running" and before["finished_at"] is None
    # What an atomic write cut short by the kill leaves behind.
    (workspace / "artifacts" / ".feedback_analysis.json.0123456789ab.tmp").write_text("{")
    (runtime / ".run.json.ba9876543210.tmp").write_text("{")

    listed = runlens("runs", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    (summary,) = json.loads(listed.stdout)
    assert summary["status"] == "interrupted"
    assert summary["finished_at"]
    assert "interrupted" in summary["error_message"] and "pid" in summary["error_message"]

    record = json.loads((runtime / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "interrupted"
    assert record["finished_at"] == summary["finished_at"]
    plan = {step["id"]: step for step in record["plan"]}
    assert plan["load_feedback"]["status"] == "completed"
    assert plan["analyze_feedback"]["status"] == "failed"
    assert "interrupted" in plan["analyze_feedback"]["reason"]
    assert plan["write_report"]["status"] == "pending"
    assert record["metrics"]["model_calls"] >= 1
    manifest = json.loads((workspace / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "interrupted"
    assert {a["status"] for a in manifest["artifacts"]} <= {"missing", "not_validated"}
    assert manifest["input"]["source_hash"]
    assert not (runtime / "lock.json").exists()
    assert not list(workspace.rglob("*.tmp"))

    events = _events(workspace)  # every line parses
    assert events[-1]["type"] == "run.interrupted"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))

    # Settled once: a second look changes nothing.
    again = runlens("show", "run_killed", "--json", home=home)
    assert again.returncode == 0, again.stderr
    shown = json.loads(again.stdout)
    assert shown["run"]["finished_at"] == record["finished_at"]
    assert [e["type"] for e in shown["events"]].count("run.interrupted") == 1
    text = runlens("show", "run_killed", home=home)
    assert "interrupted" in text.stdout and "Traceback" not in text.stderr


def test_readers_racing_to_settle_a_dead_run_settle_it_once(
    tmp_path: Path, large_csv: Path
) -> None:
    home, workspace = _kill_mid_analysis(tmp_path, large_csv)
    readers = [
        subprocess.Popen(
            runlens_command("runs", "--json"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "RUNLENS_HOME": str(home)},
        )
        for _ in range(4)
    ]
    for reader in readers:
        stdout, stderr = reader.communicate(timeout=60)
        assert reader.returncode == 0, stderr
        assert json.loads(stdout)[0]["status"] == "interrupted"
    types = [event["type"] for event in _events(workspace)]
    assert types.count("run.interrupted") == 1


def test_a_live_run_is_not_taken_for_interrupted(tmp_path: Path, large_csv: Path) -> None:
    home = tmp_path / "home"
    workspace = home / "run_live"
    process = start_run(workspace, large_csv)
    try:
        wait_for_event(workspace, lambda e: e["type"] == "batch.completed", process)
        listed = runlens("runs", "--json", home=home)
        assert json.loads(listed.stdout)[0]["status"] == "running"
        shown = json.loads(runlens("show", "run_live", "--json", home=home).stdout)
        plan = {step["id"]: step["status"] for step in shown["run"]["plan"]}
        assert plan["analyze_feedback"] == "running"  # current, from the events
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "cancelled"
