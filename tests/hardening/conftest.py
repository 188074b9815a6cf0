"""Real `runlens` processes for the hardening tests: started, raced, signalled and killed."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"

_PHRASES = (
    "Exporting the weekly report takes three minutes and often times out.",
    "导出周报太慢了，我们团队每周五都要导出。",
    "The new dashboard is lovely, thank you!",
    "Login fails with error 500 every morning.",
    "客服回复很快，问题当天就解决了。",
    "The mobile app crashes when I open a large file.",
    "Pricing is confusing; I was billed twice this month.",
)


def write_feedback_csv(path: Path, rows: int) -> Path:
    """A feedback CSV of `rows` rows (ids fb_000001...), deterministic."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["feedback_id", "text", "channel"])
    for number in range(1, rows + 1):
        phrase = _PHRASES[number % len(_PHRASES)]
        writer.writerow([f"fb_{number:06d}", f"{phrase} (case {number})", "web"])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def large_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough rows that the offline analysis takes several seconds."""
    return write_feedback_csv(tmp_path_factory.mktemp("large") / "large.csv", 30_000)


def runlens_command(*args: object) -> list[str]:
    return [sys.executable, "-m", "runlens", *map(str, args)]


def child_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    # Without `home`, the test's own runs home (tests/conftest.py) holds the child's store.
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1", **extra}
    if home is not None:
        env["RUNLENS_HOME"] = str(home)
    return env


def start_run(workspace: Path, csv_path: Path, *args: object, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        runlens_command("run", "feedback-analysis", csv_path, "--workspace", workspace, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(None, **env),
    )


def runlens(
    *args: object, home: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        runlens_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(home),
    )


def wait_for_event(
    workspace: Path,
    accept: Callable[[dict[str, Any]], bool],
    process: subprocess.Popen[str],
    timeout: float = 60,
) -> dict[str, Any]:
    """Poll the run's event log until an event satisfies `accept` (or fail)."""
    path = workspace / "runtime" / "events.jsonl"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_bytes().splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and accept(event):
                    return event
        if process.poll() is not None:
            raise AssertionError(f"the run ended before the event: {process.stderr}")
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the event")


def event_types(workspace: Path) -> list[str]:
    path = workspace / "runtime" / "events.jsonl"
    return [json.loads(line)["type"] for line in path.read_bytes().splitlines() if line.strip()]
