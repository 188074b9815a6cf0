"""A live run in the store: events there while it runs, the final state equal to its
workspace, a cancel asked for in the store ending it `cancelled` within a second or two,
and a store that fails mid-run costing a warning, never the run."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from runlens.models.messages import Message, ToolSpec
from runlens.models.registry import ModelContext, resolve_model
from runlens.plugins import load_plugin
from runlens.records.events import Event, read_events
from runlens.runtime.run import Run, run_plugin
from runlens.store import RunStore, StoreMirror, open_store, refresh_live
from runlens.store.mirror import CANCEL_REASON
from runlens.testing import FunctionModel

from .helpers import child_env, runlens, runlens_command, turns, write_feedback_csv

Documents = tuple[dict[str, Any], dict[str, Any], str]


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows enough that the offline analysis takes a few seconds."""
    return write_feedback_csv(tmp_path_factory.mktemp("big") / "big.csv", 6_000)


def _wait(condition: Any, process: subprocess.Popen[str] | None = None, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the run ended first: {process.communicate()}")
        time.sleep(0.05)
    raise AssertionError("timed out")


def _start(home: Path, csv: Path, url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        runlens_command("run", "feedback-analysis", csv, "--database-url", url, "--json", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(home),
    )


def test_a_live_run_is_in_the_store_while_it_runs_and_equal_to_its_workspace_after(
    store: RunStore, store_url: str, tmp_path: Path, big_csv: Path
) -> None:
    process = _start(tmp_path / "home", big_csv, store_url)
    runs = _wait(lambda: store.list_runs()[0], process)
    run_id = runs[0].run_id
    # Batches land in the store while the run is still going.
    _wait(
        lambda: any(e["type"] == "batch.completed" for e in store.events(run_id)),
        process,
    )
    live = store.get_run(run_id)
    assert live is not None and live.status == "running" and process.poll() is None
    assert live.origin == "cli" and live.host == store.host
    plan = {step["id"]: step["status"] for step in live.plan}
    assert plan["load_feedback"] == "completed" and plan["analyze_feedback"] == "running"
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "Warning" not in stderr
    workspace = Path(json.loads(stdout)["workspace"])
    done = store.get_run(run_id)
    assert done is not None and done.status == "completed"
    assert store.events(run_id) == list(read_events(workspace / "runtime" / "events.jsonl"))
    manifest = json.loads((workspace / "manifest.json").read_text(encoding="utf-8"))
    assert [(a.name, a.status, a.sha256) for a in done.artifacts] == [
        (a["name"], a["status"], a["sha256"]) for a in manifest["artifacts"]
    ]
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert done.plan == record["plan"] and done.finished_at == record["finished_at"]
    assert done.citation_counts["verified"] > 0


def test_the_store_follows_a_live_runs_status_plan_and_warnings(
    store_url: str, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    """A run held at two points (the model thinking after reading the input, then the run
    validating): each time the store, read over its own connection as the UI does, has the
    live status, every plan step's status from `plan.step.updated` and the warnings; once
    the run has ended nothing moves it back."""
    store = open_store(store_url)
    reader = open_store(store_url)
    script = turns(*good_documents)
    thinking, validating = threading.Event(), threading.Event()
    release_model, release_validation = threading.Event(), threading.Event()

    async def model(_messages: Sequence[Message], _tools: Sequence[ToolSpec]) -> dict[str, Any]:
        turn = script[min(function_model.calls, len(script) - 1)]
        if function_model.calls == 1:  # the input is read: the model "thinks" a while
            holder[0]._warn("a warning while the run is live")
            thinking.set()
            while not release_model.is_set():
                await asyncio.sleep(0.02)
        return turn

    def hold_validation(event: Event) -> None:
        if event.type == "run.validating":  # the run's own thread waits here, validating
            validating.set()
            release_validation.wait(30)

    function_model = FunctionModel(model)
    holder: list[Run] = []
    mirror = StoreMirror(store, "run_live", tmp_path / "ws", on_cancel=lambda _r: None)
    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=feedback_csv,
        model=function_model,
        workspace=tmp_path / "ws",
        run_id="run_live",
        subscribers=[mirror, hold_validation],
    )
    holder.append(run)
    mirror.start()
    worker = threading.Thread(target=lambda: asyncio.run(run.execute()), daemon=True)
    worker.start()

    def steps() -> dict[str, str]:
        found = reader.get_run("run_live")
        return {s["id"]: s["status"] for s in found.plan} if found is not None else {}

    try:
        assert thinking.wait(30)
        _wait(lambda: steps().get("load_feedback") == "completed")
        live = reader.get_run("run_live")
        assert live is not None and live.status == "running"
        assert steps() == {
            "load_feedback": "completed",
            "analyze_feedback": "pending",
            "build_backlog": "pending",
            "write_report": "pending",
            "validate_deliverables": "pending",
        }
        assert live.warnings == ["a warning while the run is live"]
        assert all(step["title"] and step["success_criteria"] for step in live.plan)
        release_model.set()
        assert validating.wait(30)
        _wait(lambda: (r := reader.get_run("run_live")) is not None and r.status == "validating")
        held = steps()
        assert {held[s] for s in ("analyze_feedback", "build_backlog", "write_report")} == {
            "running"
        }
        assert held["validate_deliverables"] == "pending"
        release_validation.set()
        worker.join(60)
        assert not worker.is_alive()
        mirror.finish()
        done = reader.get_run("run_live")
        assert done is not None and done.status == "completed"
        assert set(steps().values()) == {"completed"}
        # A late live write (a stale reader, a batch retried) never moves it back.
        store.upsert_run("run_live", status="running", plan=[])
        again = reader.get_run("run_live")
        assert again is not None and again.status == "completed" and again.plan == done.plan
    finally:
        release_model.set()
        release_validation.set()
        store.close()
        reader.close()


def test_a_cancel_in_the_store_ends_a_cli_run_cancelled(
    store: RunStore, store_url: str, tmp_path: Path, big_csv: Path
) -> None:
    process = _start(tmp_path / "home", big_csv, store_url, "--origin", "api")
    run_id = _wait(lambda: store.list_runs()[0], process)[0].run_id
    _wait(lambda: any(e["type"] == "batch.completed" for e in store.events(run_id)), process)
    asked = time.monotonic()
    summary = store.request_cancel(run_id)
    assert summary is not None and summary.cancel_requested and summary.origin == "api"
    stdout, stderr = process.communicate(timeout=60)
    elapsed = time.monotonic() - asked
    assert process.returncode == 1, stderr
    assert elapsed < 5, f"took {elapsed:.1f}s to stop"
    assert json.loads(stdout)["status"] == "cancelled"
    ended = store.get_run(run_id)
    assert ended is not None and ended.status == "cancelled"
    assert ended.error_message == CANCEL_REASON
    assert store.events(run_id)[-1]["type"] == "run.cancelled"


def test_a_cancel_in_the_store_stops_a_slow_model_within_two_seconds(
    sqlite_url: str, tmp_path: Path, feedback_csv: Path
) -> None:
    store = open_store(sqlite_url)
    other = open_store(sqlite_url)  # as the UI would: its own connection to the store

    async def slow(_messages: Sequence[Message], _tools: Sequence[ToolSpec]) -> dict[str, Any]:
        await asyncio.sleep(120)
        return {"content": "never"}

    holder: list[Run] = []
    mirror = StoreMirror(
        store,
        "run_slow",
        tmp_path / "ws",
        on_cancel=lambda reason: holder[0].cancel(reason),
        poll_seconds=0.2,
    )
    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=feedback_csv,
        model=FunctionModel(slow),
        workspace=tmp_path / "ws",
        run_id="run_slow",
        subscribers=[mirror],
    )
    holder.append(run)
    mirror.start()

    async def main() -> float:
        task = asyncio.create_task(run.execute())
        while (found := other.get_run("run_slow")) is None or found.status != "running":
            await asyncio.sleep(0.05)
        asked = time.monotonic()
        other.request_cancel("run_slow")
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - asked

    try:
        elapsed = asyncio.run(main())
        mirror.finish()
        assert elapsed < 2, f"took {elapsed:.1f}s to stop"
        ended = other.get_run("run_slow")
        assert ended is not None and ended.status == "cancelled"
        assert ended.error_message == CANCEL_REASON
    finally:
        store.close()
        other.close()


def test_a_store_failing_mid_run_is_a_warning_and_the_run_completes(
    sqlite_url: str, tmp_path: Path, feedback_csv: Path
) -> None:
    store = open_store(sqlite_url)
    warnings: list[str] = []
    plugin = load_plugin("feedback-analysis")
    model = resolve_model("offline", ModelContext(plugin=plugin))
    mirror = StoreMirror(
        store, "run_broken", tmp_path / "ws", on_cancel=lambda _r: None, warn=warnings.append
    )

    def break_store(event: Any) -> None:
        if event.type == "run.started":  # the store goes away while the run is under way
            with store.engine.begin() as connection:
                connection.execute(sa.text("DROP TABLE events"))

    mirror.start()
    result = asyncio.run(
        run_plugin(
            plugin,
            feedback_csv,
            model,
            workspace=tmp_path / "ws",
            run_id="run_broken",
            subscribers=[mirror, break_store],
        )
    )
    mirror.finish()
    store.close()
    assert result.status.value == "completed"
    assert not mirror.healthy
    assert len(warnings) == 1, warnings  # said once, not per batch
    assert "run store" in warnings[0] and "runlens reindex" in warnings[0]
    assert str(tmp_path) in warnings[0]  # the store named (its URL)


def test_a_run_whose_store_cannot_be_opened_is_a_usage_error(
    tmp_path: Path, feedback_csv: Path
) -> None:
    url = "postgresql://someone:s3cret@127.0.0.1:1/nothing"
    done = runlens(
        "run", "feedback-analysis", feedback_csv, "--database-url", url,
        "--workspace", tmp_path / "ws", home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2
    assert "cannot open the run store postgresql+psycopg://someone:***@127.0.0.1:1" in (done.stderr)
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "ws").exists()  # nothing started


def test_a_run_killed_mid_way_is_settled_interrupted_in_the_store(
    store: RunStore, store_url: str, tmp_path: Path, big_csv: Path
) -> None:
    process = _start(tmp_path / "home", big_csv, store_url)
    run_id = _wait(lambda: store.list_runs()[0], process)[0].run_id
    _wait(lambda: any(e["type"] == "batch.completed" for e in store.events(run_id)), process)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    stale = store.get_run(run_id)
    assert stale is not None and stale.status == "running"  # nobody said otherwise
    assert refresh_live(store) == [run_id]
    settled = store.get_run(run_id)
    assert settled is not None and settled.status == "interrupted"
    assert settled.error_message is not None and "interrupted" in settled.error_message
    assert store.events(run_id)[-1]["type"] == "run.interrupted"
    assert refresh_live(store) == []  # settled once: nothing live any more
