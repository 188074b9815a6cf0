"""The run store's engine: its URL, opening it, its schema's migrations, its locks, and the
transactions every part of the store writes and reads in (`StoreBase`).

SQLite in the runs home by default (`$RUNLENS_HOME/runlens.db`), PostgreSQL when
`RUNLENS_DATABASE_URL` or `--database-url` names one. Several processes share one store: every
`runlens run` writes its own run, `runlens ui` reads all of them and asks runs to stop, the
workers keep their runs and heartbeats in it. On SQLite that is WAL mode with a 30 s busy
timeout, and write transactions that take the write lock when they begin (`BEGIN
IMMEDIATE`), so two writers wait for each other instead of failing on a lock upgrade.

`open_engine` brings the schema up to date with the Alembic migrations beside this package.
Alembic is imported only when the store is behind: the revision a store holds is read with one
query and compared with `HEAD_REVISION`, which keeps the fixed cost of `runlens run` low.
SQLAlchemy itself is imported only when an engine is opened or a statement built: this module,
`StoreBase` and the settings of a SQLite connection (`configure_sqlite`) load without it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from runlens.errors import UserError, one_line
from runlens.store.location import BUSY_MS, HEAD_REVISION, SQLITE_NAME, store_url

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import Connection, Engine

__all__ = [
    "BUSY_MS",
    "HEAD_REVISION",
    "SQLITE_NAME",
    "StoreBase",
    "configure_sqlite",
    "database_clock",
    "display_url",
    "insert_on_conflict",
    "migration_config",
    "open_engine",
    "store_url",
]


def display_url(url: str) -> str:
    """`url` with its password replaced by `***`, for messages."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url.split("@")[-1] if "@" in url else url


def open_engine(url: str) -> tuple[Engine, str]:
    """Connect to the store at `url`, creating it (and its folder, for SQLite) or upgrading
    its schema when needed: the engine and the URL to display. `UserError` naming the URL when
    it cannot be used."""
    import sqlalchemy as sa

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
    return engine, shown


def _reason(error: BaseException) -> str:
    import sqlalchemy as sa

    if isinstance(error, sa.exc.DBAPIError) and error.orig is not None:
        return one_line(error.orig)
    return one_line(error)


def _engine(url: str) -> Engine:
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

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
    import sqlalchemy as sa

    @sa.event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        configure_sqlite(dbapi_connection)

    @sa.event.listens_for(engine, "begin")
    def begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get("runlens_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


#: How large a SQLite store's write-ahead log file stays once a checkpoint has emptied it:
#: a log that grew while readers kept the checkpoints from catching up (a long replay
#: watched from the UI) is cut back to this, not kept at its largest.
WAL_LIMIT_BYTES = 16 * 1024 * 1024


def configure_sqlite(dbapi_connection: Any) -> None:
    """The settings of every connection to a SQLite store (a `sqlite3.Connection`): the
    busy timeout, WAL mode, `synchronous=NORMAL`, the log's size limit (`WAL_LIMIT_BYTES`),
    foreign keys on, and transactions left to the caller (`BEGIN IMMEDIATE` for a write,
    never the driver's implicit `BEGIN`)."""
    dbapi_connection.isolation_level = None  # the driver leaves transactions to us
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        _while_locked(lambda: cursor.execute("PRAGMA journal_mode=WAL"))
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


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
    """The revision in the store's `alembic_version` table; None for a new store.

    One plain query: the schema is inspected only when it fails (a new store has no table)."""
    import sqlalchemy as sa

    query = sa.text("SELECT version_num FROM alembic_version")
    with engine.connect() as connection:
        try:
            value = connection.execute(query).scalar()
        except (sa.exc.OperationalError, sa.exc.ProgrammingError):
            connection.rollback()  # PostgreSQL refuses any other statement after the error
            if sa.inspect(connection).has_table("alembic_version"):
                raise
            return None
    return str(value) if value is not None else None


def _upgrade(engine: Engine, url: str) -> None:
    """Run the migrations up to the head, one process at a time (the caller holds a file lock
    beside a SQLite store; on PostgreSQL an advisory lock); a process that waited finds
    nothing left to do."""
    import sqlalchemy as sa
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


def _set_local(connection: Connection, setting: str) -> None:
    """`SET LOCAL setting` in the transaction of `connection` (PostgreSQL), through the
    driver: SQLAlchemy's execution of a text costs more than the statement's round trip.
    Through SQLAlchemy when someone listens to its statements (a tracer, a test)."""
    sql = f"SET LOCAL {setting}"
    if connection.dispatch.before_cursor_execute:
        import sqlalchemy as sa

        connection.execute(sa.text(sql))
        return
    driver = connection.connection.driver_connection
    assert driver is not None, "an open connection has a driver connection"
    try:
        driver.execute(sql).close()
    except connection.dialect.loaded_dbapi.Error as error:
        connection._handle_dbapi_exception(error, sql, (), None, None)
        raise  # not reached: the call above raises SQLAlchemy's error


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


class StoreBase:
    """One store, shared by the threads of a process (each call takes its own connection):
    what every part of the store (`runlens.store.db.RunStore`) writes and reads through."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        #: The store's URL for display: the password, if any, is `***`.
        self.url = url
        self.host = socket.gethostname()
        self._insert = insert_on_conflict(engine.dialect.name)
        self._local = threading.local()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
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
    def savepoint(self) -> Iterator[None]:
        """Inside `transaction`: the calls in the block all reach the store, or (on an error,
        which propagates) none of them does, and the rest of the transaction stays. Outside
        one it is a transaction of its own."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            with self.transaction():
                yield
            return
        with connection.begin_nested():
            yield

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
                        _set_local(connection, f"lock_timeout = {int(lock_seconds * 1000)}")
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


def insert_on_conflict(dialect: str) -> Any:
    """The dialect's INSERT with ON CONFLICT (SQLite and PostgreSQL spell it alike)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    raise UserError(f"the run store supports SQLite and PostgreSQL, not {dialect}")


def database_clock(dialect: str, seconds_ago: float = 0.0) -> sa.ColumnElement[str]:
    """The database's time `seconds_ago` seconds ago, as the store writes times: ISO 8601
    in UTC with milliseconds (`2026-12-01T10:00:00.123+00:00`), so they compare as text."""
    import sqlalchemy as sa

    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import INTERVAL

        instant = sa.func.now() - sa.cast(sa.literal(f"{seconds_ago:.3f} seconds"), INTERVAL)
        return sa.func.to_char(
            sa.func.timezone("UTC", instant), 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"', type_=sa.String
        )
    return sa.func.strftime(
        "%Y-%m-%dT%H:%M:%f+00:00", "now", f"-{seconds_ago:.3f} seconds", type_=sa.String
    )
