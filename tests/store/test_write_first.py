"""`runlens run`'s store on SQLite (`open_write_first`): a store at its head is written
through `sqlite3` alone, the rows stored byte for byte those the `RunStore` stores (hostile
values too); anything else opens the `RunStore`; a locked or broken store costs the run a
warning, never the run."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from runlens.plugins import load_plugin
from runlens.runtime.run import run_plugin
from runlens.store import RunStore, StoreMirror, db, open_store
from runlens.store import driver as d
from runlens.store.write_first import WriteFirstStore, open_write_first
from runlens.store.writes import Published
from runlens.testing import ScriptedModel

from .helpers import turns
from .test_driver import HOSTILE_JSON, HOSTILE_STRINGS

Documents = tuple[dict[str, Any], dict[str, Any], str]
#: A run id the `runs` column escapes and cuts (200 characters).
ODD_ID = "\x00 \ud800 \ue000 😀 " + "x" * 250


def _stored(url: str, table: str, run_id: str) -> list[tuple[Any, ...]]:
    """The table's rows of the run as SQLite holds them (each value with its type), the
    run's id and `updated_at` left out."""
    connection = sqlite3.connect(url.removeprefix("sqlite:///"))
    try:
        names = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        kept = [name for name in names if name not in ("run_id", "updated_at")]
        listed = ", ".join(f'typeof("{name}"), "{name}"' for name in kept)
        return connection.execute(
            f"SELECT {listed} FROM {table} WHERE run_id = ? ORDER BY rowid",
            [d.encode_text(run_id, 200)],
        ).fetchall()
    finally:
        connection.close()


def _write_a_run(store: RunStore | WriteFirstStore, run_id: str) -> None:
    """A run's batches and end, as a mirror writes them, with hostile values throughout."""
    events = [
        {"seq": n, "ts": text, "type": text or "run.warned", "data": {"v": value}}
        for n, (text, value) in enumerate(zip(HOSTILE_STRINGS * 2, HOSTILE_JSON, strict=False))
    ]
    first = {
        "plugin": "p\x00" + "é" * 300,
        "model": HOSTILE_STRINGS[2],
        "workspace": "/w/\ue000",
        "status": "created",
        "created_at": "2026-12-06T00:00:00.000+00:00",
        "submitted_by": "",
    }
    live = {"status": "running", "plan": HOSTILE_JSON[:6], "warnings": HOSTILE_STRINGS}
    store.publish(run_id, events[:4], first=first, live=live, lock_seconds=1.0)
    store.publish_many(
        [Published(run_id, events[4:9], live={**live, "status": "validating"})],
        lock_seconds=1.0,
    )
    store.end_run(
        run_id,
        "failed",
        {"error_message": "\x00 " * 2000, "problems": HOSTILE_STRINGS, "metrics": HOSTILE_JSON[4]},
        events[9:],
        None,
        {"finding_count": 2**40, "findings_by_code": {"\ud800": 1}},
        lock_seconds=1.0,
    )


def test_a_runs_writes_through_sqlite3_store_what_the_run_store_stores(
    sqlite_url: str,
) -> None:
    store = open_store(sqlite_url)
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    try:
        _write_a_run(store, "a" + ODD_ID)
        _write_a_run(written, "b" + ODD_ID)
        assert written._full is None  # all of it through sqlite3
        for table in ("runs", "events"):
            assert _stored(sqlite_url, table, "b" + ODD_ID) == _stored(
                sqlite_url, table, "a" + ODD_ID
            )
        assert len(_stored(sqlite_url, "events", "b" + ODD_ID)) == len(HOSTILE_JSON)
        # Polling for a cancel: the statement SQLAlchemy issues, the ids it gives back.
        store.publish("c" + ODD_ID, [], first={"plugin": "p"})
        written.publish("d" + ODD_ID, [], first={"plugin": "p"})
        asked = [f"{first}{ODD_ID}" for first in "abcd"] + ["nothing", ""]
        assert written.cancels_requested(asked) == store.cancels_requested(asked) == set()
        for run_id in asked:  # the ended runs stay as they are
            store.request_cancel(run_id)
        found = written.cancels_requested(asked)
        assert found == store.cancels_requested(asked)
        assert sorted(run_id[0] for run_id in found) == ["c", "d"]
        assert written.cancels_requested([]) == set()
    finally:
        written.close()
        store.close()


def test_anything_else_opens_the_run_store(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store not made yet: the `RunStore`, which makes it.
    fresh = open_write_first(sqlite_url)
    assert isinstance(fresh, RunStore)
    fresh.close()
    # One behind its head, a URL that is not a plain file, PostgreSQL: the `RunStore` too
    # (which upgrades the store, or reads the URL as SQLAlchemy does).
    behind = tmp_path / "behind.db"
    open_store(f"sqlite:///{behind}").close()
    with sqlite3.connect(behind) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0006_citation_order'")
    connection.close()
    opened: list[str] = []
    full: Any = object()

    def open_full(url: str) -> Any:
        opened.append(url)
        return full

    others = [
        f"sqlite:///{behind}",
        f"sqlite:///{tmp_path}/odd%20name.db",
        "postgresql+psycopg://someone@127.0.0.1:1/nothing",
    ]
    monkeypatch.setattr(db, "open_store", open_full)
    assert all(open_write_first(url) is full for url in others)
    assert opened == others
    monkeypatch.undo()
    # At its head: written through sqlite3 until something else is asked; from then on
    # the `RunStore` answers everything, writes included.
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    try:
        written.publish("run_x", [], first={"plugin": "p", "status": "created"})
        assert written._full is None
        found = written.get_run("run_x")
        assert found is not None and found.plugin == "p"
        full = written._full
        assert isinstance(full, RunStore) and written.url == full.url
        written.publish("run_x", [{"seq": 1, "ts": "t", "type": "x", "data": {}}])
        assert [event["seq"] for event in full.events("run_x")] == [1]
    finally:
        written.close()


def _scripted_run(
    store: WriteFirstStore, tmp_path: Path, csv: Path, documents: Documents, warnings: list[str]
) -> tuple[str, StoreMirror]:
    plugin = load_plugin("feedback-analysis")
    mirror = StoreMirror(
        cast(RunStore, store),
        "run_kept",
        tmp_path / "ws",
        on_cancel=lambda _reason: None,
        flush_seconds=0.01,
        lock_seconds=0.2,
        warn=warnings.append,
    )
    mirror.start()
    result = asyncio.run(
        run_plugin(
            plugin,
            csv,
            ScriptedModel(turns(*documents)),
            workspace=tmp_path / "ws",
            run_id="run_kept",
            subscribers=[mirror],
        )
    )
    mirror.finish()
    return result.status.value, mirror


def test_a_locked_store_costs_the_run_a_warning_and_is_written_once_free(
    sqlite_url: str, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    open_store(sqlite_url).close()
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock throughout
    warnings: list[str] = []
    try:
        status, mirror = _scripted_run(written, tmp_path, feedback_csv, good_documents, warnings)
        assert status == "completed"
        assert not mirror.healthy
        assert len(warnings) == 1 and "database is locked" in warnings[0], warnings
        assert "runlens reindex" in warnings[0] and sqlite_url in warnings[0]
        holder.execute("ROLLBACK")
        # The lock gone, the same store writes again (its connection opened anew).
        written.publish("run_later", [], first={"plugin": "p"}, lock_seconds=0.2)
        assert written._full is None
    finally:
        holder.close()
        written.close()
    store = open_store(sqlite_url)
    try:
        assert store.get_run("run_later") is not None
        assert store.get_run("run_kept") is None  # `runlens reindex` brings it in
    finally:
        store.close()


def test_a_broken_store_costs_the_run_a_warning(
    sqlite_url: str, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    open_store(sqlite_url).close()
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as connection:
        connection.execute("DROP TABLE events")  # the store damaged after it was opened
    connection.close()
    warnings: list[str] = []
    try:
        status, mirror = _scripted_run(written, tmp_path, feedback_csv, good_documents, warnings)
    finally:
        written.close()
    assert status == "completed"
    assert not mirror.healthy
    assert len(warnings) == 1 and "no such table: events" in warnings[0], warnings


def test_closing_leaves_another_threads_connection_to_its_thread(sqlite_url: str) -> None:
    """`close` after a run's end, the mirrors' thread perhaps polling still: its poll goes
    on (as an engine's `dispose` leaves a connection in use), the caller's connection shuts."""
    open_store(sqlite_url).close()
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    written.publish("run_polled", [], first={"plugin": "p"})
    closed, polled = threading.Event(), threading.Event()
    answers: list[set[str]] = []

    def poll() -> None:
        answers.append(written.cancels_requested(["run_polled"]))
        polled.set()
        closed.wait(10)
        answers.append(written.cancels_requested(["run_polled"]))

    thread = threading.Thread(target=poll)
    thread.start()
    polled.wait(10)
    written.close()
    closed.set()
    thread.join(10)
    assert answers == [set(), set()]
    with pytest.raises(sqlite3.ProgrammingError):  # this thread's connection is closed
        written.publish("run_polled", [])


def test_this_processs_writers_wait_for_one_another(sqlite_url: str) -> None:
    """Two threads of one process writing at once: the second takes the store when the
    first commits (on the process's lock, not in SQLite's busy handler); one whose wait
    runs out asks SQLite without waiting more and fails as it failed before."""
    open_store(sqlite_url).close()
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    writes = written._writes
    inside, release = threading.Event(), threading.Event()
    outcomes: list[str] = []
    busy_set: list[str] = []

    def hold() -> None:
        with writes._writing():
            inside.set()
            release.wait(10)
        outcomes.append("first")

    def second(name: str, lock_seconds: float) -> None:
        try:
            writes.publish(name, [], first={"plugin": "p"}, lock_seconds=lock_seconds)
        except sqlite3.OperationalError as error:
            outcomes.append(f"{name}: {error}")
        else:
            outcomes.append(name)
        busy_set.append(f"{name} {writes._local.busy}")

    try:
        holder = threading.Thread(target=hold)
        holder.start()
        assert inside.wait(10)
        second("run_gave_up", 0.05)  # its wait runs out: as SQLite said it before
        assert outcomes == ["run_gave_up: database is locked"]
        assert busy_set == ["run_gave_up 0"]  # SQLite was asked without waiting more
        waiter = threading.Thread(target=second, args=("run_waited", 30))
        waiter.start()
        release.set()
        holder.join(10)
        waiter.join(10)
        assert outcomes[1:] == ["first", "run_waited"]
    finally:
        written.close()
    store = open_store(sqlite_url)
    try:
        assert store.get_run("run_waited") is not None
        assert store.get_run("run_gave_up") is None
    finally:
        store.close()


def test_another_processs_lock_is_waited_for_in_sqlite_as_before(sqlite_url: str) -> None:
    open_store(sqlite_url).close()
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            written.publish("run_locked_out", [], first={"plugin": "p"}, lock_seconds=0.05)
        holder.execute("ROLLBACK")
        written.publish("run_after", [], first={"plugin": "p"}, lock_seconds=0.05)
        assert not written._writes._serial.locked()  # released after each write, failed too
    finally:
        holder.close()
        written.close()
