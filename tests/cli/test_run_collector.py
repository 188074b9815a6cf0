"""`runlens run` and Python's cyclic garbage collector: paused while the run opens (its imports
are almost all long-lived cycles), then, when the run is the process's own command, what the
process holds frozen out of the way of the collections during the run and at exit. A run
inside a longer-lived process (an application, `CliRunner`) leaves the collector as it was.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli.helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
PASSING = ROOT / "examples" / "scripts" / "passing.json"

#: `runlens ARGS` through `main`, as the `runlens` script runs it; then how the collector is.
PROGRAM = """
import gc, json, sys
from runlens.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    status = done.code or 0
print(json.dumps({"status": status, "frozen": gc.get_freeze_count(),
                  "enabled": gc.isenabled()}))
"""


def test_the_process_of_a_run_freezes_what_opening_it_loaded(tmp_path: Path) -> None:
    env = {**os.environ, "RUNLENS_HOME": str(tmp_path)}
    env.pop("RUNLENS_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, "run", "feedback-analysis", str(SAMPLE),
         "--model", f"scripted:{PASSING}", "--json"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = json.loads(done.stdout.strip().splitlines()[-1])
    assert after["status"] == 0
    assert after["enabled"] is True
    assert after["frozen"] > 10_000  # the runtime, the plugin, the validators
    # What is frozen is never collected: the store's connections were all closed all the
    # same (SQLite removes its write-ahead log when the last one closes).
    assert (tmp_path / "runlens.db").is_file()
    assert not (tmp_path / "runlens.db-wal").exists()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_inside_a_process_leaves_the_collector_as_it_was(
    tmp_path: Path, enabled: bool
) -> None:
    frozen = gc.get_freeze_count()
    if not enabled:
        gc.disable()
    try:
        result, verdict = run(SAMPLE, tmp_path / "ws", "--model", f"scripted:{PASSING}")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert result.exit_code == 0, result.output
    assert verdict["status"] == "completed"
    assert gc.get_freeze_count() == frozen
