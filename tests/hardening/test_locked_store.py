"""A SQLite store another process keeps locked does not hold up the end of a run: the mirror
waits at most `LOCK_SECONDS` per write, says the store failed, and `runlens runs` brings
the store up to date once the lock is gone (real processes). Measured before the bound:
the run's process exited about 70 s after its last event; now within a few seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .conftest import SAMPLE, child_env, runlens, runlens_command

LOCKER = (
    "import sqlite3, sys, time\n"
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "c.execute('BEGIN IMMEDIATE')\n"
    "print('locked', flush=True)\n"
    "time.sleep(300)\n"
)


def test_a_locked_sqlite_store_does_not_delay_the_end_of_a_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert runlens("runs", home=home).returncode == 0  # the store exists
    workspace = home / "run_locked"
    run = subprocess.Popen(
        runlens_command("run", "feedback-analysis", SAMPLE, "--workspace", workspace),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(home),
    )
    events = workspace / "runtime" / "events.jsonl"
    locker = None
    try:
        deadline = time.monotonic() + 120
        while not events.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        locker = subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(home / "runlens.db")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        _, stderr = run.communicate(timeout=240)
        exited = time.time()
        assert run.returncode == 0, stderr
        last_event = os.stat(events).st_mtime
        assert exited - last_event < 8, f"the run ended {exited - last_event:.1f} s late"
        assert "the run store" in stderr and "locked" in stderr  # said, once
        assert stderr.count("the run store") == 1
    finally:
        run.kill()
        if locker is not None:
            locker.kill()
            locker.wait()
    listed = runlens("runs", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    [summary] = json.loads(listed.stdout)
    assert summary["status"] == "completed"
