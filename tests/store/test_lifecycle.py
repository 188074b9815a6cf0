"""A run's stored life through the store's named transitions, on SQLite and PostgreSQL: a
queued run claimed, published, finished; runs ended before they started; a worker's run ends
once, a local run's index follows its workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runlens.records.status import InvalidTransition
from runlens.store import RunStore, sync_workspace


def _event(seq: int, kind: str = "tool.called") -> dict[str, object]:
    return {"seq": seq, "ts": f"2026-12-01T10:00:0{seq}Z", "type": kind, "data": {}}


def _queued(store: RunStore, run_id: str = "run_q") -> None:
    store.queue(
        run_id, plugin="feedback-analysis", model="offline", input_name="x.csv", origin="api"
    )


def test_a_queued_run_is_claimed_published_and_finished(store: RunStore) -> None:
    _queued(store)
    queued = store.get_run("run_q")
    assert queued is not None and queued.status == "queued" and queued.origin == "api"
    assert queued.workspace == "" and queued.created_at
    assert store.claim("run_q", worker="w1", host="host-a")
    store.publish(
        "run_q",
        [_event(1, "run.created"), _event(2)],
        first={"workspace": "/w/run_q", "status": "created", "worker": "w1"},
        live={"status": "running", "plan": []},
    )
    live = store.get_run("run_q")
    assert live is not None and (live.status, live.worker, live.last_seq) == ("running", "w1", 2)
    with pytest.raises(InvalidTransition):  # an end comes with the results, never published
        store.publish("run_q", [_event(3)], live={"status": "completed"})
    assert store.event_count("run_q") == 2  # nothing of the refused batch was written
    store.finish("run_q", "completed", finished_at="2026-12-01T10:01:00Z")
    done = store.get_run("run_q")
    assert done is not None and done.status == "completed" and done.is_terminal
    assert done.finished_at == "2026-12-01T10:01:00Z"
    store.finish("run_q", "completed")  # the same end again (a step run twice): no change
    with pytest.raises(InvalidTransition):  # the store is a worker's run's truth: it ends once
        store.finish("run_q", "failed", error_message="a second end")
    ended = store.get_run("run_q")
    assert ended is not None and ended.status == "completed" and ended.error_message is None
    assert not store.claim("run_q", worker="w2", host="host-b")  # ended: nobody takes it
    after = store.get_run("run_q")
    assert after is not None and after.worker == "w1"


def test_a_resumed_run_publishes_its_handover_with_the_claim(store: RunStore) -> None:
    _queued(store)
    store.claim("run_q", worker="w1", host="host-a")
    store.append_events("run_q", [_event(1), _event(2), _event(3)])
    resumed = {**_event(4, "run.resumed"), "data": {"worker": "w2"}}
    assert store.claim("run_q", worker="w2", host="host-b", resumed=resumed)
    run = store.get_run("run_q")
    assert run is not None and (run.worker, run.host, run.last_seq) == ("w2", "host-b", 4)
    assert store.events("run_q")[-1]["type"] == "run.resumed"
    store.drop_events_from("run_q", 3)  # a replay diverged at 3
    assert [e["seq"] for e in store.events("run_q")] == [1, 2]


def test_only_an_unstarted_run_ends_unstarted(store: RunStore) -> None:
    _queued(store, "run_a")
    assert store.end_unstarted("run_a", "failed", "could not be queued: no queue")
    failed = store.get_run("run_a")
    assert failed is not None and failed.status == "failed" and failed.finished_at
    assert failed.error_message == "could not be queued: no queue"
    _queued(store, "run_b")
    store.claim("run_b", worker="w1", host="h")
    store.publish("run_b", [_event(1)], live={"status": "running"})
    assert not store.end_unstarted("run_b", "cancelled", "too late: it runs")
    running = store.get_run("run_b")
    assert running is not None and running.status == "running"
    with pytest.raises(InvalidTransition):
        store.finish("run_b", "running")  # not an end state


def test_a_local_runs_index_follows_its_workspace(store: RunStore) -> None:
    store.index_run("run_l", plugin="p", model="m", status="running", workspace="/w/run_l")
    store.finish("run_l", "completed")
    store.index_run("run_l", status="running")  # a stale reader: the end stays
    run = store.get_run("run_l")
    assert run is not None and run.status == "completed"
    store.finish("run_l", "failed", error_message="the workspace says so now")
    rewritten = store.get_run("run_l")
    assert rewritten is not None and rewritten.status == "failed"


def test_a_record_without_a_status_is_stored_damaged_and_named(
    store: RunStore, tmp_path: Path
) -> None:
    workspace = tmp_path / "run_20261201T100000Z_aaaaaa"
    (workspace / "runtime").mkdir(parents=True)
    record = {"run_id": workspace.name, "plugin": "p", "model": "m", "plan": []}
    (workspace / "runtime" / "run.json").write_text(json.dumps(record), encoding="utf-8")
    run_id = sync_workspace(store, workspace)
    assert run_id == workspace.name
    run = store.get_run(run_id)
    assert run is not None and run.status == "damaged"
    assert "runtime/run.json: no status" in run.problems


SRC = Path(__file__).resolve().parents[2] / "src" / "runlens"
#: The modules of a run's stored life.
_LIFECYCLE = ("store/lifecycle.py", "store/writes.py")


def test_only_the_lifecycle_writes_a_runs_row() -> None:
    """Every write of a run's row goes through `runlens.store.lifecycle` (a live run's and its
    end's through `runlens.store.writes`, which `RunLife` extends); the workers' code
    holds no SQL; DBOS's private functions are reached from `runlens.workers.handover` alone."""
    writers, raw, private = [], [], []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(SRC).as_posix()
        if name not in _LIFECYCLE and (".upsert_run(" in text or "update(t.runs)" in text):
            writers.append(name)
        if name.startswith("workers/") and (
            "import sqlalchemy as sa" in text or "store.tables" in text
        ):
            raw.append(name)
        if name != "workers/handover.py" and ("from dbos._" in text or "._sys_db" in text):
            private.append(name)
    assert writers == [] and raw == [] and private == []
