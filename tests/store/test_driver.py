"""The driver-level writes (`runlens.store.driver`) store what SQLAlchemy's column types
store, byte for byte, for hostile values too: U+0000, lone surrogates, U+E000, NaN and
Infinity, keys `json` writes otherwise than `str` does, texts longer than their column,
integers outside theirs. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any

import pytest
import sqlalchemy as sa

from runlens.records.events import Event
from runlens.store import driver as d
from runlens.store import open_store
from runlens.store import tables as t
from runlens.store.codec import Int, Json, Text
from runlens.store.values import encode_json, escape_text, fit


class _Key(str, Enum):  # noqa: UP042 (a StrEnum's str() is its value)
    A = "a"  # `str()` of it is "_Key.A", `json` writes "a"


class _Mapping(dict[str, Any]):
    """A dict subclass (orjson takes it; the walk makes a plain dict of it)."""


HOSTILE_STRINGS = [
    "plain",
    "nul\x00inside",
    "lone \ud800 high",
    "lone \udfff low",
    "escape \ue000 itself",
    "\ue000e already escaped-looking",
    "emoji 😀 and é",
    "back\\slash \\u0000 not a nul",
    "NaN Infinity words",
    "",
]
HOSTILE_JSON: list[Any] = [
    {"a": 1},
    {"nul": "\x00", "\x00key": 1},
    {"\ud800": "\udfff"},
    {"x": "\ue000"},
    {"nan": float("nan"), "inf": [float("inf"), -float("inf")]},
    {True: 1, False: 2, None: 3, 7: 4, 2.5: 5, float("nan"): 6},
    {_Key.A: _Key.A},
    {"ordered": OrderedDict([(True, 1)])},
    {"tuple": (1, "\x00"), "nested": [{"deep": {"er": ["\ud83d"]}}]},
    {"long": "x" * 5000, "emoji": "😀"},
    {"big": 2**70, "small": -(2**70)},
    _Mapping({"sub": _Mapping({"a": [1, "\x00"]})}),
    {},
]


@pytest.mark.parametrize("value", [*HOSTILE_JSON, *HOSTILE_STRINGS, None, 1.5, [1, "a"]])
def test_encode_json_text_is_the_walked_value_dumped(value: Any) -> None:
    assert d.encode_json_text(value) == json.dumps(encode_json(value))


def test_encode_json_text_agrees_on_random_hostile_documents() -> None:
    rng = random.Random(2026)
    alphabet = ["a", "\x00", "\ud800", "\udfff", "\ue000", "é", "😀", "\\", '"', "NaN", "u0000"]
    alphabet += ["Infinity", "Inf", "ud8", "ue000", "\\u00e9", "N"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))

    def key() -> Any:
        return (
            rng.choice([text(), 1, True, None, 2.5, float("nan")]) if rng.random() < 0.2 else text()
        )

    def value(depth: int = 0) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.3:
            return rng.choice([text(), 1, 2.5, float("nan"), float("inf"), True, None, -3])
        if roll < 0.65:
            return {key(): value(depth + 1) for _ in range(rng.randint(0, 4))}
        return [value(depth + 1) for _ in range(rng.randint(0, 4))]

    for _ in range(5000):
        document = value()
        assert d.encode_json_text(document) == json.dumps(encode_json(document))


@pytest.mark.parametrize("length", [None, 0, 1, 5, 18, 40, 100])
def test_encode_text_is_the_escaped_text_cut_to_fit(length: int | None) -> None:
    texts = [
        *HOSTILE_STRINGS,
        "2026-12-06T03:18:45.123456+00:00",
        "tool.completed",
        "a" * 39,
        "a" * 40,
        "a" * 41,
        "a" * 200,
        "\x00" * 50,
        "é" * 120,
        "\ue000" * 30,
    ]
    for text in texts:
        assert d.encode_text(text, length) == fit(escape_text(text), length), (text, length)


def test_event_rows_are_the_rows_an_insert_of_the_events_encodes() -> None:
    events: list[dict[str, Any]] = [
        {
            "seq": number,
            "ts": HOSTILE_STRINGS[number % len(HOSTILE_STRINGS)] * (1 + number % 30),
            "type": HOSTILE_STRINGS[(number + 3) % len(HOSTILE_STRINGS)] * (1 + number % 25),
            "data": HOSTILE_JSON[number % len(HOSTILE_JSON)],
        }
        for number in range(60)
    ]
    events += [
        {"seq": 60, "ts": None, "type": 7, "data": ["not", "an", "object"]},
        {"seq": 61},
        {"seq": True, "ts": "skipped: a bool is no seq", "type": "x", "data": {}},
        {"seq": -1, "ts": "skipped", "type": "x", "data": {}},
    ]
    rows, top = d.event_rows("run_\x00\ud800", events)
    # Each column as `Text(length)` and `Json` bind it (`fit`, `escape_text`, the walk).
    expected = [
        (
            fit(escape_text("run_\x00\ud800"), 200),
            event["seq"],
            fit(escape_text(str(event.get("ts") or "")), 40),
            fit(escape_text(str(event.get("type") or "")), 100),
            json.dumps(encode_json(event["data"] if isinstance(event.get("data"), dict) else {})),
        )
        for event in events[:62]
    ]
    assert rows == expected
    assert top == 61


def _event_rows_before(
    run_id: str, events: list[dict[str, Any]]
) -> tuple[list[tuple[Any, ...]], int | None]:
    """`driver.event_rows` as it was before its loop was written out for the usual event."""
    key = d._encode(d._RUN_ID, run_id)
    rows: list[tuple[Any, ...]] = []
    top = -1
    for event in events:
        given = event.get("seq")
        if not d.usable_seq(given):
            continue
        seq = int(given)
        top = max(top, seq)
        data = event.get("data")
        rows.append(
            (
                key,
                seq,
                d.encode_text(str(event.get("ts") or ""), 40),
                d.encode_text(str(event.get("type") or ""), 100),
                d.encode_json_text(data if isinstance(data, dict) else {}),
            )
        )
    return rows, (top if rows else None)


class _Seq(IntEnum):
    SEVEN = 7


class _Text(str):
    """A `str` subclass (its `str()` is a plain `str`)."""


def test_event_rows_are_what_they_were_for_every_kind_of_field() -> None:
    rng = random.Random(2026)
    seqs: list[Any] = [
        0, 1, 5, d.MAX_SEQ, d.MAX_SEQ + 1, -1, True, False, None, 2.0, "3", _Seq.SEVEN, 2**70,
    ]  # fmt: skip
    texts: list[Any] = [
        *HOSTILE_STRINGS,
        "2026-12-06T06:19:00.123456+00:00",
        "x" * 40,
        "x" * 41,
        "y" * 100,
        "y" * 101,
        "ascii\x00nul",
        _Text("sub"),
        _Text("é"),
        None,
        0,
        7,
        "",
        ["a"],
    ]
    datas: list[Any] = [*HOSTILE_JSON, None, [1], "text", 3]
    for _ in range(300):
        events = [
            {
                key: value
                for key, value in (
                    ("seq", rng.choice(seqs)),
                    ("ts", rng.choice(texts)),
                    ("type", rng.choice(texts)),
                    ("data", rng.choice(datas)),
                )
                if rng.random() < 0.9
            }
            for _ in range(rng.randrange(0, 8))
        ]
        run_id = rng.choice(HOSTILE_STRINGS)
        rows, top = d.event_rows(run_id, events)
        assert (rows, top) == _event_rows_before(run_id, events), events
        assert [type(row[1]) for row in rows] == [int] * len(rows)
        # The same events as objects (a mirror's, not made into dicts): the same rows.
        records = [_Record(**event) for event in events]
        assert d.event_rows(run_id, records) == (rows, top), events


@dataclass(frozen=True)
class _Record:
    """An event as an object, as `runlens.records.events.Event` is (a field missing from
    the mapping is None here, as `get` gives it there)."""

    seq: Any = None
    ts: Any = None
    type: Any = None
    data: Any = None


def test_a_runs_own_events_make_the_rows_their_dicts_make() -> None:
    events = [
        Event(number, "2026-12-06T10:00:00.000000+00:00", "run_x", kind, data)
        for number, (kind, data) in enumerate(
            [("run.created", {"plugin": "p"}), ("tool.called", HOSTILE_JSON[4])]
            + [("model.called", value) for value in HOSTILE_JSON],
            start=1,
        )
    ]
    assert d.event_rows("run_x", events) == d.event_rows(
        "run_x", [event.to_dict() for event in events]
    )
    assert d.event_rows("run_x", []) == ([], None)


def test_encode_json_text_of_a_value_that_holds_itself_fails_as_the_walk_does() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(RecursionError):
        d.encode_json_text(looped)
    with pytest.raises(RecursionError):
        encode_json(looped)


def test_the_driver_tables_are_the_store_tables() -> None:
    for table in d.TABLES:
        stored = t.metadata.tables[table.name]
        assert [c.name for c in table.columns] == [c.name for c in stored.columns]
        for column in table.columns:
            kind = stored.columns[column.name].type
            if isinstance(kind, Text):
                assert (column.kind, column.length) == ("text", kind.length), column
            elif isinstance(kind, Json):
                assert column.kind == "json", column
            elif isinstance(kind, Int):
                assert column.kind == ("bigint" if kind.big else "int"), column
            else:
                assert isinstance(kind, sa.Boolean) and column.kind == "bool", column


def _raw_rows(engine: sa.Engine, table: sa.Table, run_id: str) -> list[tuple[Any, ...]]:
    """The table's rows of `run_id` as the database holds them (JSON as its text), without
    the run id, in key order."""
    postgres = engine.dialect.name == "postgresql"
    columns = [
        f"CAST({c.name} AS TEXT)" if postgres and isinstance(c.type, Json) else c.name
        for c in table.columns
        if c.name != "run_id"
    ]
    keys = ", ".join(c.name for c in table.primary_key.columns)
    with engine.connect() as connection:
        return [
            tuple(row)
            for row in connection.execute(
                sa.text(
                    f"SELECT {', '.join(columns)} FROM {table.name} "
                    f"WHERE run_id = :run ORDER BY {keys}"
                ),
                {"run": run_id},
            )
        ]


def _hostile_rows(table: d.Table, count: int) -> list[dict[str, Any]]:
    """Rows of `table` with hostile values in every column (keys kept distinct)."""
    rows = []
    for number in range(count):
        row: dict[str, Any] = {}
        for column in table.columns:
            if column.kind == "text":
                text = HOSTILE_STRINGS[number % len(HOSTILE_STRINGS)]
                if column.length is not None and number % 3 == 0:
                    text = text + "\ue000" * (column.length // 2) + "y" * column.length
                row[column.name] = f"{number:03d}{text}"
            elif column.kind == "json":
                row[column.name] = HOSTILE_JSON[number % len(HOSTILE_JSON)]
            elif column.kind in ("int", "bigint"):
                row[column.name] = [number, 2**40, -(2**70), 2**70][number % 4]
            else:
                row[column.name] = number % 2 == 0
        if table is d.EVENTS or table is d.FINDINGS or table is d.CITATIONS:
            row["seq" if table is d.EVENTS else "ordinal"] = number
        rows.append(row)
    return rows


def _inserted_both_ways(
    store_url: str, table: d.Table, rows: list[dict[str, Any]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """`rows` inserted into `table` by SQLAlchemy (for one run) and by the driver (for
    another): the stored rows of each, as the database holds them."""
    store = open_store(store_url)
    try:
        for run in ("run_sa", "run_driver"):
            store.upsert_run(run, plugin="p", model="m", status="running", workspace="/w")
        stored = t.metadata.tables[table.name]
        with store.engine.begin() as connection:
            connection.execute(sa.insert(stored), [{**row, "run_id": "run_sa"} for row in rows])
        with store.engine.begin() as connection:
            engine = connection.dialect.name
            assert engine in ("sqlite", "postgresql")
            d.insert_rows(
                connection.connection.driver_connection,
                engine,  # type: ignore[arg-type]
                table,
                [{**row, "run_id": "run_driver"} for row in rows],
            )
        return (
            _raw_rows(store.engine, stored, "run_sa"),
            _raw_rows(store.engine, stored, "run_driver"),
        )
    finally:
        store.close()


@pytest.mark.parametrize("table", [d.EVENTS, d.ARTIFACTS, d.FINDINGS, d.CITATIONS])
def test_the_driver_inserts_what_sqlalchemy_inserts(store_url: str, table: d.Table) -> None:
    rows = _hostile_rows(table, 24)
    expected, driven = _inserted_both_ways(store_url, table, rows)
    assert len(expected) == len(rows)
    assert driven == expected


def test_the_driver_updates_and_reads_a_run_as_sqlalchemy_does(store_url: str) -> None:
    store = open_store(store_url)
    try:
        values = {
            name: row_value
            for name, row_value in _hostile_rows(d.RUNS, 4)[3].items()
            if name not in ("run_id", "cancel_requested")
        }
        runs = ("run_sa", "run_driver")
        for run in runs:
            store.upsert_run(run, plugin="p", model="m", status="running", workspace="/w")
        with store.engine.begin() as connection:
            connection.execute(sa.update(t.runs).where(t.runs.c.run_id == "run_sa").values(values))
        with store.engine.begin() as connection:
            driver = connection.connection.driver_connection
            engine: Any = connection.dialect.name
            assert d.update_run(driver, engine, "run_driver", values) == 1
            assert d.update_run(driver, engine, "no such run", values) == 0
            state = d.run_end_state(driver, engine, "run_driver")
            assert d.run_end_state(driver, engine, "no such run") is None
        assert _raw_rows(store.engine, t.runs, "run_sa") == _raw_rows(
            store.engine, t.runs, "run_driver"
        )
        with store.engine.connect() as connection:
            held = connection.execute(
                sa.select(t.runs.c.status, t.runs.c.worker, t.runs.c.last_seq).where(
                    t.runs.c.run_id == "run_sa"
                )
            ).one()
        assert state == tuple(held) and "\udfff" in str(held.worker)
    finally:
        store.close()


def test_a_run_upserted_through_the_driver_is_the_row_sqlalchemy_writes(store_url: str) -> None:
    from sqlalchemy.dialects import postgresql, sqlite

    store = open_store(store_url)
    try:
        hostile = _hostile_rows(d.RUNS, 7)
        values = {
            name: value
            for name, value in hostile[6].items()
            if name not in ("run_id", "cancel_requested", "last_seq", "review_state")
        }
        insert = postgresql.insert if store.engine.dialect.name == "postgresql" else sqlite.insert
        with store.engine.begin() as connection:
            connection.execute(insert(t.runs).values(run_id="run_sa", **values))
            connection.execute(
                insert(t.runs)
                .values(run_id="run_sa", **values)
                .on_conflict_do_update(index_elements=[t.runs.c.run_id], set_=values)
            )
        with store.engine.begin() as connection:
            driver = connection.connection.driver_connection
            engine: Any = connection.dialect.name
            d.insert_run(driver, engine, {"run_id": "run_driver", **values})
            d.insert_run(driver, engine, {"run_id": "run_driver", **values}, update=list(values))
            status = d.run_status(driver, engine, "run_driver")
            assert d.run_status(driver, engine, "no such run") is None
        # Unnamed columns take their defaults alike (`origin`, `last_seq`, `review_state`).
        assert _raw_rows(store.engine, t.runs, "run_sa") == _raw_rows(
            store.engine, t.runs, "run_driver"
        )
        with store.engine.connect() as connection:
            held = connection.execute(
                sa.select(t.runs.c.status).where(t.runs.c.run_id == "run_sa")
            ).scalar()
        assert status is not None and status == held and status.startswith("00…#")
        # Through the store: a live status never replaces a stored end.
        store.upsert_run("run_x", plugin="p\x00", model="m", status="running", workspace="/w")
        store.finish("run_x", "completed")
        store.upsert_run("run_x", status="running", warnings=[float("nan")])
        detail = store.get_run("run_x")
        assert detail is not None and detail.status == "completed" and detail.plugin == "p\x00"
    finally:
        store.close()


def test_the_driver_module_imports_no_sqlalchemy() -> None:
    """`runlens.store.driver` and what it imports of RunLens name no SQLAlchemy module (a
    command may write a run's end through it without importing the ORM)."""
    import ast
    from pathlib import Path

    import runlens

    source = Path(runlens.__file__).parent
    seen: set[str] = set()
    pending = ["runlens.store.driver"]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        path = source.joinpath(*module.split(".")[1:]).with_suffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not name.startswith("sqlalchemy"), f"{module} imports {name}"
                if name.startswith("runlens.") and name != "runlens.store":
                    pending.append(name)
    assert "runlens.store.values" in seen


def test_a_first_write_inserts_the_row_an_upsert_writes_and_never_revives_an_ended_run(
    store_url: str,
) -> None:
    store = open_store(store_url)
    try:
        fields = {
            "plugin": "p\x00",
            "model": "m" * 600,
            "status": "created",
            "workspace": "/w\ud800",
            "warnings": ["\x00", "\ue000"],
            "updated_at": "2026-12-01T10:00:00Z",
        }
        store.upsert_run("run_upsert", **fields)
        assert store._insert_new("run_first", fields)
        assert _raw_rows(store.engine, t.runs, "run_upsert") == _raw_rows(
            store.engine, t.runs, "run_first"
        )
        assert not store._insert_new("run_first", {**fields, "plugin": "other"})
        detail = store.get_run("run_first")
        assert detail is not None and detail.plugin == "p\x00"  # held: left as it is
        store.finish("run_first", "completed")
        store.upsert_run("run_first", **{**fields, "status": "running"})
        detail = store.get_run("run_first")
        assert detail is not None and detail.status == "completed"
        store.upsert_run("run_first", warnings=["w"])  # not live: it is set
        detail = store.get_run("run_first")
        assert detail is not None and detail.warnings == ["w"] and detail.status == "completed"
        store.upsert_run("run_first", status="running", warnings=["x"])  # live: never set
        detail = store.get_run("run_first")
        assert detail is not None and detail.warnings == ["w"] and detail.status == "completed"
    finally:
        store.close()


@pytest.mark.parametrize("table", [d.EVENTS, d.ARTIFACTS, d.FINDINGS, d.CITATIONS])
def test_the_driver_inserts_nulls_as_sqlalchemy_does(store_url: str, table: d.Table) -> None:
    """Every nullable column NULL in some rows (on PostgreSQL the rows go as one array a
    column, NULL elements among them)."""
    stored = t.metadata.tables[table.name]
    nullable = {c.name for c in stored.columns if c.nullable and not c.primary_key}
    rows = _hostile_rows(table, 12)
    for number, row in enumerate(rows):
        if number % 2:
            row.update(dict.fromkeys(nullable))
    expected, driven = _inserted_both_ways(store_url, table, rows)
    assert len(expected) == len(rows)
    assert any(value is None for row in expected for value in row) == bool(nullable)
    assert driven == expected


@pytest.mark.parametrize("table", [d.EVENTS, d.ARTIFACTS, d.FINDINGS, d.CITATIONS, d.RUNS])
def test_encode_row_encodes_each_value_as_its_column_binds_it(table: d.Table) -> None:
    """The written-out usual cases of `encode_row` give what `_encode` gives each value,
    for hostile rows and for values at the edges of the usual: a `str` subclass, a bool
    or a float where an int goes, ints at and past the column's range, text of exactly
    and one past its length, a missing column."""
    edges: list[Any] = [
        None,
        _Key.A,
        True,
        False,
        2.5,
        2**31 - 1,
        2**31,
        -(2**31),
        -(2**31) - 1,
        2**63,
        "a" * 200,
        "a" * 201,
        "a" * 40,
        "a" * 41,
        "x\x00",
        "é",
        "",
    ]
    rows = _hostile_rows(table, 24)
    for value in edges:
        rows.append({column.name: value for column in table.columns})
    rows.append({})
    for row in rows:
        expected = _outcome(
            lambda row=row: tuple(
                d._encode(column, row.get(column.name)) for column in table.columns
            )
        )
        assert _outcome(lambda row=row: d.encode_row(table, row)) == expected


def _outcome(encode: Any) -> tuple[Any, ...]:
    """What `encode()` gives, with each value's type, or the type of its error."""
    try:
        values = encode()
    except Exception as error:
        return ("raised", type(error))
    return ("encoded", values, [type(value) for value in values])


def test_a_citation_s_row_holds_its_fields_as_model_dump_gives_them() -> None:
    from runlens.store.rows import CitationRow
    from runlens.store.writes import _citation_row

    full = CitationRow(
        ordinal=3, artifact="a.md", location="line 4", row_id="r\x00", quote="q é",
        start=1, end=4, line=4, column=2, status="failed", code="c", reason="why",
        span_start=10, span_end=14, span_line=4, id_start=15, id_end=17,
    )  # fmt: skip
    bare = CitationRow(ordinal=0, artifact="x.json", location="items[0]", row_id="1",
                       status="verified")  # fmt: skip
    for citation in (full, bare):
        expected = citation.model_dump()
        expected["col"] = expected.pop("column")
        expected["start_offset"], expected["end_offset"] = (
            expected.pop("start"),
            expected.pop("end"),
        )
        row = _citation_row("run_x", citation)
        assert row == {"run_id": "run_x", **expected}
        assert set(row) == {column.name for column in d.CITATIONS.columns}
