"""The run store on PostgreSQL with what PostgreSQL text refuses (U+0000): a run whose input
holds NUL ends in the store as in its workspace, with every event; `runlens runs`,
`runlens show` and `runlens reindex` answer; a damaged `run.json` holding NUL is named and
never stops the others (real processes, real PostgreSQL)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from .conftest import SAMPLE, runlens

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
