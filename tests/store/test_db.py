"""`RunStore` on SQLite and PostgreSQL: what it is given, it gives back, filtered and sorted."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from runlens.errors import UserError
from runlens.store import CitationRow, FindingRow, RunStore, open_store, store_url
from runlens.store.rows import ArtifactRow


def _run(store: RunStore, run_id: str, created_at: str, **fields: object) -> None:
    values: dict[str, object] = {
        "plugin": "feedback-analysis",
        "model": "offline",
        "status": "completed",
        "workspace": f"/runs/{run_id}",
        "created_at": created_at,
        "input_name": "sample.csv",
    }
    values.update(fields)
    store.upsert_run(run_id, **values)


def test_runs_are_listed_newest_first_and_filtered(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z")
    _run(store, "run_b", "2026-12-01T11:00:00Z", status="failed", error_message="Bad Quote here")
    _run(store, "run_c", "2026-12-01T12:00:00Z", plugin="other", model="openai:gpt-4o")
    runs, total = store.list_runs()
    assert [run.run_id for run in runs] == ["run_c", "run_b", "run_a"] and total == 3
    assert [r.run_id for r in store.list_runs(status="failed")[0]] == ["run_b"]
    assert [r.run_id for r in store.list_runs(plugin="other")[0]] == ["run_c"]
    assert [r.run_id for r in store.list_runs(model="offline")[0]] == ["run_b", "run_a"]
    # The search is case-insensitive over id, input, plugin, model and error message.
    assert [r.run_id for r in store.list_runs(query="bad quote")[0]] == ["run_b"]
    assert [r.run_id for r in store.list_runs(query="GPT-4")[0]] == ["run_c"]
    assert store.list_runs(query="%")[1] == 0  # LIKE wildcards are literal
    page, total = store.list_runs(limit=1, offset=1)
    assert [r.run_id for r in page] == ["run_b"] and total == 3
    assert store.distinct_values("plugin") == ["feedback-analysis", "other"]
    assert store.distinct_values("model") == ["offline", "openai:gpt-4o"]


def test_upsert_updates_only_the_fields_given(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z", status="running", warnings=["w1"])
    store.upsert_run("run_a", status="completed", plan=[{"id": "s", "status": "completed"}])
    detail = store.get_run("run_a")
    assert detail is not None
    assert detail.status == "completed" and detail.warnings == ["w1"]
    assert detail.plan == [{"id": "s", "status": "completed"}]
    assert detail.host == store.host and detail.origin == "cli"
    with pytest.raises(ValueError, match="not fields of a run"):
        store.upsert_run("run_a", colour="red")


def test_events_are_idempotent_on_seq_and_read_after_a_seq(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z")
    events = [
        {"seq": n, "ts": f"t{n}", "type": "tool.called", "data": {"n": n, "text": "导出"}}
        for n in range(1, 6)
    ]
    assert store.append_events("run_a", events[:3]) == 3
    store.append_events("run_a", events[1:])  # 2 and 3 again: skipped
    stored = store.events("run_a")
    assert [e["seq"] for e in stored] == [1, 2, 3, 4, 5]
    assert stored[0] == {
        "seq": 1, "ts": "t1", "run_id": "run_a", "type": "tool.called",
        "data": {"n": 1, "text": "导出"},
    }  # fmt: skip
    assert [e["seq"] for e in store.events("run_a", after_seq=3)] == [4, 5]
    assert [e["seq"] for e in store.events("run_a", after_seq=1, limit=2)] == [2, 3]
    summary = store.get_run("run_a")
    assert summary is not None and summary.last_seq == 5


def test_results_replace_what_was_there_and_citations_filter(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z")
    artifact = ArtifactRow(
        name="artifacts/report.md", label="Report", audience="user",
        sensitivity="internal", required=True, size=10, sha256="0" * 64,
        status="rejected", finding_count=1,
    )  # fmt: skip
    finding = FindingRow(
        ordinal=0, validator="citations", artifact="artifacts/report.md",
        code="evidence_text_mismatch", path="line 3", message="not in fb_2",
        details={"row_id": "fb_2", "line": 3, "column": 5}, row_id="fb_2", line=3, column=5,
    )  # fmt: skip
    verified = CitationRow(
        ordinal=0, artifact="artifacts/report.md", location="line 2", row_id="fb_1",
        quote="slow", start=4, end=8, line=2, column=3, status="verified",
    )  # fmt: skip
    failed = CitationRow(
        ordinal=1, artifact="artifacts/report.md", location="line 3", row_id="fb_2",
        quote="fast", line=3, column=5, status="failed", code="evidence_text_mismatch",
        reason="not in fb_2",
    )  # fmt: skip
    store.replace_results("run_a", [artifact], [finding], [verified, failed])
    store.replace_results("run_a", [artifact], [finding], [verified, failed])  # no duplicates
    detail = store.get_run("run_a")
    assert detail is not None
    assert detail.artifacts == [artifact] and detail.findings == [finding]
    assert detail.finding_count == 1 and detail.findings_by_code == {"evidence_text_mismatch": 1}
    assert detail.citation_counts == {"verified": 1, "failed": 1}
    assert store.citations("run_a") == [verified, failed]
    assert store.citations("run_a", row_id="fb_2") == [failed]
    assert store.citations("run_a", artifact="artifacts/other.json") == []


def test_resolve_run_by_id_prefix_or_suffix(store: RunStore) -> None:
    _run(store, "run_20261201T100000Z_aaaaaa", "2026-12-01T10:00:00Z")
    _run(store, "run_20261201T110000Z_bbbbbb", "2026-12-01T11:00:00Z")
    assert store.resolve_run("run_20261201T100000Z_aaaaaa") == "run_20261201T100000Z_aaaaaa"
    assert store.resolve_run("bbbbbb") == "run_20261201T110000Z_bbbbbb"
    assert store.resolve_run("run_20261201T10") == "run_20261201T100000Z_aaaaaa"
    with pytest.raises(UserError, match="matches 2 runs"):
        store.resolve_run("run_2026")
    with pytest.raises(UserError, match="no run 'zzz'"):
        store.resolve_run("zzz")
    with pytest.raises(UserError, match="no run '_'"):
        store.resolve_run("_")  # `_` is a LIKE wildcard: literal here


def test_pending_runs_cancel_and_end_unstarted(store: RunStore) -> None:
    store.create_pending(
        "run_p", plugin="feedback-analysis", model="offline", input_name="in.csv",
        workspace="/runs/run_p", origin="ui",
    )  # fmt: skip
    pending = store.get_run("run_p")
    assert pending is not None and pending.status == "created" and pending.origin == "ui"
    assert not store.cancel_requested("run_p")
    asked = store.request_cancel("run_p")
    assert asked is not None and asked.cancel_requested and store.cancel_requested("run_p")
    assert store.end_unstarted("run_p", "cancelled", "cancelled before it started")
    assert not store.end_unstarted("run_p", "failed", "too late: it has ended")
    ended = store.get_run("run_p")
    assert ended is not None and ended.status == "cancelled" and ended.finished_at
    assert ended.error_message == "cancelled before it started"
    assert store.request_cancel("run_missing") is None
    _run(store, "run_done", "2026-12-01T10:00:00Z")
    done = store.request_cancel("run_done")
    assert done is not None and not done.cancel_requested  # an ended run is left as it is


def test_deleting_a_run_deletes_its_rows(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z")
    store.append_events("run_a", [{"seq": 1, "ts": "t", "type": "run.created", "data": {}}])
    store.delete_run("run_a")
    assert store.get_run("run_a") is None and store.events("run_a") == []


def test_store_url_defaults_and_driver(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.delenv("RUNLENS_DATABASE_URL", raising=False)
    monkeypatch.setenv("RUNLENS_HOME", "/srv/runs")
    assert store_url() == "sqlite:////srv/runs/runlens.db"
    assert store_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    monkeypatch.setenv("RUNLENS_DATABASE_URL", "postgresql://u@h/db")
    assert store_url() == "postgresql+psycopg://u@h/db"
    assert store_url("sqlite:////x.db") == "sqlite:////x.db"  # explicit wins


def test_a_store_that_cannot_be_opened_is_a_user_error_without_the_password() -> None:
    with pytest.raises(UserError) as raised:
        open_store("postgresql+psycopg://someone:s3cret@127.0.0.1:1/nothing")
    message = str(raised.value)
    assert "cannot open the run store postgresql+psycopg://someone:***@127.0.0.1:1/nothing" in (
        message
    )
    assert "s3cret" not in message
    with pytest.raises(UserError, match="cannot open the run store"):
        open_store("mysql+nodriver://x/y")
    with pytest.raises(UserError, match="cannot open the run store") as unparsed:
        open_store("someone:s3cret@nowhere")
    assert "s3cret" not in str(unparsed.value)


def test_a_run_that_has_ended_is_not_taken_back_to_running(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z", status="completed")
    store.upsert_run("run_a", status="running", plan=[{"id": "late"}])  # a stale reader
    detail = store.get_run("run_a")
    assert detail is not None and detail.status == "completed" and detail.plan == []
    store.upsert_run("run_a", status="damaged", problems=["runtime/run.json: damaged"])
    damaged = store.get_run("run_a")
    assert damaged is not None and damaged.status == "damaged"  # a damaged record is said


def test_the_engine_module_loads_without_sqlalchemy() -> None:
    # `StoreBase` and a SQLite connection's settings are there for a store opened without
    # SQLAlchemy: the module imports it only when an engine is opened or a statement built.
    program = "import sys\nimport runlens.store.engine\nprint('sqlalchemy' in sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False"]


def test_a_sqlite_connection_configured_alone_has_the_engines_settings(tmp_path: Path) -> None:
    from runlens.store.engine import _engine, configure_sqlite

    pragmas = ("busy_timeout", "journal_mode", "synchronous", "foreign_keys", "journal_size_limit")
    engine = _engine(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        with engine.connect() as connection:
            driver = connection.connection.driver_connection
            assert driver is not None
            through_engine = [driver.execute(f"PRAGMA {name}").fetchone() for name in pragmas]
            engine_isolation = driver.isolation_level
    finally:
        engine.dispose()
    alone = sqlite3.connect(tmp_path / "b.db")
    try:
        configure_sqlite(alone)
        assert [alone.execute(f"PRAGMA {name}").fetchone() for name in pragmas] == through_engine
        assert alone.isolation_level is None and engine_isolation is None
    finally:
        alone.close()
    assert through_engine == [(30_000,), ("wal",), (1,), (1,), (16 * 1024 * 1024,)]


@pytest.mark.parametrize("listening", [False, True])
def test_a_bounded_transaction_waits_for_locks_that_long_and_no_other_does(
    store: RunStore, listening: bool
) -> None:
    """`transaction(lock_seconds=...)` bounds how long its statements wait for a lock
    (PostgreSQL's `lock_timeout`, SQLite's busy timeout) for that transaction alone; a
    listener to the engine's statements hears the setting (when one listens, it goes
    through SQLAlchemy)."""
    import sqlalchemy as sa

    heard: list[str] = []

    def hear(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        heard.append(statement)

    if listening:
        sa.event.listen(store.engine, "before_cursor_execute", hear)
    setting = (
        "PRAGMA busy_timeout" if store.engine.dialect.name == "sqlite" else "SHOW lock_timeout"
    )

    def current() -> str:
        with store._read() as connection:
            return str(connection.exec_driver_sql(setting).scalar())

    try:
        default = current()
        with store.transaction(lock_seconds=0.25):
            bounded = current()
            store.upsert_run("run_bounded", plugin="p", model="m", status="running", workspace="")
        with store.transaction():
            after = current()
    finally:
        if listening:
            sa.event.remove(store.engine, "before_cursor_execute", hear)
    assert bounded == ("250" if store.engine.dialect.name == "sqlite" else "250ms")
    assert after == default != bounded
    assert store.get_run("run_bounded") is not None
    if listening and store.engine.dialect.name != "sqlite":
        assert "SET LOCAL lock_timeout = 250" in heard
