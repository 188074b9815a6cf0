"""The CSV reading rules shared by the index builder and `SourceTable`, and their error messages.

Rules: the csv module's default (excel) dialect with `strict=True`, so a stray quote or an
unterminated quoted field is an error instead of silently merging rows. Blank lines, and rows
whose every field is empty (what spreadsheets leave below the data), are skipped and do not
count as rows. The first non-blank record is the header.

The delimiter is the file's own (`TextFormat.delimiter`: comma, tab, semicolon or pipe).
Ids must not be empty or blank, must be unique, and must not hold control characters (C0,
tab included, DEL, C1) or the invisible bidirectional and line-separator characters: an id
is cited in Markdown and JSON, where those break or disguise it.

The fast readers only detect that something is wrong; `diagnose` then reads the file again,
one record at a time with line numbers, and raises the precise `InputError`. Errors are rare,
so the happy path carries no bookkeeping for them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.errors import InputError
from runlens.evidence._encoding import UTF8, UTF8_SIG, DecodeFailure, TextFormat, open_text

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

_BOM = "\ufeff"
#: What an id must not contain: C0 controls (tab included), DEL, C1 controls, the line and
#: paragraph separators and the bidirectional embedding/override/isolate controls.
_ID_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Those of them in ASCII: C0 and DEL.
_ASCII_CONTROLS = bytes((*range(0x20), 0x7F))


def new_reader(lines: Iterable[str], delimiter: str = ",") -> CsvReader:
    """The one csv reader configuration every RunLens CSV read uses."""
    return csv.reader(lines, strict=True, delimiter=delimiter)


def has_control(ids: Iterable[str]) -> bool:
    """Whether any of the ids holds a character ids must not contain."""
    joined = "".join(ids)
    if joined.isascii():  # the usual case, by a C-level pass over bytes
        data = joined.encode("ascii")
        return len(data.translate(None, _ASCII_CONTROLS)) != len(data)
    return _ID_CONTROL.search(joined) is not None


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
            f"{source}, header (line {reader.line_num}): malformed CSV: {explain(error)}",
            file=source,
        ) from None
    raise InputError(f"{source}: empty file (no header row)", file=source)


#: What the csv module's messages mean for someone who exported the file from a tool.
_MEANINGS = {
    "unexpected end of data": "a quoted field opened in this row is never closed",
    "expected after": "a quoted field is followed by more text before the next separator",
    "field larger than field limit": "one field is too long: is a quotation mark missing?",
}


def explain(error: csv.Error) -> str:
    """The csv module's message, with what it means in words when it is a known one."""
    message = str(error)
    meaning = next((text for key, text in _MEANINGS.items() if key in message), None)
    return f"{message} ({meaning})" if meaning else message


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


class MissingColumnError(InputError):
    """A column the reading needs is not in the header. `field` is the column asked for,
    `columns` the header's names (the message lists them, with the closest match)."""

    def __init__(self, message: str, *, file: str, field: str, columns: Sequence[str]) -> None:
        super().__init__(message, file=file, field=field)
        self.columns = tuple(columns)


def require_columns(
    columns: Sequence[str], required: Iterable[str], source: str, *, file: str | None = None
) -> None:
    """Raise MissingColumnError for the first required column the header lacks, naming the
    columns it has and the closest of them (`source` starts the message; `file`, if it
    differs, is the file's name)."""
    for name in required:
        if name not in columns:
            found = ", ".join(columns)
            close = closest(name, columns)
            hint = f"; closest: {close!r}" if close is not None else ""
            raise MissingColumnError(
                f"{source}: missing column {name!r} (found: {found}{hint})",
                file=file or source,
                field=name,
                columns=columns,
            )


def closest(name: str, names: Sequence[str]) -> str | None:
    """The name in `names` most like `name` (the same but for case first), or None."""
    folded = name.casefold()
    for candidate in names:
        if candidate.casefold() == folded:
            return candidate
    import difflib

    by_folded = {candidate.casefold(): candidate for candidate in names}
    matches = difflib.get_close_matches(folded, list(by_folded), n=1, cutoff=0.6)
    return by_folded[matches[0]] if matches else None


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
                f"{source}, {place}: malformed CSV: {explain(error)}",
                file=source,
                row=number + 1,
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
    return InputError(f"{source}: no data rows (only a header)", file=source)


class IdChecker:
    """Checks ids record by record: not empty or blank, and not seen before."""

    def __init__(
        self, id_column: str, columns: Sequence[str], source: str, *, label: str | None = None
    ) -> None:
        self._name = id_column
        self._index = columns.index(id_column)
        self._source = source
        #: How messages name the file (`x.xlsx, sheet 'Data'`); `source` by default.
        self._label = label or source
        self._seen: dict[str, tuple[int, str]] = {}

    def check(self, record: Record) -> None:
        self.check_value(record.values[self._index], record.row, f"line {record.line}")

    def check_value(self, row_id: str, row: int, place: str) -> None:
        """Check the id of data row `row`; `place` says where it is (`line 5`, `cell A7`)."""
        where = f"{self._label}, row {row} ({place})"
        if not row_id.strip():
            raise InputError(
                f"{where}: empty {self._name} {row_id!r}",
                file=self._source,
                row=row,
                field=self._name,
            )
        control = _ID_CONTROL.search(row_id)
        if control is not None:
            char = control.group()
            raise InputError(
                f"{where}: {self._name} {row_id!r} contains the control character "
                f"U+{ord(char):04X} (at character {control.start() + 1}); ids must be "
                "printable text",
                file=self._source,
                row=row,
                field=self._name,
            )
        first = self._seen.setdefault(row_id, (row, place))
        if first != (row, place):
            raise InputError(
                f"{where}: duplicate {self._name} {row_id!r} (first at row {first[0]}, {first[1]})",
                file=self._source,
                row=row,
                field=self._name,
            )


def diagnose(
    path: Path,
    text_format: TextFormat,
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
        with open_text(path, text_format.encoding) as (stream, _):
            reader = new_reader(stream, text_format.delimiter)
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
    except DecodeFailure:  # not expected: the fast pass decoded at least this far
        return InputError(f"{source}: could not be decoded consistently", file=source)
    return InputError(f"{source}: could not be read consistently (internal error)", file=source)


def place(row: int | None, line: int) -> str:
    """`row 3, line 5`, or `header, line 1` for a place before the first data row."""
    return f"row {row}, line {line}" if row is not None else f"header, line {line}"


def locate(path: Path, text_format: TextFormat, offset: int) -> tuple[int | None, int]:
    """(data row, line) of the byte at `offset`: the row as `records` numbers them (None in
    the header), the line counting newlines before it. Reads the file up to there (slow;
    for error messages only)."""
    encoding = UTF8 if text_format.encoding == UTF8_SIG else text_format.encoding
    with path.open("rb") as raw:
        prefix = io.TextIOWrapper(
            io.BufferedReader(_Prefix(raw, offset)), encoding=encoding, errors="replace", newline=""
        )
        text_lines = _MarkedLines(prefix)
        # Not strict: the prefix may end inside a quoted field, or hold a malformed record
        # the failed read never reached.
        reader = csv.reader(text_lines, delimiter=text_format.delimiter)
        nonblank = 0
        try:
            for cells in reader:
                if any(cells):
                    nonblank += 1
        except csv.Error:
            nonblank += 1  # the record in progress (a field over the size limit)
        line = text_lines.newlines + 1
    return (nonblank - 1 if nonblank > 1 else None), line


class _Prefix(io.RawIOBase):
    """The first `size` bytes of a file, as a raw stream."""

    def __init__(self, raw: io.BufferedReader, size: int) -> None:
        self._raw = raw
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(min(len(buffer), self._left))
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


class _MarkedLines:
    """The lines of `stream`, then a marker character where the stream ends (so the record
    holding the next byte counts as a record even when the prefix ends a line); counts the
    newlines it passes."""

    def __init__(self, stream: io.TextIOWrapper) -> None:
        self._stream = stream
        self.newlines = 0

    def __iter__(self) -> Iterator[str]:
        # The csv reader ends a record at the end of each string it is given (outside quotes),
        # so the marker must join the last, unfinished line rather than follow it.
        previous: str | None = None
        for line in self._stream:
            self.newlines += line.count("\n")
            if previous is not None:
                yield previous
            previous = line
        if previous is None or previous.endswith(("\n", "\r")):
            if previous is not None:
                yield previous
            yield _MARKER
        else:
            yield previous + _MARKER


_MARKER = "\ufffd"


def undecodable(
    path: Path, source: str, text_format: TextFormat, offset: int, value: int
) -> InputError:
    """The error for a byte at `offset` that `text_format`'s encoding cannot decode."""
    codec = UTF8 if text_format.encoding == UTF8_SIG else text_format.encoding
    name = codec.upper()
    if text_format.method == "bom":
        what = f"not {name} text despite its byte-order mark"
    elif text_format.method == "given":
        what = f"not {name} text, the encoding given"
    else:
        what = (
            f"not {name} text after all (the encoding its samples showed: "
            f"{text_format.describe()}; name the right one with --encoding)"
        )
    row, line = locate(path, text_format, offset)
    return InputError(
        f"{source}: {what}: undecodable byte 0x{value:02x} at byte offset {offset} "
        f"({place(row, line)})",
        file=source,
        row=row,
        byte_offset=offset,
    )
