"""The CSV reading rules shared by the index builder and `CsvTable`, and their error messages.

Rules: the csv module's default (excel) dialect with `strict=True`, so a stray quote or an
unterminated quoted field is an error instead of silently merging rows. Blank lines, and rows
whose every field is empty (what spreadsheets leave below the data), are skipped and do not
count as rows. The first non-blank record is the header.

The fast readers only detect that something is wrong; `diagnose` then reads the file again,
one record at a time with line numbers, and raises the precise `InputError`. Errors are rare,
so the happy path carries no bookkeeping for them.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runlens.errors import InputError
from runlens.evidence._encoding import GB18030, UTF8, open_text, undecodable

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

_BOM = "\ufeff"


def new_reader(lines: Iterable[str]) -> CsvReader:
    """The one csv reader configuration every RunLens CSV read uses."""
    return csv.reader(lines, strict=True)


def column_name(cell: str) -> str:
    """A header cell as a column name: a leading BOM and surrounding whitespace removed."""
    return (cell[1:] if cell.startswith(_BOM) else cell).strip()


@dataclass(frozen=True, slots=True)
class Record:
    """One data record: its 1-based data row number, the line it starts on, its values."""

    row: int
    line: int
    values: list[str]


def read_header(reader: CsvReader, source: str) -> tuple[str, ...]:
    """Read the header (the first non-blank record) and check its names are unique."""
    try:
        for cells in reader:
            if cells:
                return check_header(cells, source)
    except csv.Error as error:
        raise InputError(
            f"{source}, header (line {reader.line_num}): malformed CSV: {error}", file=source
        ) from None
    raise InputError(f"{source}: empty file (no header row)", file=source)


def check_header(cells: Sequence[str], source: str) -> tuple[str, ...]:
    columns = tuple(column_name(cell) for cell in cells)
    seen: dict[str, int] = {}
    for number, name in enumerate(columns, start=1):
        if name in seen:
            raise InputError(
                f"{source}: duplicate column {name!r} in the header "
                f"(columns {seen[name]} and {number})",
                file=source,
                field=name,
            )
        seen[name] = number
    return columns


def require_columns(columns: Sequence[str], required: Iterable[str], source: str) -> None:
    """Raise for the first required column the header lacks."""
    for name in required:
        if name not in columns:
            found = ", ".join(columns)
            raise InputError(
                f"{source}: missing column {name!r} (found: {found})", file=source, field=name
            )


def records(reader: CsvReader, source: str) -> Iterator[Record]:
    """The data records after the header, numbered, with their starting line; blanks skipped.

    A csv error (bad quoting, a field over the size limit) becomes an `InputError` at the
    record where it happened.
    """
    number = 0
    previous_end = reader.line_num
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            place = f"row {number + 1} (line {previous_end + 1})"
            raise InputError(
                f"{source}, {place}: malformed CSV: {error}", file=source, row=number + 1
            ) from None
        start, previous_end = previous_end + 1, reader.line_num
        if any(values):
            number += 1
            yield Record(number, start, values)


def check_width(record: Record, columns: Sequence[str], source: str) -> None:
    if len(record.values) != len(columns):
        raise InputError(
            f"{source}, row {record.row} (line {record.line}): {len(record.values)} fields, "
            f"but the header has {len(columns)}",
            file=source,
            row=record.row,
        )


def no_rows(source: str) -> InputError:
    return InputError(f"{source}: no feedback rows (only a header)", file=source)


class IdChecker:
    """Checks ids record by record: not empty or blank, and not seen before."""

    def __init__(self, id_column: str, columns: Sequence[str], source: str) -> None:
        self._name = id_column
        self._index = columns.index(id_column)
        self._source = source
        self._seen: dict[str, Record] = {}

    def check(self, record: Record) -> None:
        feedback_id = record.values[self._index]
        where = f"{self._source}, row {record.row} (line {record.line})"
        if not feedback_id.strip():
            raise InputError(
                f"{where}: empty {self._name} {feedback_id!r}",
                file=self._source,
                row=record.row,
                field=self._name,
            )
        first = self._seen.setdefault(feedback_id, record)
        if first is not record:
            raise InputError(
                f"{where}: duplicate {self._name} {feedback_id!r} "
                f"(first at row {first.row}, line {first.line})",
                file=self._source,
                row=record.row,
                field=self._name,
            )


def diagnose(
    path: Path,
    encoding: str,
    source: str,
    *,
    required: Sequence[str],
    id_column: str | None,
) -> InputError:
    """Read the file again, record by record, and return the first problem as an InputError.

    Called only after a fast reader noticed something wrong; if this careful pass finds
    nothing, the disagreement itself is reported (a bug, never expected).
    """
    try:
        with open_text(path, encoding) as (stream, _):
            reader = new_reader(stream)
            columns = read_header(reader, source)
            require_columns(columns, required, source)
            ids = IdChecker(id_column, columns, source) if id_column else None
            seen_any = False
            for record in records(reader, source):
                seen_any = True
                check_width(record, columns, source)
                if ids is not None:
                    ids.check(record)
            if not seen_any:
                return no_rows(source)
    except InputError as error:
        return error
    except UnicodeDecodeError:  # not expected: the fast pass decoded at least this far
        tried = (UTF8, GB18030) if encoding in (UTF8, GB18030) else (encoding,)
        return undecodable(source, path, tried)
    return InputError(f"{source}: could not be read consistently (internal error)", file=source)
