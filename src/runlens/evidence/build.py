"""Building the Evidence Index from a CSV file in one streaming pass.

The pass reads the file once: raw bytes are hashed as they are read (`source_hash`), decoded,
parsed by the csv module and handled a batch of rows at a time. Per batch, only C-level bulk
operations run (row hashes via `RowHasher`, an id -> text dict, digests appended to one
buffer), which keeps the build within a small factor of a bare `csv.reader` pass. Checks that
can fail (row widths, empty and duplicate ids) are done on whole batches too; when one fails,
`diagnose` reads the file again slowly to name the exact row and line. Memory is the index
itself plus one batch. The encoding and the delimiter are chosen beforehand from samples of
the file (`_detect`), and recorded in the index. An Excel workbook (by content) is read by
`_xlsx.build_index`, streaming its sheet the same way.
"""

from __future__ import annotations

import csv
from itertools import islice
from operator import itemgetter
from pathlib import Path

from runlens.cancellation import checkpoint
from runlens.evidence import _records, _xlsx
from runlens.evidence._detect import read_decoding
from runlens.evidence._encoding import TextFormat, open_text
from runlens.evidence._ids import FROM_COLUMN, FROM_ROW_NUMBER, IdRule, row_number_ids
from runlens.evidence._rowhash import RowHasher
from runlens.evidence.index import CSV_FORMAT, BuiltStore, EvidenceIndex

BATCH_ROWS = 512


class _NeedsDiagnosis(Exception):
    """The fast pass saw a problem; the slow pass will say exactly what and where."""


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
        except (_NeedsDiagnosis, csv.Error):
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
    with open_text(path, text_format.encoding) as (stream, probe):
        reader = _records.new_reader(stream, text_format.delimiter)
        columns = _records.read_header(reader, source)
        required = (text_column,) if derived else (id_column, text_column)
        _records.require_columns(columns, required, source)
        hasher = RowHasher(columns)
        get_id = None if derived else itemgetter(columns.index(id_column))
        get_text = itemgetter(columns.index(text_column))
        nul_is_byte = text_format.nul_is_byte
        texts: dict[str, str] = {}  # id -> text, in CSV order
        digests = bytearray()
        rows = 0
        while batch := list(islice(reader, BATCH_ROWS)):
            checkpoint()
            batch = _usable_rows(batch, len(columns))
            if get_id is None:
                ids = row_number_ids(rows + 1, len(batch))
            else:
                ids = list(map(get_id, batch))
                if "" in ids or any(map(str.isspace, ids)) or _records.has_control(ids):
                    raise _NeedsDiagnosis
            # The raw reader is ahead of the parser, so this covers every row of the batch.
            nul_possible = probe.nul_seen or not nul_is_byte
            digests += hasher.digests(batch, may_contain_nul=nul_possible)
            texts.update(zip(ids, map(get_text, batch), strict=True))
            rows += len(batch)
            if len(texts) != rows:
                raise _NeedsDiagnosis  # a duplicate id
        source_hash = probe.hexdigest  # complete: the reader has hit the end of the file
    if not texts:
        raise _records.no_rows(source)
    return EvidenceIndex(
        source=source,
        source_hash=source_hash,
        id_column=id_column,
        text_column=text_column,
        store=BuiltStore(texts, bytes(digests)),
        columns=columns,
        format=CSV_FORMAT,
        id_rule=id_rule,
        **text_format.index_fields(),
    )


def _usable_rows(batch: list[list[str]], width: int) -> list[list[str]]:
    """The batch without blank or all-empty rows; _NeedsDiagnosis if a row has the wrong width."""
    if set(map(len, batch)) != {width} or not all(map(any, batch)):
        batch = list(filter(any, batch))
        if set(map(len, batch)) - {width}:
            raise _NeedsDiagnosis
    return batch
