"""A run's stored life: every write of a run's row, its events and its results, as named
transitions. Nothing else in RunLens writes a run's status to the store.

Which copy of a run is the truth depends on how the run was started:

- **A local run** (`runlens run`, a run the UI starts on this machine): its workspace is the
  truth, and the store an index of it, rebuilt from it at will (`runlens.store.sync`: the
  index follows what the workspace records, and `index_run` never refuses it). While the run
  is live the mirror (`runlens.store.mirror`) publishes its events here.
- **A queued run** (`runlens submit`, run by `runlens worker`): the store is the truth, and the
  workspace of the worker executing it a cache, wiped and rebuilt from the store when another
  worker resumes the run (`runlens.workers.workflow`). Its end is written once: a run a worker
  holds that the store shows ended never ends another way (`finish` refuses it).

The transitions, in the order of a run's life:

    queue            a submitted run, `queued` (no worker has started it)
    create_pending   a run about to be started by another process, `created`
    claim            a worker takes a queued run (or resumes it: `run.resumed` is published)
    publish          a live run's events, with the fields they change (`running`, `validating`)
    index_run        what a workspace records (the index of a local run, a damaged record)
    finish           the end state, after the run's results (`replace_results`)
    end_unstarted    a run no process got going ends `failed` or `cancelled`
    request_cancel   someone asks the run to stop (its process polls `cancel_requested`)
    set_clashes      copies of the run's workspace found on this machine
    set_review_state what the run's valid review decisions add up to (SPEC section 17)
    drop_events_from a replay published something else: the events from there on go
    delete_run       the run is forgotten (its workspace is left alone)

A local run whose process died reaches the store `interrupted` through `finish`, once a reader
has settled its workspace (`runtime.recovery`). A worker's run is never settled so: a worker
that stops hands its runs back (`expire_worker`, `runlens.workers.handover`) and the next one
to `claim` a run resumes it.

Each checks the move with `runlens.records.status` where the stored status is known: a run
never goes back from an end state (a reader that read the workspace just before the run
ended must not undo the run's own final write).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from runlens.records.io import utc_now
from runlens.records.status import (
    LIVE,
    QUEUED,
    TERMINAL,
    UNSTARTED,
    InvalidTransition,
    RunStatus,
    check_stored,
    is_terminal,
)
from runlens.store import driver as d
from runlens.store import tables as t
from runlens.store.reviews import REVIEW_STATES
from runlens.store.rows import ArtifactRow, CitationRow, FindingRow, Origin, RunSummary
from runlens.store.runs import RunReads, summary_of

#: The highest event `seq` the store keeps (its `INTEGER` column's top).
MAX_SEQ: Final = d.MAX_SEQ
#: Fields `upsert_run` may set (the `runs` columns besides `run_id`).
RUN_FIELDS: Final = frozenset(column.name for column in t.runs.columns) - {"run_id"}
_ENDED: Final = sorted(status.value for status in TERMINAL)
_UNSTARTED: Final = sorted(str(status) for status in UNSTARTED)
# The statements a run's writes repeat, built once (their parameters given at execution:
# `the_run` the run's id; an UPDATE without values sets the columns its parameters name).
#: The run's row: the columns given.
_UPDATE_RUN: Final = sa.update(t.runs).where(t.runs.c.run_id == sa.bindparam("the_run"))
#: The run's stored status and worker, its row locked until the transaction ends.
_LOCK_RUN: Final = (
    sa.select(t.runs.c.status, t.runs.c.worker)
    .where(t.runs.c.run_id == sa.bindparam("the_run"))
    .with_for_update()
)
#: A run's results: its artifacts, findings and citations.
Results = tuple[Sequence[ArtifactRow], Sequence[FindingRow], Sequence[CitationRow]]


@dataclass(frozen=True, slots=True)
class Published:
    """One live run's batch for `RunLife.publish_many`: `publish`'s arguments."""

    run_id: str
    events: Sequence[Mapping[str, Any]]
    first: Mapping[str, Any] | None = None
    live: Mapping[str, Any] | None = None


class RunLife(RunReads):
    """The store's writes of a run: its row, events and results."""

    def upsert_run(self, run_id: str, **fields: Any) -> None:
        """Create the run, or update the fields given (`RUN_FIELDS`); `updated_at` is now.

        A new run needs `plugin`, `model`, `status` and `workspace`; `host` defaults to this
        machine. A run that has ended never goes back to a live status (`LIVE`, `queued`
        included); `queued` to `created` or `running` is a run moving on. The transitions
        below are the product's way in; this is theirs (and the tests')."""
        self._upsert(run_id, fields)

    def _upsert(self, run_id: str, fields: Mapping[str, Any], *, new: bool = False) -> None:
        """`upsert_run`; `new`: the run is most likely not in the store yet (a mirror's
        first write), so its row is inserted first, one statement instead of three, and
        only a run the store holds already takes the way of `upsert_run`."""
        unknown = set(fields) - RUN_FIELDS
        if unknown:
            raise ValueError(f"not fields of a run: {', '.join(sorted(unknown))}")
        values = {**fields, "updated_at": fields.get("updated_at") or utc_now()}
        with self._write() as connection:
            self._upsert_run(connection, run_id, values, new=new)

    def _new_row(self, run_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """The row of a run the store does not hold yet: `values`, and what a run first
        heard of through its events alone (its `run.created` not among them) lacks."""
        row = {"host": self.host, "origin": "cli", **values, "run_id": run_id}
        row.setdefault("plugin", "unknown")
        row.setdefault("model", "unknown")
        row.setdefault("status", RunStatus.CREATED.value)
        row.setdefault("workspace", "")
        return row

    def _upsert_run(
        self, connection: Connection, run_id: str, values: dict[str, Any], *, new: bool = False
    ) -> None:
        row = self._new_row(run_id, values)
        with _driver(connection) as (driver, engine):
            if new and d.insert_run(driver, engine, row, skip_held=True):
                return  # the row `insert_run` below would have written
            if values.get("status") in LIVE and is_terminal(d.run_status(driver, engine, run_id)):
                return  # a stale reader: the run's own end stays
            if d.update_run(driver, engine, run_id, values):
                return
            d.insert_run(driver, engine, row, update=list(values))

    def _status(self, connection: Connection, run_id: str) -> str | None:
        """The run's stored status, its row locked until the transaction ends."""
        status = connection.execute(_LOCK_RUN, {"the_run": run_id}).scalar()
        return str(status) if status is not None else None

    # -- before a run starts ---------------------------------------------------------------

    def queue(
        self,
        run_id: str,
        *,
        plugin: str,
        model: str,
        input_name: str,
        origin: Origin,
        created_at: str | None = None,
        submitted_by: str | None = None,
    ) -> None:
        """A run submitted to the workers: `queued`, its workspace not known yet."""
        self.upsert_run(
            run_id,
            plugin=plugin,
            model=model,
            status=QUEUED,
            input_name=input_name,
            workspace="",
            origin=origin,
            created_at=created_at or utc_now(),
            submitted_by=submitted_by,
        )

    def create_pending(
        self,
        run_id: str,
        *,
        plugin: str,
        model: str,
        input_name: str | None,
        workspace: str | Path,
        origin: Literal["cli", "ui", "api"],
        submitted_by: str | None = None,
        rerun_of: str | None = None,
    ) -> None:
        """A run about to be started by another process: `created`, on this machine (who
        starts it and the run it re-runs, when it does: SPEC 17)."""
        now = utc_now()
        with self._write() as connection:
            connection.execute(
                sa.insert(t.runs).values(
                    run_id=run_id,
                    plugin=plugin,
                    model=model,
                    status=RunStatus.CREATED.value,
                    input_name=input_name,
                    workspace=str(workspace),
                    origin=origin,
                    host=self.host,
                    created_at=now,
                    updated_at=now,
                    submitted_by=submitted_by,
                    rerun_of=rerun_of,
                )
            )

    def claim(
        self,
        run_id: str,
        *,
        worker: str,
        host: str,
        resumed: Mapping[str, Any] | None = None,
    ) -> bool:
        """A worker takes the run (its status moves on when the run publishes it): with
        `resumed`, the `run.resumed` event of a run taken over from another worker, published
        with the claim. False, and nothing written, when the run has ended (cancelled in the
        queue as the worker took it)."""
        with self.transaction():
            with self._write() as connection:
                if is_terminal(self._status(connection, run_id)):
                    return False
            if resumed is not None:
                self.append_events(run_id, [resumed])
            self.upsert_run(run_id, worker=worker, host=host)
        return True

    # -- while it runs ---------------------------------------------------------------------

    def publish(
        self,
        run_id: str,
        events: Sequence[Mapping[str, Any]],
        *,
        first: Mapping[str, Any] | None = None,
        live: Mapping[str, Any] | None = None,
        lock_seconds: float | None = None,
    ) -> None:
        """A live run's events, in one transaction with `first` (the run's row as it began:
        plugin, model, workspace, `created`) and `live` (what the events change: status,
        plan, warnings). Ends are not published: `finish` writes them with the results."""
        self.publish_many([Published(run_id, events, first, live)], lock_seconds=lock_seconds)

    def publish_many(
        self, batches: Sequence[Published], *, lock_seconds: float | None = None
    ) -> None:
        """What `publish` writes for each of several live runs, all in one transaction and
        the events of all in one statement (and one more raising each run's `last_seq`): the
        batches a process's mirrors have ready at one tick (`runlens.store.mirror`)."""
        for batch in batches:
            if batch.live is not None and is_terminal(batch.live.get("status")):
                raise InvalidTransition("a run's end is written by `finish`, not published")
        with self.transaction(lock_seconds=lock_seconds):
            for batch in batches:
                if batch.first is not None:
                    self._upsert(batch.run_id, batch.first, new=True)
            rows: list[tuple[Any, ...]] = []
            tops: list[tuple[str, int]] = []
            for batch in batches:
                added, top = d.event_rows(batch.run_id, batch.events)
                if top is not None:
                    rows.extend(added)
                    tops.append((batch.run_id, top))
            if rows:
                with (
                    self._write() as connection,
                    _driver(connection) as (driver, engine),
                    d.pipelined(driver, engine),
                ):
                    d.insert_encoded(driver, engine, d.EVENTS, rows)
                    d.raise_last_seq(driver, engine, tops, utc_now())
            for batch in batches:
                if batch.live:
                    self.upsert_run(batch.run_id, **batch.live)

    def append_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> int:
        """Add events (`{seq, ts, type, data}`); ones the store holds already are skipped.
        The run's `last_seq` becomes the highest `seq` it holds. Returns how many were given
        with a usable `seq` (an integer from 0 to `MAX_SEQ`: no run has more events)."""
        rows, top = d.event_rows(run_id, events)
        if top is None:
            return 0
        with self._write() as connection, _driver(connection) as (driver, engine):
            # One INSERT of every event (`executemany` on SQLite, one array a column on
            # PostgreSQL) that skips the events the store holds.
            d.insert_encoded(driver, engine, d.EVENTS, rows)
            d.raise_last_seq(driver, engine, [(run_id, top)], utc_now())
        return len(rows)

    def drop_events_from(self, run_id: str, seq: int) -> None:
        """A replay published something else at `seq`: the events recorded from there on
        belong to a past that did not happen again, and go."""
        with self._write() as connection:
            connection.execute(
                sa.delete(t.events).where(t.events.c.run_id == run_id, t.events.c.seq >= seq)
            )

    def index_run(self, run_id: str, **fields: Any) -> None:
        """What a workspace records of the run (`runlens.store.sync`): the index of a local
        run follows its workspace, a damaged record included; only a live status never
        replaces a stored end (`upsert_run`)."""
        self.upsert_run(run_id, **fields)

    # -- its end ---------------------------------------------------------------------------

    def replace_results(
        self,
        run_id: str,
        artifacts: Sequence[ArtifactRow],
        findings: Sequence[FindingRow],
        citations: Sequence[CitationRow],
    ) -> None:
        """Set the run's artifacts, findings and citations (what its manifest and citations
        file say), replacing what the store held; the run's counts follow."""
        with self._write() as connection, _driver(connection) as (driver, engine):
            _write_results(driver, engine, run_id, artifacts, findings, citations, replace=True)
            d.update_run(
                driver,
                engine,
                run_id,
                {**_result_counts(findings, citations), "updated_at": utc_now()},
            )

    def finish(self, run_id: str, status: str, **fields: Any) -> None:
        """The run's end state (`TERMINAL`), with the fields that come with it (`error_message`,
        `finished_at`, the finding counts): written last, after its events and results, so a
        reader that sees it ended finds everything it left.

        A local run's index follows its workspace; a run a worker holds ends once
        (`InvalidTransition` for another end of a run the store shows ended)."""
        if status not in TERMINAL:
            raise InvalidTransition(f"{status!r} is not an end state")
        status = RunStatus(status).value
        with self.transaction():
            with self._write() as connection:
                row = connection.execute(_LOCK_RUN, {"the_run": run_id}).first()
            current, worker = (str(row.status), row.worker) if row is not None else (None, None)
            if current is not None and (worker is not None or not is_terminal(current)):
                check_stored(current, status)
            self.upsert_run(run_id, status=status, **fields)

    def end_run(
        self,
        run_id: str,
        status: str,
        fields: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        results: Results | None,
        final: Mapping[str, Any] | None = None,
        *,
        lock_seconds: float | None = None,
    ) -> None:
        """A local run's end in one transaction of few statements, whatever its size: the
        rows `index_run(**fields)`, `append_events(events)`, `replace_results(*results)` and
        `finish(status, **final)` would leave one after the other. The run's row is written
        once (`status` checked as `finish` checks it), then the events the store does not
        hold and the results. The end of a run a mirror has streamed
        (`runlens.store.sync.finish_streamed`)."""
        if status not in TERMINAL:
            raise InvalidTransition(f"{status!r} is not an end state")
        values: dict[str, Any] = dict(fields)
        if results is not None:
            values.update(_result_counts(results[1], results[2]))
        values.update(final or {})
        unknown = set(values) - RUN_FIELDS
        if unknown:
            raise ValueError(f"not fields of a run: {', '.join(sorted(unknown))}")
        values["status"] = RunStatus(status).value
        values["updated_at"] = utc_now()
        rows, top = d.event_rows(run_id, events)
        with (
            self.transaction(lock_seconds=lock_seconds),
            self._write() as connection,
            _driver(connection) as (driver, engine),
        ):
            held = d.run_end_state(driver, engine, run_id)
            if held is not None:
                current, worker, _ = held
                if worker is not None or not is_terminal(current):
                    check_stored(current, values["status"])
            if top is not None and (held is None or held[2] < top):
                values["last_seq"] = top
            with d.pipelined(driver, engine):  # the rest: one round trip on PostgreSQL
                if held is None:
                    d.insert_run(driver, engine, self._new_row(run_id, values))
                else:
                    d.update_run(driver, engine, run_id, values)
                d.insert_encoded(driver, engine, d.EVENTS, rows)
                if results is not None:
                    # A run first written now has no results to replace.
                    _write_results(driver, engine, run_id, *results, replace=held is not None)

    def end_unstarted(
        self, run_id: str, status: Literal["failed", "cancelled"], message: str
    ) -> bool:
        """End a run still `queued` or `created` (no process ever got it going); False when
        it is not."""
        now = utc_now()
        with self._write() as connection:
            current = self._status(connection, run_id)
            if current not in UNSTARTED:
                return False
            check_stored(str(current), status)
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.in_(_UNSTARTED))
                .values(status=status, error_message=message, finished_at=now, updated_at=now)
            )
        return True

    def request_cancel(self, run_id: str) -> RunSummary | None:
        """Ask a run to stop (its process polls for it); None when there is no such run. A
        run that has ended is returned unchanged."""
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.not_in(_ENDED))
                .values(cancel_requested=True, updated_at=utc_now())
            )
            row = connection.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
        return summary_of(row._mapping) if row is not None else None

    # -- around it -------------------------------------------------------------------------

    def set_clashes(self, run_id: str, workspaces: Sequence[str]) -> None:
        """The folders of this machine found to name the run besides its workspace (copies
        of it), with the time they were listed; none clears the list."""
        now = utc_now()
        entries = [{"workspace": path, "seen_at": now} for path in workspaces]
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id)
                .values(clashes=entries or None, updated_at=now)
            )

    def set_review_state(self, run_id: str, state: str) -> None:
        """The run's review state (`runlens.review.state`: unreviewed, approved,
        changes-requested, rejected); its status is not touched."""
        if state not in REVIEW_STATES:
            raise ValueError(f"not a review state: {state!r}")
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id)
                .values(review_state=state, updated_at=utc_now())
            )

    def delete_run(self, run_id: str) -> None:
        """Forget a run (its workspace is left alone)."""
        with self._write() as connection:
            connection.execute(sa.delete(t.runs).where(t.runs.c.run_id == run_id))


@contextlib.contextmanager
def _driver(connection: Connection) -> Iterator[tuple[Any, d.Engine]]:
    """The DBAPI connection of `connection`'s transaction and its engine's name, for the
    statements `runlens.store.driver` runs in it. The driver's errors reach the caller as
    SQLAlchemy's would have (`sa.exc.DBAPIError`), and SQLAlchemy hears of them (a lost
    connection is not put back in the pool)."""
    engine = cast(d.Engine, connection.dialect.name)
    assert engine in ("sqlite", "postgresql"), f"a store on {engine}"
    driver: Any = connection.connection.driver_connection
    if connection.dispatch.before_cursor_execute:  # someone listens (none, mostly)
        driver = _Heard(connection, driver)
    try:
        yield driver, engine
    except connection.dialect.loaded_dbapi.Error as error:
        connection._handle_dbapi_exception(error, "", (), None, None)
        raise  # not reached: the call above raises SQLAlchemy's error


class _Heard:
    """A DBAPI connection whose statements the `before_cursor_execute` listeners of its
    SQLAlchemy connection hear, as they hear SQLAlchemy's own (a tracer, a test)."""

    def __init__(self, connection: Connection, driver: Any) -> None:
        self._connection = connection
        self._driver = driver

    def cursor(self) -> _HeardCursor:
        return _HeardCursor(self._connection, self._driver.cursor())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


class _HeardCursor:
    def __init__(self, connection: Connection, cursor: Any) -> None:
        self._connection = connection
        self._cursor = cursor

    def execute(self, sql: str, params: Any) -> Any:
        self._heard(sql, params, many=False)
        return self._cursor.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> Any:
        self._heard(sql, rows, many=True)
        return self._cursor.executemany(sql, rows)

    def _heard(self, sql: str, params: Any, *, many: bool) -> None:
        self._connection.dispatch.before_cursor_execute(
            self._connection, self._cursor, sql, params, None, many
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _result_counts(
    findings: Sequence[FindingRow], citations: Sequence[CitationRow]
) -> dict[str, Any]:
    """The run's columns that count its results."""
    by_code: dict[str, int] = {}
    for finding in findings:
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
    counts = {"verified": 0, "failed": 0}
    for citation in citations:
        counts[citation.status] += 1
    return {"finding_count": len(findings), "findings_by_code": by_code, "citation_counts": counts}


def _write_results(
    driver: Any,
    engine: d.Engine,
    run_id: str,
    artifacts: Sequence[ArtifactRow],
    findings: Sequence[FindingRow],
    citations: Sequence[CitationRow],
    *,
    replace: bool,
) -> None:
    """Insert the run's results (`replace`: after deleting those the store holds), each
    table's rows in one INSERT of the driver (`runlens.store.driver`): a run has
    thousands of citations, and SQLAlchemy's processing of each parameter cost more than
    the insert itself."""
    if replace:
        d.delete_results(driver, engine, run_id)
    d.insert_rows(
        driver,
        engine,
        d.ARTIFACTS,
        [
            {"run_id": run_id, "ordinal": number, **artifact.model_dump()}
            for number, artifact in enumerate(artifacts)
        ],
    )
    d.insert_rows(driver, engine, d.FINDINGS, [_finding_row(run_id, f) for f in findings])
    d.insert_rows(driver, engine, d.CITATIONS, [_citation_row(run_id, c) for c in citations])


def _finding_row(run_id: str, finding: FindingRow) -> dict[str, Any]:
    values = finding.model_dump()
    values["col"] = values.pop("column")
    return {"run_id": run_id, **values}


def _citation_row(run_id: str, citation: CitationRow) -> dict[str, Any]:
    values = citation.model_dump()
    values["col"] = values.pop("column")
    values["start_offset"] = values.pop("start")
    values["end_offset"] = values.pop("end")
    return {"run_id": run_id, **values}
