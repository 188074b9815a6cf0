"""The mirrors of one store write the batches due at one tick in one transaction, and ask
in one query which of their runs someone wants stopped; a batch that fails there is its own
mirror's failure alone: the others' batches are written."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from runlens.store import RunStore, StoreMirror, open_store
from runlens.store.mirror import CANCEL_REASON, _flush_together, _poll_together, _Writer


def _batch(first_seq: int) -> list[dict[str, Any]]:
    return [
        {"seq": first_seq, "ts": "2026-12-01T10:00:00Z", "type": "run.created",
         "data": {"plugin": "feedback-analysis", "model": "offline"}},
        {"seq": first_seq + 1, "ts": "2026-12-01T10:00:01Z", "type": "run.started", "data": {}},
    ]  # fmt: skip


def _mirrors(store: RunStore, tmp_path: Path, warnings: list[str]) -> list[StoreMirror]:
    mirrors = [
        StoreMirror(store, f"run_{n}", tmp_path / f"ws_{n}", lambda _: None, warn=warnings.append)
        for n in range(3)
    ]
    for mirror in mirrors:
        mirror._unwritten.extend(_batch(1))  # taken from the queue, not yet written
    return mirrors


def _commits(store: RunStore) -> list[object]:
    commits: list[object] = []
    sa.event.listen(store.engine, "commit", commits.append)
    return commits


def test_the_batches_due_at_one_tick_are_one_transaction(store_url: str, tmp_path: Path) -> None:
    store = open_store(store_url)
    warnings: list[str] = []
    try:
        mirrors = _mirrors(store, tmp_path, warnings)
        commits = _commits(store)
        _flush_together(mirrors)
        assert len(commits) == 1
        for mirror in mirrors:
            assert mirror.healthy and mirror._unwritten == []
            assert [e["seq"] for e in store.events(mirror.run_id)] == [1, 2]
            detail = store.get_run(mirror.run_id)
            assert detail is not None and detail.status == "created" and detail.last_seq == 2
        # The next tick writes only what came since, again in one transaction.
        for mirror in mirrors:
            mirror._unwritten.extend(
                [{"seq": 3, "ts": "2026-12-01T10:00:02Z", "type": "note", "data": {}}]
            )
        commits.clear()  # the reads above commit too
        statements: list[str] = []
        sa.event.listen(
            store.engine,
            "before_cursor_execute",
            lambda _c, _cur, statement, *_: statements.append(statement),
        )
        _flush_together(mirrors)
        assert len(commits) == 1
        # The events of all three in one statement, their `last_seq` raised in one more.
        writes = [s.split()[:3] for s in statements if s.split()[0] in ("INSERT", "UPDATE")]
        assert writes == [["INSERT", "INTO", "events"], ["UPDATE", "runs", "SET"]]
        for mirror in mirrors:
            assert [e["seq"] for e in store.events(mirror.run_id)] == [1, 2, 3]
        assert warnings == []
    finally:
        store.close()


def test_a_batch_that_fails_in_a_tick_leaves_the_others_written(
    sqlite_url: str, tmp_path: Path
) -> None:
    store = open_store(sqlite_url)
    warnings: list[str] = []
    try:
        mirrors = _mirrors(store, tmp_path, warnings)
        broken = mirrors[1]
        with store.engine.begin() as connection:  # the store refuses that run's events
            connection.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.run_id = 'run_1' "
                "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
            )
        _flush_together([broken])  # alone at its tick: its failure said, its batch kept
        assert not broken.healthy and len(broken._unwritten) == 2 and len(warnings) == 1
        _flush_together(mirrors)
        for mirror in (mirrors[0], mirrors[2]):
            assert mirror.healthy and mirror._unwritten == []
            assert [e["seq"] for e in store.events(mirror.run_id)] == [1, 2]
        assert store.get_run(broken.run_id) is None and store.events(broken.run_id) == []
        assert not broken.healthy and len(broken._unwritten) == 2
        assert len(warnings) == 1 and "refused by the test" in warnings[0]
        with store.engine.begin() as connection:
            connection.exec_driver_sql("DROP TRIGGER refuse")
        _flush_together(mirrors)  # kept, and written whole at the next tick
        assert broken.healthy and [e["seq"] for e in store.events(broken.run_id)] == [1, 2]
    finally:
        store.close()


def test_the_mirrors_of_a_store_ask_in_one_query_which_runs_to_stop(
    store_url: str, tmp_path: Path
) -> None:
    store = open_store(store_url)
    warnings: list[str] = []
    cancelled: list[tuple[str, str]] = []

    def on_cancel(run_id: str) -> Callable[[str], None]:
        return lambda reason: cancelled.append((run_id, reason))

    try:
        mirrors = [
            StoreMirror(
                store, f"run_{n}", tmp_path / f"ws_{n}", on_cancel(f"run_{n}"), warn=warnings.append
            )
            for n in range(3)
        ]
        for mirror in mirrors:
            mirror._unwritten.extend(_batch(1))
        _flush_together(mirrors)
        store.request_cancel("run_2")
        selects: list[str] = []
        sa.event.listen(
            store.engine,
            "before_cursor_execute",
            lambda _c, _cur, statement, *_: selects.append(statement),
        )
        _poll_together(mirrors)
        assert cancelled == [("run_2", CANCEL_REASON)]
        assert len([s for s in selects if s.lstrip().upper().startswith("SELECT")]) == 1
        _poll_together(mirrors)  # once only
        assert cancelled == [("run_2", CANCEL_REASON)] and warnings == []
    finally:
        store.close()


def test_a_mirror_wakes_the_writer_thread_only_when_something_is_due_before_it_wakes(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(sqlite_url)
    try:
        writer = _Writer(id(store))  # the store's writer, its thread not started here
        monkeypatch.setitem(_Writer._writers, id(store), writer)
        writer.deadline = time.monotonic() + 10
        first = StoreMirror(store, "run_a", tmp_path / "a", lambda _: None).start()
        assert first in writer.mirrors and writer.wake.is_set()  # due in 0.2 s, before 10 s
        writer.wake.clear()
        writer.deadline = time.monotonic() + 0.05
        second = StoreMirror(store, "run_b", tmp_path / "b", lambda _: None).start()
        assert second in writer.mirrors and not writer.wake.is_set()  # it wakes first anyway
        _Writer.remove(first)  # a mirror leaving never wakes it
        assert writer.mirrors == [second] and not writer.wake.is_set()
    finally:
        store.close()
