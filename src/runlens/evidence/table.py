"""`SourceTable`: the input table decoded and checked once, then served page by page.

The input is a CSV file or one sheet of an Excel workbook (.xlsx, read by the rules of
`_xlsx`); which one is decided by the file's content, not its name. This is what the
model-facing input tool (`TableInput.tool()`, named by the plugin) pages through with
`offset` and `limit`. It keeps every row in
memory (as lists, not dicts: a dict is made only for the rows of a page), so the Evidence
Index can be built from it without reading the file again.

A table without an id column can still be indexed: `with_row_number_ids(name)` gives every
row the id `row-<n>` (`_ids`), shown under `name` in each page's rows and recorded in the
index as `id_rule: row-number`.
"""

from __future__ import annotations

import copy
import csv
from array import array
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from runlens.cancellation import checkpoint
from runlens.errors import InputError
from runlens.evidence import _records, _xlsx
from runlens.evidence._columns import Columns, ColumnsBuilder
from runlens.evidence._detect import read_decoding
from runlens.evidence._encoding import TextFormat, file_sha256, open_text
from runlens.evidence._ids import FROM_COLUMN, FROM_ROW_NUMBER, row_number_ids
from runlens.evidence._stores import CSV_FORMAT, XLSX_FORMAT, table_store
from runlens.evidence.index import EvidenceIndex

#: Rows read, checked, hashed and stored at a time (and between two cancellation checks).
#: Below the garbage collector's first threshold (700 new objects), so a batch of row lists
#: comes and goes without a collection.
BATCH_ROWS = 512


class SourceTable:
    """A CSV file's (or a worksheet's) rows, checked for the shape the reading rules require.

    `source` is the file name, `columns` the header's column names (BOM and surrounding
    whitespace removed), `total_rows` the number of data rows (blank rows skipped),
    `source_hash` the SHA-256 of its raw bytes, `format` `csv` or `xlsx`. A CSV file has
    `encoding` (the one it was read with) and `text_format` (encoding, confidence, method,
    delimiter); a workbook has `sheet`, the name of the sheet read, and None for those.
    `derived_id_column` is the name row-number ids go by, None when ids come from a column.
    """

    __slots__ = (
        "_data",
        "_first_column",
        "_path",
        "_sheet_rows",
        "columns",
        "derived_id_column",
        "encoding",
        "format",
        "sheet",
        "source",
        "source_hash",
        "text_format",
        "total_rows",
    )

    def __init__(
        self,
        *,
        path: Path,
        source: str,
        columns: tuple[str, ...],
        data: Columns,
        text_format: TextFormat | None,
        source_hash: str,
        sheet: str | None = None,
        sheet_rows: array[int] | None = None,
        first_column: int = 1,
        derived_id_column: str | None = None,
    ) -> None:
        self._path = path
        self.source = source
        self.columns = columns
        self._data = data
        self.total_rows = len(data)
        self.text_format = text_format
        self.encoding = text_format.encoding if text_format is not None else None
        self.format = CSV_FORMAT if text_format is not None else XLSX_FORMAT
        self.sheet = sheet
        self.source_hash = source_hash
        #: A worksheet's row number for each data row, and its first column (for messages).
        self._sheet_rows = sheet_rows
        self._first_column = first_column
        self.derived_id_column = derived_id_column

    @classmethod
    def open(
        cls,
        csv_path: Path,
        *,
        required_columns: Sequence[str],
        source_name: str | None = None,
        encoding: str | None = None,
        delimiter: str | None = None,
        sheet: str | None = None,
    ) -> SourceTable:
        """Decode and check `csv_path` once; InputError (naming file, row, line) if unusable.

        An Excel workbook (by content) is read by `open_workbook`, from `sheet` or its first
        worksheet; `sheet` for a CSV file, or `encoding`/`delimiter` for a workbook, is an
        InputError. For a CSV file the encoding and the delimiter are detected unless given
        (see `_detect`: UTF-8 with or without BOM, UTF-16/32 with or without BOM,
        GB18030/GBK, Windows-1252/Latin-1 and what charset-normalizer recognises; comma,
        tab, semicolon or pipe). Checks: a text file in a convincing encoding, well-formed
        CSV, unique header names, every required column present, every row as wide as the
        header, and at least one data row. Ids are checked by `evidence_index`. UserError for
        an unknown `encoding`.
        """
        source = source_name or csv_path.name
        workbook = _xlsx.is_workbook(csv_path)
        _xlsx.check_options(
            source, workbook=workbook, encoding=encoding, delimiter=delimiter, sheet=sheet
        )
        if workbook:
            return cls.open_workbook(
                csv_path, required_columns=required_columns, source_name=source, sheet=sheet
            )

        def read(text_format: TextFormat) -> SourceTable:
            try:
                columns, data, source_hash = read_csv(
                    csv_path, source, text_format, required_columns
                )
            except (csv.Error, NeedsDiagnosis):
                raise _records.diagnose(
                    csv_path, text_format, source, required=required_columns, id_column=None
                ) from None
            return cls(
                path=csv_path,
                source=source,
                columns=columns,
                data=data,
                text_format=text_format,
                source_hash=source_hash,
            )

        return read_decoding(
            csv_path,
            source,
            encoding=encoding,
            delimiter=delimiter,
            required=required_columns,
            read=read,
        )

    @classmethod
    def open_workbook(
        cls,
        xlsx_path: Path,
        *,
        required_columns: Sequence[str],
        source_name: str | None = None,
        sheet: str | None = None,
    ) -> SourceTable:
        """Read one sheet of an Excel workbook (`sheet`, else the first worksheet) by the
        rules of `_xlsx`; InputError naming the file, sheet, row and cell if unusable."""
        source = source_name or xlsx_path.name
        source_hash = file_sha256(xlsx_path)
        sheet_rows = array("L")
        with _xlsx.open_sheet(xlsx_path, source, sheet) as opened:
            opened.require_columns(required_columns)
            builder = ColumnsBuilder(opened.columns)
            records = opened.records()
            while batch := list(islice(records, BATCH_ROWS)):
                checkpoint()
                builder.add([values for _, _, values in batch])
                sheet_rows.extend(row for _, row, _ in batch)
        if not len(builder):
            raise _xlsx.no_rows(opened.label, source)
        return cls(
            path=xlsx_path,
            source=source,
            columns=opened.columns,
            data=builder.finish(),
            text_format=None,
            source_hash=source_hash,
            sheet=opened.name,
            sheet_rows=sheet_rows,
            first_column=opened.first_column,
        )

    def with_row_number_ids(self, id_column: str) -> SourceTable:
        """This table, its rows given the ids `row-<n>` (n: the 1-based data row), shown as
        `id_column` in each page's rows; `evidence_index` then records `id_rule:
        row-number`. `id_column` must not be a column of the table (that column's values
        would be the ids)."""
        if id_column in self.columns:
            raise ValueError(f"{id_column!r} is a column of {self.source}: its values are ids")
        derived = copy.copy(self)  # the same rows, not copied
        derived.derived_id_column = id_column
        return derived

    @property
    def label(self) -> str:
        """How messages name the table: `tickets.csv`, `survey.xlsx, sheet 'Responses'`."""
        return self.source if self.sheet is None else f"{self.source}, sheet {self.sheet!r}"

    def page(self, offset: int, limit: int) -> dict[str, Any]:
        """Rows `offset .. offset+limit-1` as `{column: value}` dicts, with paging details.

        Returns `{"source", "total_rows", "columns", "rows", "next_offset"}`; `next_offset`
        is None after the last page. An offset past the end gives no rows.
        """
        if offset < 0:
            raise ValueError(f"offset must be 0 or more, not {offset}")
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, not {limit}")
        stop = min(offset + limit, self.total_rows)
        columns = self.columns
        rows = [dict(zip(columns, row, strict=True)) for row in self._data.rows(offset, stop)]
        if self.derived_id_column is not None:
            name = self.derived_id_column
            ids = row_number_ids(offset + 1, len(rows))
            rows = [{name: row_id, **row} for row_id, row in zip(ids, rows, strict=True)]
        return {
            "source": self.source,
            "total_rows": self.total_rows,
            "columns": list(columns),
            "rows": rows,
            "next_offset": stop if stop < self.total_rows else None,
        }

    def row_values(self, position: int) -> tuple[str, ...]:
        """One row's values in column order (0-based position among the data rows). Rows
        read in order cost next to nothing each; for a whole column, `column` is faster."""
        return self._data.row(position)

    def column(self, name: str) -> list[str]:
        """Every value of the column `name`, in row order (ValueError if there is none)."""
        if name not in self.columns:
            raise ValueError(f"{name!r} is not a column of {self.label}")
        return list(self._data.column(self._data.position(name)))

    def evidence_index(self, id_column: str, text_column: str) -> EvidenceIndex:
        """The Evidence Index of this table, without reading the file again.

        InputError (file, row, line or cell, column) for a missing id/text column or an
        empty or duplicate id, exactly as `build_evidence_index` reports them. For a table
        `with_row_number_ids`, `id_column` must be the name given there.
        """
        derived = self.derived_id_column is not None
        if derived and id_column != self.derived_id_column:
            raise ValueError(f"this table's ids are {self.derived_id_column!r}, not {id_column!r}")
        required = (text_column,) if derived else (id_column, text_column)
        _records.require_columns(self.columns, required, self.label, file=self.source)
        store = table_store(self._data, None if derived else id_column, text_column)
        if store is None:
            raise self._id_problem(id_column, text_column)
        if self.text_format is not None:
            read_as = {"format": CSV_FORMAT, **self.text_format.index_fields()}
        else:
            read_as = {"format": XLSX_FORMAT, "sheet": self.sheet}
        return EvidenceIndex(
            source=self.source,
            source_hash=self.source_hash,
            id_column=id_column,
            text_column=text_column,
            store=store,
            columns=self.columns,
            id_rule=FROM_ROW_NUMBER if derived else FROM_COLUMN,
            **read_as,
        )

    def _id_problem(self, id_column: str, text_column: str) -> InputError:
        """The first bad id, named by row and line (a CSV file, read again) or cell."""
        if self.text_format is not None:
            return _records.diagnose(
                self._path,
                self.text_format,
                self.source,
                required=(id_column, text_column),
                id_column=id_column,
            )
        assert self._sheet_rows is not None
        first = self._first_column

        def cell(row: int, position: int) -> str:
            return f"{_xlsx.column_letter(first + position)}{row}"

        rows = (self._data.row(position) for position in range(self.total_rows))
        records = zip(range(1, self.total_rows + 1), self._sheet_rows, rows, strict=True)
        try:
            _xlsx.check_ids(self.label, self.source, self.columns, id_column, records, cell)
        except InputError as error:
            return error
        return InputError(f"{self.label}: could not be read consistently (internal error)")


def read_csv(
    path: Path,
    source: str,
    text_format: TextFormat,
    required: Sequence[str],
) -> tuple[tuple[str, ...], Columns, str]:
    """(header, rows, source_hash) of a CSV file, in one pass: raw bytes hashed as they are
    read, decoded, parsed, and a batch of rows at a time checked, hashed and stored.
    InputError for a bad header, a missing
    column or no data rows; NeedsDiagnosis (or csv.Error) when `_records.diagnose` must say
    what is wrong and where; DecodeFailure when the file stops decoding."""
    with open_text(path, text_format.encoding) as (stream, probe):
        reader = _records.new_reader(stream, text_format.delimiter)
        columns = _records.read_header(reader, source)
        _records.require_columns(columns, required, source)
        builder = ColumnsBuilder(columns)
        width = len(columns)
        # In batches, so a cancelled run (SIGTERM) stops within one batch of a huge file.
        while batch := list(islice(reader, BATCH_ROWS)):
            checkpoint()
            builder.add(usable_rows(batch, width))
        source_hash = probe.hexdigest  # complete: the reader has hit the end of the file
    if not len(builder):
        raise _records.no_rows(source)
    return columns, builder.finish(), source_hash


class NeedsDiagnosis(Exception):
    """The fast pass saw a problem; the slow pass (`_records.diagnose`) says what and where."""


def usable_rows(batch: list[list[str]], width: int) -> list[list[str]]:
    """The batch without blank or all-empty rows; NeedsDiagnosis if a row has the wrong width."""
    if set(map(len, batch)) != {width} or not all(map(any, batch)):
        batch = list(filter(any, batch))
        if set(map(len, batch)) - {width}:
            raise NeedsDiagnosis
    return batch
