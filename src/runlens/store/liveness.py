"""The workers' liveness in the run store: one row per executor id (`WorkerRow`), its heartbeat
and whether it stopped or was taken over as dead.

The times come from the database's clock (`database_clock`), the one clock every worker's
machine shares. Which of a dead worker's runs go back on their queues is DBOS's to say
(`runlens.workers.handover`); this part only says which workers are dead, each to one taker.
"""

from __future__ import annotations

from typing import Any, Final

import sqlalchemy as sa

from runlens.store import tables as t
from runlens.store.engine import StoreBase, database_clock
from runlens.store.rows import WorkerRow

#: The heartbeat of a worker that handed its runs over (`expire_worker`): older than any.
EXPIRED: Final = "1970-01-01T00:00:00.000+00:00"


class WorkerRows(StoreBase):
    """The store's rows of the workers."""

    def register_worker(
        self,
        executor_id: str,
        *,
        host: str,
        pid: int,
        concurrency: int,
        unless_alive_within: float | None = None,
        replacing_pid: int | None = None,
    ) -> bool:
        """A worker starting (or starting again under the same id): alive as of now, neither
        stopped nor recovered. With `unless_alive_within`, only when no worker of that id is
        alive: it stopped, was taken over, its heartbeat is older than that many seconds, or
        it is the process `replacing_pid` on `host` (known to be gone). True if registered;
        one statement, so of two workers starting under one id at once, one is."""
        now = database_clock(self.engine.dialect.name)
        values: dict[str, Any] = {
            "host": host,
            "pid": pid,
            "concurrency": concurrency,
            "started_at": now,
            "heartbeat_at": now,
            "stopped_at": None,
            "recovered_by": None,
        }
        statement = self._insert(t.workers).values(executor_id=executor_id, **values)
        where = None
        if unless_alive_within is not None:
            workers = t.workers.c
            gone: list[sa.ColumnElement[bool]] = [
                workers.stopped_at.is_not(None),
                workers.recovered_by.is_not(None),
            ]
            gone.append(
                workers.heartbeat_at < database_clock(self.engine.dialect.name, unless_alive_within)
            )
            if replacing_pid is not None:
                gone.append(sa.and_(workers.host == host, workers.pid == replacing_pid))
            where = sa.or_(*gone)
        upsert = statement.on_conflict_do_update(
            index_elements=[t.workers.c.executor_id], set_=values, where=where
        )
        with self._write() as connection:
            # The row comes back only when it was written (rowcount says 1 either way).
            written = connection.execute(upsert.returning(t.workers.c.executor_id)).first()
        return written is not None

    def heartbeat(self, executor_id: str, *, pid: int | None = None) -> bool:
        """The worker is alive as of now. False when the store does not count it alive: it
        never registered, it stopped, another worker found it dead and took its runs over
        (`claim_dead_workers`), or (with `pid`) another process registered under its id since:
        a worker told so must not go on with those runs."""
        alive = [t.workers.c.executor_id == executor_id, *_still_counted()]
        if pid is not None:
            alive.append(t.workers.c.pid == pid)
        with self._write() as connection:
            result = connection.execute(
                sa.update(t.workers)
                .where(*alive)
                .values(heartbeat_at=database_clock(self.engine.dialect.name))
            )
        return bool(result.rowcount)

    def stop_worker(self, executor_id: str) -> None:
        """The worker stops on its own: its runs are not taken over as a dead worker's."""
        now = database_clock(self.engine.dialect.name)
        with self._write() as connection:
            connection.execute(
                sa.update(t.workers)
                .where(t.workers.c.executor_id == executor_id)
                .values(stopped_at=now, heartbeat_at=now)
            )

    def expire_worker(self, executor_id: str) -> None:
        """Hand a worker's runs over at once (it is going away without finishing them): its
        heartbeat is set long ago, so the next `claim_dead_workers` of a live worker takes
        them, whatever its `older_than`."""
        with self._write() as connection:
            connection.execute(
                sa.update(t.workers)
                .where(t.workers.c.executor_id == executor_id)
                .values(heartbeat_at=EXPIRED, stopped_at=None)
            )

    def claim_dead_workers(self, by: str, *, older_than: float) -> list[str]:
        """Mark every worker whose last heartbeat is more than `older_than` seconds old (by
        the database's clock), and that neither stopped nor was recovered, as recovered by
        `by`; their executor ids, sorted. `by` never claims itself.

        One UPDATE ... RETURNING in a write transaction: of callers at the same moment, each
        dead worker goes to exactly one (PostgreSQL re-checks the condition on a row another
        transaction changed; SQLite lets one writer in at a time)."""
        workers = t.workers.c
        with self._write() as connection:
            claimed = connection.execute(
                sa.update(t.workers)
                .where(
                    *_still_counted(),
                    workers.heartbeat_at < database_clock(self.engine.dialect.name, older_than),
                    workers.executor_id != by,
                )
                .values(recovered_by=by)
                .returning(workers.executor_id)
            ).scalars()
            return sorted(str(executor_id) for executor_id in claimed)

    def list_workers(self) -> list[WorkerRow]:
        """Every worker the store knows, oldest first."""
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.workers).order_by(t.workers.c.started_at, t.workers.c.executor_id)
            ).all()
        return [WorkerRow.model_validate(dict(row._mapping)) for row in rows]

    def live_workers(self, *, within: float) -> list[WorkerRow]:
        """The workers alive now: neither stopped nor taken over, with a heartbeat at most
        `within` seconds old (by the database's clock), oldest first."""
        workers = t.workers.c
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.workers)
                .where(
                    *_still_counted(),
                    workers.heartbeat_at >= database_clock(self.engine.dialect.name, within),
                )
                .order_by(workers.started_at, workers.executor_id)
            ).all()
        return [WorkerRow.model_validate(dict(row._mapping)) for row in rows]


def _still_counted() -> tuple[sa.ColumnElement[bool], ...]:
    """A worker the store still counts: it neither stopped nor was taken over as dead."""
    return (t.workers.c.stopped_at.is_(None), t.workers.c.recovered_by.is_(None))
