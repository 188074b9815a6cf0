"""SourceTable: decoded and checked once, paged for the model, indexed without a second read."""

from __future__ import annotations

import pytest

from runlens.evidence import SourceTable, build_evidence_index
from runlens.evidence.table import BATCH_ROWS

from .conftest import CsvWriter
from .helpers import csv_text, reference_hashes

ROWS = [["feedback_id", "text", "rating"]] + [
    [f"fb_{n:03d}", f"第{n}条，反馈", str(n % 5)] for n in range(1, 251)
]


@pytest.fixture
def table(write_csv: CsvWriter) -> SourceTable:
    return SourceTable.open(write_csv(csv_text(ROWS)), required_columns=("feedback_id", "text"))


def test_table_describes_the_file(table: SourceTable) -> None:
    assert table.source == "sample.csv"
    assert table.columns == ("feedback_id", "text", "rating")
    assert table.total_rows == 250
    assert table.encoding == "utf-8"


def test_pages_walk_every_row_once(table: SourceTable) -> None:
    seen, offset = [], 0
    while offset is not None:
        page = table.page(offset, 100)
        assert set(page) == {"source", "total_rows", "columns", "rows", "next_offset"}
        assert page["total_rows"] == 250 and page["columns"] == ["feedback_id", "text", "rating"]
        seen += page["rows"]
        offset = page["next_offset"]
    assert [len(table.page(o, 100)["rows"]) for o in (0, 100, 200)] == [100, 100, 50]
    assert seen == [dict(zip(ROWS[0], row, strict=True)) for row in ROWS[1:]]


def test_page_edges(table: SourceTable) -> None:
    assert table.page(249, 100)["rows"] == [
        {"feedback_id": "fb_250", "text": "第250条，反馈", "rating": "0"}
    ]
    assert table.page(249, 100)["next_offset"] is None
    assert table.page(150, 100)["next_offset"] is None
    assert table.page(149, 100)["next_offset"] == 249
    assert table.page(250, 10) == {**table.page(250, 10), "rows": [], "next_offset": None}
    assert table.page(10_000, 10)["rows"] == []
    with pytest.raises(ValueError, match="offset"):
        table.page(-1, 10)
    with pytest.raises(ValueError, match="limit"):
        table.page(0, 0)


def test_blank_lines_are_not_rows_and_header_names_are_clean(write_csv: CsvWriter) -> None:
    path = write_csv('\ufeff feedback_id ,text\r\n\r\nfb_1,"a\r\nb"\r\n,\r\nfb_2,c\r\n')
    table = SourceTable.open(path, required_columns=("feedback_id",))
    assert table.columns == ("feedback_id", "text")
    assert table.page(0, 10)["rows"] == [
        {"feedback_id": "fb_1", "text": "a\r\nb"},
        {"feedback_id": "fb_2", "text": "c"},
    ]


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "gbk", "utf-16"])
def test_evidence_index_from_the_table_equals_the_streaming_build(
    write_csv: CsvWriter, codec: str
) -> None:
    rows = [*ROWS[:40], ["fb_x", 'nul \x00 and "quotes", \x01', "1"]] if codec != "gbk" else ROWS
    path = write_csv(csv_text(rows), encoding=codec)
    table = SourceTable.open(path, required_columns=("feedback_id", "text"))
    from_table = table.evidence_index(id_column="feedback_id", text_column="text")
    streamed = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert dict(from_table.items) == dict(streamed.items)
    assert list(from_table.items) == list(streamed.items)
    for name in ("source", "source_hash", "columns", "encoding"):
        assert getattr(from_table, name) == getattr(streamed, name)
    assert table.source_hash == streamed.source_hash


def test_row_values(table: SourceTable) -> None:
    assert table.row_values(0) == ("fb_001", "第1条，反馈", "1")


def test_rows_across_batches_read_back_in_any_order(write_csv: CsvWriter) -> None:
    # Several read batches, blank rows between them (so batches hold fewer rows than read),
    # and values that must be escaped next to ones that need not be.
    rows = [["feedback_id", "text", "note"]]
    for n in range(1, 3 * BATCH_ROWS + 40):
        text = f'第{n}条 "quoted"\nline' if n % 7 == 0 else f"row {n}"
        rows.append([f"id-{n}", text, "é" if n % 11 == 0 else ""])
        if n % 300 == 0:
            rows.append(["", "", ""])
    path = write_csv(csv_text(rows))
    table = SourceTable.open(path, required_columns=("feedback_id", "text"))
    data = [tuple(row) for row in rows[1:] if any(row)]
    assert table.total_rows == len(data)
    assert [table.row_values(n) for n in reversed(range(len(data)))] == data[::-1]
    walked = [row for offset in range(0, len(data), 97) for row in table.page(offset, 97)["rows"]]
    assert walked == [dict(zip(rows[0], row, strict=True)) for row in data]
    assert table.column("text") == [row[1] for row in data]
    with pytest.raises(ValueError, match="not a column"):
        table.column("missing")
    index = table.evidence_index("feedback_id", "text")
    expected = reference_hashes(path)
    assert list(index.rows()) == [(key, *value) for key, value in expected.items()]
    for row_id in ("id-1", "id-511", "id-512", "id-513", "id-1470", f"id-{len(data)}"):
        assert (index.row_hash(row_id), index.text(row_id)) == expected[row_id]


def test_row_number_ids_of_a_table(write_csv: CsvWriter) -> None:
    rows = [["text"], *([f"t{n}"] for n in range(1, BATCH_ROWS + 3))]
    table = SourceTable.open(write_csv(csv_text(rows)), required_columns=("text",))
    index = table.with_row_number_ids("row_id").evidence_index("row_id", "text")
    assert len(index) == BATCH_ROWS + 2
    assert index.text(f"row-{BATCH_ROWS + 1}") == f"t{BATCH_ROWS + 1}"
    assert list(index.items)[:2] == ["row-1", "row-2"]
    for absent in ("row-0", f"row-{BATCH_ROWS + 3}", "row-01", "row-+1", "row-1 ", "1"):
        assert absent not in index
        with pytest.raises(KeyError):
            index.text(absent)
