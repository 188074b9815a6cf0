"""`runlens run`'s run store on SQLite, without SQLAlchemy: `open_write_first(url)` gives a
`WriteFirstStore` for a plain `sqlite:///PATH` store whose schema is at `HEAD_REVISION` (the
check `runlens.store.reader.SqliteReader.open` makes). It writes a live run's batches and its
end (`RunWrites`: the driver's statements, so the rows stored are the ones the `RunStore`
stores) and polls for a cancel through `sqlite3` alone: each thread keeps one connection for
the process, set up as the engine sets up its own (`configure_sqlite`), each write is one
`BEGIN IMMEDIATE` transaction, and the busy timeout is set once while it stays the same.
Anything else asked of it (a sync of the workspace, a read) opens the `RunStore`, which from
then on answers everything; any other store (a new one, one to migrate, PostgreSQL) is
opened as a `RunStore` at once.
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from runlens.store import driver as d
from runlens.store.engine import configure_sqlite
from runlens.store.location import BUSY_MS, sqlite_file
from runlens.store.reader import SqliteReader
from runlens.store.values import unescape_text
from runlens.store.writes import Published, Results, RunWrites

if TYPE_CHECKING:
    from runlens.store.db import RunStore

_RUN_ID_LENGTH: Final = d.RUNS.by_name["run_id"].length


class SqliteWrites(RunWrites):
    """`RunWrites` on a SQLite file through `sqlite3`, without an engine: one connection a
    thread, kept until `close`. Only `WriteFirstStore` holds one, and asks it nothing but
    `RunWrites`' writes and `cancels_requested` (the engine's transactions are not here)."""

    def __init__(self, path: str, url: str) -> None:  # no engine: `StoreBase` is not set up
        #: The store's URL for display (a plain SQLite URL is its own display form).
        self.url = url
        self.host = socket.gethostname()
        self._target = f"file:{quote(path, safe='/')}?mode=rw"  # never creates the file
        self._local = threading.local()
        #: Every connection open, with the thread it belongs to.
        self._opened: dict[sqlite3.Connection, threading.Thread] = {}
        self._opening = threading.Lock()
        #: Held by this process's write transaction under way (see `_writing`).
        self._serial = threading.Lock()

    def close(self) -> None:
        """Close the connections of this thread and of threads that have ended; another
        thread's (the mirrors' thread, perhaps polling still) is closed as that thread ends,
        as an engine's `dispose` leaves a connection in use alone."""
        with self._opening:
            opened, self._opened = self._opened, {}
        for connection, thread in opened.items():
            if thread is threading.current_thread() or not thread.is_alive():
                connection.close()

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, set up as the engine sets up its own."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self._target, uri=True, timeout=BUSY_MS / 1000, check_same_thread=False
            )
            try:
                configure_sqlite(connection)
            except BaseException:
                connection.close()
                raise
            with self._opening:
                self._opened[connection] = threading.current_thread()
            self._local.connection = connection
            self._local.busy = BUSY_MS
        return connection

    def _forget(self, connection: sqlite3.Connection) -> None:
        """Close this thread's connection after an error (the next write opens another)."""
        self._local.connection = None
        with self._opening:
            self._opened.pop(connection, None)
        with contextlib.suppress(sqlite3.Error):
            connection.close()

    @contextlib.contextmanager
    def _writing(self, lock_seconds: float | None = None) -> Iterator[tuple[Any, d.Engine]]:
        connection = self._connection()
        if connection.in_transaction:  # a write of this thread under way: joined
            yield connection, "sqlite"
            return
        busy = BUSY_MS if lock_seconds is None else int(lock_seconds * 1000)
        # This process's writers (the mirrors' thread, runs ending on threads of their own)
        # wait for one another here, each taking the store as soon as the one before
        # commits; in SQLite's busy handler they would sleep 1, 2, 5... ms between tries.
        # SQLite waits for another process's lock only for what is left of `busy` then;
        # past `busy` the transaction asks SQLite without waiting more, and fails as it
        # failed: "database is locked".
        serial = False
        if busy > 0 and not (serial := self._serial.acquire(blocking=False)):
            started = time.monotonic()
            serial = self._serial.acquire(timeout=busy / 1000)
            busy = max(busy - int((time.monotonic() - started) * 1000), 0) if serial else 0
        try:
            if busy != self._local.busy:  # before BEGIN IMMEDIATE waits for it
                connection.execute(f"PRAGMA busy_timeout={busy}")
                self._local.busy = busy
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection, "sqlite"
                connection.execute("COMMIT")
            finally:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
        except sqlite3.Error:
            self._forget(connection)
            raise
        finally:
            if serial:
                self._serial.release()

    def cancels_requested(self, run_ids: Collection[str]) -> set[str]:
        """`RunStore.cancels_requested`: the statement SQLAlchemy issues for it."""
        found: set[str] = set()
        ids = list(run_ids)
        connection = self._connection()
        try:
            for start in range(0, len(ids), d.IDS_PER_QUERY):
                chunk = ids[start : start + d.IDS_PER_QUERY]
                keys = [d.encode_text(run_id, _RUN_ID_LENGTH) for run_id in chunk]
                rows = connection.execute(
                    f"SELECT runs.run_id \nFROM runs \nWHERE runs.run_id IN "
                    f"({', '.join('?' * len(keys))}) AND runs.cancel_requested = 1",
                    keys,
                ).fetchall()
                found.update(unescape_text(str(row[0])) for row in rows)
        except sqlite3.Error:
            self._forget(connection)
            raise
        return found


class WriteFirstStore:
    """A `RunStore` whose run writes (`publish`, `publish_many`, `end_run`) and polls
    (`cancels_requested`) go through `SqliteWrites` until anything else is asked of it: then
    the `RunStore` is opened, and answers everything from then on."""

    def __init__(self, writes: SqliteWrites, url: str) -> None:
        self._writes = writes
        self._full: RunStore | None = None
        self._raw_url = url
        #: The store's URL for display, as `RunStore.url`.
        self.url = writes.url
        self.host = writes.host

    @property
    def full(self) -> RunStore:
        """The `RunStore`, opened on first use (`UserError` when it cannot be)."""
        if self._full is None:
            from runlens.store.db import open_store

            self._full = open_store(self._raw_url)
        return self._full

    @property
    def _now(self) -> RunWrites:
        """Who writes now: the `RunStore` once open, else `SqliteWrites`."""
        return self._full if self._full is not None else self._writes

    def __getattr__(self, name: str) -> Any:
        # Only names this class does not define arrive here: all of them are the store's.
        return getattr(self.full, name)

    def close(self) -> None:
        self._writes.close()
        if self._full is not None:
            self._full.close()

    def publish(
        self,
        run_id: str,
        events: Sequence[Mapping[str, Any]] | Sequence[d.EventRecord],
        *,
        first: Mapping[str, Any] | None = None,
        live: Mapping[str, Any] | None = None,
        lock_seconds: float | None = None,
    ) -> None:
        self._now.publish(run_id, events, first=first, live=live, lock_seconds=lock_seconds)

    def publish_many(
        self, batches: Sequence[Published], *, lock_seconds: float | None = None
    ) -> None:
        self._now.publish_many(batches, lock_seconds=lock_seconds)

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
        self._now.end_run(
            run_id, status, fields, events, results, final, lock_seconds=lock_seconds, new=new
        )

    def cancels_requested(self, run_ids: Collection[str]) -> set[str]:
        if self._full is not None:
            return self._full.cancels_requested(run_ids)
        return self._writes.cancels_requested(run_ids)


def open_write_first(url: str) -> WriteFirstStore | RunStore:
    """The store at `url` for a run that writes it (`runlens run`): a `WriteFirstStore` when
    `SqliteReader` can read it (a plain SQLite file at `HEAD_REVISION`), else the `RunStore`
    (`open_store`: created or upgraded as needed; `UserError` when it cannot be opened)."""
    reader = SqliteReader.open(url)
    path = sqlite_file(url)
    if reader is None or path is None:
        from runlens.store.db import open_store

        return open_store(url)
    reader.close()
    return WriteFirstStore(SqliteWrites(path, url), url)
