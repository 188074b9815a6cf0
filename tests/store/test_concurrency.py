"""Several processes writing one SQLite store at once: none fails, nothing is lost, whether
they write through the `RunStore` or through `sqlite3` alone (`open_write_first`, as
`runlens run` does)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runlens.store import open_store

WRITER = """
import sys
from runlens.store.db import open_store

store = open_store(sys.argv[1])
run_id = sys.argv[2]
store.upsert_run(run_id, plugin="p", model="m", status="running", workspace="/w/" + run_id)
for batch in range(40):
    events = [
        {"seq": batch * 10 + n, "ts": "t", "type": "tool.called", "data": {"n": n}}
        for n in range(1, 11)
    ]
    store.append_events(run_id, events)
    store.upsert_run(run_id, warnings=[f"batch {batch}"])
    store.list_runs()
store.upsert_run(run_id, status="completed")
store.close()
"""

#: A run's writes as `runlens run` makes them: batches (the first creating the run's row),
#: polls for a cancel, and the run's end, through `sqlite3` alone.
WRITE_FIRST = """
import sys
from runlens.store.write_first import WriteFirstStore, open_write_first

store = open_write_first(sys.argv[1])
assert isinstance(store, WriteFirstStore)
run_id = sys.argv[2]
first = {"plugin": "p", "model": "m", "status": "created", "workspace": "/w/" + run_id}
for batch in range(40):
    events = [
        {"seq": batch * 10 + n, "ts": "t", "type": "tool.called", "data": {"n": n}}
        for n in range(1, 11)
    ]
    store.publish(
        run_id,
        events[:-1],
        first=first if batch == 0 else None,
        live={"status": "running", "warnings": [f"batch {batch}"]},
        lock_seconds=30,
    )
    store.cancels_requested([run_id])
    if batch == 39:
        store.end_run(run_id, "completed", {}, events[-1:], None, lock_seconds=30)
    else:
        store.publish(run_id, events[-1:], lock_seconds=30)
assert store._full is None
store.close()
"""


@pytest.mark.parametrize("through", [("RunStore",) * 3, ("RunStore", "sqlite3", "sqlite3")])
def test_processes_writing_one_sqlite_store_at_once(
    sqlite_url: str, tmp_path: Path, through: tuple[str, ...]
) -> None:
    open_store(sqlite_url).close()
    scripts = {"RunStore": tmp_path / "writer.py", "sqlite3": tmp_path / "write_first.py"}
    scripts["RunStore"].write_text(WRITER, encoding="utf-8")
    scripts["sqlite3"].write_text(WRITE_FIRST, encoding="utf-8")
    writers = [
        subprocess.Popen(
            [sys.executable, str(scripts[kind]), sqlite_url, f"run_{n}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, kind in enumerate(through)
    ]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    store = open_store(sqlite_url)
    try:
        runs, total = store.list_runs()
        assert total == 3 and {r.status for r in runs} == {"completed"}
        for n in range(3):
            assert [e["seq"] for e in store.events(f"run_{n}")] == list(range(1, 401))
            summary = store.get_run(f"run_{n}")
            assert summary is not None and summary.last_seq == 400
    finally:
        store.close()
