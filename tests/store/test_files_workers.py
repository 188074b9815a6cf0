"""Durable runs in the store, on SQLite and PostgreSQL: a run's files kept and written back
safely, queued runs and the worker holding a run, workers' heartbeats and dead workers
claimed once, and a killed worker's workspace never settling its run."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from runlens.models.registry import ModelContext, resolve_model
from runlens.plugins import load_plugin
from runlens.runtime.run import run_plugin
from runlens.store import RunStore, StoreMirror, index_home, open_store, refresh_live, tables
from runlens.store.files import check_file_path, workspace_files
from runlens.store.sync import sync_workspace

from .helpers import killed_worker_workspace, library_run

Documents = tuple[dict[str, Any], dict[str, Any], str]
#: How the store writes times (the database's clock for the workers' ones).
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$")
LONG_AGO = "2000-01-01T00:00:00.000+00:00"


def _run(store: RunStore, run_id: str, **fields: Any) -> None:
    values: dict[str, Any] = {
        "plugin": "feedback-analysis",
        "model": "offline",
        "status": "queued",
        "workspace": "",
        "created_at": "2026-12-01T10:00:00.000+00:00",
    }
    store.upsert_run(run_id, **{**values, **fields})


# -- files --------------------------------------------------------------------------------


def test_files_are_kept_by_path_and_written_only_when_changed(store: RunStore) -> None:
    _run(store, "run_f")
    files = {"input/tickets.csv": "id,text\n1,导出\n".encode(), "manifest.json": b"{}"}
    assert store.put_files("run_f", files) == 2
    assert store.put_files("run_f", files) == 0  # same bytes: nothing written
    assert store.file_index("run_f") == {
        "input/tickets.csv": (hashlib.sha256(files["input/tickets.csv"]).hexdigest(), 17),
        "manifest.json": (hashlib.sha256(b"{}").hexdigest(), 2),
    }
    changed = {**files, "manifest.json": b'{"a": 1}'}
    assert store.put_files("run_f", changed) == 1  # only the file that changed
    assert store.read_file("run_f", "manifest.json") == b'{"a": 1}'
    assert store.read_file("run_f", "input/tickets.csv") == files["input/tickets.csv"]
    assert store.read_file("run_f", "nothing.txt") is None
    assert store.put_files("run_f", {}) == 0
    assert store.put_files("run_f", {"artifacts/empty.md": b""}) == 1
    assert store.read_file("run_f", "artifacts/empty.md") == b""
    store.delete_run("run_f")  # a run's files go with it
    assert store.file_index("run_f") == {}


@pytest.mark.parametrize(
    "path",
    ["", "/etc/passwd", "a/../b", "../b", "a//b", "a/", "./a", "a\\b", "a\x00b", "x" * 1001],
)
def test_unsafe_file_paths_are_refused_before_anything_is_written(
    store: RunStore, path: str
) -> None:
    _run(store, "run_f")
    with pytest.raises(ValueError):
        store.put_files("run_f", {"good.txt": b"1", path: b"2"})
    assert store.file_index("run_f") == {}
    with pytest.raises(ValueError):
        store.read_file("run_f", path)


def test_check_file_path_gives_the_parts() -> None:
    assert check_file_path("input/x.csv") == ("input", "x.csv")
    with pytest.raises(ValueError, match="not UTF-8 text"):
        check_file_path("input/\udcff.csv")


def test_materialize_writes_under_the_root_and_skips_what_matches(
    store: RunStore, tmp_path: Path
) -> None:
    _run(store, "run_m")
    store.put_files(
        "run_m",
        {"input/x.csv": b"id,text\n", "artifacts/deep/r.md": "# 报告\n".encode(), "a.json": b"[]"},
    )
    root = tmp_path / "cache" / "run_m"
    written = store.materialize("run_m", root)
    assert written == [root / "a.json", root / "artifacts/deep/r.md", root / "input/x.csv"]
    assert (root / "artifacts/deep/r.md").read_text(encoding="utf-8") == "# 报告\n"
    assert store.materialize("run_m", root) == []  # every file matches already
    (root / "a.json").write_bytes(b"[1]")  # changed here: written back
    assert store.materialize("run_m", root) == [root / "a.json"]
    assert (root / "a.json").read_bytes() == b"[]"
    (root / "input/x.csv").unlink()
    assert store.materialize("run_m", root, paths=["input/x.csv", "not/stored"]) == [
        root / "input/x.csv"
    ]
    assert not [p for p in root.rglob("*.tmp")]  # no temporary file left behind


def test_materialize_never_goes_through_a_link(store: RunStore, tmp_path: Path) -> None:
    _run(store, "run_l")
    store.put_files("run_l", {"artifacts/r.md": b"stored", "runtime/run.json": b"{}"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "r.md").write_bytes(b"outside")
    root = tmp_path / "root"
    root.mkdir()
    (root / "artifacts").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="symbolic link"):
        store.materialize("run_l", root, paths=["artifacts/r.md"])
    assert (outside / "r.md").read_bytes() == b"outside"
    # A link in the file's own place is replaced by the file, its target left alone.
    (root / "runtime").mkdir()
    (root / "runtime" / "run.json").symlink_to(outside / "r.md")
    assert store.materialize("run_l", root, paths=["runtime/run.json"]) == [
        root / "runtime/run.json"
    ]
    assert not (root / "runtime" / "run.json").is_symlink()
    assert (root / "runtime" / "run.json").read_bytes() == b"{}"
    assert (outside / "r.md").read_bytes() == b"outside"


def test_workspace_files_leave_out_links_locks_and_temporary_files(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "runtime").mkdir(parents=True)
    (root / "artifacts").mkdir()
    (root / "runtime" / "run.json").write_text("{}")
    (root / "runtime" / "lock.json").write_text("{}")
    (root / "runtime" / "lock.json.settling").write_text("")
    (root / "runtime" / "other.lock").write_text("")
    (root / "artifacts" / ".r.md.0123456789ab.tmp").write_text("half")
    (root / "artifacts" / "r.md").write_text("# r")
    (root / "artifacts" / "link.md").symlink_to(root / "artifacts" / "r.md")
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    assert [path for path, _ in workspace_files(root)] == ["artifacts/r.md", "runtime/run.json"]


# -- queued runs and the worker holding a run ----------------------------------------------


def test_a_queued_run_moves_on_and_names_its_worker(store: RunStore) -> None:
    _run(store, "run_q", input_name="tickets.csv")
    queued = store.get_run("run_q")
    assert queued is not None and queued.status == "queued" and queued.worker is None
    assert not queued.is_terminal
    assert [r.run_id for r in store.list_runs(status="queued")[0]] == ["run_q"]
    store.upsert_run("run_q", status="running", worker="host-a:123:abcd")
    running = store.get_run("run_q")
    assert running is not None and (running.status, running.worker) == (
        "running",
        "host-a:123:abcd",
    )
    assert store.list_runs()[0][0].worker == "host-a:123:abcd"
    assert store.sync_states(["run_q"])["run_q"].worker == "host-a:123:abcd"
    store.upsert_run("run_q", status="completed")
    store.upsert_run("run_q", status="queued")  # an end state is never undone
    ended = store.get_run("run_q")
    assert ended is not None and ended.status == "completed"


# -- workers ------------------------------------------------------------------------------


def _age(store: RunStore, executor_id: str, heartbeat_at: str = LONG_AGO) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            sa.update(tables.workers)
            .where(tables.workers.c.executor_id == executor_id)
            .values(heartbeat_at=heartbeat_at)
        )


def test_workers_register_beat_stop_and_are_listed(store: RunStore) -> None:
    store.register_worker("w1", host="host-a", pid=101, concurrency=4)
    store.register_worker("w2", host="host-b", pid=202, concurrency=1)
    workers = {w.executor_id: w for w in store.list_workers()}
    assert set(workers) == {"w1", "w2"}
    first = workers["w1"]
    assert (first.host, first.pid, first.concurrency) == ("host-a", 101, 4)
    assert ISO_UTC.match(first.started_at) and first.heartbeat_at == first.started_at
    assert first.stopped_at is None and first.recovered_by is None
    _age(store, "w1")
    assert store.heartbeat("w1")
    beat = next(w for w in store.list_workers() if w.executor_id == "w1")
    assert beat.heartbeat_at > LONG_AGO and ISO_UTC.match(beat.heartbeat_at)
    store.stop_worker("w2")
    stopped = next(w for w in store.list_workers() if w.executor_id == "w2")
    assert stopped.stopped_at is not None and ISO_UTC.match(stopped.stopped_at)
    assert not store.heartbeat("w2")  # a stopped worker is not alive
    assert not store.heartbeat("never-registered")


def test_dead_workers_are_claimed_once_and_never_by_themselves(store: RunStore) -> None:
    for name in ("dead", "stopped", "alive", "me"):
        store.register_worker(name, host="h", pid=1, concurrency=1)
    for name in ("dead", "stopped", "me"):
        _age(store, name)
    store.stop_worker("stopped")
    _age(store, "stopped")  # stopped long ago: its runs ended with it, nothing to take over
    assert store.claim_dead_workers("me", older_than=60) == ["dead"]
    assert store.claim_dead_workers("other", older_than=60) == ["me"]  # not `dead` again
    assert store.claim_dead_workers("third", older_than=60) == []
    recovered = {w.executor_id: w.recovered_by for w in store.list_workers()}
    assert recovered == {"dead": "me", "stopped": None, "alive": None, "me": "other"}
    assert not store.heartbeat("dead")  # told it was given up for dead
    store.register_worker("dead", host="h", pid=2, concurrency=1)  # back: alive again
    assert store.heartbeat("dead")
    assert next(w for w in store.list_workers() if w.executor_id == "dead").recovered_by is None
    # The age is the database's: a fresh heartbeat is older than 0 seconds a moment later.
    time.sleep(0.02)
    assert store.claim_dead_workers("me", older_than=0) == ["alive", "dead"]


def test_an_expired_workers_runs_are_claimed_at_once(store: RunStore) -> None:
    store.register_worker("leaving", host="h", pid=1, concurrency=1)
    assert store.claim_dead_workers("me", older_than=3600) == []
    store.expire_worker("leaving")  # going away without finishing its runs
    assert store.claim_dead_workers("me", older_than=3600) == ["leaving"]


def test_concurrent_claims_share_the_dead_workers_out(store: RunStore, store_url: str) -> None:
    names = [f"dead-{n:02d}" for n in range(30)]
    for name in names:
        store.register_worker(name, host="h", pid=1, concurrency=1)
        _age(store, name)
    claimers = [open_store(store_url) for _ in range(4)]
    barrier = threading.Barrier(len(claimers))
    results: dict[int, list[str]] = {}

    def claim(number: int) -> None:
        barrier.wait()
        got: list[str] = []
        for _ in range(5):
            got.extend(claimers[number].claim_dead_workers(f"claimer-{number}", older_than=60))
        results[number] = got

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(len(claimers))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for claimer in claimers:
            claimer.close()
    everything = [name for got in results.values() for name in got]
    assert len(results) == len(claimers)
    assert sorted(everything) == names  # every dead worker claimed, none twice
    by = {w.executor_id: w.recovered_by for w in store.list_workers()}
    assert all(by[name] == f"claimer-{n}" for n, got in results.items() for name in got)


# -- syncing a worker's run ---------------------------------------------------------------


def test_upload_files_puts_the_workspace_in_the_store_before_its_end_state(
    store: RunStore, tmp_path: Path, feedback_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "run_up"
    result = library_run(workspace, feedback_csv, None)
    assert result.status.value == "completed"
    _run(store, result.run_id, status="running", worker="w1", workspace=str(workspace.resolve()))
    seen: list[str | None] = []
    put_files = store.put_files

    def watching(run_id: str, files: Any) -> int:
        run = store.get_run(run_id)
        seen.append(run.status if run is not None else None)
        return put_files(run_id, files)

    monkeypatch.setattr(store, "put_files", watching)
    assert sync_workspace(store, workspace, upload_files=True) == result.run_id
    assert seen and all(status == "running" for status in seen)
    detail = store.get_run(result.run_id)
    assert detail is not None and detail.status == "completed" and detail.worker == "w1"
    index = store.file_index(result.run_id)
    on_disk = {path for path, _ in workspace_files(workspace)}
    assert set(index) == on_disk
    assert {"manifest.json", "runtime/run.json", f"input/{feedback_csv.name}"} <= set(index)
    assert "runtime/lock.json" not in index
    for artifact in detail.artifacts:
        if artifact.sha256 is not None:
            assert index[artifact.name] == (artifact.sha256, artifact.size)
    # Back on another machine: the workspace, as it was, from the store alone.
    elsewhere = tmp_path / "elsewhere"
    store.materialize(result.run_id, elsewhere)
    for path in on_disk:
        assert (elsewhere / path).read_bytes() == (workspace / path).read_bytes()


def test_a_killed_workers_workspace_never_settles_its_run(store: RunStore, tmp_path: Path) -> None:
    home = tmp_path / "home"
    held = killed_worker_workspace(home, "run_held")
    local = killed_worker_workspace(home, "run_local")
    record_before = (held / "runtime" / "run.json").read_bytes()
    _run(store, "run_held", status="running", worker="w-dead", workspace=str(held.resolve()))
    _run(store, "run_local", status="running", workspace=str(local.resolve()))

    assert refresh_live(store) == ["run_local"]  # the local run's process is gone: settled
    local_run = store.get_run("run_local")
    assert local_run is not None and local_run.status == "interrupted"
    held_run = store.get_run("run_held")
    assert held_run is not None and held_run.status == "running"
    report = index_home(store, home)
    assert report.added == [] and report.updated == []
    assert sync_workspace(store, held) == "run_held"
    # Neither the store nor the workspace: another worker resumes the run.
    after = store.get_run("run_held")
    assert after is not None and (after.status, after.worker) == ("running", "w-dead")
    assert after.error_message is None and after.last_seq == 0
    assert (held / "runtime" / "run.json").read_bytes() == record_before
    events = (held / "runtime" / "events.jsonl").read_text(encoding="utf-8")
    assert "run.interrupted" not in events and not (held / "manifest.json").exists()

    # Once a workspace records the run ended, it is synced as any other.
    ended = json.loads(record_before)
    ended.update(
        status="failed",
        error_message="the model gave up",
        finished_at="2026-12-01T11:00:00.000+00:00",
    )
    (held / "runtime" / "run.json").write_text(json.dumps(ended), encoding="utf-8")
    assert refresh_live(store) == ["run_held"]
    synced = store.get_run("run_held")
    assert synced is not None and synced.status == "failed"
    assert synced.error_message == "the model gave up" and synced.worker == "w-dead"


def test_a_workers_mirror_names_it_and_uploads_the_files(
    store: RunStore, tmp_path: Path, feedback_csv: Path
) -> None:
    plugin = load_plugin("feedback-analysis")
    model = resolve_model("offline", ModelContext(plugin=plugin))
    workspace = tmp_path / "cache" / "run_worker"
    mirror = StoreMirror(
        store,
        "run_worker",
        workspace,
        on_cancel=lambda _reason: None,
        worker="host-a:1:w",
        upload_files=True,
    )
    mirror.start()
    result = asyncio.run(
        run_plugin(
            plugin,
            feedback_csv,
            model,
            workspace=workspace,
            run_id="run_worker",
            subscribers=[mirror],
        )
    )
    mirror.finish()
    assert result.status.value == "completed" and mirror.healthy
    detail = store.get_run("run_worker")
    assert detail is not None and detail.status == "completed"
    assert detail.worker == "host-a:1:w"
    index = store.file_index("run_worker")
    manifest = json.loads((workspace / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["artifacts"]:
        if entry.get("sha256"):
            assert index[entry["name"]][0] == entry["sha256"]
    assert "runtime/lock.json" not in index
    shutil.rmtree(workspace)
    restored = tmp_path / "restored"
    store.materialize("run_worker", restored)
    assert json.loads((restored / "manifest.json").read_text(encoding="utf-8")) == manifest
