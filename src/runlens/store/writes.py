"""A run's writes that reach the store through its driver (`runlens.store.driver`), without
SQLAlchemy: a live run's events (`publish`, `publish_many`, `append_events`), its row
(`upsert_run`) and its end (`end_run`), as `runlens.store.lifecycle` names them.

`RunWrites` writes them in the transaction of its `_writing`: a `RunStore`'s (`RunLife`
extends it), or one of `sqlite3` alone (`runlens.store.write_first`, for `runlens run`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from runlens.records.io import utc_now
from runlens.records.status import (
    LIVE,
    TERMINAL,
    InvalidTransition,
    RunStatus,
    check_stored,
    is_terminal,
)
from runlens.store import driver as d
from runlens.store.engine import StoreBase

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from runlens.store.rows import ArtifactRow, CitationRow, FindingRow

#: The highest event `seq` the store keeps (its `INTEGER` column's top).
MAX_SEQ: Final = d.MAX_SEQ
#: Fields `upsert_run` may set (the `runs` columns besides `run_id`).
RUN_FIELDS: Final = frozenset(column.name for column in d.RUNS.columns) - {"run_id"}
#: The statuses a run never leaves, as the store holds them (in a fixed order).
_ENDED: Final = tuple(sorted(str(getattr(status, "value", status)) for status in TERMINAL))
#: A run's results: its artifacts, findings and citations.
Results = tuple[Sequence["ArtifactRow"], Sequence["FindingRow"], Sequence["CitationRow"]]


@dataclass(frozen=True, slots=True)
class Published:
    """One live run's batch for `RunWrites.publish_many`: `publish`'s arguments."""

    run_id: str
    events: Sequence[Mapping[str, Any]] | Sequence[d.EventRecord]
    first: Mapping[str, Any] | None = None
    live: Mapping[str, Any] | None = None


class RunWrites(StoreBase):
    """The writes of a live run and of its end, on the store's driver connection."""

    def upsert_run(self, run_id: str, **fields: Any) -> None:
        """Create the run, or update the fields given (`RUN_FIELDS`); `updated_at` is now.

        A new run needs `plugin`, `model`, `status` and `workspace`; `host` defaults to this
        machine. A run that has ended never goes back to a live status (`LIVE`, `queued`
        included); `queued` to `created` or `running` is a run moving on. The transitions
        below are the product's way in; this is theirs (and the tests')."""
        self._upsert(run_id, fields)

    def _upsert(self, run_id: str, fields: Mapping[str, Any]) -> None:
        """`upsert_run`."""
        values = self._values(fields)
        with self._writing() as (driver, engine):
            self._upsert_run(driver, engine, run_id, values)

    def _insert_new(self, run_id: str, fields: Mapping[str, Any]) -> bool:
        """Insert the run's row with `fields` (as `upsert_run` would write a new run) when
        the store does not hold the run, in one statement; whether it did (a run it holds
        is left as it is). A mirror's first write: the run is most likely new."""
        values = self._values(fields)
        with self._writing() as (driver, engine):
            return d.insert_run(driver, engine, self._new_row(run_id, values), skip_held=True)

    @staticmethod
    def _values(fields: Mapping[str, Any]) -> dict[str, Any]:
        """The run's columns `fields` sets, `updated_at` now unless given."""
        unknown = set(fields) - RUN_FIELDS
        if unknown:
            raise ValueError(f"not fields of a run: {', '.join(sorted(unknown))}")
        return {**fields, "updated_at": fields.get("updated_at") or utc_now()}

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
        self,
        driver: Any,
        engine: d.Engine,
        run_id: str,
        values: dict[str, Any],
    ) -> None:
        if values.get("status") in LIVE:
            # A live status never replaces an end (a stale reader: the run's own end stays):
            # a run that has not ended is updated in one statement, as usual.
            if d.update_run(driver, engine, run_id, values, keep=_ENDED):
                return
            if is_terminal(d.run_status(driver, engine, run_id)):
                return
        elif d.update_run(driver, engine, run_id, values):
            return
        d.insert_run(driver, engine, self._new_row(run_id, values), update=list(values))

    def publish(
        self,
        run_id: str,
        events: Sequence[Mapping[str, Any]] | Sequence[d.EventRecord],
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
        with self._writing(lock_seconds):
            # A run the store does not hold yet takes its live fields with its first row,
            # in one statement (where the store holds it, they are set below as usual).
            created: set[int] = set()
            for number, batch in enumerate(batches):
                if batch.first is None:
                    continue
                if self._insert_new(batch.run_id, {**batch.first, **(batch.live or {})}):
                    created.add(number)
                else:
                    self._upsert(batch.run_id, batch.first)
            rows: list[tuple[Any, ...]] = []
            tops: list[tuple[str, int]] = []
            for batch in batches:
                added, top = d.event_rows(batch.run_id, batch.events)
                if top is not None:
                    rows.extend(added)
                    tops.append((batch.run_id, top))
            if rows:
                with self._writing() as (driver, engine), d.pipelined(driver, engine):
                    d.insert_encoded(driver, engine, d.EVENTS, rows)
                    d.raise_last_seq(driver, engine, tops, utc_now())
            for number, batch in enumerate(batches):
                if batch.live and number not in created:
                    self.upsert_run(batch.run_id, **batch.live)

    def append_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> int:
        """Add events (`{seq, ts, type, data}`); ones the store holds already are skipped.
        The run's `last_seq` becomes the highest `seq` it holds. Returns how many were given
        with a usable `seq` (an integer from 0 to `MAX_SEQ`: no run has more events)."""
        rows, top = d.event_rows(run_id, events)
        if top is None:
            return 0
        with self._writing() as (driver, engine):
            # One INSERT of every event (`executemany` on SQLite, one array a column on
            # PostgreSQL) that skips the events the store holds.
            d.insert_encoded(driver, engine, d.EVENTS, rows)
            d.raise_last_seq(driver, engine, [(run_id, top)], utc_now())
        return len(rows)

    def end_run(
        self,
        run_id: str,
        status: str,
        fields: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]] | Sequence[d.EventRecord],
        results: Results | None,
        final: Mapping[str, Any] | None = None,
        *,
        lock_seconds: float | None = None,
        new: bool = False,
    ) -> None:
        """A local run's end in one transaction of few statements, whatever its size: the
        rows `index_run(**fields)`, `append_events(events)`, `replace_results(*results)` and
        `finish(status, **final)` would leave one after the other. The run's row is written
        once (`status` checked as `finish` checks it), then the events the store does not
        hold and the results. The end of a run a mirror has streamed
        (`runlens.store.sync.finish_streamed`).

        `new`: the run is most likely not in the store yet (a mirror that never wrote it):
        its row is inserted first, one statement where the store does not hold it, and only
        a run the store holds already is read and updated as otherwise."""
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
        with self._writing(lock_seconds) as (driver, engine):
            inserted = False
            if new:
                row = self._new_row(run_id, values)
                if top is not None:
                    row["last_seq"] = top
                inserted = d.insert_run(driver, engine, row, skip_held=True)
            held = None if inserted else d.run_end_state(driver, engine, run_id)
            if held is not None:
                current, worker, _ = held
                if worker is not None or not is_terminal(current):
                    check_stored(current, values["status"])
            if top is not None and (held is None or held[2] < top):
                values["last_seq"] = top
            with d.pipelined(driver, engine):  # the rest: one round trip on PostgreSQL
                if inserted:
                    pass  # the row as the insert below would write it
                elif held is None:
                    d.insert_run(driver, engine, self._new_row(run_id, values))
                else:
                    d.update_run(driver, engine, run_id, values)
                d.insert_encoded(driver, engine, d.EVENTS, rows)
                if results is not None:
                    # A run first written now has no results to replace.
                    _write_results(driver, engine, run_id, *results, replace=held is not None)

    @contextlib.contextmanager
    def _writing(self, lock_seconds: float | None = None) -> Iterator[tuple[Any, d.Engine]]:
        """The driver connection of this thread's write transaction and the engine's name:
        the transaction open on this thread (`transaction`), else one for the block (which
        waits at most `lock_seconds` for a lock another process holds)."""
        with (
            self.transaction(lock_seconds=lock_seconds),
            self._write() as connection,
            _driver(connection) as driven,
        ):
            yield driven


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
    # Its fields as they are (`model_dump`'s values: every field is a plain value), without
    # serialising them: a run's end writes each of its citations, a hundred thousand of them.
    values = dict(citation.__dict__)
    values["col"] = values.pop("column")
    values["start_offset"] = values.pop("start")
    values["end_offset"] = values.pop("end")
    return {"run_id": run_id, **values}
