"""One sheet of an Excel workbook (.xlsx) read as a table of text, by rules anyone can redo.

openpyxl reads the workbook with `read_only=True` (the sheet's XML is streamed: memory is the
shared-strings table plus one row at a time) and `data_only=True` (a formula cell gives the
value Excel last computed and saved, or nothing when the file never stored one).

The rules (docs/inputs.md says the same for users):

- The sheet is the one named (`--sheet NAME`), else the workbook's first worksheet.
- A cell's text is `cell_text(value)` of the value openpyxl returns (see there): the value,
  never its display format.
- The header is the first row with a non-empty cell. The table spans the header's columns
  from its first to its last non-empty cell; every column name is the cell's text with
  surrounding whitespace (and a leading BOM) removed, and names must be unique. A value in a
  later row outside that span is an error naming the cell.
- A row whose cells in the span are all empty is skipped and not counted (so are trailing
  empty rows and columns, whatever dimensions the sheet records). Data rows are numbered from
  1 after the header, as in a CSV file; messages give the cell too (`row 3 (cell B5)`).
- `source_hash` is the SHA-256 of the .xlsx file's bytes; `row_hash` is SPEC section 5's,
  over `{column name: cell text}` for the table's columns.
- A workbook is read within `WorkbookLimits` (`_bounds`): the archive's parts, the bytes
  they inflate to, their compression ratio, and the sheet's rows, columns, cells and
  characters in a cell. Beyond one, reading stops with an InputError naming the limit.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from functools import partial
from itertools import islice
from pathlib import Path
from shlex import quote
from typing import Any

from runlens.cancellation import checkpoint
from runlens.errors import InputError
from runlens.evidence import _records
from runlens.evidence._bounds import (
    DEFAULT_LIMITS,
    BoundedZipFile,
    WorkbookLimits,
    WorkbookTooLarge,
)
from runlens.evidence._columns import ColumnsBuilder
from runlens.evidence._encoding import cannot_read, file_sha256
from runlens.evidence._ids import FROM_ROW_NUMBER, IdRule
from runlens.evidence._stores import XLSX_FORMAT, table_store
from runlens.evidence.index import EvidenceIndex

#: The part every OOXML workbook (.xlsx, .xlsm) has; an .xlsb has xl/workbook.bin instead.
WORKBOOK_PART = "xl/workbook.xml"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
#: Whole floats below this magnitude are written as integers (`3.0` -> `3`).
_INTEGRAL_BELOW = 1e16
_BATCH_ROWS = 512

#: (data row number, worksheet row number, the row's texts in column order)
SheetRecord = tuple[int, int, list[str]]


def is_workbook(path: Path) -> bool:
    """Whether `path` is an Excel workbook openpyxl reads: a ZIP archive with `xl/workbook.xml`
    (by content, whatever the file is called)."""
    try:
        with path.open("rb") as stream:
            if stream.read(4) not in _ZIP_MAGIC:
                return False
        with zipfile.ZipFile(path) as archive:
            archive.getinfo(WORKBOOK_PART)
    except (OSError, zipfile.BadZipFile, KeyError):
        return False
    return True


def check_options(
    source: str, *, workbook: bool, encoding: str | None, delimiter: str | None, sheet: str | None
) -> None:
    """InputError when an option of the other kind of file is given: a sheet for a CSV
    file, an encoding or a delimiter for a workbook."""
    if workbook:
        wrong = [("an encoding", encoding), ("a delimiter", delimiter)]
        what = "an Excel workbook, not a CSV text file"
    else:
        wrong = [("a sheet", sheet)]
        what = "a CSV text file, not an Excel workbook"
    for option, value in wrong:
        if value is not None:
            raise InputError(
                f"{source}: {option} was named ({value!r}), but this is {what}", file=source
            )


def cell_text(value: object) -> str:
    """A cell's value as text, the rule row hashes are computed over:

    - empty cell (None): `""`; text: as it is, untrimmed; an error value: its code (`#N/A`)
    - boolean: `TRUE` / `FALSE`
    - integer: its decimal digits (`42`, `-7`)
    - float: a whole number below 10^16 in magnitude as an integer (`3.0` -> `3`), any other
      as Python's `repr`, the shortest text that reads back as the same double (`0.1`,
      `2.5e-07`, `1e+16`); a percentage or currency format is not applied (`12%` is `0.12`)
    - date and time (a cell with a date format): ISO 8601, `2024-03-05` at midnight, else
      `2024-03-05T14:30:00` (microseconds only when there are any); a time alone `14:30:00`
    - duration (`[h]:mm:ss` formats): hours:minutes:seconds, `26:03:04`, `-0:30:00`
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):  # before int: a bool is an int
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < _INTEGRAL_BELOW:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime):  # before date: a datetime is a date
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return _duration(value)
    return str(value)


def _duration(value: timedelta) -> str:
    sign = "-" if value < timedelta(0) else ""
    micros = abs(value) // timedelta(microseconds=1)
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    fraction = f".{micro:06d}".rstrip("0") if micro else ""
    return f"{sign}{hours}:{minute:02d}:{second:02d}{fraction}"


def column_letter(index: int) -> str:
    """`A` for column 1, `Z`, `AA` ... (the worksheet's own column names)."""
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(index))


class Sheet:
    """An opened worksheet: its name, header, and a pass over its data rows (`records`)."""

    def __init__(
        self,
        *,
        source: str,
        name: str,
        rows: Iterator[tuple[Any, ...]],
        limits: WorkbookLimits = DEFAULT_LIMITS,
        other_sheets: Callable[[], list[tuple[str, tuple[str, ...]]]] | None = None,
    ) -> None:
        """`other_sheets`: the workbook's other worksheets and their headers, when the
        sheet was not named (`--sheet`), for `require_columns` to point at them."""
        self.source = source
        self.name = name
        #: How messages name the table: `survey.xlsx, sheet 'Responses'`.
        self.label = f"{source}, sheet {name!r}"
        self._rows = enumerate(rows, start=1)
        self._limits = limits
        self._cells = 0
        self._other_sheets = other_sheets
        self.header_row, self.first_column, self.columns = self._header()

    def cell(self, row: int, position: int) -> str:
        """The reference (`B7`) of worksheet row `row`, table column `position` (0-based)."""
        return f"{column_letter(self.first_column + position)}{row}"

    def records(self) -> Iterator[SheetRecord]:
        """Every data row with a value: (data row number, worksheet row, texts per column)."""
        start = self.first_column - 1
        width = len(self.columns)
        stop = start + width
        number = 0
        for row, raw in self._read():
            texts = self._texts(row, raw)
            values = texts[start:stop]
            if any(texts[:start]) or any(texts[stop:]):
                self._outside(number + 1, row, texts, start, stop)
            if not any(values):
                continue
            number += 1
            if len(values) < width:
                values += [""] * (width - len(values))
            yield number, row, values

    def _header(self) -> tuple[int, int, tuple[str, ...]]:
        for row, raw in self._read():
            texts = self._texts(row, raw)
            filled = [position for position, text in enumerate(texts) if text]
            if not filled:
                continue
            first, last = filled[0], filled[-1]
            names = tuple(_records.column_name(text) for text in texts[first : last + 1])
            self._check_names(names, row, first + 1)
            return row, first + 1, names
        raise InputError(f"{self.label}: empty sheet (no header row)", file=self.source)

    def require_columns(self, required: Sequence[str]) -> None:
        """InputError when a required column is not in the header: `MissingColumnError` for
        a sheet the user named or a workbook of one worksheet; else (the first sheet is a
        cover sheet, say) an error listing the workbook's sheets, pointing at those whose
        header has the columns, and advising `--sheet`."""
        missing = [name for name in required if name not in self.columns]
        others = self._other_sheets() if missing and self._other_sheets is not None else []
        if not others:
            _records.require_columns(self.columns, required, self.label, file=self.source)
            return
        fitting = [name for name, header in others if all(c in header for c in required)]
        listed = ", ".join(repr(name) for name in [self.name, *(name for name, _ in others)])
        problem = (
            f"{self.label}, the first sheet, has no column {missing[0]!r} (found: "
            f"{', '.join(self.columns)}); the workbook's sheets: {listed}"
        )
        wanted = ", ".join(repr(name) for name in required)
        columns = f"the column{'s' if len(required) > 1 else ''} {wanted}"
        if fitting:
            advice = f"sheet {fitting[0]!r} has {columns}: read it with --sheet {quote(fitting[0])}"
        else:
            headers = "; ".join(
                f"{name!r}: {', '.join(header) or '(empty)'}" for name, header in others
            )
            advice = (
                f"no other sheet has {columns} in its header ({headers}): name the sheet to "
                "read with --sheet, and its columns with --id-column and --text-column"
            )
        raise InputError(f"{problem}; {advice}", file=self.source, field=missing[0])

    def _texts(self, row: int, raw: tuple[Any, ...]) -> list[str]:
        """The row's cell texts, within the limits on columns, cells and cell length."""
        limits = self._limits
        if len(raw) > limits.max_columns:
            self._too_large(
                f"row {row} reaches column {column_letter(len(raw))}, beyond the limit of "
                f"{limits.max_columns:,} columns",
                "max_columns",
            )
        self._cells += len(raw)
        if self._cells > limits.max_cells:
            self._too_large(
                f"more than {limits.max_cells:,} cells by row {row}, over the limit",
                "max_cells",
            )
        texts = list(map(cell_text, raw))
        if texts and max(map(len, texts)) > limits.max_cell_chars:
            position = next(p for p, t in enumerate(texts) if len(t) > limits.max_cell_chars)
            self._too_large(
                f"cell {column_letter(position + 1)}{row} holds {len(texts[position]):,} "
                f"characters, over the limit of {limits.max_cell_chars:,}",
                "max_cell_chars",
            )
        return texts

    def _too_large(self, what: str, limit: str) -> None:
        raise WorkbookTooLarge(f"{self.label}: {what}", file=self.source, limit=limit)

    def _check_names(self, names: Sequence[str], row: int, first_column: int) -> None:
        seen: dict[str, int] = {}
        for position, name in enumerate(names):
            if name in seen:
                cells = [f"{column_letter(first_column + p)}{row}" for p in (seen[name], position)]
                raise InputError(
                    f"{self.label}: duplicate column {name!r} in the header (cells "
                    f"{cells[0]} and {cells[1]})",
                    file=self.source,
                    field=name,
                )
            seen[name] = position

    def _outside(self, number: int, row: int, texts: list[str], start: int, stop: int) -> None:
        position = next(p for p, text in enumerate(texts) if text and not start <= p < stop)
        first = column_letter(start + 1)
        last = column_letter(stop)
        raise InputError(
            f"{self.label}, row {number} (cell {column_letter(position + 1)}{row}): a value "
            f"outside the table's columns {first} to {last} (the header, row "
            f"{self.header_row}, names no column there)",
            file=self.source,
            row=number,
        )

    def _read(self) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """The worksheet's rows, numbered; a workbook damaged inside the sheet's XML is an
        InputError naming the row after the last one read."""
        row = 0
        while True:
            try:
                row, raw = next(self._rows)
            except StopIteration:
                return
            except InputError:  # a limit of the archive (`BoundedZipFile`)
                raise
            except Exception as error:  # openpyxl's parser: any error means damaged XML
                where = f"sheet {self.name!r}, row {row + 1}"
                raise _unreadable(self.source, error, where) from None
            if row > self._limits.max_rows:
                self._too_large(
                    f"more than {self._limits.max_rows:,} rows, over the limit", "max_rows"
                )
            yield row, raw


@contextmanager
def open_sheet(
    path: Path, source: str, sheet: str | None, limits: WorkbookLimits = DEFAULT_LIMITS
) -> Iterator[Sheet]:
    """The sheet named `sheet` (else the first worksheet) of the workbook at `path`, open for
    one pass. InputError naming the file for a workbook openpyxl cannot read, a sheet that
    is not there (naming the sheets there are), an empty sheet, or a workbook beyond
    `limits` (`WorkbookTooLarge`, also while the rows are read)."""
    try:
        stream = path.open("rb")
    except OSError as error:
        raise cannot_read(source, error) from None
    with stream:
        workbook = _load(stream, source, limits)
        try:
            worksheet = _worksheet(workbook, source, sheet)
            # The recorded dimensions can be wrong (and cut rows off): read every row there is.
            worksheet.reset_dimensions()
            rows = worksheet.iter_rows(values_only=True)
            others = None
            if sheet is None and len(_worksheets(workbook)) > 1:
                others = partial(_headers, workbook, worksheet.title)
            yield Sheet(
                source=source, name=worksheet.title, rows=rows, limits=limits, other_sheets=others
            )
        finally:
            workbook.close()


#: How many rows of another sheet `_headers` looks through for its header.
_HEADER_ROWS = 50


def _headers(workbook: Any, chosen: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every worksheet but `chosen`, with its header: the first non-empty row among its
    first rows (empty when there is none there)."""
    headers = []
    for worksheet in _worksheets(workbook):
        if worksheet.title == chosen:
            continue
        header: tuple[str, ...] = ()
        for raw in islice(worksheet.iter_rows(values_only=True), _HEADER_ROWS):
            texts = [_records.column_name(cell_text(value)) for value in raw]
            if any(texts):
                header = tuple(text for text in texts if text)
                break
        headers.append((str(worksheet.title), header))
    return headers


def _worksheets(workbook: Any) -> list[Any]:
    """The workbook's worksheets (not its chart sheets), in order."""
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    return [each for each in workbook.worksheets if isinstance(each, ReadOnlyWorksheet)]


def _load(stream: Any, source: str, limits: WorkbookLimits) -> Any:
    """openpyxl's read-only workbook over a `BoundedZipFile` of `stream` (what
    `openpyxl.load_workbook` does, with the archive it reads swapped for the bounded one)."""
    from openpyxl.reader.excel import ExcelReader

    try:
        archive = BoundedZipFile(stream, source=source, limits=limits)
    except InputError:
        raise
    except Exception as error:  # zipfile's errors: a damaged archive
        raise _unreadable(source, error) from None
    try:
        # A file object, not the path: openpyxl refuses paths by their suffix, and the
        # content (checked by `is_workbook`) decides what a file is.
        reader = ExcelReader(stream, read_only=True, data_only=True)
        reader.archive.close()
        reader.archive = archive
        reader.read()
    except InputError:
        archive.close()
        raise
    except Exception as error:  # openpyxl raises whatever its zip and XML parsers raise
        archive.close()
        raise _unreadable(source, error) from None
    return reader.wb


def _worksheet(workbook: Any, source: str, sheet: str | None) -> Any:
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    names = list(workbook.sheetnames)
    if sheet is None:
        tables = _worksheets(workbook)
        if not tables:
            raise InputError(f"{source}: the workbook has no worksheet", file=source)
        return tables[0]
    if sheet not in names:
        close = _records.closest(sheet, names)
        hint = f"; closest: {close!r}" if close is not None else ""
        raise InputError(
            f"{source}: no sheet named {sheet!r} (sheets: {', '.join(names)}{hint})",
            file=source,
        )
    worksheet = workbook[sheet]
    if not isinstance(worksheet, ReadOnlyWorksheet):
        raise InputError(f"{source}: sheet {sheet!r} is a chart sheet, not a table", file=source)
    return worksheet


def _unreadable(source: str, error: Exception, where: str = "") -> InputError:
    reason = str(error) or type(error).__name__
    place = f" at {where}" if where else ""
    return InputError(
        f"{source}: cannot be read as an Excel workbook{place} ({reason})", file=source
    )


# -- the Evidence Index of a sheet -----------------------------------------------------------


def no_rows(label: str, source: str) -> InputError:
    return InputError(f"{label}: no data rows (only a header)", file=source)


def check_ids(
    label: str,
    source: str,
    columns: Sequence[str],
    id_column: str,
    records: Iterable[tuple[int, int, Sequence[str]]],
    cell: Callable[[int, int], str],
) -> None:
    """InputError (row, cell, column) for the first empty, control-character or duplicate id
    among `records` (data row, worksheet row, values); `cell(row, position)` names a cell."""
    checker = _records.IdChecker(id_column, columns, source, label=label)
    position = columns.index(id_column)
    for number, row, values in records:
        checker.check_value(values[position], number, f"cell {cell(row, position)}")


def build_index(
    path: Path,
    source: str,
    *,
    sheet: str | None,
    id_column: str,
    text_column: str,
    id_rule: IdRule,
) -> EvidenceIndex:
    """The Evidence Index of a worksheet in one streaming pass (memory: the index and one
    batch of rows), as `SourceTable.open(...).evidence_index(...)` would make it."""
    derived = id_rule == FROM_ROW_NUMBER
    source_hash = file_sha256(path)
    with open_sheet(path, source, sheet) as opened:
        columns = opened.columns
        required = (text_column,) if derived else (id_column, text_column)
        opened.require_columns(required)
        builder = ColumnsBuilder(columns)
        checker = (
            None if derived else _records.IdChecker(id_column, columns, source, label=opened.label)
        )
        id_at = None if derived else columns.index(id_column)
        records = opened.records()
        while batch := list(islice(records, _BATCH_ROWS)):
            checkpoint()
            if checker is not None and id_at is not None:
                for number, row, values in batch:
                    checker.check_value(values[id_at], number, f"cell {opened.cell(row, id_at)}")
            builder.add([values for _, _, values in batch])
        name = opened.name
        label = opened.label
    if not len(builder):
        raise no_rows(label, source)
    store = table_store(builder.finish(), None if derived else id_column, text_column)
    if store is None:  # not expected: every id was checked on the way
        raise InputError(f"{label}: could not be read consistently (internal error)", file=source)
    return EvidenceIndex(
        source=source,
        source_hash=source_hash,
        id_column=id_column,
        text_column=text_column,
        store=store,
        columns=columns,
        format=XLSX_FORMAT,
        sheet=name,
        id_rule=id_rule,
    )
