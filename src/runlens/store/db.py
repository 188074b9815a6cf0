"""The run store: every run's status, plan, events, findings, artifacts and citations.

SQLite in the runs home by default (`$RUNLENS_HOME/runlens.db`), PostgreSQL when
`RUNLENS_DATABASE_URL` or `--database-url` names one. Workspaces stay on disk and remain the
record of truth: the store is an index of them, kept in step while a run is live
(`runlens.store.mirror`) and rebuilt from them at will (`runlens.store.sync`).

Several processes share one store: every `runlens run` writes its own run, `runlens ui`
reads all of them and asks runs to stop. On SQLite that is WAL mode with a 30 s busy
timeout, and write transactions that take the write lock when they begin (`BEGIN
IMMEDIATE`), so two writers wait for each other instead of failing on a lock upgrade.

Runs submitted to the workers (`runlens submit`, `runlens worker`) also keep their workspace
files here (`put_files`, `materialize`: any machine can read them), and the workers their
heartbeats (`register_worker`, `heartbeat`, `claim_dead_workers`). Those times come from the
database's clock, the one clock every worker's machine shares.

`open_store` brings the schema up to date with the Alembic migrations beside this module.
Alembic is imported only when the store is behind: the revision a store holds is read with
one query and compared with `HEAD_REVISION`, which keeps the fixed cost of `runlens run` low.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import INTERVAL
from sqlalchemy.engine import Connection, Engine, make_url

from runlens.errors import UserError, one_line
from runlens.records.io import runs_home, utc_now
from runlens.store import tables as t
from runlens.store.codec import escape_text
from runlens.store.files import check_file_path, local_digest, sha256_hex, write_under
from runlens.store.rows import (
    ArtifactRow,
    CitationRow,
    FindingRow,
    RunDetail,
    RunSummary,
    WorkerRow,
)

#: How long a SQLite connection waits for a lock another process holds, in milliseconds.
BUSY_MS: Final = 30_000
#: The newest migration (`migrations/versions/`); a test checks it against the folder.
HEAD_REVISION: Final = "0005_citation_spans"
#: The SQLite file in the runs home.
SQLITE_NAME: Final = "runlens.db"
TERMINAL: Final = frozenset({"completed", "failed", "cancelled", "interrupted"})
#: The statuses of a run not ended yet (`queued`: submitted, no worker has started it).
LIVE: Final = frozenset({"queued", "created", "running", "validating"})

#: The heartbeat of a worker that handed its runs over (`expire_worker`): older than any.
EXPIRED: Final = "1970-01-01T00:00:00.000+00:00"
#: The highest event `seq` the store keeps (its `INTEGER` column's top).
MAX_SEQ: Final = 2**31 - 1
#: Fields `upsert_run` may set (the `runs` columns besides `run_id`).
RUN_FIELDS: Final = frozenset(column.name for column in t.runs.columns) - {"run_id"}
_DISTINCT = {"plugin": t.runs.c.plugin, "model": t.runs.c.model}


def store_url(explicit: str | None = None, home: Path | None = None) -> str:
    """The store's SQLAlchemy URL: `explicit`, else `$RUNLENS_DATABASE_URL`, else SQLite in
    the runs home. `postgres://` and `postgresql://` mean the psycopg (3) driver."""
    url = explicit or os.environ.get("RUNLENS_DATABASE_URL") or ""
    if not url.strip():
        return f"sqlite:///{(runs_home(home) / SQLITE_NAME).absolute()}"
    url = url.strip()
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def display_url(url: str) -> str:
    """`url` with its password replaced by `***`, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url.split("@")[-1] if "@" in url else url


def open_store(url: str) -> RunStore:
    """Connect to the store at `url`, creating it (and its folder, for SQLite) or upgrading
    its schema when needed; `UserError` naming the URL when it cannot be used."""
    shown = display_url(url)
    try:
        engine = _engine(url)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError, OSError) as error:
        reason = _reason(error).replace(url, shown)
        raise UserError(f"cannot open the run store {shown}: {reason}") from None
    try:
        # On SQLite, one process at a time looks and upgrades: a new file's first
        # connection turns WAL on, which no other connection may be in the middle of.
        with _open_lock(engine):
            if _stored_revision(engine) != HEAD_REVISION:
                _upgrade(engine, url)
    except (sa.exc.SQLAlchemyError, OSError) as error:
        engine.dispose()
        reason = _reason(error).replace(url, shown)
        raise UserError(f"cannot open the run store {shown}: {reason}") from None
    return RunStore(engine, shown)


def _reason(error: BaseException) -> str:
    if isinstance(error, sa.exc.DBAPIError) and error.orig is not None:
        return one_line(error.orig)
    return one_line(error)


def _engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, connect_args={"check_same_thread": False, "timeout": 30})
        _configure_sqlite(engine)
        return engine
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql":
        connect_args["connect_timeout"] = 10
    return sa.create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)


def _configure_sqlite(engine: Engine) -> None:
    """Pragmas on every new connection; transactions begun by us, not by the driver, so a
    write transaction can take the write lock at once (`BEGIN IMMEDIATE`)."""

    @sa.event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver leaves transactions to us
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            _while_locked(lambda: cursor.execute("PRAGMA journal_mode=WAL"))
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get("runlens_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _while_locked(statement: Callable[[], object], seconds: float = 30.0) -> None:
    """Run `statement`, trying again while another process holds the lock it needs: turning
    WAL on takes the file for itself, and SQLite does not wait for that with its busy
    timeout the way it waits for other locks."""
    import sqlite3

    deadline = time.monotonic() + seconds
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _stored_revision(engine: Engine) -> str | None:
    """The revision in the store's `alembic_version` table; None for a new store."""
    with engine.connect() as connection:
        if not sa.inspect(connection).has_table("alembic_version"):
            return None
        value = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    return str(value) if value is not None else None


def _upgrade(engine: Engine, url: str) -> None:
    """Run the migrations up to the head, one process at a time (the caller holds a file lock
    beside a SQLite store; on PostgreSQL an advisory lock); a process that waited finds
    nothing left to do."""
    from alembic import command

    config = migration_config(url)
    with engine.connect() as connection:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            # A migration that rebuilds a table (SQLite's way to alter one) drops the old
            # one: with foreign keys on, that would delete every child row. The pragma only
            # takes effect outside a transaction, so it goes to the driver before any begins.
            _driver_execute(connection, "PRAGMA foreign_keys=OFF")
        else:
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(74119112)"))
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
        finally:
            if sqlite:
                _driver_execute(connection, "PRAGMA foreign_keys=ON")


def _driver_execute(connection: Connection, sql: str) -> None:
    """Run `sql` on the driver's connection itself, outside SQLAlchemy's transactions."""
    driver = connection.connection.driver_connection
    assert driver is not None, "an open connection has a driver connection"
    driver.execute(sql)


def migration_config(url: str) -> Any:
    """The Alembic configuration of the store's migrations (an `alembic.config.Config`),
    without an ini file: the scripts are the `migrations` folder beside this module."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@contextlib.contextmanager
def _open_lock(engine: Engine) -> Iterator[None]:
    """Hold `<database>.lock` beside a SQLite file (nothing for other engines)."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    import fcntl

    with open(f"{database}.lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class RunStore:
    """One store, shared by the threads of a process (each call takes its own connection)."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        #: The store's URL for display: the password, if any, is `***`.
        self.url = url
        self.host = socket.gethostname()
        self._insert = _upsert_factory(engine.dialect.name)
        self._local = threading.local()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self, *, lock_seconds: float | None = None) -> Iterator[None]:
        """One write transaction for every call of this store on this thread inside the
        block: all of them reach the store, or (on an error, which propagates) none does.
        A block inside another joins it.

        `lock_seconds` bounds how long the transaction waits for a lock another process
        holds (SQLite's write lock, a row PostgreSQL has locked): past it, the store's
        error is raised instead of waiting on (a live run's mirror never waits long)."""
        if getattr(self._local, "connection", None) is not None:
            yield
            return
        with self._write(lock_seconds) as connection:
            self._local.connection = connection
            try:
                yield
            finally:
                self._local.connection = None

    @contextlib.contextmanager
    def _write(self, lock_seconds: float | None = None) -> Iterator[Connection]:
        joined = getattr(self._local, "connection", None)
        if joined is not None:
            yield joined
            return
        sqlite = self.engine.dialect.name == "sqlite"
        with self.engine.connect() as connection:
            connection.execution_options(runlens_write=True)
            if sqlite and lock_seconds is not None:  # before BEGIN IMMEDIATE waits for it
                _driver_execute(connection, f"PRAGMA busy_timeout={int(lock_seconds * 1000)}")
            try:
                with connection.begin():
                    if not sqlite and lock_seconds is not None:
                        connection.execute(
                            sa.text(f"SET LOCAL lock_timeout = {int(lock_seconds * 1000)}")
                        )
                    yield connection
            finally:
                if sqlite and lock_seconds is not None and not connection.closed:
                    with contextlib.suppress(Exception):
                        _driver_execute(connection, f"PRAGMA busy_timeout={BUSY_MS}")

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        joined = getattr(self._local, "connection", None)
        if joined is not None:  # inside `transaction`: read what it wrote so far
            yield joined
            return
        with self.engine.connect() as connection, connection.begin():
            yield connection

    # -- writes ----------------------------------------------------------------------------

    def upsert_run(self, run_id: str, **fields: Any) -> None:
        """Create the run, or update the fields given (`RUN_FIELDS`); `updated_at` is now.

        A new run needs `plugin`, `model`, `status` and `workspace`; `host` defaults to this
        machine. A run that has ended never goes back to a live status (`LIVE`, `queued`
        included); `queued` to `created` or `running` is a run moving on.
        """
        unknown = set(fields) - RUN_FIELDS
        if unknown:
            raise ValueError(f"not fields of a run: {', '.join(sorted(unknown))}")
        values = {**fields, "updated_at": fields.get("updated_at") or utc_now()}
        with self._write() as connection:
            self._upsert_run(connection, run_id, values)

    def _upsert_run(self, connection: Connection, run_id: str, values: dict[str, Any]) -> None:
        if values.get("status") in LIVE:
            # A run never goes back from an end state: a reader that read the workspace just
            # before the run ended must not undo the run's own final write.
            current = connection.execute(
                sa.select(t.runs.c.status).where(t.runs.c.run_id == run_id).with_for_update()
            ).scalar()
            if current in TERMINAL:
                return
        updated = connection.execute(
            sa.update(t.runs).where(t.runs.c.run_id == run_id).values(**values)
        )
        if updated.rowcount:
            return
        row = {"host": self.host, "origin": "cli", **values, "run_id": run_id}
        row.setdefault("plugin", "unknown")
        row.setdefault("model", "unknown")
        row.setdefault("status", "created")
        row.setdefault("workspace", "")
        statement = self._insert(t.runs).values(**row)
        connection.execute(
            statement.on_conflict_do_update(
                index_elements=[t.runs.c.run_id], set_={key: values[key] for key in values}
            )
        )

    def append_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> int:
        """Add events (`{seq, ts, type, data}`); ones the store holds already are skipped.
        The run's `last_seq` becomes the highest `seq` it holds. Returns how many were given
        with a usable `seq` (an integer from 0 to `MAX_SEQ`: no run has more events)."""
        rows = [
            {
                "run_id": run_id,
                "seq": event["seq"],
                "ts": str(event.get("ts") or ""),
                "type": str(event.get("type") or ""),
                "data": event.get("data") if isinstance(event.get("data"), dict) else {},
            }
            for event in events
            if _usable_seq(event.get("seq"))
        ]
        if not rows:
            return 0
        top = max(row["seq"] for row in rows)
        with self._write() as connection:
            for start in range(0, len(rows), 500):
                statement = self._insert(t.events).values(rows[start : start + 500])
                connection.execute(statement.on_conflict_do_nothing())
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.last_seq < top)
                .values(last_seq=top, updated_at=utc_now())
            )
        return len(rows)

    def replace_results(
        self,
        run_id: str,
        artifacts: Sequence[ArtifactRow],
        findings: Sequence[FindingRow],
        citations: Sequence[CitationRow],
    ) -> None:
        """Set the run's artifacts, findings and citations (what its manifest and citations
        file say), replacing what the store held; the run's counts follow."""
        by_code: dict[str, int] = {}
        for finding in findings:
            by_code[finding.code] = by_code.get(finding.code, 0) + 1
        counts = {"verified": 0, "failed": 0}
        for citation in citations:
            counts[citation.status] += 1
        with self._write() as connection:
            for table in (t.artifacts, t.findings, t.citations):
                connection.execute(sa.delete(table).where(table.c.run_id == run_id))
            if artifacts:
                connection.execute(
                    sa.insert(t.artifacts),
                    [
                        {"run_id": run_id, "ordinal": number, **artifact.model_dump()}
                        for number, artifact in enumerate(artifacts)
                    ],
                )
            if findings:
                connection.execute(
                    sa.insert(t.findings), [_finding_row(run_id, f) for f in findings]
                )
            if citations:
                connection.execute(
                    sa.insert(t.citations), [_citation_row(run_id, c) for c in citations]
                )
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id)
                .values(
                    finding_count=len(findings),
                    findings_by_code=by_code,
                    citation_counts=counts,
                    updated_at=utc_now(),
                )
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
    ) -> None:
        """A run about to be started by another process: `created`, on this machine."""
        now = utc_now()
        with self._write() as connection:
            connection.execute(
                sa.insert(t.runs).values(
                    run_id=run_id,
                    plugin=plugin,
                    model=model,
                    status="created",
                    input_name=input_name,
                    workspace=str(workspace),
                    origin=origin,
                    host=self.host,
                    created_at=now,
                    updated_at=now,
                )
            )

    def finish_unstarted(
        self, run_id: str, status: Literal["failed", "cancelled"], message: str
    ) -> bool:
        """End a run still `queued` or `created` (no process ever got it going); False when
        it is not."""
        now = utc_now()
        with self._write() as connection:
            result = connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.in_(("queued", "created")))
                .values(status=status, error_message=message, finished_at=now, updated_at=now)
            )
        return bool(result.rowcount)

    def request_cancel(self, run_id: str) -> RunSummary | None:
        """Ask a run to stop (its process polls for it); None when there is no such run. A
        run that has ended is returned unchanged."""
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.not_in(TERMINAL))
                .values(cancel_requested=True, updated_at=utc_now())
            )
            row = connection.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
        return _summary(row._mapping) if row is not None else None

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

    def clash_lists(self) -> dict[str, list[str]]:
        """The runs with clashes (`set_clashes`): run id -> the folders listed."""
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.runs.c.run_id, t.runs.c.clashes).where(t.runs.c.clashes.is_not(None))
            ).all()
        lists = {
            str(row.run_id): [
                str(entry["workspace"])
                for entry in _as_list(row.clashes)
                if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
            ]
            for row in rows
        }
        return {run_id: paths for run_id, paths in lists.items() if paths}

    def delete_run(self, run_id: str) -> None:
        """Forget a run (its workspace is left alone)."""
        with self._write() as connection:
            connection.execute(sa.delete(t.runs).where(t.runs.c.run_id == run_id))

    # -- reads -----------------------------------------------------------------------------

    def list_runs(
        self,
        *,
        status: str | None = None,
        plugin: str | None = None,
        model: str | None = None,
        query: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[RunSummary], int]:
        """Runs newest first, and how many match in all. `query` is a case-insensitive
        substring of the run id, input name, plugin, model or error message."""
        conditions: list[sa.ColumnElement[bool]] = []
        for column, value in (
            (t.runs.c.status, status),
            (t.runs.c.plugin, plugin),
            (t.runs.c.model, model),
        ):
            if value:
                conditions.append(column == value)
        if query and query.strip():
            # The columns hold escaped text (`codec`): the needle is escaped alike.
            needle = escape_text(query.strip().lower())
            conditions.append(
                sa.or_(
                    *(
                        sa.func.lower(column, type_=sa.String).contains(needle, autoescape=True)
                        for column in (
                            t.runs.c.run_id,
                            t.runs.c.input_name,
                            t.runs.c.plugin,
                            t.runs.c.model,
                            t.runs.c.error_message,
                        )
                    )
                )
            )
        where = sa.and_(sa.true(), *conditions)
        with self._read() as connection:
            total = connection.execute(
                sa.select(sa.func.count()).select_from(t.runs).where(where)
            ).scalar_one()
            rows = connection.execute(
                sa.select(t.runs)
                .where(where)
                .order_by(t.runs.c.created_at.desc(), t.runs.c.run_id.desc())
                .limit(max(limit, 0))
                .offset(max(offset, 0))
            ).all()
        return [_summary(row._mapping) for row in rows], int(total)

    def get_run(self, run_id: str) -> RunDetail | None:
        with self._read() as connection:
            row = connection.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
            if row is None:
                return None
            artifacts = connection.execute(
                sa.select(t.artifacts)
                .where(t.artifacts.c.run_id == run_id)
                .order_by(t.artifacts.c.ordinal)
            ).all()
            findings = connection.execute(
                sa.select(t.findings)
                .where(t.findings.c.run_id == run_id)
                .order_by(t.findings.c.ordinal)
            ).all()
        values = dict(row._mapping)
        return RunDetail(
            **_summary_fields(values),
            plan=_as_list(values.get("plan")),
            metrics=_as_dict(values.get("metrics")),
            evidence_index_sha256=values.get("evidence_index_sha256"),
            source_hash=values.get("source_hash"),
            artifacts=[_artifact(a._mapping) for a in artifacts],
            findings=[_finding(f._mapping) for f in findings],
            citation_counts=_as_dict(values.get("citation_counts")),
        )

    def resolve_run(self, text: str) -> str:
        """The id of the run `text` names: its id, or a unique prefix or suffix of one."""
        if not text:
            raise UserError("no run '' (give a run id)")
        column = t.runs.c.run_id
        with self._read() as connection:
            exact = connection.execute(sa.select(column).where(column == text)).scalar()
            if exact is not None:
                return str(exact)
            matches = sorted(
                str(value)
                for value in connection.execute(
                    sa.select(column).where(
                        sa.or_(
                            column.startswith(text, autoescape=True),
                            column.endswith(text, autoescape=True),
                        )
                    )
                ).scalars()
            )
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(matches[:5])
            more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
            raise UserError(
                f"{text!r} matches {len(matches)} runs ({shown}{more}): give more of the id"
            )
        raise UserError(f"no run {text!r} (looked in the run store {self.url})")

    def events(
        self, run_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The run's events with `seq` above `after_seq`, in order: `{seq, ts, run_id, type,
        data}` as in `events.jsonl`."""
        statement = (
            sa.select(t.events)
            .where(t.events.c.run_id == run_id, t.events.c.seq > after_seq)
            .order_by(t.events.c.seq)
        )
        if limit is not None:
            statement = statement.limit(limit)
        with self._read() as connection:
            rows = connection.execute(statement).all()
        return [
            {
                "seq": row.seq,
                "ts": row.ts,
                "run_id": row.run_id,
                "type": row.type,
                "data": _as_dict(row.data),
            }
            for row in rows
        ]

    def citations(
        self, run_id: str, *, row_id: str | None = None, artifact: str | None = None
    ) -> list[CitationRow]:
        statement = sa.select(t.citations).where(t.citations.c.run_id == run_id)
        if row_id is not None:
            statement = statement.where(t.citations.c.row_id == row_id)
        if artifact is not None:
            statement = statement.where(t.citations.c.artifact == artifact)
        with self._read() as connection:
            rows = connection.execute(statement.order_by(t.citations.c.ordinal)).all()
        return [_citation(row._mapping) for row in rows]

    def event_count(self, run_id: str) -> int:
        """How many events of the run the store holds."""
        with self._read() as connection:
            count = connection.execute(
                sa.select(sa.func.count()).select_from(t.events).where(t.events.c.run_id == run_id)
            ).scalar_one()
        return int(count)

    def cancel_requested(self, run_id: str) -> bool:
        with self._read() as connection:
            value = connection.execute(
                sa.select(t.runs.c.cancel_requested).where(t.runs.c.run_id == run_id)
            ).scalar()
        return bool(value)

    def distinct_values(self, field: Literal["plugin", "model"]) -> list[str]:
        column = _DISTINCT[field]
        with self._read() as connection:
            values = connection.execute(sa.select(column).distinct().order_by(column)).scalars()
            return [str(value) for value in values]

    def sync_states(self, run_ids: Sequence[str] | None = None) -> dict[str, SyncState]:
        """What `runlens.store.sync` compares a workspace with: per run, its status, last
        event, record stamp, workspace, host and worker."""
        statement = sa.select(
            t.runs.c.run_id,
            t.runs.c.status,
            t.runs.c.last_seq,
            t.runs.c.record_stamp,
            t.runs.c.workspace,
            t.runs.c.host,
            t.runs.c.worker,
        )
        if run_ids is not None:
            statement = statement.where(t.runs.c.run_id.in_(list(run_ids)))
        with self._read() as connection:
            rows = connection.execute(statement).all()
        return {
            row.run_id: SyncState(
                row.status, row.last_seq, row.record_stamp, row.workspace, row.host, row.worker
            )
            for row in rows
        }

    # -- a run's files ---------------------------------------------------------------------

    def put_files(self, run_id: str, files: Mapping[str, bytes]) -> int:
        """Keep workspace files of the run (`{"input/tickets.csv": b"..."}`), replacing what
        the store holds at those paths; a file the store holds with the same sha256 is not
        written again. How many were written. The run must be in the store. ValueError,
        before anything is written, for a path that is not a workspace-relative POSIX path
        (`runlens.store.files.check_file_path`)."""
        for path in files:
            check_file_path(path)
        if not files:
            return 0
        digests = {path: sha256_hex(data) for path, data in files.items()}
        now = utc_now()
        with self._write() as connection:
            held: dict[str, str] = {}
            paths = list(digests)
            for start in range(0, len(paths), 500):
                found = connection.execute(
                    sa.select(t.files.c.path, t.files.c.sha256).where(
                        t.files.c.run_id == run_id,
                        t.files.c.path.in_(paths[start : start + 500]),
                    )
                )
                held.update((row.path, row.sha256) for row in found)
            rows = [
                {
                    "run_id": run_id,
                    "path": path,
                    "sha256": digest,
                    "size": len(files[path]),
                    "content": files[path],
                    "updated_at": now,
                }
                for path, digest in digests.items()
                if held.get(path) != digest
            ]
            if rows:
                statement = self._insert(t.files)
                connection.execute(
                    statement.on_conflict_do_update(
                        index_elements=[t.files.c.run_id, t.files.c.path],
                        set_={
                            column: statement.excluded[column]
                            for column in ("sha256", "size", "content", "updated_at")
                        },
                    ),
                    rows,
                )
        return len(rows)

    def file_index(self, run_id: str) -> dict[str, tuple[str, int]]:
        """The run's stored files: path -> (sha256, size), by path."""
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.files.c.path, t.files.c.sha256, t.files.c.size)
                .where(t.files.c.run_id == run_id)
                .order_by(t.files.c.path)
            ).all()
        return {row.path: (row.sha256, int(row.size)) for row in rows}

    def read_file(self, run_id: str, path: str) -> bytes | None:
        """The bytes of one stored file of the run; None when the store holds none there.
        ValueError for a path no file can have (`check_file_path`)."""
        check_file_path(path)
        with self._read() as connection:
            content = connection.execute(
                sa.select(t.files.c.content).where(
                    t.files.c.run_id == run_id, t.files.c.path == path
                )
            ).scalar()
        return bytes(content) if content is not None else None

    def materialize(
        self, run_id: str, root: Path, *, paths: Sequence[str] | None = None
    ) -> list[Path]:
        """Write the run's stored files (all, or those of `paths` the store holds) under
        `root`, creating it; a file whose bytes on disk already have the stored sha256 is
        left alone. The files written, by path.

        Each write is atomic and stays under `root`: a folder on the way that is a symbolic
        link (or a file) is refused with ValueError, never followed."""
        index = self.file_index(run_id)
        wanted = sorted(index) if paths is None else sorted(set(paths) & set(index))
        written: list[Path] = []
        for path in wanted:
            parts = check_file_path(path)
            if local_digest(root, parts) == index[path]:
                continue
            data = self.read_file(run_id, path)
            if data is not None:  # None: deleted since the index was read
                written.append(write_under(root, parts, data))
        return written

    # -- workers ---------------------------------------------------------------------------

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
        now = _clock(self.engine.dialect.name)
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
                workers.heartbeat_at < _clock(self.engine.dialect.name, unless_alive_within)
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
        alive = [t.workers.c.executor_id == executor_id, *_not_ended()]
        if pid is not None:
            alive.append(t.workers.c.pid == pid)
        with self._write() as connection:
            result = connection.execute(
                sa.update(t.workers)
                .where(*alive)
                .values(heartbeat_at=_clock(self.engine.dialect.name))
            )
        return bool(result.rowcount)

    def stop_worker(self, executor_id: str) -> None:
        """The worker stops on its own: its runs are not taken over as a dead worker's."""
        now = _clock(self.engine.dialect.name)
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
                    *_not_ended(),
                    workers.heartbeat_at < _clock(self.engine.dialect.name, older_than),
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
                    *_not_ended(),
                    workers.heartbeat_at >= _clock(self.engine.dialect.name, within),
                )
                .order_by(workers.started_at, workers.executor_id)
            ).all()
        return [WorkerRow.model_validate(dict(row._mapping)) for row in rows]


class SyncState:
    """A run as the store last heard of it, for deciding what to re-read."""

    __slots__ = ("host", "last_seq", "record_stamp", "status", "worker", "workspace")

    def __init__(
        self,
        status: str,
        last_seq: int,
        record_stamp: str | None,
        workspace: str,
        host: str | None,
        worker: str | None = None,
    ) -> None:
        self.status = status
        self.last_seq = int(last_seq or 0)
        self.record_stamp = record_stamp
        self.workspace = workspace
        self.host = host
        #: The worker holding the run: its liveness is the worker's, not a local process's.
        self.worker = worker

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


def _upsert_factory(dialect: str) -> Any:
    """The dialect's INSERT with ON CONFLICT (SQLite and PostgreSQL spell it alike)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    raise UserError(f"the run store supports SQLite and PostgreSQL, not {dialect}")


def _not_ended() -> tuple[sa.ColumnElement[bool], ...]:
    """A worker the store still counts: it neither stopped nor was taken over as dead."""
    return (t.workers.c.stopped_at.is_(None), t.workers.c.recovered_by.is_(None))


def _clock(dialect: str, seconds_ago: float = 0.0) -> sa.ColumnElement[str]:
    """The database's time `seconds_ago` seconds ago, as the store writes times: ISO 8601
    in UTC with milliseconds (`2026-12-01T10:00:00.123+00:00`), so they compare as text."""
    if dialect == "postgresql":
        instant = sa.func.now() - sa.cast(sa.literal(f"{seconds_ago:.3f} seconds"), INTERVAL)
        return sa.func.to_char(
            sa.func.timezone("UTC", instant), 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"', type_=sa.String
        )
    return sa.func.strftime(
        "%Y-%m-%dT%H:%M:%f+00:00", "now", f"-{seconds_ago:.3f} seconds", type_=sa.String
    )


def _usable_seq(seq: Any) -> bool:
    return isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq <= MAX_SEQ


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


def _summary_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    return {
        "run_id": values["run_id"],
        "plugin": values["plugin"],
        "model": values["model"],
        "status": values["status"],
        "error_message": values.get("error_message"),
        "input_name": values.get("input_name"),
        "workspace": values.get("workspace") or "",
        "origin": values.get("origin") if values.get("origin") in ("cli", "ui", "api") else "cli",
        "host": values.get("host"),
        "created_at": values.get("created_at"),
        "finished_at": values.get("finished_at"),
        "updated_at": values.get("updated_at") or "",
        "finding_count": int(values.get("finding_count") or 0),
        "findings_by_code": {
            str(code): int(count)
            for code, count in _as_dict(values.get("findings_by_code")).items()
            if isinstance(count, int)
        },
        "warnings": [str(w) for w in _as_list(values.get("warnings"))],
        "problems": [str(p) for p in _as_list(values.get("problems"))],
        "cancel_requested": bool(values.get("cancel_requested")),
        "last_seq": int(values.get("last_seq") or 0),
        "worker": values.get("worker"),
        "clashes": [
            str(entry["workspace"])
            for entry in _as_list(values.get("clashes"))
            if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
        ],
    }


def _summary(values: Mapping[Any, Any]) -> RunSummary:
    return RunSummary(**_summary_fields(values))


def _artifact(values: Mapping[Any, Any]) -> ArtifactRow:
    return ArtifactRow(
        **{key: values[key] for key in ArtifactRow.model_fields if key in values},
    )


def _finding(values: Mapping[Any, Any]) -> FindingRow:
    fields = {key: values[key] for key in FindingRow.model_fields if key in values}
    fields["column"] = values["col"]
    fields["details"] = _as_dict(values.get("details"))
    return FindingRow(**fields)


def _citation(values: Mapping[Any, Any]) -> CitationRow:
    fields = {key: values[key] for key in CitationRow.model_fields if key in values}
    fields.update(column=values["col"], start=values["start_offset"], end=values["end_offset"])
    return CitationRow(**fields)


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # a JSON column read back as text by an older driver
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, list) else []
