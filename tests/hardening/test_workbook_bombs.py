"""Workbook bombs against real processes: `runlens run`, SIGTERM, and the UI's upload.

Before the bounds, a 4 MiB .xlsx inflating to 4 GiB was read to 6.9 GB of memory, and a
1 GiB single-cell workbook was still being read after ten minutes, deaf to SIGTERM. Now the
run fails at the input step within seconds, naming the file and the limit, with its peak
memory that of a small run; the upload answers 413 with the same reason. The bombs are
generated here (`workbooks.py`), never committed.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.ui.conftest import running_server

from .conftest import child_env, runlens_command, wait_for_event
from .workbooks import many_rows_bomb, one_cell_bomb, rows_workbook

MIB = 1024 * 1024
#: Peak memory of the whole `runlens run` process, interpreter included. Before: 6.9 GB.
PEAK_RSS_LIMIT_MB = 400
SECONDS_LIMIT = 30.0


#: Runs a command and writes its peak RSS (KiB) to a file. The command is forked from this
#: small interpreter, not from the test's: a forked child's peak counts the memory it shares
#: with its parent before `exec`, which for a pytest process that has run many tests is
#: hundreds of MB that are not the run's.
_MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _run_measured(workspace: Path, path: Path) -> tuple[int, float, float]:
    """`runlens run` on `path` to its end: exit code, seconds, peak RSS in MB."""
    peak = workspace.parent / "peak_kib"
    command = runlens_command("run", "feedback-analysis", path, "--workspace", workspace, "--json")
    started = time.monotonic()
    with (workspace.parent / "out.log").open("wb") as out:
        completed = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(peak), *map(str, command)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=child_env(),
            check=False,
        )
    seconds = time.monotonic() - started
    return completed.returncode, seconds, int(peak.read_text()) / 1024


@pytest.mark.parametrize(
    ("make", "inflated", "lie", "limit"),
    [
        (one_cell_bomb, 1024 * MIB, False, "over the limit of 512 MiB"),
        (one_cell_bomb, 4000 * MIB, False, "over the limit of 512 MiB"),
        (one_cell_bomb, 4000 * MIB, True, "Bad CRC-32"),
        (many_rows_bomb, 600 * MIB, True, "Bad CRC-32"),
    ],
    ids=["1MiB-to-1GiB-cell", "4MiB-to-4GiB-cell", "4GiB-cell-lying", "rows-lying"],
)
def test_a_workbook_bomb_fails_the_run_within_seconds_in_little_memory(
    tmp_path: Path, make: object, inflated: int, lie: bool, limit: str
) -> None:
    path = make(tmp_path / "bomb.xlsx", inflated, lie=lie)  # type: ignore[operator]
    workspace = tmp_path / "ws"
    code, seconds, peak_mb = _run_measured(workspace, path)
    output = (tmp_path / "out.log").read_text("utf-8")
    assert code == 1, output
    assert seconds < SECONDS_LIMIT, f"took {seconds:.1f}s"
    assert peak_mb < PEAK_RSS_LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"
    record = json.loads((workspace / "runtime" / "run.json").read_text("utf-8"))
    assert record["status"] == "failed"
    assert record["error_message"].startswith("input error: bomb.xlsx: ")
    assert limit in record["error_message"]
    assert "Traceback" not in output
    plan = {step["id"]: step["status"] for step in record["plan"]}
    assert plan["load_feedback"] == "failed"
    assert not (workspace / "runtime" / "evidence_index.json").exists()


def test_sigterm_while_a_workbook_is_read_cancels_within_a_second(tmp_path: Path) -> None:
    path = rows_workbook(tmp_path / "large.xlsx", 250_000)
    workspace = tmp_path / "ws"
    process = subprocess.Popen(
        runlens_command("run", "feedback-analysis", path, "--workspace", workspace, "--json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    wait_for_event(workspace, lambda event: event["type"] == "tool.called", process)
    time.sleep(0.5)  # well inside the reading of the sheet
    assert process.poll() is None, "the workbook was read too fast for the test"
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    stdout, _ = process.communicate(timeout=30)
    elapsed = time.monotonic() - sent
    assert process.returncode == 1
    assert elapsed < 2.0, f"took {elapsed:.2f}s to stop"
    assert json.loads(stdout)["status"] == "cancelled"
    events = [json.loads(line) for line in (workspace / "runtime" / "events.jsonl").open("rb")]
    assert events[-1]["type"] == "run.cancelled"
    assert "evidence.indexed" not in [event["type"] for event in events]


def test_the_upload_refuses_a_workbook_bomb_with_413(tmp_path: Path) -> None:
    bomb = one_cell_bomb(tmp_path / "bomb.xlsx", 4000 * MIB)
    assert bomb.stat().st_size < 5 * MIB
    liar = one_cell_bomb(tmp_path / "liar.xlsx", 4000 * MIB, lie=True)
    fine = rows_workbook(tmp_path / "fine.xlsx", 50)
    with running_server(tmp_path / "home") as server, server.client() as client:

        def upload(path: Path) -> httpx.Response:
            return client.post(
                "/api/runs",
                data={"plugin": "feedback-analysis", "model": "offline"},
                files={"file": (path.name, path.read_bytes())},
            )

        started = time.monotonic()
        response = upload(bomb)
        assert response.status_code == 413, response.text
        detail = response.json()["detail"]
        assert detail.startswith("bomb.xlsx: the workbook inflates to more than 3.9")
        assert "over the limit of 512 MiB" in detail
        response = upload(liar)
        assert response.status_code == 415, response.text
        assert "liar.xlsx: cannot be read as an Excel workbook" in response.json()["detail"]
        assert time.monotonic() - started < SECONDS_LIMIT
        assert client.get("/api/runs").json()["total"] == 0
        assert upload(fine).status_code == 202
