"""The SQLite run store read through the standard library, for the commands that only look:
`runlens runs` and `runlens show` answer from it without importing SQLAlchemy (about a third
of a second of a command that otherwise takes a few tenths).

`open_read_first(url)` gives a `ReadFirstStore` for a plain `sqlite:///PATH` store whose
schema is at `HEAD_REVISION`: it answers the store's reads (`sync_states`, `get_run`,
`resolve_run`, `events`, `clash_lists`) with `SqliteReader`'s queries, the same statements
SQLAlchemy issues for `RunStore`'s, their values decoded as the store's column types decode
them (`runlens.store.codec`). Anything else (a write, a transaction, a read it does not
know) opens the `RunStore` (`open_store`), which from then on answers everything, reads
included (so a read inside a transaction sees what it wrote). Any other store, a store not
made yet or one whose schema is behind is opened as a `RunStore` at once.

The columns' kinds here are those of `runlens.store.tables` (a test compares them).
"""

from __future__ import annotations

import json
import numbers
import socket
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from runlens.errors import UserError
from runlens.records.status import TERMINAL
from runlens.store.listing import (
    ListedDetail,
    ListedRun,
    SyncState,
    home_records,
    one_match,
    stamped,
    summary_fields,
)
from runlens.store.location import BUSY_MS, HEAD_REVISION, sqlite_file
from runlens.store.values import decode_json, escape_text, fit, unescape_text
from runlens.tools.workspace import Workspace

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.rows import RunDetail, RunSummary

_TERMINAL: Final = sorted(str(status) for status in TERMINAL)
_INT_RANGE: Final = (-(2**31), 2**31 - 1)


def _text(value: Any) -> str | None:
    return None if value is None else unescape_text(str(value))


def _json(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, numbers.Number):  # as SQLAlchemy's SQLite JSON type reads one
        return decode_json(value)
    return decode_json(json.loads(value))


def _int(value: Any) -> Any:
    return value


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


#: Each table's columns in the order `runlens.store.tables` declares them, with the kind of
#: value each holds: how a value read back is decoded.
COLUMNS: Final[dict[str, dict[str, str]]] = {
    "runs": {
        "run_id": "text",
        "plugin": "text",
        "model": "text",
        "status": "text",
        "error_message": "text",
        "input_name": "text",
        "workspace": "text",
        "origin": "text",
        "host": "text",
        "created_at": "text",
        "finished_at": "text",
        "updated_at": "text",
        "finding_count": "int",
        "findings_by_code": "json",
        "warnings": "json",
        "problems": "json",
        "cancel_requested": "bool",
        "last_seq": "int",
        "plan": "json",
        "metrics": "json",
        "evidence_index_sha256": "text",
        "source_hash": "text",
        "citation_counts": "json",
        "record_stamp": "text",
        "worker": "text",
        "clashes": "json",
        "submitted_by": "text",
        "rerun_of": "text",
        "review_state": "text",
    },
    "events": {"run_id": "text", "seq": "int", "ts": "text", "type": "text", "data": "json"},
    "artifacts": {
        "run_id": "text",
        "name": "text",
        "ordinal": "int",
        "label": "text",
        "description": "text",
        "audience": "text",
        "sensitivity": "text",
        "required": "bool",
        "size": "int",
        "sha256": "text",
        "status": "text",
        "finding_count": "int",
    },
    "findings": {
        "run_id": "text",
        "ordinal": "int",
        "validator": "text",
        "artifact": "text",
        "code": "text",
        "path": "text",
        "message": "text",
        "details": "json",
        "row_id": "text",
        "line": "int",
        "col": "int",
    },
}
#: The length of the `runs` columns a read compares a value with (`runlens.store.tables`):
#: the value is escaped and cut as the column's type cuts it (`fit`).
RUN_ID_LENGTH: Final = 200
STATUS_LENGTH: Final = 20
PLUGIN_LENGTH: Final = 200

_DECODERS: Final[dict[str, Callable[[Any], Any]]] = {
    "text": _text,
    "json": _json,
    "int": _int,
    "bool": _bool,
}


def _select(table: str, columns: Sequence[str] | None = None) -> str:
    names = columns if columns is not None else list(COLUMNS[table])
    listed = ", ".join(
        f'{table}."{name}"' if name == "plan" else f"{table}.{name}" for name in names
    )
    return f"SELECT {listed} \nFROM {table}"


def _decoded(table: str, columns: Sequence[str], row: Sequence[Any]) -> dict[str, Any]:
    kinds = COLUMNS[table]
    return {name: _DECODERS[kinds[name]](value) for name, value in zip(columns, row, strict=True)}


def _bind(value: Any, length: int | None) -> str:
    """A text compared with a column, as the column's type binds it."""
    return fit(escape_text(str(value)), length)


def _bind_int(value: Any) -> int:
    low, high = _INT_RANGE
    return min(max(int(value), low), high)


def _like_escaped(text: str) -> str:
    """`text` as SQLAlchemy's `autoescape=True` escapes a LIKE operand (with `/`)."""
    return text.replace("/", "//").replace("%", "/%").replace("_", "/_")


class SqliteReader:
    """Reads of a SQLite run store through `sqlite3` (one connection, reads only)."""

    def __init__(self, connection: sqlite3.Connection, url: str) -> None:
        self._connection = connection
        #: The store's URL for display (a plain SQLite URL is its own display form).
        self.url = url

    @classmethod
    def open(cls, url: str) -> SqliteReader | None:
        """A reader of the store at `url`: None unless it is a plain `sqlite:///PATH` URL
        (`sqlite_file`) of a file that exists and holds the schema at `HEAD_REVISION`."""
        path = sqlite_file(url)
        if path is None:
            return None
        target = f"file:{quote(path, safe='/')}?mode=rw"  # never creates the file
        try:
            connection = sqlite3.connect(
                target, uri=True, timeout=BUSY_MS / 1000, isolation_level=None
            )
        except sqlite3.Error:
            return None
        try:
            connection.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
            row = None
        if row is None or row[0] != HEAD_REVISION:
            connection.close()
            return None
        return cls(connection, url)

    def close(self) -> None:
        self._connection.close()

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: the statements inside see the store as of one moment."""
        self._connection.execute("BEGIN")
        try:
            yield self._connection
        finally:
            self._connection.execute("COMMIT")

    def sync_states(
        self, run_ids: Sequence[str] | None = None, *, live: bool = False
    ) -> dict[str, SyncState]:
        """`RunStore.sync_states`."""
        columns = ["run_id", "status", "last_seq", "record_stamp", "workspace", "host", "worker"]
        sql = _select("runs", columns)
        conditions: list[str] = []
        params: list[Any] = []
        if run_ids is not None:
            ids = list(run_ids)
            if not ids:
                return {}
            conditions.append(f"runs.run_id IN ({', '.join('?' * len(ids))})")
            params.extend(_bind(run_id, RUN_ID_LENGTH) for run_id in ids)
        if live:
            marks = ", ".join("?" * len(_TERMINAL))
            conditions.append(f"(runs.status IS NULL OR (runs.status NOT IN ({marks})))")
            params.extend(_bind(status, STATUS_LENGTH) for status in _TERMINAL)
        if conditions:
            sql += " \nWHERE " + " AND ".join(conditions)
        with self._snapshot() as connection:
            rows = connection.execute(sql, params).fetchall()
        states = {}
        for row in rows:
            values = _decoded("runs", columns, row)
            states[values["run_id"]] = SyncState(
                values["status"],
                values["last_seq"],
                values["record_stamp"],
                values["workspace"],
                values["host"],
                values["worker"],
            )
        return states

    def clash_lists(self) -> dict[str, list[str]]:
        """`RunStore.clash_lists`."""
        columns = ["run_id", "clashes"]
        sql = _select("runs", columns) + " \nWHERE runs.clashes IS NOT NULL"
        with self._snapshot() as connection:
            rows = connection.execute(sql).fetchall()
        lists = {}
        for row in rows:
            values = _decoded("runs", columns, row)
            entries = values["clashes"] if isinstance(values["clashes"], list) else []
            lists[str(values["run_id"])] = [
                str(entry["workspace"])
                for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
            ]
        return {run_id: paths for run_id, paths in lists.items() if paths}

    def list_runs(
        self, *, status: str | None = None, plugin: str | None = None, limit: int = 50
    ) -> list[ListedRun]:
        """The first `limit` runs of `RunStore.list_runs` (newest first, of `status` and
        `plugin` when given), as `ListedRun`s."""
        conditions: list[str] = []
        params: list[Any] = []
        for name, value, length in (
            ("status", status, STATUS_LENGTH),
            ("plugin", plugin, PLUGIN_LENGTH),
        ):
            if value:
                conditions.append(f"runs.{name} = ?")
                params.append(_bind(value, length))
        sql = _select("runs")
        if conditions:
            sql += " \nWHERE " + " AND ".join(conditions)
        sql += " ORDER BY runs.created_at DESC, runs.run_id DESC\n LIMIT ? OFFSET ?"
        params.extend([max(limit, 0), 0])
        with self._snapshot() as connection:
            rows = connection.execute(sql, params).fetchall()
        columns = list(COLUMNS["runs"])
        return [ListedRun(**summary_fields(_decoded("runs", columns, row))) for row in rows]

    def get_run(self, run_id: str) -> ListedDetail | None:
        """`RunStore.get_run`, as a `ListedDetail` (the fields of its `RunDetail`)."""
        key = _bind(run_id, RUN_ID_LENGTH)
        with self._snapshot() as connection:
            row = connection.execute(_select("runs") + " \nWHERE runs.run_id = ?", [key]).fetchone()
            if row is None:
                return None
            artifacts = connection.execute(
                _select("artifacts") + " \nWHERE artifacts.run_id = ? ORDER BY artifacts.ordinal",
                [key],
            ).fetchall()
            findings = connection.execute(
                _select("findings") + " \nWHERE findings.run_id = ? ORDER BY findings.ordinal",
                [key],
            ).fetchall()
            reruns = connection.execute(
                _select("runs", ["run_id"])
                + " \nWHERE runs.rerun_of = ? ORDER BY runs.created_at, runs.run_id",
                [key],
            ).fetchall()
        return ListedDetail.of(
            _decoded("runs", list(COLUMNS["runs"]), row),
            [_decoded("artifacts", list(COLUMNS["artifacts"]), a) for a in artifacts],
            [_decoded("findings", list(COLUMNS["findings"]), f) for f in findings],
            [str(_text(rerun[0])) for rerun in reruns],
        )

    def resolve_run(self, text: str) -> str:
        """`RunStore.resolve_run`."""
        if not text:
            raise UserError("no run '' (give a run id)")
        select = _select("runs", ["run_id"])
        with self._snapshot() as connection:
            exact = connection.execute(
                select + " \nWHERE runs.run_id = ?", [_bind(text, RUN_ID_LENGTH)]
            ).fetchone()
            if exact is not None:
                return str(_text(exact[0]))
            pattern = _bind(_like_escaped(text), RUN_ID_LENGTH)
            found = connection.execute(
                select + " \nWHERE (runs.run_id LIKE ? || '%' ESCAPE '/') "
                "OR (runs.run_id LIKE '%' || ? ESCAPE '/')",
                [pattern, pattern],
            ).fetchall()
        matches = sorted(str(_text(row[0])) for row in found)
        return one_match(text, matches, self.url)

    def events(
        self, run_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """`RunStore.events`."""
        sql = (
            _select("events") + " \nWHERE events.run_id = ? AND events.seq > ? ORDER BY events.seq"
        )
        params: list[Any] = [_bind(run_id, RUN_ID_LENGTH), _bind_int(after_seq)]
        if limit is not None:
            sql += "\n LIMIT ? OFFSET ?"
            params.extend([limit, 0])
        with self._snapshot() as connection:
            rows = connection.execute(sql, params).fetchall()
        columns = list(COLUMNS["events"])
        listed = []
        for row in rows:
            values = _decoded("events", columns, row)
            data = values["data"]
            listed.append(
                {
                    "seq": values["seq"],
                    "ts": values["ts"],
                    "run_id": values["run_id"],
                    "type": values["type"],
                    "data": data if isinstance(data, dict) else {},
                }
            )
        return listed


class ReadFirstStore:
    """A `RunStore` whose reads go through a `SqliteReader` until anything else is asked of
    it: then the `RunStore` is opened, and answers everything from then on."""

    def __init__(self, reader: SqliteReader, url: str) -> None:
        self._reader: SqliteReader | None = reader
        self._full: RunStore | None = None
        self._raw_url = url
        #: The store's URL for display, as `RunStore.url`.
        self.url = reader.url
        self.host = socket.gethostname()

    @property
    def full(self) -> RunStore:
        """The `RunStore`, opened on first use (`UserError` when it cannot be)."""
        if self._full is None:
            from runlens.store.db import open_store

            self._full = open_store(self._raw_url)
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        return self._full

    def __getattr__(self, name: str) -> Any:
        # Only names this class does not define arrive here: all of them are the store's.
        return getattr(self.full, name)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._full is not None:
            self._full.close()

    def sync_states(
        self, run_ids: Sequence[str] | None = None, *, live: bool = False
    ) -> dict[str, SyncState]:
        if self._reader is None:
            return self.full.sync_states(run_ids, live=live)
        return self._reader.sync_states(run_ids, live=live)

    def clash_lists(self) -> dict[str, list[str]]:
        if self._reader is None:
            return self.full.clash_lists()
        return self._reader.clash_lists()

    def get_run(self, run_id: str) -> ListedDetail | RunDetail | None:
        """`RunStore.get_run` (a `ListedDetail` while reading through `sqlite3`, else a
        `RunDetail`: the same fields)."""
        if self._reader is None:
            return self.full.get_run(run_id)
        return self._reader.get_run(run_id)

    def resolve_run(self, text: str) -> str:
        if self._reader is None:
            return self.full.resolve_run(text)
        return self._reader.resolve_run(text)

    def events(
        self, run_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        if self._reader is None:
            return self.full.events(run_id, after_seq, limit)
        return self._reader.events(run_id, after_seq, limit)

    def listed_runs(
        self, *, status: str | None = None, plugin: str | None = None, limit: int = 50
    ) -> Sequence[ListedRun | RunSummary]:
        """The first `limit` runs of `list_runs` (`ListedRun`s while reading through
        `sqlite3`, else `RunSummary`s: the same fields)."""
        if self._reader is None:
            return self.full.list_runs(status=status, plugin=plugin, limit=limit)[0]
        return self._reader.list_runs(status=status, plugin=plugin, limit=limit)

    def in_step_with(self, home: Path) -> bool:
        """Whether bringing the store in step with the runs home `home` would write nothing
        (`index_home` and `refresh_live`, as `runlens runs` calls them): every workspace of
        the home is held ended with its current `run.json` (`stamped`), no run the store
        holds as live has its workspace on this machine, and no run lists a copy of itself
        under the home among its clashes. False once the `RunStore` is open."""
        reader = self._reader
        if reader is None:
            return False
        states = reader.sync_states()
        by_workspace = {state.workspace: state for state in states.values()}
        for folder, stamp in home_records(home):
            if not stamped(by_workspace.get(folder), folder, stamp):
                return False
        for state in states.values():
            if state.status is not None and state.status in _TERMINAL:
                continue
            if state.host not in (None, self.host) or not state.workspace:
                continue
            if (Path(state.workspace) / Workspace.RUN_RECORD).is_file():
                return False
        root = home.resolve()
        return not any(
            Path(path).is_relative_to(root)
            for paths in reader.clash_lists().values()
            for path in paths
        )


def open_read_first(url: str) -> ReadFirstStore | RunStore:
    """The store at `url`: a `ReadFirstStore` when `SqliteReader` can read it, else the
    `RunStore` (`open_store`: created or upgraded as needed; `UserError` when it cannot be
    opened)."""
    reader = SqliteReader.open(url)
    if reader is None:
        from runlens.store.db import open_store

        return open_store(url)
    return ReadFirstStore(reader, url)
