"""Reading a workbook within bounds: a small .xlsx must not inflate into gigabytes.

An .xlsx file is a ZIP archive of XML parts, and deflate reaches ratios of 1000:1, so a 4 MiB
upload can hold 4 GiB of XML, or one cell of a billion characters. The bounds
(`WorkbookLimits`, docs/inputs.md lists them for users) are checked twice:

- before anything is inflated (`check_archive`), on the archive's central directory: the
  number of entries, the sum of the sizes it declares, each entry's compression ratio, and
  the compression method (only stored and deflated parts: bzip2 and LZMA inflate a whole
  block at once, beyond any bound);
- while the parts are read (`BoundedZipFile`), on the bytes actually inflated, because the
  declared sizes are whatever the file says: the same total and ratio, and the longest text
  without markup (no cell can hold more than `max_cell_chars` characters, so a longer run of
  text is refused before an XML parser holds it in memory).

The worksheet's own bounds (rows, columns, cells, characters in a cell) are checked as its
rows are read (`_xlsx.Sheet`). Every refusal is an `InputError` naming the file, the part or
cell, and the limit; reading also stops at a cancellation point every chunk.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from runlens.cancellation import checkpoint
from runlens.errors import InputError

_MIB = 1024 * 1024
_CHUNK = _MIB
#: XML parts, where the text-without-markup bound applies (not images or binary parts).
_MARKUP_SUFFIXES = (".xml", ".rels", ".vml")


@dataclass(frozen=True, slots=True)
class WorkbookLimits:
    """What a workbook may hold. The defaults are above what Excel itself writes."""

    #: Entries (parts) in the archive.
    max_entries: int = 10_000
    #: Bytes inflated from the archive in all, declared and actual.
    max_inflated_bytes: int = 512 * _MIB
    #: Inflated bytes per compressed byte of one entry (Excel's own parts are near 15).
    max_ratio: int = 100
    #: Entries smaller than this (inflated) are not held to `max_ratio`.
    ratio_grace_bytes: int = _MIB
    #: Bytes of text between two pieces of markup (more than any cell can hold).
    max_text_bytes: int = _MIB
    #: Worksheet rows, columns and cells read (Excel's own row and column limits).
    max_rows: int = 1_048_576
    max_columns: int = 16_384
    max_cells: int = 20_000_000
    #: Characters in one cell (Excel's own limit).
    max_cell_chars: int = 32_767


DEFAULT_LIMITS = WorkbookLimits()


class WorkbookTooLarge(InputError):
    """A workbook beyond one of the `WorkbookLimits`; `limit` names the field."""

    def __init__(self, message: str, *, file: str, limit: str, row: int | None = None) -> None:
        super().__init__(message, file=file, row=row)
        self.limit = limit


def size(count: int) -> str:
    """`512 MiB`, `1.5 GiB`, `4096 bytes`: a byte count for messages."""
    for unit, factor in (("GiB", 1024 * _MIB), ("MiB", _MIB)):
        if count >= factor:
            return f"{count / factor:.4g} {unit}"
    return f"{count} bytes"


def check_archive(
    archive: zipfile.ZipFile, source: str, limits: WorkbookLimits = DEFAULT_LIMITS
) -> None:
    """WorkbookTooLarge for an archive whose central directory already shows it is beyond
    the limits: too many entries, too many bytes declared, a part compressed beyond
    `max_ratio`, or a compression method other than stored or deflated."""
    entries = archive.infolist()
    if len(entries) > limits.max_entries:
        raise WorkbookTooLarge(
            f"{source}: the workbook has {len(entries):,} parts, more than the limit of "
            f"{limits.max_entries:,}",
            file=source,
            limit="max_entries",
        )
    declared = 0
    for entry in entries:
        if entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise WorkbookTooLarge(
                f"{source}: part {entry.filename!r} is compressed with method "
                f"{entry.compress_type}; a workbook uses only stored or deflated parts",
                file=source,
                limit="compression_method",
            )
        declared += entry.file_size
        if declared > limits.max_inflated_bytes:
            raise WorkbookTooLarge(
                f"{source}: the workbook inflates to more than {size(declared)} (at part "
                f"{entry.filename!r}), over the limit of {size(limits.max_inflated_bytes)}",
                file=source,
                limit="max_inflated_bytes",
            )
        _check_ratio(source, entry, entry.file_size, limits)


def _check_ratio(
    source: str, entry: zipfile.ZipInfo, inflated: int, limits: WorkbookLimits
) -> None:
    if inflated <= limits.ratio_grace_bytes:
        return
    if inflated > limits.max_ratio * max(entry.compress_size, 1):
        raise WorkbookTooLarge(
            f"{source}: part {entry.filename!r} inflates {size(entry.compress_size)} into more "
            f"than {size(inflated)}, beyond the limit of {limits.max_ratio}:1 (a zip bomb, or "
            "not a workbook a spreadsheet program wrote)",
            file=source,
            limit="max_ratio",
        )


class BoundedZipFile(zipfile.ZipFile):
    """A ZipFile whose parts, however they are opened, are read through `_BoundedPart`: the
    bytes actually inflated are held to the limits, and every chunk is a cancellation
    point. The central directory is checked when the archive is opened (`check_archive`)."""

    def __init__(
        self, file: IO[bytes], *, source: str, limits: WorkbookLimits = DEFAULT_LIMITS
    ) -> None:
        super().__init__(file, "r")
        self.source = source
        self.limits = limits
        #: Bytes inflated so far from every part read.
        self.inflated = 0
        try:
            check_archive(self, source, limits)
        except BaseException:
            self.close()
            raise

    def open(
        self,
        name: str | zipfile.ZipInfo,
        mode: Literal["r", "w"] = "r",
        pwd: bytes | None = None,
        *,
        force_zip64: bool = False,
    ) -> IO[bytes]:
        part = super().open(name, mode, pwd, force_zip64=force_zip64)
        if mode != "r":
            return part
        info = name if isinstance(name, zipfile.ZipInfo) else self.getinfo(name)
        return io.BufferedReader(_BoundedPart(part, info, self), buffer_size=64 * 1024)


class _BoundedPart(io.RawIOBase):
    """One part as it is inflated, counted against its archive's limits."""

    def __init__(self, part: IO[bytes], info: zipfile.ZipInfo, archive: BoundedZipFile) -> None:
        super().__init__()
        self._part = part
        self._info = info
        self._archive = archive
        self._inflated = 0
        self._markup = info.filename.lower().endswith(_MARKUP_SUFFIXES)
        #: Bytes of text since the last `<` (the markup bound).
        self._text_run = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        checkpoint()
        view = memoryview(buffer).cast("B")
        # At most one text bound per chunk, so the bound holds inside a chunk too.
        limits = self._archive.limits
        chunk = self._part.read(min(len(view), limits.max_text_bytes))
        count = len(chunk)
        view[:count] = chunk
        if count:
            self._count(chunk)
        return count

    def close(self) -> None:
        try:
            self._part.close()
        finally:
            super().close()

    def _count(self, chunk: bytes) -> None:
        archive, limits, source = self._archive, self._archive.limits, self._archive.source
        self._inflated += len(chunk)
        archive.inflated += len(chunk)
        if archive.inflated > limits.max_inflated_bytes:
            raise WorkbookTooLarge(
                f"{source}: the workbook inflated to more than "
                f"{size(limits.max_inflated_bytes)} while part {self._info.filename!r} was "
                "read, over the limit (the sizes it declares are wrong)",
                file=source,
                limit="max_inflated_bytes",
            )
        _check_ratio(source, self._info, self._inflated, limits)
        if self._markup:
            self._check_text_run(chunk)

    def _check_text_run(self, chunk: bytes) -> None:
        # A chunk is at most `max_text_bytes` long, so only the runs reaching its two ends
        # can be over the bound: the one continued from earlier chunks, and the last one.
        first = chunk.find(b"<")
        run = self._text_run + (len(chunk) if first < 0 else first)
        if first >= 0:
            self._text_run = len(chunk) - chunk.rfind(b"<") - 1
        else:
            self._text_run = run
        limit = self._archive.limits.max_text_bytes
        if max(run, self._text_run) > limit:
            source = self._archive.source
            raise WorkbookTooLarge(
                f"{source}: part {self._info.filename!r} holds more than {size(limit)} of "
                f"text without markup, more than a cell can hold "
                f"({self._archive.limits.max_cell_chars:,} characters)",
                file=source,
                limit="max_text_bytes",
            )


def check_workbook(path: Path, source: str, limits: WorkbookLimits = DEFAULT_LIMITS) -> None:
    """Inflate every part of the workbook at `path` through the bounds, parsing nothing
    (seconds for the largest workbook the limits allow): `WorkbookTooLarge` beyond a limit,
    an `InputError` for a damaged archive (a part whose CRC or declared size is wrong).
    For a check at the door, e.g. of an upload, before a run reads it."""
    try:
        with (
            path.open("rb") as stream,
            BoundedZipFile(stream, source=source, limits=limits) as archive,
        ):
            for entry in archive.infolist():
                with archive.open(entry) as part:
                    while part.read(_CHUNK):
                        pass
    except InputError:
        raise
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as error:
        reason = str(error) or type(error).__name__
        raise InputError(
            f"{source}: cannot be read as an Excel workbook ({reason})", file=source
        ) from None
