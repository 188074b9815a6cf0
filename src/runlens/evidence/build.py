"""Building the Evidence Index from a CSV file in one streaming pass.

The pass is the one `SourceTable.open` makes (`table.read_csv`), storing every column (the id and
text columns, and the rest as each row's metadata): raw bytes are hashed as they are read
(`source_hash`), decoded, parsed by the csv module and handled a batch of rows at a time, with
only C-level bulk operations per batch (row hashes via `RowHasher`, values stored column by
column, `_columns`). Checks that can fail (row widths, empty and duplicate ids) are done on
whole batches and columns; when one fails, `diagnose` reads the file again slowly to name the
exact row and line. Memory is the index itself (the table's text, held compactly by `_columns`,
a digest and an id -> row entry per row) plus one batch. The encoding and the delimiter are
chosen beforehand from samples of the file (`_detect`), and recorded in the index. An Excel
workbook (by content) is read by `_xlsx.build_index`, streaming its sheet the same way.
"""

from __future__ import annotations

import csv
from pathlib import Path

from runlens.evidence import _records, _xlsx
from runlens.evidence._detect import read_decoding
from runlens.evidence._encoding import TextFormat
from runlens.evidence._ids import FROM_COLUMN, FROM_ROW_NUMBER, IdRule
from runlens.evidence._stores import CSV_FORMAT, table_store
from runlens.evidence.index import EvidenceIndex
from runlens.evidence.table import BATCH_ROWS, NeedsDiagnosis, read_csv

__all__ = ["BATCH_ROWS", "build_evidence_index"]


def build_evidence_index(
    csv_path: Path,
    *,
    id_column: str,
    text_column: str,
    source_name: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    id_rule: IdRule = FROM_COLUMN,
    sheet: str | None = None,
) -> EvidenceIndex:
    """Read `csv_path` once and index every row by its id (SPEC section 5).

    `id_rule` `row-number` gives the n-th data row the id `row-<n>` (the file needs no id
    column; `id_column` is the name the ids go by). An Excel workbook (by content) is read
    from `sheet`, else its first worksheet (see `_xlsx`). For a CSV file `encoding` (a codec
    name) and `delimiter` are detected unless given (see `_detect`). Raises InputError,
    naming the file and the row, line (or cell), column or byte offset, for a file that is
    not text or not in a convincing encoding (or not in the one given), malformed CSV, a
    missing or duplicated column, a row whose field count differs from the header's, an
    empty, duplicate or control-character id, or a file without data rows; UserError for an
    unknown `encoding`.
    """
    source = source_name or csv_path.name
    workbook = _xlsx.is_workbook(csv_path)
    _xlsx.check_options(
        source, workbook=workbook, encoding=encoding, delimiter=delimiter, sheet=sheet
    )
    if workbook:
        return _xlsx.build_index(
            csv_path,
            source,
            sheet=sheet,
            id_column=id_column,
            text_column=text_column,
            id_rule=id_rule,
        )
    derived = id_rule == FROM_ROW_NUMBER
    required = (text_column,) if derived else (id_column, text_column)
    id_to_check = None if derived else id_column

    def build(text_format: TextFormat) -> EvidenceIndex:
        try:
            return _build(csv_path, source, text_format, id_column, text_column, id_rule)
        except (NeedsDiagnosis, csv.Error):
            raise _records.diagnose(
                csv_path, text_format, source, required=required, id_column=id_to_check
            ) from None

    return read_decoding(
        csv_path, source, encoding=encoding, delimiter=delimiter, required=required, read=build
    )


def _build(
    path: Path,
    source: str,
    text_format: TextFormat,
    id_column: str,
    text_column: str,
    id_rule: IdRule,
) -> EvidenceIndex:
    derived = id_rule == FROM_ROW_NUMBER
    required = (text_column,) if derived else (id_column, text_column)
    columns, data, source_hash = read_csv(path, source, text_format, required)
    store = table_store(data, None if derived else id_column, text_column)
    if store is None:
        raise NeedsDiagnosis  # an empty, blank, control-character or duplicate id
    return EvidenceIndex(
        source=source,
        source_hash=source_hash,
        id_column=id_column,
        text_column=text_column,
        store=store,
        columns=columns,
        format=CSV_FORMAT,
        id_rule=id_rule,
        **text_format.index_fields(),
    )
