"""Choosing how to read a CSV file, by evidence from samples of its bytes.

The samples are the first 64 KiB and, in a larger file, 64 KiB from its middle and its end
(cut at newlines); the file is never read whole for this. In order:

1. A file signature: a PNG, a ZIP archive (other than an .xlsx workbook, which `_xlsx`
   reads before any of this), a PDF, a gzip file ... is refused for what it looks like.
2. A byte-order mark decides: UTF-8, UTF-16 or UTF-32 (confidence 1).
3. UTF-16/UTF-32 without a mark: the ASCII characters every CSV has (delimiters, newlines,
   ids) leave NUL bytes at every other (every fourth) position, on one side only.
4. Strict UTF-8: samples that decode are UTF-8 (plain ASCII included; confidence 1). Samples
   that are mostly valid UTF-8 with a few bytes that are not are damaged UTF-8: refused, with
   the byte offset, rather than read as some other encoding's mojibake.
5. A legacy encoding, from the characters each candidate decodes to (`_legacy`): GB18030
   when nearly all characters are GB2312's, Windows-1252 when the text reads as Western
   European words, otherwise charset-normalizer's best match; with a confidence that grows
   with the non-ASCII characters seen.
6. Text in which control characters abound is binary data: refused (unless its header has
   the required columns: then it is a CSV file, with odd values).

The delimiter is found on the header: the first of `, TAB ; |` that splits it into fields
including the required columns; failing that, the one giving the most fields (comma on ties).
A header that none of them splits (a file of one column) is read with the delimiter its file
name says: TAB for `.tsv` and `.tab`, else comma, so commas inside a one-column TSV's text are
not taken for delimiters.

If the whole file then fails to decode in an encoding chosen from samples (bytes the samples
did not show), `after_decode_error` looks at a window around the failing byte and proposes
another encoding, or raises an InputError naming the byte offset, row and line.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from runlens.errors import InputError, UserError
from runlens.evidence import _records
from runlens.evidence._encoding import (
    BY_BOM,
    BY_NUL_PATTERN,
    BY_UTF8,
    DELIMITERS,
    GIVEN,
    UTF8,
    UTF8_SIG,
    DecodeFailure,
    TextFormat,
    check_encoding_name,
    first_error,
)
from runlens.evidence._legacy import _legacy, _weight
from runlens.evidence._samples import (
    _byte_at,
    _head_text,
    _read_samples,
    _Sample,
    _utf8_stats,
    _window,
)
from runlens.evidence._signatures import (
    _LOW_CONTROL_BYTES,
    _implausible,
    _refuse_binary,
    _signature,
)

T = TypeVar("T")
#: Below this confidence no encoding is convincing and the file is refused.
MIN_CONFIDENCE = 0.5
#: Full readings of a file tried before its decoding error is reported.
_MAX_READINGS = 3
#: NUL bytes, all at one parity, that a UTF-16 reading without a byte-order mark needs at least.
_MIN_WIDE_NULS = 8
# Longest first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, UTF8_SIG),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


# -- the entry points ------------------------------------------------------------------------


def read_decoding(
    path: Path,
    source: str,
    *,
    encoding: str | None,
    delimiter: str | None,
    required: Sequence[str],
    read: Callable[[TextFormat], T],
) -> T:
    """`read(format)` with the format chosen for `path`; when the file stops decoding in a
    detected encoding (`DecodeFailure`), again with the next best reading, else InputError."""
    text_format = sniff_format(
        path, source, encoding=encoding, delimiter=delimiter, required=required
    )
    tried = [text_format.encoding]
    while True:
        try:
            return read(text_format)
        except DecodeFailure as failure:
            # Each reading is a full pass over the file: after a few, stop guessing.
            last = len(tried) >= _MAX_READINGS
            text_format = after_decode_error(path, source, text_format, failure, tried, last=last)
            tried.append(text_format.encoding)


def sniff_format(
    path: Path,
    source: str,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    required: Sequence[str] = (),
) -> TextFormat:
    """The format to read `path` in, from samples of its bytes (see the module's docs).

    `encoding` (a codec name) and `delimiter`, when given, are used as they are. InputError
    for a file that is not text or whose encoding is not convincing; UserError for an
    unknown `encoding` or a delimiter other than `, TAB ; |`.
    """
    samples = _read_samples(path, source)
    head = samples[0]
    what = _signature(head.data, samples[-1].data if samples[-1].last else b"")
    if what is not None:
        raise InputError(f"{source}: looks like {what}, not a CSV text file", file=source)
    if encoding is not None:
        chosen = TextFormat(check_encoding_name(encoding), 1.0, GIVEN)
    else:
        chosen = _choose(path, source, samples)
    text = _head_text(head, chosen.encoding)
    if delimiter is not None and delimiter not in DELIMITERS:
        raise UserError(f"unsupported delimiter {delimiter!r} (one of , TAB ; |)")
    found, has_required = _delimiter(text, required, _named_delimiter(path))
    if not (required and has_required):
        # A header with the required columns is CSV, whatever control characters follow.
        _refuse_binary(source, text, head.data)
    return replace(chosen, delimiter=delimiter or found)


def after_decode_error(
    path: Path,
    source: str,
    text_format: TextFormat,
    failure: DecodeFailure,
    tried: Iterable[str] = (),
    *,
    last: bool = False,
) -> TextFormat:
    """The next reading to try after `text_format` failed at some byte the samples did not
    show; InputError (naming the byte offset, row and line) when there is none, or when this
    was the `last` reading to try."""
    found = first_error(path, text_format.encoding, near=failure.bytes_read)
    if found is None:  # not expected: the failed read decoded no further than this
        raise InputError(f"{source}: could not be decoded consistently", file=source)
    offset, value = found
    if last or not text_format.detected:
        raise _records.undecodable(path, source, text_format, offset, value)
    samples = _read_samples(path, source)
    window = _window(path, source, offset)
    if text_format.method == BY_UTF8:
        valid = sum(_utf8_stats([sample])[0] for sample in samples)
        good, bad, _ = _utf8_stats([window])
        if valid + good >= 2 and valid + good >= 2 * bad:
            raise _damaged_utf8(path, source, text_format, offset, value)
    proposed = _legacy([*samples, window], exclude={text_format.encoding, *tried})
    if proposed is None or proposed.confidence < MIN_CONFIDENCE:
        if text_format.method == BY_UTF8:
            raise _unconvincing(source, [*samples, window], offset, value, proposed)
        raise _records.undecodable(path, source, text_format, offset, value)
    return replace(proposed, delimiter=text_format.delimiter)


def detect_delimiter(text: str, required: Sequence[str], single_column: str = ",") -> str:
    """The delimiter of the CSV whose beginning is `text` (see the module's docs);
    `single_column` when no delimiter splits the header."""
    return _delimiter(text, required, single_column)[0]


def _named_delimiter(path: Path) -> str:
    """The delimiter a file's name implies: TAB for `.tsv` and `.tab`, else comma."""
    return "\t" if path.suffix.lower() in (".tsv", ".tab") else ","


def _delimiter(text: str, required: Sequence[str], single_column: str) -> tuple[str, bool]:
    """(the delimiter, whether the header it splits has every required column).

    A header no delimiter splits is one column: `single_column` is its delimiter."""
    splits: dict[str, list[str]] = {}
    for delimiter in DELIMITERS:
        cells = _first_record(text, delimiter)
        if cells is not None:
            splits[delimiter] = [_records.column_name(cell) for cell in cells]
    if all(len(names) == 1 for names in splits.values()):
        names = splits.get(single_column) or next(iter(splits.values()), [])
        return single_column, bool(required) and all(name in names for name in required)
    best, widest = DELIMITERS[0], 1
    for delimiter, names in splits.items():
        if required and all(name in names for name in required):
            return delimiter, True
        if len(names) > widest:
            best, widest = delimiter, len(names)
    return best, False


# -- choosing the encoding -------------------------------------------------------------------


def _choose(path: Path, source: str, samples: Sequence[_Sample]) -> TextFormat:
    head = samples[0].data
    if not head:
        return TextFormat(UTF8, 1.0, BY_UTF8)  # empty: the reader says "empty file"
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return TextFormat(encoding, 1.0, BY_BOM)
    wide = _wide_encoding(head)
    if wide is not None:
        return wide
    good, bad, first_bad = _utf8_stats(samples)
    if not bad:
        return TextFormat(UTF8, 1.0, BY_UTF8)
    assert first_bad is not None
    value = _byte_at(samples, first_bad)
    if good >= 2 and good >= 2 * bad:
        raise _damaged_utf8(path, source, TextFormat(UTF8, 1.0, BY_UTF8), first_bad, value)
    proposed = _legacy(samples)
    if proposed is None or proposed.confidence < MIN_CONFIDENCE:
        raise _unconvincing(source, samples, first_bad, value, proposed)
    return proposed


def _wide_encoding(head: bytes) -> TextFormat | None:
    """UTF-16 or UTF-32 without a byte-order mark, from where the NUL bytes sit."""
    data = head[: len(head) - len(head) % 4]
    quarter = len(data) // 4
    if quarter < 2 or b"\x00" not in data:
        return None
    zeros = [data[lane::4].count(0) for lane in range(4)]
    candidates: list[tuple[str, float]] = []
    # UTF-32: the top byte is always zero, the next nearly always (BMP characters).
    if zeros[3] == quarter and zeros[2] >= 0.9 * quarter and zeros[0] < quarter / 2:
        candidates.append(("utf-32-le", 1 - zeros[0] / quarter))
    if zeros[0] == quarter and zeros[1] >= 0.9 * quarter and zeros[3] < quarter / 2:
        candidates.append(("utf-32-be", 1 - zeros[3] / quarter))
    even, odd = zeros[0] + zeros[2], zeros[1] + zeros[3]
    least = max(_MIN_WIDE_NULS, 0.05 * 2 * quarter)
    if odd >= least and even * 4 <= odd:
        candidates.append(("utf-16-le", 1 - even / odd))
    if even >= least and odd * 4 <= even:
        candidates.append(("utf-16-be", 1 - odd / even))
    for encoding, evidence in candidates:
        try:
            text = codecs.getincrementaldecoder(encoding)().decode(data, final=False)
        except UnicodeDecodeError:
            continue
        # Read this way, the CSV's own structure must show: a delimiter and line ends.
        structured = any(d in text for d in DELIMITERS) and ("\n" in text or "\r" in text)
        if structured and _implausible(text) <= 0.01 * len(text):
            return TextFormat(encoding, round(evidence * _weight(data.count(0)), 3), BY_NUL_PATTERN)
    return None


def _first_record(text: str, delimiter: str) -> list[str] | None:
    """The first non-blank record of `text` split at `delimiter`; None if it does not parse."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        for cells in reader:
            if any(cells):
                return cells
    except csv.Error:
        return None
    return None


# -- errors ----------------------------------------------------------------------------------


def _damaged_utf8(
    path: Path, source: str, text_format: TextFormat, offset: int, value: int
) -> InputError:
    row, line = _records.locate(path, text_format, offset)
    place = _records.place(row, line)
    return InputError(
        f"{source}: damaged UTF-8: byte 0x{value:02x} at byte offset {offset} ({place}) is "
        "not valid UTF-8, while the rest of the file reads as UTF-8 (a corrupted file, or "
        "another encoding mixed in; if it is not UTF-8, name its encoding with --encoding)",
        file=source,
        row=row,
        byte_offset=offset,
    )


def _unconvincing(
    source: str,
    samples: Sequence[_Sample],
    offset: int,
    value: int,
    best: TextFormat | None,
) -> InputError:
    data = b"".join(sample.data for sample in samples)
    binary = len(data) - len(data.translate(None, _LOW_CONTROL_BYTES)) > 0.05 * len(data)
    guess = f" (best guess {best.describe()})" if best is not None else ""
    looks = "; it looks like binary data, not CSV text" if binary else ""
    return InputError(
        f"{source}: cannot tell its text encoding: it is not UTF-8 (byte 0x{value:02x} at "
        f"byte offset {offset} is not valid UTF-8) and no other encoding reads it "
        f"convincingly{guess}{looks}. If you know the encoding, name it with --encoding",
        file=source,
        byte_offset=offset,
    )
