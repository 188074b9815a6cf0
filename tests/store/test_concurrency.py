"""Several processes writing one SQLite store at once: none fails, nothing is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_processes_writing_one_sqlite_store_at_once(sqlite_url: str, tmp_path: Path) -> None:
    open_store(sqlite_url).close()
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    writers = [
        subprocess.Popen(
            [sys.executable, str(script), sqlite_url, f"run_{n}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
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
