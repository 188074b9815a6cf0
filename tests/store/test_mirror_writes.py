"""What the mirror writes, and how: a finished mirrored run's rows equal what a reindex of
its workspace alone writes (however its events reached the store), a batch of events is a
bounded number of statements whatever its size, and the run's thread only queues events
(they are redacted and encoded on the mirror's)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest
import sqlalchemy as sa

from runlens.plugins import load_plugin
from runlens.records import citations as citations_module
from runlens.records import io as records_io
from runlens.records import readers
from runlens.records.events import Event, read_events
from runlens.records.io import WrittenRecords, encode_record, read_json_object
from runlens.records.status import InvalidTransition
from runlens.runtime.run import Run, RunSettings
from runlens.secrets import redactor
from runlens.store import RunStore, StoreMirror, open_store, sync_workspace, tables
from runlens.store.write_first import WriteFirstStore, open_write_first
from runlens.testing import ScriptedModel

from .helpers import failing_documents, turns

Documents = tuple[dict[str, Any], dict[str, Any], str]
SECRET = "test-key-0123456789abcdef"
_TABLES = (tables.runs, tables.events, tables.artifacts, tables.findings, tables.citations)


def _rows(store: RunStore, run_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every row the store holds of the run, table by table in key order (`updated_at`, the
    time of the last write, left out)."""
    found: dict[str, list[dict[str, Any]]] = {}
    with store.engine.connect() as connection:
        for table in _TABLES:
            rows = connection.execute(
                sa.select(table)
                .where(table.c.run_id == run_id)
                .order_by(*table.primary_key.columns)
            ).all()
            found[table.name] = [
                {key: value for key, value in row._mapping.items() if key != "updated_at"}
                for row in rows
            ]
    return found


def _assert_a_reindex_writes(
    store: RunStore, workspace: Path, run_id: str, rows: dict[str, list[dict[str, Any]]]
) -> None:
    """The run's rows deleted, a reindex of its workspace alone writes `rows` again."""
    store.delete_run(run_id)
    assert sync_workspace(store, workspace) == run_id
    assert _rows(store, run_id) == rows


def _mirrored_run(
    store: RunStore,
    workspace: Path,
    csv: Path,
    documents: Documents,
    *,
    run_id: str,
    flush_seconds: float,
    queue_size: int = 50_000,
    live_batches: bool = False,
    watched: RunStore | None = None,
    redacting: bool = True,
) -> StoreMirror:
    """A run of the feedback plugin mirrored into `store` as `runlens run` mirrors it, its
    key (`SECRET`) redacted (unless not `redacting`: a mirror with nothing to redact);
    finished. `live_batches`: the run waits, before validating, until the mirror has
    written some of its events (as `watched` reads them, else `store`)."""
    plugin = load_plugin("feedback-analysis")
    script = turns(*documents)
    script[1]["content"] = f"Writing, with {SECRET} echoed."
    model = ScriptedModel(script)
    settings = RunSettings(secrets=(SECRET,) if redacting else ())
    mirror = StoreMirror(
        store,
        run_id,
        workspace,
        on_cancel=lambda _reason: None,
        redact=redactor(settings.secrets) if redacting else None,
        flush_seconds=flush_seconds,
        queue_size=queue_size,
    )

    def wait_for_the_store(event: Event) -> None:
        if live_batches and event.type == "run.validating":
            for _ in range(600):
                if (watched or store).events(run_id):
                    return
                threading.Event().wait(0.05)
            raise AssertionError("the mirror wrote nothing while the run was live")

    run = Run(
        plugin=plugin,
        input_path=csv,
        model=model,
        workspace=workspace,
        settings=settings,
        run_id=run_id,
        subscribers=[mirror, wait_for_the_store],
    )
    mirror.start()
    try:
        asyncio.run(run.execute())
    finally:
        mirror.finish()
    return mirror


@pytest.mark.parametrize(
    ("failing", "flush_seconds", "live_batches", "queue_size"),
    [
        (False, 0.01, True, 50_000),  # streamed while live, the rest written at the end
        (True, 3600, False, 50_000),  # every event written at the end
        (True, 3600, False, 5),  # fell behind: the end syncs the workspace
    ],
    ids=["streamed", "at-the-end", "fell-behind"],
)
def test_a_mirrored_runs_rows_equal_what_a_reindex_of_its_workspace_writes(
    store: RunStore,
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    failing: bool,
    flush_seconds: float,
    live_batches: bool,
    queue_size: int,
) -> None:
    workspace = tmp_path / "ws"
    documents = failing_documents(good_documents) if failing else good_documents
    mirror = _mirrored_run(
        store,
        workspace,
        feedback_csv,
        documents,
        run_id="run_mirrored",
        flush_seconds=flush_seconds,
        live_batches=live_batches,
        queue_size=queue_size,
    )
    assert mirror.healthy
    mirrored = _rows(store, "run_mirrored")
    assert mirrored["runs"][0]["status"] == ("failed" if failing else "completed")
    events = list(read_events(workspace / "runtime" / "events.jsonl"))
    assert store.events("run_mirrored") == events
    assert SECRET not in repr(mirrored) and "[REDACTED]" in repr(mirrored["events"])
    assert mirrored["artifacts"] and mirrored["citations"]
    if failing:
        assert mirrored["findings"]
    # `runlens reindex` of the workspace alone, into a store that has forgotten the run.
    store.delete_run("run_mirrored")
    assert _rows(store, "run_mirrored")["events"] == []
    assert sync_workspace(store, workspace) == "run_mirrored"
    assert _rows(store, "run_mirrored") == mirrored


@pytest.mark.parametrize(
    ("failing", "flush_seconds", "live_batches"),
    [(False, 0.01, True), (True, 0.01, True), (True, 3600, False)],
    ids=["streamed", "streamed-failing", "at-the-end"],
)
def test_a_mirror_with_nothing_to_redact_stores_what_a_reindex_writes(
    store: RunStore,
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    failing: bool,
    flush_seconds: float,
    live_batches: bool,
) -> None:
    """A mirror without a redactor keeps the run's events as they are (not made into
    dicts): the rows are the same."""
    workspace = tmp_path / "ws"
    documents = failing_documents(good_documents) if failing else good_documents
    mirror = _mirrored_run(
        store,
        workspace,
        feedback_csv,
        documents,
        run_id="run_plain",
        flush_seconds=flush_seconds,
        live_batches=live_batches,
        redacting=False,
    )
    assert mirror.healthy
    mirrored = _rows(store, "run_plain")
    assert mirrored["runs"][0]["status"] == ("failed" if failing else "completed")
    assert store.events("run_plain") == list(read_events(workspace / "runtime" / "events.jsonl"))
    assert mirrored["artifacts"] and mirrored["citations"]
    if failing:
        assert len(mirrored["findings"]) > 1  # ordered by the report's events
    _assert_a_reindex_writes(store, workspace, "run_plain", mirrored)


@pytest.mark.parametrize(
    ("failing", "flush_seconds", "live_batches", "queue_size"),
    [
        (False, 0.01, True, 50_000),
        (True, 0.01, True, 50_000),
        (True, 3600, False, 50_000),
        (True, 3600, False, 5),  # fell behind: the end syncs the workspace (`RunStore`)
    ],
    ids=["streamed", "streamed-failing", "at-the-end", "fell-behind"],
)
def test_a_run_written_through_sqlite3_stores_the_rows_the_run_store_writes(
    sqlite_url: str,
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    failing: bool,
    flush_seconds: float,
    live_batches: bool,
    queue_size: int,
) -> None:
    """`runlens run`'s store (`open_write_first`) on a SQLite store at its head: the run's
    batches and its end go through `sqlite3` alone (SQLAlchemy's store is never opened), and
    the rows stored equal those the `RunStore` writes of the same workspace."""
    store = open_store(sqlite_url)  # the store made: at its head
    written = open_write_first(sqlite_url)
    assert isinstance(written, WriteFirstStore)
    workspace = tmp_path / "ws"
    documents = failing_documents(good_documents) if failing else good_documents
    try:
        mirror = _mirrored_run(
            cast(RunStore, written),
            workspace,
            feedback_csv,
            documents,
            run_id="run_sqlite3",
            flush_seconds=flush_seconds,
            live_batches=live_batches,
            queue_size=queue_size,
            watched=store,
        )
        assert mirror.healthy
        # Every write through sqlite3, but the sync of a mirror that fell behind.
        assert (written._full is None) == (queue_size > 5)
    finally:
        written.close()
    mirrored = _rows(store, "run_sqlite3")
    assert mirrored["runs"][0]["status"] == ("failed" if failing else "completed")
    assert store.events("run_sqlite3") == list(read_events(workspace / "runtime" / "events.jsonl"))
    assert mirrored["artifacts"] and mirrored["citations"]
    assert SECRET not in repr(mirrored) and "[REDACTED]" in repr(mirrored["events"])
    _assert_a_reindex_writes(store, workspace, "run_sqlite3", mirrored)
    store.close()


def test_the_end_of_a_mirrored_run_reads_no_record_file_the_run_handed_over(
    store: RunStore,
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime hands the mirror its final `run.json`, manifest and citations as it wrote
    them (`records_written`): the end neither reads them back nor writes other rows than a
    reindex of the workspace alone (the test above, for every way the events go)."""
    read: list[str] = []

    def reading(path: Path, label: str) -> Any:
        read.append(path.name)
        return read_json_object(path, label)

    for module in (records_io, readers, citations_module):
        monkeypatch.setattr(module, "read_json_object", reading)
    taken: list[WrittenRecords] = []
    original = StoreMirror.records_written

    def records_written(mirror: StoreMirror, records: WrittenRecords) -> None:
        taken.append(records)
        read.clear()  # what the run read before its end is not the mirror's
        original(mirror, records)

    monkeypatch.setattr(StoreMirror, "records_written", records_written)
    workspace = tmp_path / "ws"
    mirror = _mirrored_run(
        store, workspace, feedback_csv, good_documents, run_id="run_handed", flush_seconds=3600
    )
    assert mirror.healthy and len(taken) == 1
    assert read == []
    runtime = workspace / "runtime"
    assert taken[0].run_record == (runtime / "run.json").read_bytes()
    assert taken[0].manifest == (workspace / "manifest.json").read_bytes()
    assert taken[0].citations == (runtime / "citations.json").read_bytes()
    mirrored = _rows(store, "run_handed")
    assert mirrored["runs"][0]["status"] == "completed" and mirrored["citations"]
    _assert_a_reindex_writes(store, workspace, "run_handed", mirrored)


def test_a_streamed_run_is_folded_onto_the_record_the_run_handed_over(
    store: RunStore,
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime hands the mirror `run.json` as it wrote it when the run started running
    (`record_started`): the live batches fold the run's status and plan onto it without
    reading it back (a batch before the run started finds no file to read), and the run's
    rows still equal what a reindex of its workspace writes."""
    read: list[str] = []

    def reading(path: Path, label: str) -> Any:
        value, problem = read_json_object(path, label)
        if value is not None or problem is not None:  # a file there to read
            read.append(path.name)
        return value, problem

    monkeypatch.setattr(readers, "read_json_object", reading)
    started: list[bytes] = []
    original = StoreMirror.record_started

    def record_started(mirror: StoreMirror, raw: bytes) -> None:
        started.append(raw)
        original(mirror, raw)

    monkeypatch.setattr(StoreMirror, "record_started", record_started)
    live: list[dict[str, Any]] = []
    original_prepare = StoreMirror._prepare

    def prepare(mirror: StoreMirror, batch: list[Any]) -> Any:
        published, written = original_prepare(mirror, batch)
        if published.live:
            live.append(dict(published.live))
        return published, written

    monkeypatch.setattr(StoreMirror, "_prepare", prepare)
    workspace = tmp_path / "ws"
    mirror = _mirrored_run(
        store,
        workspace,
        feedback_csv,
        good_documents,
        run_id="run_started",
        flush_seconds=0.01,
        live_batches=True,
    )
    assert mirror.healthy and len(started) == 1
    first = readers.parse_view(readers.RunRecordView, started[0], "run.json").view
    assert first is not None and first.status == "running" and first.run_id == "run_started"
    assert "run.json" not in read
    # The live batches wrote the run's status and plan, folded onto the record handed over.
    assert live and {fields.get("status") for fields in live} <= {"running", "validating"}
    assert [step["id"] for step in live[-1]["plan"]] == [step.id for step in first.plan]
    mirrored = _rows(store, "run_started")
    assert mirrored["runs"][0]["status"] == "completed"
    _assert_a_reindex_writes(store, workspace, "run_started", mirrored)


def test_a_run_record_rewritten_after_the_hand_over_is_read_as_it_is_now(
    store: RunStore, tmp_path: Path
) -> None:
    """Records handed over that the workspace no longer holds (its `run.json` rewritten
    since, to another size) are not taken: the end writes what the files say now, as a
    reindex would."""
    workspace = tmp_path / "ws"
    runtime = workspace / "runtime"
    runtime.mkdir(parents=True)
    record = {
        "run_id": "run_rewritten",
        "plugin": "p",
        "model": "m",
        "status": "completed",
        "plan": [],
        "warnings": ["odd \u0000 \ue000 😀 text"],
    }
    manifest = {"run_id": "run_rewritten", "artifacts": [], "findings": []}
    handed = WrittenRecords(
        run_record=encode_record({**record, "status": "failed", "error_message": "x"}),
        manifest=encode_record({**manifest, "artifacts": [{"name": "gone.json"}]}),
        citations=None,
    )
    (runtime / "run.json").write_bytes(encode_record(record))
    (workspace / "manifest.json").write_bytes(encode_record(manifest))
    (runtime / "events.jsonl").write_bytes(b"")
    mirror = StoreMirror(store, "run_rewritten", workspace, on_cancel=lambda _reason: None)
    mirror.records_written(handed)
    mirror.start()
    mirror.finish()
    assert mirror.healthy
    ended = _rows(store, "run_rewritten")
    assert ended["runs"][0]["status"] == "completed" and ended["artifacts"] == []
    assert ended["runs"][0]["warnings"] == record["warnings"]
    _assert_a_reindex_writes(store, workspace, "run_rewritten", ended)


@contextmanager
def _statements(store: RunStore) -> Iterator[list[tuple[str, bool]]]:
    """Every statement the store's engine sends (its SQL, and whether it is an executemany),
    while the block runs."""
    sent: list[tuple[str, bool]] = []

    def count(
        _conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, many: bool
    ) -> None:
        sent.append((statement, many))

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)


def _events(run_id: str, first: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "seq": seq,
            "ts": "2026-12-01T10:00:00.000+00:00",
            "run_id": run_id,
            "type": "tool.called",
            "data": {"tool": "note", "call": f"c{seq}"},
        }
        for seq in range(first, first + count)
    ]


def test_a_batch_of_events_is_the_same_few_statements_whatever_its_size(
    store: RunStore,
) -> None:
    first = {"plugin": "p", "model": "m", "workspace": "/w", "status": "created"}
    store.publish("run_batches", _events("run_batches", 1, 1), first=first)
    counts = []
    start = 2
    for size in (2, 40, 800):
        with _statements(store) as sent:
            store.publish(
                "run_batches",
                _events("run_batches", start, size),
                live={"status": "running", "plan": [], "warnings": []},
            )
        start += size
        inserts = [many for statement, many in sent if "INSERT INTO events" in statement]
        if store.engine.dialect.name == "sqlite":
            assert inserts and all(inserts), sent  # the events go as one executemany
        else:  # one statement of one array a column, however many events
            assert inserts == [False], sent
        counts.append(len(sent))
    assert counts[0] == counts[1] == counts[2] <= 8, counts
    assert store.event_count("run_batches") == start - 1
    summary = store.get_run("run_batches")
    assert summary is not None and summary.last_seq == start - 1


def test_the_end_of_a_run_is_the_same_few_statements_however_many_events_wait(
    store: RunStore, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    """Every event of the run waits for `finish` (the thread never flushed): the events go
    in one statement, not one each, and the workspace's event log is not read back."""
    counts = []
    plugin = load_plugin("feedback-analysis")
    for number in range(2):
        run_id = f"run_end_{number}"
        script = turns(*failing_documents(good_documents))
        # More events in the second run: the model writes its documents again and again.
        script = [script[0], *([script[1]] * (1 + 5 * number)), script[2]]
        mirror = StoreMirror(
            store, run_id, tmp_path / run_id, on_cancel=lambda _r: None, flush_seconds=3600
        )
        run = Run(
            plugin=plugin,
            input_path=feedback_csv,
            model=ScriptedModel(script),
            workspace=tmp_path / run_id,
            run_id=run_id,
            subscribers=[mirror],
        )
        mirror.start()
        asyncio.run(run.execute())
        with _statements(store) as sent:
            mirror.finish()
        assert mirror.healthy
        assert store.events(run_id) == list(
            read_events(tmp_path / run_id / "runtime" / "events.jsonl")
        )
        counts.append((len(sent), store.event_count(run_id)))
    (few, few_events), (many, many_events) = counts
    assert many_events > few_events + 20
    assert few == many, counts


def test_the_runs_thread_only_queues_events(
    sqlite_url: str, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    """The redaction and encoding of events happen on the mirror's thread."""
    from runlens.store import open_store

    store = open_store(sqlite_url)
    threads: set[int] = set()
    mask = redactor((SECRET,))
    assert mask is not None

    def redact(text: str) -> str:
        threads.add(threading.get_ident())
        return mask(text)

    published: set[int] = set()

    def on_the_runs_thread(event: Event) -> None:
        published.add(threading.get_ident())
        if event.type == "run.validating":  # the mirror has taken some events by now
            for _ in range(600):
                if threads:
                    return
                threading.Event().wait(0.05)

    plugin = load_plugin("feedback-analysis")
    mirror = StoreMirror(
        store,
        "run_thread",
        tmp_path / "ws",
        on_cancel=lambda _r: None,
        redact=redact,
        flush_seconds=0.01,
    )
    run = Run(
        plugin=plugin,
        input_path=feedback_csv,
        model=ScriptedModel(turns(*good_documents)),
        workspace=tmp_path / "ws",
        run_id="run_thread",
        subscribers=[mirror, on_the_runs_thread],
    )
    mirror.start()
    try:
        asyncio.run(run.execute())
        while_live = set(threads)  # `finish` encodes what is left where it is called
        mirror.finish()
    finally:
        store.close()
    assert while_live and published and not while_live & published


def test_a_first_batch_stores_the_row_its_first_and_live_fields_store_one_after_the_other(
    store: RunStore,
) -> None:
    """A mirror's first batch inserts its run with the live fields in one statement: the
    row is the one the first fields, the events and then the live fields store in turn."""
    first = {"plugin": "p\x00", "model": "m", "workspace": "/w\ud800", "status": "created"}
    live = {"status": "running", "plan": [{"id": "s", "status": "running"}], "warnings": ["w"]}
    store.publish("run_together", _events("run_together", 1, 3), first=first, live=live)
    store.upsert_run("run_in_turn", **first)
    store.append_events("run_in_turn", _events("run_in_turn", 1, 3))
    store.upsert_run("run_in_turn", **live)
    together, in_turn = _rows(store, "run_together"), _rows(store, "run_in_turn")
    for rows in (together, in_turn):
        for table_rows in rows.values():
            for row in table_rows:
                row.pop("run_id")
    assert together == in_turn
    assert together["runs"][0]["status"] == "running" and together["runs"][0]["last_seq"] == 3


def test_a_first_batch_never_revives_a_run_the_store_holds_ended(store: RunStore) -> None:
    first = {"plugin": "p", "model": "m", "workspace": "/w", "status": "created"}
    store.upsert_run("run_ended", plugin="old", model="m", workspace="/old", status="running")
    store.finish("run_ended", "completed")
    live = {"status": "running", "warnings": ["late"]}
    store.publish("run_ended", _events("run_ended", 1, 2), first=first, live=live)
    detail = store.get_run("run_ended")
    assert detail is not None
    assert (detail.status, detail.plugin, detail.warnings) == ("completed", "old", [])
    assert store.event_count("run_ended") == 2
    # A live run the store holds takes the first and live fields, as before.
    store.upsert_run("run_live", plugin="old", model="m", workspace="/old", status="queued")
    store.publish("run_live", _events("run_live", 1, 1), first=first, live=live)
    detail = store.get_run("run_live")
    assert detail is not None
    assert (detail.status, detail.plugin, detail.warnings) == ("running", "p", ["late"])


@pytest.mark.parametrize("held", ["none", "live", "ended", "worker"])
def test_the_end_of_a_run_the_mirror_never_wrote_is_what_it_is_otherwise(
    store: RunStore, held: str
) -> None:
    """`end_run(new=True)` (a mirror that never wrote its run: the row inserted first) leaves
    the rows `end_run` leaves, whatever the store holds of the run already."""
    fields = {"plugin": "p", "model": "m", "workspace": "/w", "problems": ["\x00"]}
    final = {"finished_at": "2026-12-06T10:00:00.000+00:00"}
    outcomes: list[Any] = []
    for run_id, new in (("run_old_way", False), ("run_new_way", True)):
        if held != "none":
            store.upsert_run(run_id, plugin="x", model="x", workspace="/x", status="running")
            store.append_events(run_id, _events(run_id, 1, 2))
        if held == "ended":
            store.finish(run_id, "failed")
        if held == "worker":
            store.upsert_run(run_id, worker="w1")
            store.finish(run_id, "failed")
        try:
            store.end_run(run_id, "completed", fields, _events(run_id, 1, 5), None, final, new=new)
        except InvalidTransition as error:
            outcomes.append(str(error))
        else:
            rows = _rows(store, run_id)
            for table_rows in rows.values():
                for row in table_rows:
                    row.pop("run_id")
            outcomes.append(rows)
    assert outcomes[0] == outcomes[1]
    if held == "worker":
        assert isinstance(outcomes[0], str)  # a worker's run ended once stays as it ended
    else:
        assert outcomes[0]["runs"][0]["status"] == "completed"
        assert outcomes[0]["runs"][0]["last_seq"] == 5
