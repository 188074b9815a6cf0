"""Shared helpers: CSV text written by the csv module, and the reference row hash computed the
way SPEC section 5 words it (csv.DictReader + json.dumps + hashlib), independently of runlens."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from runlens.evidence import EvidenceIndex, build_evidence_index


def csv_text(
    rows: Iterable[Iterable[str]],
    lineterminator: str = "\r\n",
    quoting: Literal[0, 1, 2, 3] = csv.QUOTE_MINIMAL,
) -> str:
    """Rows as CSV text written by the csv module (excel dialect).

    With QUOTE_MINIMAL the writer quotes only fields holding characters of `lineterminator`,
    so a "\n" terminator leaves a lone "\r" unquoted: use QUOTE_ALL for such data.
    """
    out = io.StringIO()
    csv.writer(out, lineterminator=lineterminator, quoting=quoting).writerows(rows)
    return out.getvalue()


def reference_hashes(
    path: Path,
    *,
    id_column: str = "feedback_id",
    text_column: str = "text",
    encoding: str = "utf-8",
) -> dict[str, tuple[str, str]]:
    """id -> (row_hash, text), recomputed independently of runlens from SPEC section 5."""
    with path.open(encoding=encoding, newline="") as stream:
        reader = csv.DictReader(stream)
        result = {}
        for raw_row in reader:
            row = {name.removeprefix("\ufeff").strip(): value for name, value in raw_row.items()}
            if not any(row.values()):
                continue
            canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            result[row[id_column]] = (digest, row[text_column])
    return result


def reference_metadata(
    path: Path, *, id_column: str = "feedback_id", text_column: str = "text"
) -> dict[str, dict[str, str]]:
    """id -> the row's other columns, read with csv.DictReader (README: kept as metadata)."""
    with path.open(encoding="utf-8", newline="") as stream:
        rows = [
            {name.removeprefix("\ufeff").strip(): value for name, value in raw.items()}
            for raw in csv.DictReader(stream)
        ]
    return {
        row[id_column]: {k: v for k, v in row.items() if k not in (id_column, text_column)}
        for row in rows
        if any(row.values())
    }


def xlsx_bytes() -> bytes:
    """The start of an Excel workbook: a zip with the parts every .xlsx has."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return out.getvalue()


def workbook_bytes(sheets: dict[str, list[list[object]]]) -> bytes:
    """A real .xlsx workbook (written by openpyxl) with these sheets, in this order; each row
    is appended as it is (None leaves a cell empty, so leading Nones shift a row right)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    for sheet in workbook.worksheets:
        workbook.remove(sheet)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def canonical_hash(row: dict[str, str]) -> str:
    """SPEC section 5's row hash of one row given as {column: text}, computed directly."""
    canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def build_index(path: Path, **options: Any) -> EvidenceIndex:
    """`build_evidence_index` on a file whose columns are `feedback_id` and `text` unless
    `options` name others."""
    options.setdefault("id_column", "feedback_id")
    options.setdefault("text_column", "text")
    return build_evidence_index(path, **options)
