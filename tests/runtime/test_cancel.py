"""Ctrl-C (or SIGTERM) during a run: the run ends `cancelled` and its records stay consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runlens.records.events import read_events

from .conftest import Documents, turns_for


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_cancels_the_run(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents, signum: int
) -> None:
    hook = tmp_path / "slow.py"
    hook.write_text("import time; time.sleep(60)", encoding="utf-8")
    hooks = tmp_path / "hooks.json"
    hooks.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "write_file",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f"{sys.executable} {hook}",
                                    "timeout": 120,
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns_for(*good_documents)}), encoding="utf-8")
    workspace = tmp_path / "ws"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "runlens",
            "run",
            "feedback-analysis",
            str(feedback_csv),
            "--model",
            f"scripted:{script}",
            "--workspace",
            str(workspace),
            "--json",
            "--hooks",
            str(hooks),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events_path = workspace / "runtime" / "events.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(
            e["type"] == "tool.called" and e["data"]["name"] == "write_file"
            for e in read_events(events_path)
        ):
            break
        time.sleep(0.05)
    else:
        process.kill()
        raise AssertionError("the run never reached the write")
    os.kill(process.pid, signum)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "cancelled"
    events = list(read_events(events_path))
    assert events[-1]["type"] == "run.cancelled"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert (workspace / "manifest.json").is_file()
    assert json.loads(stdout)["status"] == "cancelled"
