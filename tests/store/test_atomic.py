"""A store write that fails leaves nothing half-written: a mirrored batch and a workspace's
sync are one transaction each (real PostgreSQL, refusing writes with a trigger)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from runlens.store import StoreMirror, open_store, sync_workspace
from runlens.store.engine import _engine

from .helpers import library_run

Documents = tuple[dict[str, Any], dict[str, Any], str]


def _refuse(url: str, table: str) -> None:
    """Make PostgreSQL refuse every insert into `table` (until `_allow`)."""
    engine = _engine(url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "CREATE OR REPLACE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql"
            )
        )
        connection.execute(
            sa.text(f"CREATE TRIGGER refuse BEFORE INSERT ON {table} EXECUTE FUNCTION refuse()")
        )
    engine.dispose()


def _allow(url: str, table: str) -> None:
    engine = _engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text(f"DROP TRIGGER refuse ON {table}"))
    engine.dispose()


def test_a_mirrored_batch_that_fails_writes_nothing_and_is_written_whole_later(
    postgres_url: str, tmp_path: Path
) -> None:
    store = open_store(postgres_url)
    warnings: list[str] = []
    workspace = tmp_path / "ws"
    mirror = StoreMirror(store, "run_atomic", workspace, lambda _: None, warn=warnings.append)
    batch = [
        {"seq": 1, "ts": "2026-12-01T10:00:00Z", "type": "run.created",
         "data": {"plugin": "feedback-analysis", "model": "offline\x00"}},
        {"seq": 2, "ts": "2026-12-01T10:00:01Z", "type": "run.started", "data": {}},
    ]  # fmt: skip
    try:
        _refuse(postgres_url, "events")
        mirror._unwritten.extend(batch)  # taken from the queue, not yet written
        mirror._flush()
        # The run row was written before the events failed: it went back with them.
        assert store.get_run("run_atomic") is None
        assert not mirror.healthy and len(warnings) == 1 and "refused by the test" in warnings[0]
        _allow(postgres_url, "events")
        mirror._flush()
        detail = store.get_run("run_atomic")
        assert detail is not None and detail.model == "offline\x00" and detail.last_seq == 2
        assert [e["seq"] for e in store.events("run_atomic")] == [1, 2]
        assert mirror.healthy
    finally:
        store.close()


def test_a_sync_that_fails_leaves_the_run_as_the_store_had_it(
    postgres_url: str, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    result = library_run(tmp_path / "ws", feedback_csv, good_documents)
    assert result.status.value == "completed"
    store = open_store(postgres_url)
    try:
        store.upsert_run(result.run_id, plugin="feedback-analysis", model="scripted",
                         status="running", workspace=str(tmp_path / "ws"))  # fmt: skip
        _refuse(postgres_url, "citations")
        try:
            sync_workspace(store, tmp_path / "ws")
        except sa.exc.DBAPIError as error:
            assert "refused by the test" in str(error)
        else:
            raise AssertionError("the sync should have failed")
        detail = store.get_run(result.run_id)
        assert detail is not None
        # Neither the end state nor any event, artifact or finding of the failed sync.
        assert detail.status == "running" and detail.last_seq == 0
        assert detail.artifacts == [] and store.event_count(result.run_id) == 0
        _allow(postgres_url, "citations")
        sync_workspace(store, tmp_path / "ws")
        detail = store.get_run(result.run_id)
        assert detail is not None and detail.status == "completed" and detail.artifacts
        assert store.event_count(result.run_id) == detail.last_seq > 0
    finally:
        store.close()
