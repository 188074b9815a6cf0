"""The run store on PostgreSQL with what PostgreSQL text refuses (U+0000): a run whose input
holds NUL ends in the store as in its workspace, with every event; `runlens runs`,
`runlens show` and `runlens reindex` answer; a damaged `run.json` holding NUL is named and
never stops the others (real processes, real PostgreSQL)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from runlens.store import open_store

from .conftest import SAMPLE, child_env, runlens, runlens_command

POSTGRES = os.environ.get(
    "RUNLENS_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema on the test server, dropped after."""
    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 5})
    schema = f"rl_{secrets.token_hex(6)}"
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except sa.exc.OperationalError as error:
        engine.dispose()
        pytest.skip(f"no PostgreSQL at {POSTGRES}: {error.orig}")
    yield f"{POSTGRES}?options=-csearch_path%3D{schema}"
    with engine.begin() as connection:
        connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    engine.dispose()


def _nul_csv(path: Path) -> Path:
    lines = ["feedback_id,text,channel"]
    lines += [f"fb_{n:03d},Export is slow {n} and\x00 broken,web" for n in range(1, 25)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_run_whose_input_holds_nul_is_mirrored_whole_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    workspace = home / "run_nul"
    done = runlens(
        "run", "feedback-analysis", _nul_csv(tmp_path / "nul.csv"), "--workspace", workspace,
        "--database-url", postgres_url, "--run-id", "run_nul", home=home,
    )  # fmt: skip
    assert "the run store" not in done.stderr, done.stderr  # no store failure
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    events = (workspace / "runtime" / "events.jsonl").read_bytes().splitlines()
    listed = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert run["run_id"] == "run_nul" and run["status"] == record["status"]
    assert run["status"] in ("completed", "failed")
    shown = runlens("show", "run_nul", "--json", "--database-url", postgres_url, home=home)
    assert shown.returncode == 0, shown.stderr
    engine = sa.create_engine(postgres_url)
    with engine.connect() as connection:
        stored = connection.execute(sa.text("SELECT count(*) FROM events")).scalar_one()
        last = connection.execute(sa.text("SELECT last_seq FROM runs")).scalar_one()
        quotes = connection.execute(sa.text("SELECT count(*) FROM citations")).scalar_one()
    engine.dispose()
    assert stored == last == len(events)
    assert quotes > 0  # the quotes holding NUL are in the store


def test_reindex_names_a_damaged_record_holding_nul_and_indexes_the_rest(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    finished = home / "run_20261201T100000Z_aaaaaa"
    made = runlens("run", "feedback-analysis", SAMPLE, "--workspace", finished, home=home)
    assert made.returncode == 0, made.stderr
    nul_json = home / "run_20261201T110000Z_bbbbbb"
    shutil.copytree(finished, nul_json)
    record = json.loads((nul_json / "runtime" / "run.json").read_text(encoding="utf-8"))
    record.update(run_id="run_20261201T110000Z_bbbbbb", plugin="feed\x00back",
                  error_message="bad\x00", warnings=["w\x00", "\ud800"])  # fmt: skip
    (nul_json / "runtime" / "run.json").write_text(json.dumps(record), encoding="utf-8")
    raw_nul = home / "run_20261201T120000Z_cccccc"
    shutil.copytree(finished, raw_nul)
    (raw_nul / "runtime" / "run.json").write_bytes(b'{"run_id": "run_\x00x", "status": "')
    done = runlens("reindex", "--database-url", postgres_url, home=home)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "run_20261201T120000Z_cccccc" in done.stdout  # the damaged record is named
    listed = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    assert listed.returncode == 0, listed.stderr
    runs = {run["workspace"]: run for run in json.loads(listed.stdout)}
    assert runs[str(finished.resolve())]["status"] == "completed"
    assert runs[str(nul_json.resolve())]["error_message"] == "bad\x00"
    assert str(raw_nul.resolve()) in runs
    table = runlens("runs", "--database-url", postgres_url, home=home)
    assert table.returncode == 0 and "\\x00" in table.stdout, table.stderr  # shown, escaped


def test_a_worker_run_whose_input_holds_nul_ends_in_the_store(
    tmp_path: Path, postgres_url: str
) -> None:
    csv_path = _nul_csv(tmp_path / "nul.csv")
    client = tmp_path / "client"
    submitted = runlens(
        "submit", "feedback-analysis", csv_path, "--model", "offline",
        "--database-url", postgres_url, home=client,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.split()[0]
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            runlens_command("worker", "--executor-id", "w_nul", "--database-url", postgres_url),
            env=child_env(tmp_path / "worker"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            store = open_store(postgres_url)
            try:
                deadline = time.monotonic() + 180
                while True:
                    detail = store.get_run(run_id)
                    if detail is not None and detail.is_terminal:
                        break
                    assert worker.poll() is None, log_path.read_text(errors="replace")
                    assert time.monotonic() < deadline, log_path.read_text(errors="replace")
                    time.sleep(0.25)
                assert detail.status in ("completed", "failed")
                assert detail.last_seq == store.event_count(run_id) > 0
            finally:
                store.close()
            ended = runlens("cancel", run_id, "--database-url", postgres_url, home=client)
            assert ended.returncode == 1 and "has ended already" in ended.stderr
            listed = runlens("runs", "--json", "--database-url", postgres_url, home=client)
            assert listed.returncode == 0, listed.stderr
            assert json.loads(listed.stdout)[0]["status"] == detail.status
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    assert f"done {run_id}: {detail.status}" in log_path.read_text(errors="replace")
