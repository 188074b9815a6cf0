"""A workbook is read within bounds: entries, inflated bytes, ratio, text, rows, cells.

The hostile files are generated here (`tests.hardening.workbooks`), never committed. The
run-level checks (a real `runlens run` on a 1 GiB and a 4 GiB bomb, its time and peak memory,
SIGTERM while a workbook is read, the upload refusing one) are in
`tests/hardening/test_workbook_bombs.py`.
"""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

import openpyxl
import pytest
from tests.hardening.workbooks import (
    deflated_part,
    frame,
    many_rows_bomb,
    one_cell_bomb,
    rows_workbook,
    write_zip,
)

from runlens.errors import InputError
from runlens.evidence import (
    FROM_COLUMN,
    SourceTable,
    WorkbookLimits,
    WorkbookTooLarge,
    build_evidence_index,
    check_workbook,
)
from runlens.evidence._bounds import BoundedZipFile
from runlens.evidence._xlsx import open_sheet

MIB = 1024 * 1024


def _index(path: Path) -> None:
    build_evidence_index(path, id_column="feedback_id", text_column="text")


def test_a_legitimate_workbook_is_read_whole(tmp_path: Path) -> None:
    path = rows_workbook(tmp_path / "rows.xlsx", 2000)
    check_workbook(path, "rows.xlsx")
    table = SourceTable.open(path, required_columns=("feedback_id", "text"))
    assert table.total_rows == 2000
    index = table.evidence_index("feedback_id", "text")
    assert index.id_rule == FROM_COLUMN and len(index) == 2000


@pytest.mark.parametrize(
    ("make", "inflated"),
    [(one_cell_bomb, 1024 * MIB), (one_cell_bomb, 4000 * MIB), (many_rows_bomb, 600 * MIB)],
    ids=["one-cell-1GiB", "one-cell-4GiB", "rows-600MiB"],
)
def test_a_bomb_declaring_its_size_is_refused_before_inflating(
    tmp_path: Path, make: object, inflated: int
) -> None:
    path = make(tmp_path / "bomb.xlsx", inflated)  # type: ignore[operator]
    started = time.monotonic()
    with pytest.raises(WorkbookTooLarge) as caught:
        _index(path)
    assert time.monotonic() - started < 1.0
    message = str(caught.value)
    assert message.startswith("bomb.xlsx: the workbook inflates to more than ")
    assert "over the limit of 512 MiB" in message
    assert caught.value.limit == "max_inflated_bytes" and caught.value.file == "bomb.xlsx"
    with pytest.raises(WorkbookTooLarge):
        check_workbook(path, "bomb.xlsx")


def test_a_bomb_lying_about_its_size_stops_at_the_size_it_declares(tmp_path: Path) -> None:
    path = one_cell_bomb(tmp_path / "liar.xlsx", 1024 * MIB, lie=True)
    assert os.path.getsize(path) < 2 * MIB
    started = time.monotonic()
    for check in (_index, lambda p: check_workbook(p, "liar.xlsx")):
        with pytest.raises(InputError) as caught:
            check(path)
        assert str(caught.value).startswith("liar.xlsx: cannot be read as an Excel workbook")
        assert "CRC" in str(caught.value)
    assert time.monotonic() - started < 2.0


def test_the_bytes_actually_inflated_are_counted(tmp_path: Path) -> None:
    """The declared sizes pass; the bound on what is inflated still holds as parts are read
    (the archive's limits lowered once it is open, below what its parts hold)."""
    path = rows_workbook(tmp_path / "rows.xlsx", 20_000)
    with path.open("rb") as stream, BoundedZipFile(stream, source="rows.xlsx") as archive:
        sheet = archive.getinfo("xl/worksheets/sheet1.xml")
        archive.limits = WorkbookLimits(max_inflated_bytes=sheet.file_size // 2)
        with archive.open(sheet) as part, pytest.raises(WorkbookTooLarge) as caught:
            while part.read(64 * 1024):
                pass
        assert caught.value.limit == "max_inflated_bytes"
        assert "while part 'xl/worksheets/sheet1.xml' was read" in str(caught.value)
        assert archive.inflated <= sheet.file_size // 2 + 2 * MIB


def test_a_ratio_over_the_limit_is_refused(tmp_path: Path) -> None:
    # 4 MiB of rows compresses far beyond 100:1, and is under the size limit.
    path = many_rows_bomb(tmp_path / "dense.xlsx", 4 * MIB)
    with pytest.raises(WorkbookTooLarge) as caught:
        _index(path)
    assert caught.value.limit == "max_ratio"
    assert "part 'xl/worksheets/sheet1.xml' inflates" in str(caught.value)
    assert "beyond the limit of 100:1" in str(caught.value)


def test_text_longer_than_a_cell_is_refused_while_streaming(tmp_path: Path) -> None:
    """2 MiB of text that does not compress (no ratio alarm) in one cell: refused once 1 MiB
    of it has been inflated, before an XML parser holds it."""
    letters = bytes(97 + byte % 26 for byte in os.urandom(2 * MIB))
    sheet = (
        b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/'
        b'spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>'
        b'feedback_id</t></is></c><c r="B1" t="inlineStr"><is><t>text</t></is></c></row>'
        b'<row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c><c r="B2" t="inlineStr">'
        b"<is><t>" + letters + b"</t></is></c></row></sheetData></worksheet>"
    )
    path = write_zip(
        tmp_path / "long.xlsx", frame(deflated_part("xl/worksheets/sheet1.xml", sheet))
    )
    for check in (_index, lambda p: check_workbook(p, "long.xlsx")):
        with pytest.raises(WorkbookTooLarge) as caught:
            check(path)
        assert caught.value.limit == "max_text_bytes"
        assert "more than 1 MiB of text without markup" in str(caught.value)
        assert "32,767 characters" in str(caught.value)


def test_too_many_parts_and_other_compression_methods_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "parts.xlsx"
    source = rows_workbook(tmp_path / "rows.xlsx", 3)
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as copy:
        for entry in original.infolist():
            copy.writestr(entry, original.read(entry))
        for number in range(11):
            copy.writestr(f"xl/media/extra{number}.bin", b"x")
    limits = WorkbookLimits(max_entries=10)
    with pytest.raises(WorkbookTooLarge) as caught:
        check_workbook(path, "parts.xlsx", limits)
    assert str(caught.value) == ("parts.xlsx: the workbook has 16 parts, more than the limit of 10")
    bzip = tmp_path / "bzip.xlsx"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(bzip, "w") as copy:
        for entry in original.infolist():
            copy.writestr(entry.filename, original.read(entry), zipfile.ZIP_BZIP2)
    with pytest.raises(WorkbookTooLarge) as caught:
        _index(bzip)
    assert caught.value.limit == "compression_method"
    assert "a workbook uses only stored or deflated parts" in str(caught.value)


def _sheet(tmp_path: Path, rows: list[list[object]]) -> Path:
    workbook = openpyxl.Workbook()
    worksheet = workbook.active
    assert worksheet is not None
    worksheet.title = "S"
    for row in rows:
        worksheet.append(row)
    path = tmp_path / "limits.xlsx"
    workbook.save(path)
    return path


@pytest.mark.parametrize(
    ("limits", "limit", "message"),
    [
        (WorkbookLimits(max_rows=3), "max_rows", "more than 3 rows, over the limit"),
        (WorkbookLimits(max_cells=7), "max_cells", "more than 7 cells by row 3"),
        (WorkbookLimits(max_columns=2), "max_columns", "row 1 reaches column C"),
        (
            WorkbookLimits(max_cell_chars=12),
            "max_cell_chars",
            "cell B3 holds 16 characters, over the limit of 12",
        ),
    ],
    ids=["rows", "cells", "columns", "cell-length"],
)
def test_the_sheet_is_held_to_its_limits(
    tmp_path: Path, limits: WorkbookLimits, limit: str, message: str
) -> None:
    rows: list[list[object]] = [["feedback_id", "text", "channel"]]
    rows += [[f"fb_{n}", "short" if n != 2 else "sixteen chars ok", "web"] for n in range(1, 6)]
    path = _sheet(tmp_path, rows)
    with (
        pytest.raises(WorkbookTooLarge) as caught,
        open_sheet(path, "limits.xlsx", None, limits) as opened,
    ):
        for _ in opened.records():
            pass
    assert caught.value.limit == limit
    assert str(caught.value).startswith("limits.xlsx, sheet 'S': ")
    assert message in str(caught.value)
