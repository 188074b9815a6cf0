"""Excel workbooks and files without an id column, at the evidence layer.

A worksheet is read by the documented rules (header = first non-empty row, the table spans its
non-empty header cells, blank rows skipped, `cell_text` for every value) and hashed as SPEC
section 5 says, so the hashes here are recomputed from those rules alone. Both readers
(`build_evidence_index` and `SourceTable.open(...).evidence_index(...)`) must agree, and a problem
names the file, sheet, row and cell.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from runlens.errors import EvidenceIndexError, InputError
from runlens.evidence import (
    FROM_ROW_NUMBER,
    EvidenceIndex,
    MissingColumnError,
    SourceTable,
    build_evidence_index,
    cell_text,
    read_input_format,
)

from .conftest import CsvWriter
from .helpers import build_index, canonical_hash, csv_text, workbook_bytes

# -- the cell-to-text rule -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        ("  kept as is ", "  kept as is "),
        ("#N/A", "#N/A"),
        (True, "TRUE"),
        (False, "FALSE"),
        (42, "42"),
        (-7, "-7"),
        (3.0, "3"),
        (-0.0, "0"),
        (4.5, "4.5"),
        (0.1, "0.1"),
        (2.5e-07, "2.5e-07"),
        (1e16, "1e+16"),
        (123456789012345.0, "123456789012345"),
        (datetime(2024, 3, 5), "2024-03-05"),
        (datetime(2024, 3, 5, 14, 30), "2024-03-05T14:30:00"),
        (datetime(2024, 3, 5, 14, 30, 0, 250_000), "2024-03-05T14:30:00.250000"),
        (date(2024, 3, 5), "2024-03-05"),
        (time(14, 30), "14:30:00"),
        (timedelta(days=1, hours=2, minutes=3, seconds=4), "26:03:04"),
        (timedelta(minutes=-30), "-0:30:00"),
        (timedelta(seconds=1, microseconds=500_000), "0:00:01.5"),
    ],
)
def test_cell_text(value: object, text: str) -> None:
    assert cell_text(value) == text


# -- reading a worksheet ---------------------------------------------------------------------


Reader = Callable[..., EvidenceIndex]


def via_table(path: Path, **options: str) -> EvidenceIndex:
    sheet = options.pop("sheet", None)
    table = SourceTable.open(path, required_columns=("feedback_id", "text"), sheet=sheet)
    options.setdefault("id_column", "feedback_id")
    options.setdefault("text_column", "text")
    return table.evidence_index(**options)


READERS = pytest.mark.parametrize("read", [build_index, via_table], ids=["build", "table"])

#: A blank row above the header, a blank column before the table, a blank row inside it,
#: empty cells at the end of a row; numbers, dates and booleans as Excel stores them.
TYPED: list[list[object]] = [
    [],
    [None, "feedback_id", "text", "rating", "score", "created_at", "verified"],
    [None, "r1", "Export is slow", 2, 4.5, datetime(2024, 3, 5), True],
    [],
    [None, "r2", "Love it", 5, 3.0, datetime(2024, 3, 6, 9, 15), False],
    [None, "r3", "Crashes", None, None, None, None],
]
EXPECTED_ROWS = [
    {
        "feedback_id": "r1",
        "text": "Export is slow",
        "rating": "2",
        "score": "4.5",
        "created_at": "2024-03-05",
        "verified": "TRUE",
    },
    {
        "feedback_id": "r2",
        "text": "Love it",
        "rating": "5",
        "score": "3",
        "created_at": "2024-03-06T09:15:00",
        "verified": "FALSE",
    },
    {
        "feedback_id": "r3",
        "text": "Crashes",
        "rating": "",
        "score": "",
        "created_at": "",
        "verified": "",
    },
]


@pytest.fixture
def workbook(write_csv: CsvWriter) -> Path:
    return write_csv(workbook_bytes({"Reviews": TYPED, "Other": [["text"], ["x"]]}), "in.xlsx")


@READERS
def test_a_sheet_is_read_by_the_documented_rules(workbook: Path, read: Reader) -> None:
    index = read(workbook)
    assert index.columns == tuple(EXPECTED_ROWS[0])
    assert [index.row_hash(row["feedback_id"]) for row in EXPECTED_ROWS] == [
        canonical_hash(row) for row in EXPECTED_ROWS
    ]
    assert index.text("r2") == "Love it"
    assert index.input_format == {
        "format": "xlsx",
        "encoding": None,
        "encoding_confidence": None,
        "encoding_method": None,
        "delimiter": None,
        "sheet": "Reviews",
        "id_column": "feedback_id",
        "text_column": "text",
        "id_rule": "column",
    }
    assert index.source_hash == hashlib.sha256(workbook.read_bytes()).hexdigest()


def test_both_readers_agree_and_the_table_pages_text(workbook: Path) -> None:
    table = SourceTable.open(workbook, required_columns=("text",))
    assert (table.format, table.sheet, table.encoding, table.total_rows) == (
        "xlsx",
        "Reviews",
        None,
        3,
    )
    assert table.page(0, 10)["rows"] == EXPECTED_ROWS
    built, from_table = (
        build_evidence_index(workbook, id_column="feedback_id", text_column="text"),
        table.evidence_index(id_column="feedback_id", text_column="text"),
    )
    assert list(built.rows()) == list(from_table.rows())
    assert built.input_format == from_table.input_format


def test_sheet_is_chosen_by_name(workbook: Path) -> None:
    other = build_evidence_index(
        workbook,
        sheet="Other",
        id_rule=FROM_ROW_NUMBER,
        id_column="feedback_id",
        text_column="text",
    )
    assert (other.sheet, list(other.items), other.text("row-1")) == ("Other", ["row-1"], "x")
    table = SourceTable.open(workbook, required_columns=("text",), sheet="Other")
    assert (table.sheet, table.columns, table.label) == (
        "Other",
        ("text",),
        "in.xlsx, sheet 'Other'",
    )


@READERS
def test_a_missing_sheet_names_the_sheets(workbook: Path, read: Reader) -> None:
    with pytest.raises(InputError) as caught:
        read(workbook, sheet="reviews ")
    assert str(caught.value) == (
        "in.xlsx: no sheet named 'reviews ' (sheets: Reviews, Other; closest: 'Reviews')"
    )
    assert caught.value.file == "in.xlsx"


BAD_SHEETS = [
    pytest.param(
        [["feedback_id", "text"], ["r1", "a"], ["r1", "b"]],
        "in.xlsx, sheet 'S', row 2 (cell A3): duplicate feedback_id 'r1' (first at row 1, cell A2)",
        id="duplicate-id",
    ),
    pytest.param(
        [[None, "feedback_id", "text"], [None, "r1", "a"], [None, 7, "b"], [None, " ", "c"]],
        "in.xlsx, sheet 'S', row 3 (cell B4): empty feedback_id ' '",
        id="blank-id",
    ),
    pytest.param(
        [["feedback_id", "text"], ["r1", "a"], ["r2", "b", "stray"]],
        "in.xlsx, sheet 'S', row 2 (cell C3): a value outside the table's columns A to B "
        "(the header, row 1, names no column there)",
        id="value-outside-the-header",
    ),
    pytest.param(
        [["feedback_id", "text", "text "], ["r1", "a", "b"]],
        "in.xlsx, sheet 'S': duplicate column 'text' in the header (cells B1 and C1)",
        id="duplicate-column",
    ),
    pytest.param(
        [["feedback_id", "body"], ["r1", "a"]],
        "in.xlsx, sheet 'S': missing column 'text' (found: feedback_id, body)",
        id="missing-column",
    ),
    pytest.param([[], []], "in.xlsx, sheet 'S': empty sheet (no header row)", id="empty"),
    pytest.param(
        [["feedback_id", "text"], [], [None, None]],
        "in.xlsx, sheet 'S': no data rows (only a header)",
        id="no-rows",
    ),
]


@READERS
@pytest.mark.parametrize(("rows", "message"), BAD_SHEETS)
def test_problems_name_file_sheet_row_and_cell(
    write_csv: CsvWriter, read: Reader, rows: list[list[object]], message: str
) -> None:
    path = write_csv(workbook_bytes({"S": rows}), "in.xlsx")
    with pytest.raises(InputError) as caught:
        read(path)
    assert str(caught.value) == message
    assert caught.value.file == "in.xlsx"


def test_csv_options_do_not_apply_to_workbooks_and_back(
    workbook: Path, write_csv: CsvWriter
) -> None:
    with pytest.raises(InputError, match=r"^in\.xlsx: an encoding .* Excel workbook"):
        build_evidence_index(
            workbook, encoding="utf-8", id_column="feedback_id", text_column="text"
        )
    with pytest.raises(InputError, match=r"^in\.xlsx: an encoding .* Excel workbook"):
        SourceTable.open(workbook, required_columns=(), encoding="utf-8")
    path = write_csv("feedback_id,text\nr1,a\n")
    for read in (build_index, via_table):
        with pytest.raises(InputError, match=r"^sample\.csv: a sheet was named \('S'\)"):
            read(path, sheet="S")


# -- files without an id column --------------------------------------------------------------

NO_IDS = 'text,channel\r\nfirst,app\r\n\r\n,\r\n"multi\r\nline",web\r\nthird,app\r\n'


def test_row_number_ids_count_data_rows(write_csv: CsvWriter) -> None:
    path = write_csv(NO_IDS)
    table = SourceTable.open(path, required_columns=("text",)).with_row_number_ids("feedback_id")
    index = table.evidence_index("feedback_id", "text")
    built = build_evidence_index(
        path, id_rule=FROM_ROW_NUMBER, id_column="feedback_id", text_column="text"
    )
    assert list(index.rows()) == list(built.rows())
    assert list(index.items) == ["row-1", "row-2", "row-3"]
    assert index.text("row-2") == "multi\r\nline"
    # The row hash covers the file's own columns only, not the derived id.
    assert index.row_hash("row-3") == canonical_hash({"text": "third", "channel": "app"})
    assert (index.id_rule, index.id_column, index.columns) == (
        "row-number",
        "feedback_id",
        ("text", "channel"),
    )
    page = table.page(1, 2)["rows"]
    assert page == [
        {"feedback_id": "row-2", "text": "multi\r\nline", "channel": "web"},
        {"feedback_id": "row-3", "text": "third", "channel": "app"},
    ]


def test_row_number_ids_in_a_workbook(write_csv: CsvWriter) -> None:
    path = write_csv(workbook_bytes({"S": [["text"], ["a"], [], ["b"]]}), "in.xlsx")
    table = SourceTable.open(path, required_columns=("text",)).with_row_number_ids("feedback_id")
    index = table.evidence_index("feedback_id", "text")
    assert dict(index.items) == dict(
        build_evidence_index(
            path, id_rule=FROM_ROW_NUMBER, id_column="feedback_id", text_column="text"
        ).items
    )
    assert list(index.items) == ["row-1", "row-2"]


def test_a_derived_id_name_must_not_be_a_column(write_csv: CsvWriter) -> None:
    table = SourceTable.open(write_csv("feedback_id,text\nr1,a\n"), required_columns=("text",))
    with pytest.raises(ValueError, match="is a column"):
        table.with_row_number_ids("feedback_id")


def test_the_rule_round_trips_through_the_index_file(write_csv: CsvWriter, tmp_path: Path) -> None:
    index = build_evidence_index(
        write_csv(NO_IDS), id_rule=FROM_ROW_NUMBER, id_column="feedback_id", text_column="text"
    )
    path = tmp_path / "index.json"
    index.write(path)
    header = json.loads(path.read_text(encoding="utf-8"))
    assert (header["id_rule"], header["id_column"], header["format"]) == (
        "row-number",
        "feedback_id",
        "csv",
    )
    loaded = EvidenceIndex.load(path)
    assert loaded.id_rule == "row-number"
    assert read_input_format(path) == loaded.input_format == index.input_format
    header["id_rule"] = "guess"
    path.write_text(json.dumps(header), encoding="utf-8")
    with pytest.raises(EvidenceIndexError, match="unknown id rule 'guess'"):
        EvidenceIndex.load(path)


def test_an_index_without_the_new_fields_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps(
            {
                "source": "a.csv",
                "source_hash": "0" * 64,
                "id_column": "id",
                "text_column": "text",
                "items": {},
            }
        ),
        encoding="utf-8",
    )
    loaded = EvidenceIndex.load(path)
    assert (loaded.format, loaded.sheet, loaded.id_rule) == ("csv", None, "column")


# -- missing columns -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "hint"),
    [("Review_ID", "; closest: 'review_id'"), ("reviewid", "; closest: 'review_id'"), ("x", "")],
)
def test_a_missing_column_names_the_columns_and_the_closest(
    write_csv: CsvWriter, wanted: str, hint: str
) -> None:
    path = write_csv(csv_text([["review_id", "review_body"], ["r1", "a"]]))
    with pytest.raises(MissingColumnError) as caught:
        SourceTable.open(path, required_columns=(wanted,))
    assert str(caught.value) == (
        f"sample.csv: missing column {wanted!r} (found: review_id, review_body{hint})"
    )
    assert caught.value.columns == ("review_id", "review_body")


def test_rows_past_a_wrong_recorded_dimension_are_read(write_csv: CsvWriter) -> None:
    """Some writers record a sheet dimension smaller than the data (`A1:B2` for 4 rows):
    every row there is counts, not the ones the dimension admits."""
    data = workbook_bytes({"S": [["feedback_id", "text"], ["a", "1"], ["b", "2"], ["c", "3"]]})
    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            part = source.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                part = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:B2"', part)
                assert b'ref="A1:B2"' in part
            target.writestr(info, part)
    path = write_csv(out.getvalue(), "in.xlsx")
    assert list(build_evidence_index(path, id_column="feedback_id", text_column="text").items) == [
        "a",
        "b",
        "c",
    ]
    assert SourceTable.open(path, required_columns=("text",)).total_rows == 3
