"""Copies of one table in other encodings, delimiters and formats, and real runs on them."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

SAMPLE_CSV = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


def sample_rows() -> list[list[str]]:
    """The example feedback CSV as rows, its header first."""
    return list(csv.reader(io.StringIO(SAMPLE_CSV.read_text(encoding="utf-8"))))


def write_table(
    path: Path, rows: Sequence[Sequence[str]], *, delimiter: str = ",", encoding: str = "utf-8"
) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def write_workbook(path: Path, rows: Sequence[Sequence[str]]) -> Path:
    """The rows in the first sheet of an .xlsx workbook, every cell a string."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(list(row))
    workbook.save(path)
    return path
