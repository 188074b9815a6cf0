"""The store's migrations: the head the code expects, upgrading a store that holds runs,
a store already at the head left alone (without importing Alembic), and tables that match
what the migrations build."""

from __future__ import annotations

import json
import subprocess
import sys

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from runlens.store import HEAD_REVISION, open_store
from runlens.store.engine import _engine, migration_config
from runlens.store.tables import metadata


def _upgrade_to(url: str, revision: str) -> None:
    engine = _engine(url)
    config = migration_config(url)
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        connection.commit()
    engine.dispose()


def _revision(url: str) -> str:
    engine = _engine(url)
    with engine.connect() as connection:
        value = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    engine.dispose()
    return str(value)


def test_the_head_revision_constant_is_the_head_of_the_migrations(sqlite_url: str) -> None:
    script = ScriptDirectory.from_config(migration_config(sqlite_url))
    assert script.get_heads() == [HEAD_REVISION]
    # One line of history, from the first schema up.
    assert [r.revision for r in script.walk_revisions()][-1] == "0001_initial"


def test_a_store_with_runs_at_the_first_revision_upgrades_keeping_them(store_url: str) -> None:
    _upgrade_to(store_url, "0001_initial")
    engine = _engine(store_url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO runs (run_id, plugin, model, status, workspace, created_at,"
                " updated_at, finding_count, last_seq, warnings)"
                " VALUES ('run_old', 'feedback-analysis', 'offline', 'completed', '/w',"
                " '2026-11-30T10:00:00Z', '2026-11-30T10:01:00Z', 2, 1, :warnings)"
            ),
            {"warnings": json.dumps(["kept"])},
        )
        connection.execute(
            sa.text(
                "INSERT INTO events (run_id, seq, ts, type, data)"
                " VALUES ('run_old', 1, 't', 'run.created', :data)"
            ),
            {"data": json.dumps({"plugin": "feedback-analysis"})},
        )
    engine.dispose()
    assert _revision(store_url) == "0001_initial"

    store = open_store(store_url)
    try:
        assert _revision(store_url) == HEAD_REVISION
        run = store.get_run("run_old")
        assert run is not None
        assert (run.status, run.finding_count, run.warnings) == ("completed", 2, ["kept"])
        # The columns the upgrade added, with their defaults.
        assert run.origin == "cli" and run.host is None and run.cancel_requested is False
        assert store.events("run_old")[0]["data"] == {"plugin": "feedback-analysis"}
        assert store.request_cancel("run_old") is not None  # the new column is usable
    finally:
        store.close()


def test_a_store_with_runs_at_0002_upgrades_to_durable_runs_keeping_them(store_url: str) -> None:
    _upgrade_to(store_url, "0002_run_control")
    engine = _engine(store_url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO runs (run_id, plugin, model, status, workspace, origin, host,"
                " cancel_requested, created_at, updated_at, finding_count, last_seq, warnings)"
                " VALUES ('run_two', 'feedback-analysis', 'offline', 'running', '/w', 'ui',"
                " 'host-a', :cancel, '2026-11-30T10:00:00Z', '2026-11-30T10:01:00Z', 0, 1,"
                " :warnings)"
            ),
            {"cancel": True, "warnings": json.dumps(["kept"])},
        )
        connection.execute(
            sa.text(
                "INSERT INTO events (run_id, seq, ts, type, data)"
                " VALUES ('run_two', 1, 't', 'run.created', :data)"
            ),
            {"data": json.dumps({"plugin": "feedback-analysis"})},
        )
    engine.dispose()
    assert _revision(store_url) == "0002_run_control"

    store = open_store(store_url)
    try:
        assert _revision(store_url) == HEAD_REVISION == "0007_reviews"
        run = store.get_run("run_two")
        assert run is not None
        assert (run.status, run.origin, run.host, run.cancel_requested, run.warnings) == (
            "running", "ui", "host-a", True, ["kept"],
        )  # fmt: skip
        assert run.worker is None  # the column the upgrade added
        assert store.events("run_two")[0]["data"] == {"plugin": "feedback-analysis"}
        # The new column and tables are usable.
        store.upsert_run("run_two", worker="w1")
        assert store.sync_states(["run_two"])["run_two"].worker == "w1"
        assert store.put_files("run_two", {"input/x.csv": b"id\n"}) == 1
        assert store.read_file("run_two", "input/x.csv") == b"id\n"
        store.register_worker("w1", host="host-a", pid=1, concurrency=2)
        assert [w.executor_id for w in store.list_workers()] == ["w1"]
    finally:
        store.close()


def test_opening_a_store_at_the_head_changes_nothing_and_needs_no_alembic(
    store_url: str,
) -> None:
    open_store(store_url).close()
    program = (
        "import sys\n"
        "from runlens.store.db import open_store\n"
        f"open_store({store_url!r}).close()\n"
        "print('alembic' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False", done.stderr
    assert _revision(store_url) == HEAD_REVISION


def test_the_tables_match_what_the_migrations_build(store_url: str) -> None:
    open_store(store_url).close()
    engine = _engine(store_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, metadata)
    engine.dispose()
    assert differences == []


def test_two_processes_opening_a_new_store_at_once_both_succeed(sqlite_url: str) -> None:
    program = f"from runlens.store.db import open_store\nopen_store({sqlite_url!r}).close()\n"
    processes = [
        subprocess.Popen([sys.executable, "-c", program], stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
    assert _revision(sqlite_url) == HEAD_REVISION


def test_a_store_with_citations_at_0004_upgrades_keeping_them_without_spans(
    store_url: str,
) -> None:
    _upgrade_to(store_url, "0004_clashes")
    engine = _engine(store_url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO runs (run_id, plugin, model, status, workspace, created_at,"
                " updated_at, finding_count, last_seq, warnings)"
                " VALUES ('run_four', 'feedback-analysis', 'offline', 'completed', '/w',"
                " '2026-11-30T10:00:00Z', '2026-11-30T10:01:00Z', 0, 1, :warnings)"
            ),
            {"warnings": json.dumps([])},
        )
        connection.execute(
            sa.text(
                "INSERT INTO citations (run_id, ordinal, artifact, location, row_id, quote,"
                " start_offset, end_offset, line, col, status)"
                " VALUES ('run_four', 0, 'artifacts/insight_report.md', 'line 5', 'fb_001',"
                " 'slow export', 0, 11, 5, 3, 'verified')"
            )
        )
    engine.dispose()

    store = open_store(store_url)
    try:
        assert _revision(store_url) == HEAD_REVISION == "0007_reviews"
        [row] = store.citations("run_four")
        assert (row.row_id, row.quote, row.start, row.end, row.line, row.column) == (
            "fb_001", "slow export", 0, 11, 5, 3,
        )  # fmt: skip
        # No span recorded before the upgrade: the page searches for this one.
        assert (row.span_start, row.span_end, row.span_line, row.id_start, row.id_end) == (
            None, None, None, None, None,
        )  # fmt: skip
        located = row.model_copy(
            update={"span_start": 40, "span_end": 53, "span_line": 5, "id_start": 56, "id_end": 62}
        )
        store.replace_results("run_four", [], [], [located])  # the new columns are usable
        assert store.citations("run_four") == [located]
    finally:
        store.close()
