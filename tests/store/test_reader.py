"""`SqliteReader` (the SQLite store read through `sqlite3`) gives back what `RunStore` gives
back, and `ReadFirstStore` opens the `RunStore` as soon as anything but those reads is asked."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import sqlalchemy as sa

from runlens.errors import UserError
from runlens.store import CitationRow, FindingRow, RunStore, open_store
from runlens.store import tables as t
from runlens.store.codec import Int, Json, Text
from runlens.store.listing import (
    ARTIFACT_FIELDS,
    FINDING_FIELDS,
    ListedArtifact,
    ListedDetail,
    ListedFinding,
    SyncState,
)
from runlens.store.location import sqlite_file
from runlens.store.reader import COLUMNS, ReadFirstStore, SqliteReader, open_read_first
from runlens.store.rows import ArtifactRow, RunDetail, detail_of, run_detail

#: Values no engine stores as they are (`runlens.store.codec`): they read back as written.
HOSTILE = "a\x00b\ue000c\ud800d"


def _kind(column: sa.Column[object]) -> str:
    if isinstance(column.type, Text):
        return "text"
    if isinstance(column.type, Json):
        return "json"
    if isinstance(column.type, Int):
        return "int"
    assert isinstance(column.type, sa.Boolean), column
    return "bool"


def test_the_reader_decodes_every_column_as_the_tables_declare_it() -> None:
    for name, columns in COLUMNS.items():
        table = t.metadata.tables[name]
        assert columns == {column.name: _kind(column) for column in table.columns}


def _fill(store: RunStore) -> None:
    store.upsert_run(
        "run_20261201T100000Z_aaaaaa", plugin="feedback-analysis", model="offline",
        status="completed", workspace="/runs/a", created_at="2026-12-01T10:00:00Z",
        finished_at="2026-12-01T10:00:04Z", input_name=f"in{HOSTILE}.csv",
        warnings=["w1", HOSTILE], problems=["p"], metrics={"x": math.inf, HOSTILE: [1, 2.5]},
        plan=[{"id": "s", "status": "completed"}], findings_by_code={"c": 2},
        finding_count=2, record_stamp="1:2", error_message=None,
    )  # fmt: skip
    store.upsert_run(
        "run_20261201T110000Z_b_b%bb", plugin="other", model="openai:gpt-4o",
        status="running", workspace="/runs/b", created_at="2026-12-01T11:00:00Z",
        worker="w-1",
    )  # fmt: skip
    store.upsert_run(
        "run_20261201T120000Z_cccccc", plugin="p" * 300, model="m", status="failed",
        workspace="/runs/c", created_at="2026-12-01T12:00:00Z", error_message="boom",
    )  # fmt: skip
    store.set_clashes("run_20261201T100000Z_aaaaaa", ["/elsewhere/copy"])
    artifact = ArtifactRow(
        name="artifacts/report.md", label="Report", audience="user", sensitivity="internal",
        required=True, size=10, sha256="0" * 64, status="rejected", finding_count=1,
    )  # fmt: skip
    finding = FindingRow(
        ordinal=0, validator="citations", artifact="artifacts/report.md", code="c",
        path="line 3", message=f"not in {HOSTILE}", details={"row_id": "fb_2", "n": math.nan},
        row_id="fb_2", line=3, column=5,
    )  # fmt: skip
    citation = CitationRow(
        ordinal=0, artifact="artifacts/report.md", location="line 2", row_id="fb_1",
        quote="slow", start=4, end=8, line=2, column=3, status="verified",
    )  # fmt: skip
    store.replace_results("run_20261201T100000Z_aaaaaa", [artifact], [finding], [citation])
    store.append_events(
        "run_20261201T100000Z_aaaaaa",
        [{"seq": n, "ts": f"t{n}", "type": "tool.called", "data": {"n": n, "s": HOSTILE}}
         for n in range(1, 6)],
    )  # fmt: skip


@pytest.fixture
def filled(sqlite_url: str) -> RunStore:
    store = open_store(sqlite_url)
    _fill(store)
    return store


def _state(state: SyncState) -> tuple[object, ...]:
    return tuple(getattr(state, name) for name in SyncState.__slots__)


def _detail(detail: ListedDetail | RunDetail | None) -> str:
    """A run's detail field by field, in order, with each value's type (`repr`: NaN is
    not equal to itself)."""
    if detail is None:
        return "None"
    if isinstance(detail, RunDetail):
        return repr(detail.model_dump())
    assert type(detail) is ListedDetail
    return repr(dataclasses.asdict(detail))


def test_the_reader_answers_as_the_store_does(filled: RunStore, sqlite_url: str) -> None:
    reader = SqliteReader.open(sqlite_url)
    assert reader is not None
    try:
        for run_ids in (None, [], ["run_20261201T110000Z_b_b%bb", "nope"]):
            for live in (False, True):
                mine = reader.sync_states(run_ids, live=live)
                theirs = filled.sync_states(run_ids, live=live)
                assert list(mine) == list(theirs)
                assert [_state(s) for s in mine.values()] == [_state(s) for s in theirs.values()]
        assert reader.clash_lists() == filled.clash_lists()
        for status, plugin, limit in (
            (None, None, 20), ("failed", None, 20), (None, "p" * 300, 5), (None, None, 1),
            ("nope", None, 20),
        ):  # fmt: skip
            listed = reader.list_runs(status=status, plugin=plugin, limit=limit)
            summaries = filled.list_runs(status=status, plugin=plugin, limit=limit)[0]
            assert [dataclasses.asdict(run) for run in listed] == [
                summary.model_dump() for summary in summaries
            ]
        for run_id in ("run_20261201T100000Z_aaaaaa", "run_20261201T110000Z_b_b%bb", "nope"):
            assert _detail(reader.get_run(run_id)) == _detail(filled.get_run(run_id))
            assert reader.events(run_id) == filled.events(run_id)
        assert reader.events("run_20261201T100000Z_aaaaaa", after_seq=1, limit=2) == (
            filled.events("run_20261201T100000Z_aaaaaa", after_seq=1, limit=2)
        )
        for text in ("run_20261201T100000Z_aaaaaa", "aaaaaa", "run_20261201T12", "b_b%bb"):
            assert reader.resolve_run(text) == filled.resolve_run(text)
        for text in ("", "run_2026", "zzz", "_", "%", "/"):
            with pytest.raises(UserError) as mine_error:
                reader.resolve_run(text)
            with pytest.raises(UserError) as their_error:
                filled.resolve_run(text)
            assert str(mine_error.value) == str(their_error.value)
    finally:
        reader.close()
        filled.close()


def test_the_reader_reads_only_a_plain_sqlite_store_at_its_head(
    tmp_path: Path, sqlite_url: str
) -> None:
    assert SqliteReader.open(sqlite_url) is None  # not made yet: the store makes it
    open_store(sqlite_url).close()
    reader = SqliteReader.open(sqlite_url)
    assert reader is not None
    reader.close()
    path = sqlite_file(sqlite_url)
    assert path is not None
    with sa.create_engine(f"sqlite:///{path}").begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = 'older'"))
    assert SqliteReader.open(sqlite_url) is None  # behind: the store upgrades it
    for url in (
        "postgresql+psycopg://user@host/db",
        "sqlite://",
        "sqlite:///:memory:",
        f"sqlite:///{tmp_path}/a%20b.db",
        f"sqlite:///{tmp_path}/a#b.db",
        f"sqlite:///{tmp_path}/x.db?mode=ro",
    ):
        assert sqlite_file(url) is None, url
    assert sqlite_file(f"sqlite:///{tmp_path}/a b+c.db") == f"{tmp_path}/a b+c.db"


def test_read_first_opens_the_store_for_anything_but_its_reads(filled: RunStore) -> None:
    url = str(filled.engine.url)
    filled.close()
    store = open_read_first(url)
    assert isinstance(store, ReadFirstStore)
    try:
        assert store.get_run("run_20261201T100000Z_aaaaaa") is not None
        assert store._full is None  # read through sqlite3
        store.set_clashes("run_20261201T100000Z_aaaaaa", [])  # a write: the store opens
        assert store._full is not None and store._reader is None
        detail = store.get_run("run_20261201T100000Z_aaaaaa")  # from the store itself now
        assert detail is not None and detail.clashes == []
        assert store.url == store.full.url
    finally:
        store.close()


def test_read_first_sees_the_runs_home_out_of_step(tmp_path: Path, sqlite_url: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    open_store(sqlite_url).close()
    store = open_read_first(sqlite_url)
    assert isinstance(store, ReadFirstStore)
    try:
        assert store.in_step_with(home)
        (home / "run_x" / "runtime").mkdir(parents=True)
        (home / "run_x" / "runtime" / "run.json").write_text("{}")
        assert not store.in_step_with(home)  # a workspace the store does not hold
    finally:
        store.close()


def test_the_plain_rows_declare_the_fields_of_the_store_s_rows() -> None:
    for plain, row in (
        (ListedDetail, RunDetail),
        (ListedArtifact, ArtifactRow),
        (ListedFinding, FindingRow),
    ):
        assert [field.name for field in dataclasses.fields(plain)] == list(row.model_fields)
    assert tuple(ArtifactRow.model_fields) == ARTIFACT_FIELDS
    assert tuple(FindingRow.model_fields) == FINDING_FIELDS


HUGE = "x" * 100_000
#: `runs` rows (their columns decoded) in several states, with hostile values.
RUN_ROWS: dict[str, dict[str, object]] = {
    "completed": {
        "run_id": "run_a", "plugin": "p", "model": "m", "status": "completed",
        "workspace": "/runs/a", "origin": "ui", "host": "h", "created_at": "2026-12-01T10:00:00Z",
        "finished_at": "2026-12-01T10:00:04Z", "updated_at": "u", "finding_count": 2,
        "findings_by_code": {"c": 2, "odd": "3", HOSTILE: 1}, "warnings": ["w", HOSTILE],
        "problems": [HUGE], "cancel_requested": False, "last_seq": 5,
        "plan": [{"id": "s", "status": "completed", "extra": [1, None]}],
        "metrics": {"x": math.inf, "y": math.nan, HOSTILE: {"deep": [HUGE]}},
        "evidence_index_sha256": "0" * 64, "source_hash": "s", "citation_counts": {"verified": 3},
        "record_stamp": "1:2", "clashes": [{"workspace": "/copy"}, {"workspace": 5}, "x"],
        "submitted_by": "alice", "rerun_of": "run_z", "review_state": "approved",
    },
    "live, of a worker": {
        "run_id": "run_b", "plugin": "p", "model": "m", "status": "running", "workspace": "/b",
        "worker": "w-1", "updated_at": "u", "cancel_requested": True, "last_seq": None,
    },
    "empty and hostile": {
        "run_id": HOSTILE, "plugin": "", "model": "\u202eevil\u202c", "status": "damaged",
        "error_message": HUGE, "input_name": "", "workspace": None, "origin": "elsewhere",
        "updated_at": None, "finding_count": None, "findings_by_code": [1], "warnings": None,
        "problems": {"not": "a list"}, "plan": {"not": "a list"}, "metrics": [], "clashes": None,
        "citation_counts": None, "review_state": None,
    },
}  # fmt: skip
ARTIFACT_ROWS = [
    {"run_id": "r", "name": "artifacts/a.md", "ordinal": 0, "label": HOSTILE, "description": "",
     "audience": "user", "sensitivity": "internal", "required": True, "size": None,
     "sha256": None, "status": "missing", "finding_count": 0},
    {"run_id": "r", "name": HUGE, "ordinal": 1, "label": "", "description": HUGE,
     "audience": HOSTILE, "sensitivity": "", "required": False, "size": 2**40,
     "sha256": "0" * 64, "status": "rejected", "finding_count": 3},
]  # fmt: skip
FINDING_ROWS = [
    {"run_id": "r", "ordinal": 0, "validator": "v", "artifact": "", "code": HOSTILE, "path": "",
     "message": HUGE, "details": {"n": math.nan, HOSTILE: [HOSTILE]}, "row_id": None,
     "line": None, "col": None},
    {"run_id": "r", "ordinal": 1, "validator": "", "artifact": "a", "code": "c", "path": "p",
     "message": "", "details": None, "row_id": "fb_1", "line": 3, "col": 7},
]  # fmt: skip


@pytest.mark.parametrize("state", RUN_ROWS, ids=list(RUN_ROWS))
def test_a_plain_detail_holds_what_the_store_s_row_holds(state: str) -> None:
    values = RUN_ROWS[state]
    for artifacts, findings, reruns in (([], [], ()), (ARTIFACT_ROWS, FINDING_ROWS, ["r2", ""])):
        plain = ListedDetail.of(values, artifacts, findings, reruns)
        row = detail_of(values, artifacts, findings, reruns)
        for field in dataclasses.fields(ListedDetail):
            mine, theirs = getattr(plain, field.name), getattr(row, field.name)
            if field.name in ("artifacts", "findings"):
                mine = [dataclasses.asdict(entry) for entry in mine]
                theirs = [entry.model_dump() for entry in theirs]
            assert repr(mine) == repr(theirs), field.name
        assert _detail(plain) == _detail(row)
        # ... and is made into that row where a pydantic one is needed.
        assert _detail(run_detail(plain)) == _detail(row)
        assert run_detail(row) is row
