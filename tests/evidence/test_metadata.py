"""Each row's other columns are kept in the Evidence Index as its metadata, and the SPEC fields
(`source_hash`, `row_hash`, `text`) stay exactly what they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runlens.errors import EvidenceIndexError
from runlens.evidence import FROM_ROW_NUMBER, EvidenceIndex, SourceTable, build_evidence_index
from runlens.evidence._storage import LineStore

from .conftest import CsvWriter
from .helpers import csv_text, reference_hashes, reference_metadata, workbook_bytes

#: Column names and values a hostile or merely unusual file may hold.
HOSTILE_COLUMNS = ["feedback_id", 'ch"an<b>nel', "text", "评分", "note\\"]
HOSTILE_ROWS = [
    ["fb_1", "<script>alert(1)</script>", "导出太慢", "２", 'say "hi"\n\tthen\x01\x1f'],
    ["fb_2", "web", "fine", "五星", "x" * 20_000],
    ["fb_3", "", "", "", "\u2028 \\u0000"],
]


@pytest.fixture
def hostile(write_csv: CsvWriter) -> Path:
    return write_csv(csv_text([HOSTILE_COLUMNS, *HOSTILE_ROWS], "\r\n", 0))


def _expected(path: Path) -> dict[str, dict[str, str]]:
    return reference_metadata(path)


@pytest.mark.parametrize("build", ["stream", "table"])
def test_metadata_is_every_other_column_as_parsed(hostile: Path, build: str) -> None:
    if build == "stream":
        index = build_evidence_index(hostile, id_column="feedback_id", text_column="text")
    else:
        table = SourceTable.open(hostile, required_columns=("feedback_id", "text"))
        index = table.evidence_index("feedback_id", "text")
    expected = _expected(hostile)
    assert index.metadata_columns == ('ch"an<b>nel', "评分", "note\\")
    for row_id, (row_hash, text) in reference_hashes(hostile).items():
        assert index.row_hash(row_id) == row_hash and index.text(row_id) == text
        assert dict(index.metadata(row_id)) == expected[row_id]
        assert list(index.metadata(row_id)) == list(index.metadata_columns)  # source order


def test_the_file_keeps_metadata_and_loads_it_lazily(hostile: Path, tmp_path: Path) -> None:
    index = build_evidence_index(hostile, id_column="feedback_id", text_column="text")
    path = tmp_path / "evidence_index.json"
    index.write(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    expected = _expected(hostile)
    for row_id, item in document["items"].items():
        assert list(item) == ["row_hash", "text", "metadata"]
        assert item["metadata"] == expected[row_id]
        assert item["row_hash"] == index.row_hash(row_id)
    loaded = EvidenceIndex.load(path)
    assert isinstance(loaded._store, LineStore)  # the fast loader understood the layout
    assert {row_id: dict(loaded.metadata(row_id)) for row_id in loaded.items} == expected
    assert dict(loaded.items) == dict(index.items)
    assert list(loaded.metadata_rows()) == list(index.metadata_rows())
    assert [(k, dict(v or {})) for k, v in index.metadata_rows()] == list(expected.items())
    loaded.write(tmp_path / "again.json")  # a loaded index writes the same bytes back
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_id_and_text_only_leave_empty_metadata(write_csv: CsvWriter, tmp_path: Path) -> None:
    source = write_csv("feedback_id,text\nfb_1,slow\n")
    index = build_evidence_index(source, id_column="feedback_id", text_column="text")
    index.write(tmp_path / "index.json")
    document = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    assert document["items"]["fb_1"]["metadata"] == {}
    assert dict(EvidenceIndex.load(tmp_path / "index.json").metadata("fb_1")) == {}


def test_derived_ids_keep_every_column_but_the_text(write_csv: CsvWriter) -> None:
    source = write_csv("text,channel\nslow,app\nfine,web\n")
    index = build_evidence_index(
        source, id_column="row", text_column="text", id_rule=FROM_ROW_NUMBER
    )
    assert dict(index.metadata("row-2")) == {"channel": "web"}


def test_a_workbook_keeps_metadata(write_csv: CsvWriter) -> None:
    rows: list[list[object]] = [
        ["feedback_id", "text", "rating"],
        ["r1", "slow", 2],
        ["r2", "ok", "五"],
    ]
    path = write_csv(workbook_bytes({"S": rows}), "in.xlsx")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert dict(index.metadata("r1")) == {"rating": "2"}
    assert dict(index.metadata("r2")) == {"rating": "五"}


def test_an_index_an_older_version_wrote_reads_without_metadata(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(
        '{"source":"s.csv","source_hash":"' + "ab" * 32 + '","id_column":"feedback_id",'
        '"text_column":"text","items":{\n"fb_1":\n{"row_hash":"' + "0" * 64 + '","text":"t"}\n}}\n',
        encoding="utf-8",
    )
    loaded = EvidenceIndex.load(path)
    assert isinstance(loaded._store, LineStore)
    assert loaded.text("fb_1") == "t" and dict(loaded.metadata("fb_1")) == {}
    assert list(loaded.metadata_rows()) == [("fb_1", None)]  # not recorded, not empty


@pytest.mark.parametrize(
    "metadata", ['{"a":1}', '["a"]', '{"a":"b"'], ids=["not-strings", "not-object", "cut"]
)
def test_damaged_metadata_is_an_index_error(tmp_path: Path, metadata: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        '{"source":"s.csv","source_hash":"' + "ab" * 32 + '","id_column":"feedback_id",'
        '"text_column":"text","items":{\n"fb_1":\n{"row_hash":"' + "0" * 64 + '","text":"t",'
        '"metadata":' + metadata + "}\n}}\n",
        encoding="utf-8",
    )
    with pytest.raises(EvidenceIndexError, match="fb_1"):
        dict(EvidenceIndex.load(path).metadata("fb_1"))


@pytest.mark.parametrize("rows", [3, 2_000])
def test_texts_are_the_rows_without_their_hashes(
    write_csv: CsvWriter, tmp_path: Path, rows: int
) -> None:
    """`texts` of every kind of store (built from the source, loaded from its file, made
    from items; ids from a column and from row numbers) against the ids and texts `rows`
    gives, over many batches of rows and hostile texts."""
    texts = ["导出太慢", "", "x" * 20_000, 'say "hi"\n\tthen\x01\x1f', "\u2028 \\u0000", "é\u0301"]
    body = [[f"fb_{n}", texts[n % len(texts)], str(n)] for n in range(rows)]
    source = write_csv(csv_text([["feedback_id", "text", "n"], *body], "\r\n", 0))
    built = build_evidence_index(source, id_column="feedback_id", text_column="text")
    numbered = build_evidence_index(
        source, id_column="row_id", text_column="text", id_rule=FROM_ROW_NUMBER
    )
    built.write(tmp_path / "index.json")
    loaded = EvidenceIndex.load(tmp_path / "index.json")
    assert isinstance(loaded._store, LineStore)
    made = EvidenceIndex.from_items(
        dict(built.items),
        source=built.source,
        source_hash=built.source_hash,
        id_column="feedback_id",
        text_column="text",
    )
    for index in (built, numbered, loaded, made):
        expected = [(row_id, text) for row_id, _, text in index.rows()]
        assert len(expected) == rows
        assert list(index.texts()) == expected
    assert [text for _, text in built.texts()] == [row[1] for row in body]
