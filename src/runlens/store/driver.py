"""The run store's hot writes at the level of the database driver, without SQLAlchemy.

A run's end writes its row, its events and its results; a live mirror writes batches of
events. Through SQLAlchemy each value of each row goes through its column type's bind
processing (`runlens.store.codec`) and each statement through an execution context, which
cost a short run more than the writes themselves. Here those statements are fixed SQL
texts run on rows encoded once (with the driver's `executemany` on SQLite; on PostgreSQL
an INSERT takes one array a column, `unnest`ed in row order), exactly as the column
types encode them (`runlens.store.values`: the same escapes, cuts and clamps, and the JSON
text SQLAlchemy's `JSON` binds: `json.dumps` of the escaped value), so the stored rows are
the ones SQLAlchemy would store.

The caller gives the DBAPI connection of the transaction it holds (SQLAlchemy's
`connection.connection.driver_connection`) and the engine's name: `"sqlite"` (the standard
`sqlite3`, `?` parameters) or `"postgresql"` (psycopg, `%s` parameters, each cast to its
column's type as SQLAlchemy casts them; an INSERT's arrays go in binary, `%b`). Nothing
here begins or ends a transaction.

    encode_json_text   a JSON value as the `Json` column binds it (the text on SQLite)
    encode_text        a text as the `Text` column of a length binds it
    encode_row         a row's values in a table's column order, each encoded as bound
    event_rows         the encoded rows of a run's events (those with a usable `seq`)
    insert_rows        a table's rows in one INSERT (events skip those held)
    insert_encoded     the same, of rows already encoded
    update_run         the run's row: the columns given (unless its status is one kept)
    insert_run         a new run's row (on conflict: the columns named set, or nothing)
    run_status         the run's status (the row locked on PostgreSQL)
    raise_last_seq     each run's `last_seq` raised to the top of its new events
    run_end_state      the run's status, worker and `last_seq` (the row locked on PostgreSQL)
    delete_results     the run's artifacts, findings and citations
    pipelined          on PostgreSQL, the statements of a block in one round trip

`TABLES` describes the columns of the tables written here; a test checks it against
`runlens.store.tables`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from _json import encode_basestring_ascii, make_encoder
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeGuard, cast

import orjson

from runlens.store.values import encode_json, escape_text, fit, unescape_text

#: A column's kind: `text` (`codec.Text`, with its length), `json` (`codec.Json`), `int`
#: (`codec.Int`), `bigint` (`codec.Int(big=True)`), `bool` (`sa.Boolean`).
Kind = Literal["text", "json", "int", "bigint", "bool"]
Engine = Literal["sqlite", "postgresql"]

_INT_RANGE: Final = (-(2**31), 2**31 - 1)
_BIGINT_RANGE: Final = (-(2**63), 2**63 - 1)
_PG_CAST: Final = {
    "text": "VARCHAR",
    "json": "JSONB",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "bool": "BOOLEAN",
}
#: What in `json.dumps`'s text (ASCII) may need `encode_json`'s walk: an escaped U+0000,
#: surrogate (a lone one, or half of a pair) or U+E000, and a non-finite float. A match
#: only means the value is walked; no match (with every key a `str`) means the walk would
#: change nothing.
_MAY_NEED_WALK: Final = re.compile(r"\\u(?:0000|d[89a-f]|e000)|NaN|Infinity")
_CONTAINERS: Final = (dict, list, tuple)
#: The C encoder of `json.dumps` with its default settings, made once (`json.dumps` makes it
#: again for each value, through three layers of Python): the same text. It does not look
#: for a value that holds itself (the recursion limit stops it): on any error the value
#: takes the walk's way, as on an error of `json.dumps`.
_DUMPS: Final = make_encoder(
    None, json.JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ", False, False, True
)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind
    length: int | None = None


@dataclass(frozen=True)
class Table:
    """A table written here: its name and columns (a row's values in this order)."""

    name: str
    columns: tuple[Column, ...]

    def __hash__(self) -> int:
        # By name, not by every column: the statements made for a table are cached by it.
        return hash(self.name)

    @functools.cached_property
    def by_name(self) -> dict[str, Column]:
        return {column.name: column for column in self.columns}

    @functools.cached_property
    def plan(self) -> tuple[tuple[Column, str, Kind, int | None], ...]:
        """The columns as `encode_row` walks them."""
        return tuple((column, column.name, column.kind, column.length) for column in self.columns)


def _table(name: str, *columns: tuple[str, Kind] | tuple[str, Kind, int]) -> Table:
    return Table(name, tuple(Column(*column) for column in columns))


EVENTS: Final = _table(
    "events",
    ("run_id", "text", 200),
    ("seq", "int"),
    ("ts", "text", 40),
    ("type", "text", 100),
    ("data", "json"),
)
ARTIFACTS: Final = _table(
    "artifacts",
    ("run_id", "text", 200),
    ("name", "text", 500),
    ("ordinal", "int"),
    ("label", "text"),
    ("description", "text"),
    ("audience", "text", 50),
    ("sensitivity", "text", 50),
    ("required", "bool"),
    ("size", "bigint"),
    ("sha256", "text", 64),
    ("status", "text", 20),
    ("finding_count", "int"),
)
FINDINGS: Final = _table(
    "findings",
    ("run_id", "text", 200),
    ("ordinal", "int"),
    ("validator", "text", 200),
    ("artifact", "text", 500),
    ("code", "text", 100),
    ("path", "text"),
    ("message", "text"),
    ("details", "json"),
    ("row_id", "text"),
    ("line", "int"),
    ("col", "int"),
)
CITATIONS: Final = _table(
    "citations",
    ("run_id", "text", 200),
    ("ordinal", "int"),
    ("artifact", "text", 500),
    ("location", "text"),
    ("row_id", "text", 500),
    ("quote", "text"),
    ("start_offset", "int"),
    ("end_offset", "int"),
    ("line", "int"),
    ("col", "int"),
    ("status", "text", 20),
    ("code", "text", 100),
    ("reason", "text"),
    ("span_start", "int"),
    ("span_end", "int"),
    ("span_line", "int"),
    ("id_start", "int"),
    ("id_end", "int"),
)
RUNS: Final = _table(
    "runs",
    ("run_id", "text", 200),
    ("plugin", "text", 200),
    ("model", "text", 500),
    ("status", "text", 20),
    ("error_message", "text"),
    ("input_name", "text"),
    ("workspace", "text"),
    ("origin", "text", 10),
    ("host", "text", 255),
    ("created_at", "text", 40),
    ("finished_at", "text", 40),
    ("updated_at", "text", 40),
    ("finding_count", "int"),
    ("findings_by_code", "json"),
    ("warnings", "json"),
    ("problems", "json"),
    ("cancel_requested", "bool"),
    ("last_seq", "int"),
    ("plan", "json"),
    ("metrics", "json"),
    ("evidence_index_sha256", "text", 64),
    ("source_hash", "text", 64),
    ("citation_counts", "json"),
    ("record_stamp", "text", 60),
    ("worker", "text", 255),
    ("clashes", "json"),
    ("submitted_by", "text", 200),
    ("rerun_of", "text", 200),
    ("review_state", "text", 20),
)
TABLES: Final = (RUNS, EVENTS, ARTIFACTS, FINDINGS, CITATIONS)
#: The highest event `seq` the store keeps (its `INTEGER` column's top).
MAX_SEQ: Final = 2**31 - 1
#: How many run ids one `IN (...)` names at most (SQLite's bound parameters are limited).
IDS_PER_QUERY: Final = 500
_RUN_ID: Final = RUNS.columns[0]
#: The results tables, as `delete_results` empties them.
_RESULTS: Final = (ARTIFACTS, FINDINGS, CITATIONS)


def encode_json_text(value: Any) -> str:
    """The JSON text a `Json` column binds for `value`: `json.dumps(encode_json(value))`.
    The value is dumped first and walked only when the text shows something to escape
    (`_MAY_NEED_WALK`), when a key is not a `str` (`json` writes `True` as `true`, the
    walk as `str(key)` does), or when `json` cannot dump it as it is."""
    try:
        # orjson refuses every key that is not exactly a `str` (a bool, a number, a `str`
        # subclass such as an enum member), in C: what `_str_keys` walks for, at a fraction
        # of its cost.
        orjson.dumps(value)
    except (TypeError, ValueError):
        checked = False  # a key to walk, or a value orjson does not take: json decides
    else:
        checked = True
    if checked or _str_keys(value):
        try:
            text = "".join(_DUMPS(value, 0))  # `json.dumps(value)`
        except (TypeError, ValueError, RecursionError):
            pass  # the walk's value, or its error
        else:
            # The three plain substrings are looked for first, each at C speed: without
            # them the pattern cannot match (most texts), and the pattern is not run.
            if (
                "\\u" not in text and "NaN" not in text and "Infinity" not in text
            ) or _MAY_NEED_WALK.search(text) is None:
                return text
    return json.dumps(encode_json(value))


def encode_text(value: str, length: int | None) -> str:
    """A text column's value as `Text` binds it: `fit(escape_text(value), length)`. ASCII
    text without U+0000 that fits (an event's time and type, nearly every value) is that
    already: `escape_text` changes only U+0000, U+E000 and surrogates."""
    if value.isascii() and "\x00" not in value and (length is None or len(value) <= length):
        return value
    return fit(escape_text(value), length)


def _str_keys(value: Any) -> bool:
    """Whether every dict in `value` is a `dict` (not a subclass) with `str` keys."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if isinstance(item, _CONTAINERS) and not _str_keys(item):
                return False
        return True
    if kind is list or kind is tuple:
        return all(_str_keys(item) for item in value if isinstance(item, _CONTAINERS))
    return not isinstance(value, _CONTAINERS)


def _encode(column: Column, value: Any) -> Any:
    """`value` as `column`'s type binds it."""
    kind = column.kind
    if kind == "json":
        return encode_json_text(value)  # None too: JSON `null`, as the column binds it
    if value is None:
        return None
    if kind == "text":
        return encode_text(str(value), column.length)
    if kind == "int":
        return min(max(int(value), _INT_RANGE[0]), _INT_RANGE[1])
    if kind == "bigint":
        return min(max(int(value), _BIGINT_RANGE[0]), _BIGINT_RANGE[1])
    return bool(value)


def encode_row(table: Table, row: Mapping[str, Any]) -> tuple[Any, ...]:
    """`row`'s values in `table`'s column order, each encoded as its column binds it; a
    column the row does not name is NULL (every insert here names all of them).

    The same values as `_encode` gives each, written out for the usual ones (an ASCII `str`
    without U+0000 that fits its text column, an `int` in its column's range, `None`): a
    run's end and `runlens reindex` encode every citation of a run, tens of values each."""
    values: list[Any] = []
    append = values.append
    get = row.get
    for column, name, kind, length in table.plan:
        value = get(name)
        if value is None and kind != "json":
            append(None)
        elif kind == "text":
            if (
                type(value) is str
                and value.isascii()
                and "\x00" not in value
                and (length is None or len(value) <= length)
            ):
                append(value)
            else:
                append(encode_text(str(value), length))
        elif kind == "int" and type(value) is int and _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            append(value)
        else:
            append(_encode(column, value))
    return tuple(values)


def _marks(engine: Engine, columns: Iterable[Column]) -> list[str]:
    if engine == "sqlite":
        return ["?" for _ in columns]
    return [f"%s::{_PG_CAST[column.kind]}" for column in columns]


@functools.cache
def insert_sql(engine: Engine, table: Table) -> str:
    """The INSERT of every column of `table` (one row's values on SQLite; on PostgreSQL,
    one array of every row's values per column, `unnest`ed in row order); events already
    held are skipped."""
    names = ", ".join(column.name for column in table.columns)
    conflict = " ON CONFLICT DO NOTHING" if table is EVENTS else ""
    if engine == "postgresql":
        arrays = ", ".join(f"%b::{_PG_CAST[column.kind]}[]" for column in table.columns)
        return f"INSERT INTO {table.name} ({names}) SELECT * FROM unnest({arrays}){conflict}"
    marks = ", ".join(_marks(engine, table.columns))
    return f"INSERT INTO {table.name} ({names}) VALUES ({marks}){conflict}"


def insert_rows(
    driver: Any, engine: Engine, table: Table, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Insert `rows` into `table`: one `executemany` of the driver's cursor on SQLite (its
    rows stepped in C), one statement of one array a column on PostgreSQL (psycopg sends a
    list as one array parameter; an `executemany` there costs tens of µs of Python a row)."""
    if rows:
        insert_encoded(driver, engine, table, [encode_row(table, row) for row in rows])


def insert_encoded(
    driver: Any, engine: Engine, table: Table, rows: Sequence[tuple[Any, ...]]
) -> None:
    """`insert_rows` of rows already encoded (`encode_row`, `event_rows`)."""
    if not rows:
        return
    if engine == "postgresql":
        cursor = driver.cursor()
        try:
            columns = [list(column) for column in zip(*rows, strict=True)]
            cursor.execute(insert_sql(engine, table), columns)
        finally:
            cursor.close()
        return
    _executemany(driver, insert_sql(engine, table), rows)


def usable_seq(seq: Any) -> TypeGuard[int]:
    """Whether `seq` is an event's place the store keeps: an integer from 0 to `MAX_SEQ`."""
    return isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq <= MAX_SEQ


class EventRecord(Protocol):
    """An event given as an object (`runlens.records.events.Event`) rather than a mapping."""

    @property
    def seq(self) -> Any: ...
    @property
    def ts(self) -> Any: ...
    @property
    def type(self) -> Any: ...
    @property
    def data(self) -> Any: ...


#: A run's events as `event_rows` takes them: mappings (`{seq, ts, type, data}`), or a
#: sequence of `EventRecord`s (what a live mirror takes from its run, not made into dicts).
Events = Iterable[Mapping[str, Any]] | Sequence[EventRecord]


def event_rows(run_id: str, events: Events) -> tuple[list[tuple[Any, ...]], int | None]:
    """The `events` rows (encoded, in `EVENTS`' column order) of the events with a usable
    `seq`, and the highest of those (None when there is none). An event's `ts` and `type`
    are text (empty when missing), its `data` an object (`{}` when it is not one)."""
    if isinstance(events, Sequence) and events and not isinstance(events[0], Mapping):
        return _record_rows(run_id, cast("Sequence[EventRecord]", events))
    return _mapping_rows(run_id, cast("Iterable[Mapping[str, Any]]", events))


def _mapping_rows(
    run_id: str, events: Iterable[Mapping[str, Any]]
) -> tuple[list[tuple[Any, ...]], int | None]:
    """`event_rows` of events given as mappings."""
    fields = ((e.get("seq"), e.get("ts"), e.get("type"), e.get("data")) for e in events)
    return _fields_rows(run_id, fields)


def _record_rows(
    run_id: str, events: Sequence[EventRecord]
) -> tuple[list[tuple[Any, ...]], int | None]:
    """`event_rows` of events given as objects: the same rows, read from their attributes
    (a run's events, as a mirror takes them, without a dict made of each)."""
    return _fields_rows(run_id, ((e.seq, e.ts, e.type, e.data) for e in events))


def _fields_rows(
    run_id: str, events: Iterable[tuple[Any, Any, Any, Any]]
) -> tuple[list[tuple[Any, ...]], int | None]:
    """`event_rows` of events given as their `(seq, ts, type, data)`."""
    key = _encode(_RUN_ID, run_id)
    rows: list[tuple[Any, ...]] = []
    append = rows.append
    top = -1
    # Written out for the usual event (a plain `int` seq, ASCII `str` time and type, which
    # `encode_text` keeps as they are): a run's end encodes every event it did not stream.
    for given, ts, kind, data in events:
        if type(given) is int:
            if not 0 <= given <= MAX_SEQ:
                continue
            seq = given
        elif usable_seq(given):
            seq = int(given)
        else:
            continue
        if seq > top:
            top = seq
        ts = ts or ""
        if type(ts) is not str or len(ts) > 40 or not ts.isascii() or "\x00" in ts:
            ts = encode_text(str(ts), 40)
        kind = kind or ""
        if type(kind) is not str or len(kind) > 100 or not kind.isascii() or "\x00" in kind:
            kind = encode_text(str(kind), 100)
        append((key, seq, ts, kind, encode_json_text(data if isinstance(data, dict) else {})))
    return rows, (top if rows else None)


@functools.cache
def _update_run_sql(engine: Engine, names: tuple[str, ...], kept: int = 0) -> str:
    columns = [RUNS.by_name[name] for name in names]
    sets = ", ".join(
        f"{column.name}={mark}"
        for column, mark in zip(columns, _marks(engine, columns), strict=True)
    )
    (key,) = _marks(engine, [RUNS.by_name["run_id"]])
    unless = ""
    if kept:
        marks = ", ".join(_marks(engine, [RUNS.by_name["status"]] * kept))
        unless = f" AND runs.status NOT IN ({marks})"
    return f"UPDATE runs SET {sets} WHERE runs.run_id = {key}{unless}"


def update_run(
    driver: Any,
    engine: Engine,
    run_id: str,
    values: Mapping[str, Any],
    *,
    keep: Sequence[str] = (),
) -> int:
    """Set the run's columns `values` names; how many rows changed (0: no such run, or,
    with `keep`, a run whose status is one of those, left as it is)."""
    names = tuple(values)
    sql = _update_run_sql(engine, names, len(keep))
    columns = RUNS.by_name
    params = [_encode(columns[name], values[name]) for name in names]
    params.append(_encode(columns["run_id"], run_id))
    params.extend(_encode(columns["status"], status) for status in keep)
    cursor = driver.cursor()
    try:
        cursor.execute(sql, params)
        return int(cursor.rowcount)
    finally:
        cursor.close()


@functools.cache
def _insert_run_sql(
    engine: Engine, names: tuple[str, ...], update: tuple[str, ...], skip_held: bool
) -> str:
    columns = [RUNS.by_name[name] for name in names]
    marks = ", ".join(_marks(engine, columns))
    sets = ", ".join(f"{name}=excluded.{name}" for name in update)
    conflict = (
        " ON CONFLICT (run_id) DO NOTHING"
        if skip_held
        else f" ON CONFLICT (run_id) DO UPDATE SET {sets}"
        if update
        else ""
    )
    return f"INSERT INTO runs ({', '.join(names)}) VALUES ({marks}){conflict}"


def insert_run(
    driver: Any,
    engine: Engine,
    row: Mapping[str, Any],
    update: Sequence[str] = (),
    *,
    skip_held: bool = False,
) -> bool:
    """Insert the run's row with the columns `row` names (the others take their defaults);
    a run the store holds already has the columns `update` names set as `row` gives them
    instead, or with `skip_held` is left as it is (with neither, the insert fails as the
    key is taken). Whether a row was written (not to be read in `pipelined`)."""
    names = tuple(row)
    columns = RUNS.by_name
    params = [_encode(columns[name], row[name]) for name in names]
    cursor = driver.cursor()
    try:
        cursor.execute(_insert_run_sql(engine, names, tuple(update), skip_held), params)
        return bool(cursor.rowcount)
    finally:
        cursor.close()


def run_status(driver: Any, engine: Engine, run_id: str) -> str | None:
    """The run's stored status (None: no such run), its row locked until the transaction
    ends on PostgreSQL."""
    held = _select_run(driver, engine, "status", run_id)
    return None if held is None else unescape_text(str(held[0]))


@functools.cache
def _raise_last_seq_sql(engine: Engine) -> str:
    seq, stamp, key = _marks(
        engine, [RUNS.by_name[n] for n in ("last_seq", "updated_at", "run_id")]
    )
    return (
        f"UPDATE runs SET last_seq={seq}, updated_at={stamp} "
        f"WHERE runs.run_id = {key} AND runs.last_seq < {seq}"
    )


def raise_last_seq(driver: Any, engine: Engine, tops: Sequence[tuple[str, int]], now: str) -> None:
    """Each run's `last_seq` raised to its top (never lowered), with `updated_at` `now`."""
    if not tops:
        return
    columns = RUNS.by_name
    stamp = _encode(columns["updated_at"], now)
    rows = []
    for run_id, top in tops:
        seq = _encode(columns["last_seq"], top)
        rows.append((seq, stamp, _encode(columns["run_id"], run_id), seq))
    _executemany(driver, _raise_last_seq_sql(engine), rows)


def run_end_state(driver: Any, engine: Engine, run_id: str) -> tuple[str, str | None, int] | None:
    """The run's stored status, worker and `last_seq`, its row locked until the transaction
    ends on PostgreSQL (SQLite's write transaction holds the whole file); None when the
    store holds no such run."""
    row = _select_run(driver, engine, "status, worker, last_seq", run_id)
    if row is None:
        return None
    status, worker, last_seq = row
    return (
        unescape_text(str(status)),
        None if worker is None else unescape_text(str(worker)),
        int(last_seq),
    )


def _select_run(driver: Any, engine: Engine, columns: str, run_id: str) -> Any:
    """The run's `columns` (None: no such run), its row locked on PostgreSQL."""
    (key,) = _marks(engine, [_RUN_ID])
    lock = " FOR UPDATE" if engine == "postgresql" else ""
    cursor = driver.cursor()
    try:
        cursor.execute(
            f"SELECT {columns} FROM runs WHERE runs.run_id = {key}{lock}",
            [_encode(_RUN_ID, run_id)],
        )
        return cursor.fetchone()
    finally:
        cursor.close()


def delete_results(driver: Any, engine: Engine, run_id: str) -> None:
    """Delete the run's artifacts, findings and citations."""
    (key,) = _marks(engine, [RUNS.by_name["run_id"]])
    param = [_encode(RUNS.by_name["run_id"], run_id)]
    cursor = driver.cursor()
    try:
        for table in _RESULTS:
            cursor.execute(f"DELETE FROM {table.name} WHERE {table.name}.run_id = {key}", param)
    finally:
        cursor.close()


@contextlib.contextmanager
def pipelined(driver: Any, engine: Engine) -> Iterator[None]:
    """The statements of the block sent one after the other without waiting for each
    one's answer, on PostgreSQL (psycopg's pipeline mode): a run's end is one round trip,
    not one a statement. An error is raised at the block's end at the latest; a result
    (a `rowcount`) is not to be read inside it. On SQLite, the block as it is."""
    pipeline = getattr(driver, "pipeline", None) if engine == "postgresql" else None
    if pipeline is None:
        yield
        return
    with pipeline():
        yield


def _executemany(driver: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    cursor = driver.cursor()
    try:
        cursor.executemany(sql, rows)
    finally:
        cursor.close()
