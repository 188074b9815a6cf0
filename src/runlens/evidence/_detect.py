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
5. A legacy encoding, from the characters each candidate decodes to:
   - GB18030 (so GBK/GB2312, what Excel exports in Chinese) when nearly all characters are
     GB2312's, unless a Korean/Japanese/Big5 reading is clearly less messy;
   - Windows-1252 (so Latin-1) when the text reads as Western European words: accented
     letters inside words, never runs of three or more non-ASCII characters;
   - otherwise charset-normalizer's best match (Big5, Shift-JIS, Windows-1251 ...).
   Confidence is (1 - mess) x the share of plausible characters x (1 - 2^-(n+1)) for n
   non-ASCII characters seen: one `é` alone is a guess (0.75), a paragraph is not.
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
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from runlens.errors import InputError, UserError
from runlens.evidence import _records
from runlens.evidence._encoding import (
    BY_BOM,
    BY_DETECTOR,
    BY_GB2312,
    BY_NUL_PATTERN,
    BY_UTF8,
    BY_WESTERN,
    CP1252,
    DELIMITERS,
    GB18030,
    GIVEN,
    SNIFF_BYTES,
    UTF8,
    UTF8_SIG,
    DecodeFailure,
    TextFormat,
    cannot_read,
    check_encoding_name,
    first_error,
)

T = TypeVar("T")

#: Below this confidence no encoding is convincing and the file is refused.
MIN_CONFIDENCE = 0.5
#: Share of GB2312 characters among the non-ASCII ones for a GB18030 reading.
GB2312_SHARE = 0.95
#: Share of plausible non-ASCII characters for a Windows-1252 reading.
WESTERN_SHARE = 0.9
#: How much messier than the least messy other CJK reading GB18030 may be and still win.
GB_MESS_MARGIN = 0.05
#: Share of control characters from which a decoded file is binary data, not text (random
#: bytes give 10-25%; text with a few stray controls well under 5%).
BINARY_SHARE = 0.1
#: Full readings of a file tried before its decoding error is reported.
_MAX_READINGS = 3
#: NUL bytes, all at one parity, that a UTF-16 reading without a byte-order mark needs at least.
_MIN_WIDE_NULS = 8
#: Characters of a reading the mess measure looks at.
_MESS_CHARS = 20_000

# Longest first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, UTF8_SIG),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SPREADSHEET_HINT = ": export it as CSV first"
_WORKBOOK_HINT = ": save it as an .xlsx workbook or export it as CSV"
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "a legacy Office file (an .xls workbook or .doc document)" + _SPREADSHEET_HINT,
    ),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"(\xb5/\xfd", "a Zstandard-compressed file"),
    (b"7z\xbc\xaf'\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x7fELF", "an ELF executable"),
)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_ZIP_KINDS: tuple[tuple[bytes, str], ...] = (
    # A readable .xlsx never gets here (it has xl/workbook.xml): this is an .xlsb or a part.
    (b"xl/", "an Excel workbook in a form RunLens cannot read (not .xlsx)" + _WORKBOOK_HINT),
    (
        b"application/vnd.oasis.opendocument.spreadsheet",
        "an OpenDocument spreadsheet (.ods, a ZIP archive)" + _SPREADSHEET_HINT,
    ),
    (b"word/", "a Word document (.docx, a ZIP archive)"),
    (b"ppt/", "a PowerPoint presentation (.pptx, a ZIP archive)"),
)
#: C0 controls other than TAB, LF, VT, FF, CR; DEL; C1 controls.
_CONTROLS = {code: None for code in (*range(0, 9), *range(14, 32), *range(0x7F, 0xA0))}
_HIGH_BYTES = bytes(range(0x80, 0x100))
_LOW_CONTROL_BYTES = bytes((*range(0, 9), *range(14, 32)))
#: Marks that sit inside Western words: apostrophes, the Catalan middle dot, dashes.
_IN_WORD_MARKS = frozenset("’‘´`·–—-")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_NON_ASCII_WORD = re.compile(r"[^\x00-\x7f\s]+")
#: Detector names for encodings RunLens reads with a superset codec instead.
_SUPERSETS = {"gbk": GB18030, "gb2312": GB18030, "gb18030": GB18030}
#: Detector matches never taken: wide encodings (step 3 decides those), UTF-8, 7-bit codecs.
_NOT_PROPOSED = ("utf_16", "utf_32", "utf_8", "utf_7", "ascii", "hz", "iso2022")
_HALFWIDTH_KANA = dict.fromkeys(range(0xFF61, 0xFFA0))
#: Single-byte code pages asked about one by one when the detector finds nothing plausible.
_CODE_PAGES = (
    "cp1250",
    "cp1251",
    "koi8_r",
    "koi8_u",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "iso8859_2",
    "iso8859_5",
    "iso8859_7",
    "iso8859_15",
    "cp850",
    "mac_roman",
)
_CJK_RIVALS = ("big5", "cp950", "cp932", "shift_jis", "euc_jp", "euc_jis", "cp949", "euc_kr")


@dataclass(frozen=True, slots=True)
class _Sample:
    """Bytes of the file from `offset`; `first`/`last`: whether they start/end the file."""

    offset: int
    data: bytes
    first: bool
    last: bool

    def lines(self) -> tuple[bytes, int, bool]:
        """The sample cut to whole lines: (bytes, their file offset, whether they end the
        file or a line). For ASCII-compatible encodings only (a newline is a newline)."""
        data, offset = self.data, self.offset
        if not self.first:
            newline = data.find(b"\n")
            if newline < 0:
                return b"", offset, True
            data, offset = data[newline + 1 :], offset + newline + 1
        if not self.last:
            newline = data.rfind(b"\n")
            if newline < 0:
                return data, offset, False
            data = data[: newline + 1]
        return data, offset, True


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


def _utf8_stats(samples: Sequence[_Sample]) -> tuple[int, int, int | None]:
    """(valid non-ASCII characters, invalid byte sequences, offset of the first invalid one)
    over the samples decoded as UTF-8."""
    good = bad = 0
    first_bad: int | None = None
    for sample in samples:
        data, offset, whole = sample.lines()
        try:
            text = codecs.getincrementaldecoder(UTF8)().decode(data, final=whole)
        except UnicodeDecodeError as error:
            if first_bad is None:
                first_bad = offset + error.start
            text = data.decode(UTF8, "replace")
            invalid = text.count("\ufffd")
            bad += invalid
            good += _non_ascii(text) - invalid
        else:
            good += _non_ascii(text)
    return good, bad, first_bad


def _legacy(samples: Sequence[_Sample], exclude: Iterable[str] = ()) -> TextFormat | None:
    """The best legacy (single- or double-byte) encoding for the samples, or None."""
    excluded = set(exclude)
    detected: list[_Match] | None = None

    def matches() -> list[_Match]:
        nonlocal detected
        if detected is None:
            detected = _detector_matches(samples)
        return detected

    if GB18030 not in excluded:
        text = _decode_samples(samples, GB18030)
        if text is not None:
            share, count = _gb2312_share(text)
            if count and share >= GB2312_SHARE:
                mess = _mess(text)
                rivals = [m.chaos for m in matches() if m.encoding.startswith(_CJK_RIVALS)]
                if not rivals or mess <= min(rivals) + GB_MESS_MARGIN:
                    confidence = (1 - mess) * share * _weight(count)
                    return TextFormat(GB18030, round(confidence, 3), BY_GB2312)
    if CP1252 not in excluded:
        text = _decode_samples(samples, CP1252)
        if text is not None:
            share, count = _western_share(text)
            if count and share >= WESTERN_SHARE:
                return TextFormat(CP1252, round(share * _weight(count), 3), BY_WESTERN)
    proposed = _first_plausible(samples, matches(), excluded)
    if proposed is None:
        # The detector stops early when one reading looks clean; ask about the common
        # single-byte code pages one by one (KOI8-R text looks clean as half-width katakana).
        proposed = _first_plausible(samples, _detector_matches(samples, _CODE_PAGES), excluded)
    return proposed


def _first_plausible(
    samples: Sequence[_Sample], matches: Sequence[_Match], excluded: set[str]
) -> TextFormat | None:
    for match in matches:
        encoding = _codec_name(match)
        if encoding in excluded or encoding == CP1252:
            continue  # Windows-1252 is read only as Western European text (above)
        text = _decode_samples(samples, encoding)
        if text is None:
            continue
        share, count = _word_share(text) if _single_byte(encoding) else _cjk_share(text)
        if share < WESTERN_SHARE:
            continue  # mojibake: `ĺĄ˝` is what UTF-8 bytes look like in Windows-1250
        confidence = (1 - match.chaos) * share * _weight(count)
        return TextFormat(encoding, round(confidence, 3), BY_DETECTOR)
    return None


@dataclass(frozen=True, slots=True)
class _Match:
    encoding: str
    chaos: float
    alternatives: tuple[str, ...]


def _detector_matches(
    samples: Sequence[_Sample], only: Sequence[str] | None = None
) -> list[_Match]:
    """charset-normalizer's matches for the samples (among `only`, if given), best first,
    without the encodings it may propose that RunLens decides on otherwise (UTF-8/16/32,
    7-bit codecs)."""
    from charset_normalizer import from_bytes  # imported only for files that are not UTF-8

    data = b"\n".join(sample.lines()[0] for sample in samples)
    found = []
    for match in from_bytes(data, cp_isolation=list(only) if only else None):
        name = str(match.encoding)
        if name.startswith(_NOT_PROPOSED):
            continue
        found.append(_Match(name, float(match.chaos), tuple(match.could_be_from_charset)))
    return found


def _codec_name(match: _Match) -> str:
    """The codec to read a detector match with: GB18030 for the GB family, Windows-1252 when
    it decodes the samples identically, else the detector's own name, as Python knows it."""
    if CP1252 in match.alternatives:
        return CP1252
    name = codecs.lookup(match.encoding).name
    return _SUPERSETS.get(name, name)


# -- evidence from decoded text --------------------------------------------------------------


def _gb2312_share(text: str) -> tuple[float, int]:
    """(share of the non-ASCII characters GB18030 codes in GB2312's area or in four bytes,
    how many non-ASCII characters there are).

    GB2312's area (lead and trail bytes 0xA1-0xFE) holds the everyday characters and
    punctuation of Chinese text; four-byte codes (`81-FE 30-39 81-FE 30-39`) are GB18030's
    own and all but impossible by accident. What other encodings' bytes decode to in GB18030
    lies mostly in GBK's extension areas instead.
    """
    count = good = 0
    for char, times in Counter(text).items():
        if char <= "\x7f":
            continue
        count += times
        code = char.encode(GB18030)
        if len(code) == 4 or (len(code) == 2 and code[0] >= 0xA1 and code[1] >= 0xA1):
            good += times
    return (good / count if count else 0.0), count


def _western_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in Western European text, how many).

    Plausible: in a run of at most two non-ASCII characters, and a letter, an in-word mark,
    or a symbol that is not wedged between two letters (`by³a` is not a word).
    """
    count = plausible = 0
    for run in _NON_ASCII_RUN.finditer(text):
        chars = run.group()
        count += len(chars)
        if len(chars) > 2:
            continue
        start, end = run.start(), run.end()
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        for position, char in enumerate(chars):
            left = before if position == 0 else chars[position - 1]
            right = after if position == len(chars) - 1 else chars[position + 1]
            wedged = left.isalpha() and right.isalpha()
            if char.isalpha() or char in _IN_WORD_MARKS or not wedged:
                plausible += 1
    return (plausible / count if count else 0.0), count


def _word_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in alphabetic text, how many): any script,
    but words are letters (and combining marks) only, never switching from lower to upper
    case inside; other characters are not glued to letters in one run (`å„½`) nor wedged
    between two letters (`by³a`)."""
    count = plausible = 0
    for run in _NON_ASCII_WORD.finditer(text):
        chars = run.group()
        count += len(chars)
        kinds = {_letter(char) for char in chars if char not in _IN_WORD_MARKS}
        if len(kinds) > 1:
            continue  # letters and symbols glued together: mojibake
        start, end = run.start(), run.end()
        for position in range(start, end):
            char = text[position]
            left = text[position - 1] if position else " "
            right = text[position + 1] if position + 1 < len(text) else " "
            if _letter(char):
                plausible += not (left.islower() and char.isupper())
            elif char in _IN_WORD_MARKS or not (_letter(left) and _letter(right)):
                plausible += 1
    return (plausible / count if count else 0.0), count


def _cjk_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in a double-byte reading, how many): all but
    half-width katakana, which single-byte Cyrillic or Greek text turns into in Shift-JIS."""
    count = _non_ascii(text)
    if not count:
        return 0.0, 0
    halfwidth = len(text) - len(text.translate(_HALFWIDTH_KANA))
    return (count - halfwidth) / count, count


def _letter(char: str) -> bool:
    return char.isalpha() or unicodedata.category(char).startswith("M")


def _single_byte(encoding: str) -> bool:
    """Whether `encoding` maps each byte to one character (Windows-125x, ISO 8859, KOI8 ...)."""
    return len(_HIGH_BYTES.decode(encoding, "replace")) == len(_HIGH_BYTES)


def _mess(text: str) -> float:
    from charset_normalizer.md import mess_ratio

    return float(mess_ratio(text[:_MESS_CHARS], maximum_threshold=1.0))


def _non_ascii(text: str) -> int:
    return len(text) - len(text.encode("ascii", "ignore"))


def _weight(count: int) -> float:
    """How much `count` pieces of evidence are worth: 0.75 for one, nearly 1 from eight."""
    return 1 - 0.5 ** (count + 1)


def _implausible(text: str) -> int:
    """Characters no CSV text holds many of: control characters, private-use, unassigned
    and surrogate code points."""
    controls = len(text) - len(text.translate(_CONTROLS))
    others = sum(1 for char in text if char > "\x7f" and unicodedata.category(char) in _ODD)
    return controls + others


_ODD = frozenset({"Co", "Cn", "Cs"})


def _refuse_binary(source: str, text: str, head: bytes) -> None:
    """InputError when control characters abound in the decoded beginning of the file."""
    controls = len(text) - len(text.translate(_CONTROLS))
    if controls >= 8 and controls > BINARY_SHARE * len(text):
        example = next(char for char in text if ord(char) in _CONTROLS)
        raise InputError(
            f"{source}: looks like binary data, not CSV text ({controls} control characters "
            f"such as U+{ord(example):04X} in the first {len(head)} bytes)",
            file=source,
        )


# -- reading samples -------------------------------------------------------------------------


def _read_samples(path: Path, source: str) -> tuple[_Sample, ...]:
    """The first 64 KiB and, in a file over 192 KiB, 64 KiB from the middle and the end."""
    try:
        with path.open("rb") as stream:
            head = stream.read(SNIFF_BYTES)
            if len(head) < SNIFF_BYTES:
                return (_Sample(0, head, True, True),)
            rest = stream.read(2 * SNIFF_BYTES + 1)
            if len(rest) <= 2 * SNIFF_BYTES:
                return (_Sample(0, head + rest, True, True),)
            size = stream.seek(0, io.SEEK_END)
            middle_at = (size // 2) & ~3
            stream.seek(middle_at)
            middle = stream.read(SNIFF_BYTES)
            tail_at = (size - SNIFF_BYTES) & ~3
            stream.seek(tail_at)
            tail = stream.read()
    except OSError as error:
        raise cannot_read(source, error) from None
    return (
        _Sample(0, head, True, False),
        _Sample(middle_at, middle, False, False),
        _Sample(tail_at, tail, False, True),
    )


def _window(path: Path, source: str, offset: int) -> _Sample:
    """64 KiB of the file around `offset`."""
    start = max(offset - SNIFF_BYTES // 2, 0)
    try:
        with path.open("rb") as stream:
            stream.seek(start)
            data = stream.read(SNIFF_BYTES)
            last = not stream.read(1)
    except OSError as error:
        raise cannot_read(source, error) from None
    return _Sample(start, data, start == 0, last)


def _decode_samples(samples: Sequence[_Sample], encoding: str) -> str | None:
    """The samples decoded (strictly) in `encoding`, joined by newlines; None if one fails."""
    parts = []
    for sample in samples:
        data, _, whole = sample.lines()
        try:
            parts.append(codecs.getincrementaldecoder(encoding)().decode(data, final=whole))
        except UnicodeDecodeError:
            return None
    return "\n".join(parts)


def _head_text(head: _Sample, encoding: str) -> str:
    """The beginning of the file as text, undecodable bytes replaced (to find the delimiter
    and to judge whether it is text at all)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    return str(decoder.decode(head.data, final=head.last))


def _byte_at(samples: Sequence[_Sample], offset: int) -> int:
    for sample in samples:
        if sample.offset <= offset < sample.offset + len(sample.data):
            return sample.data[offset - sample.offset]
    return 0


def _signature(head: bytes, tail: bytes) -> str | None:
    """What a non-text file looks like, from its first bytes (and last, for Parquet)."""
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            return what
    if head.startswith(_ZIP_MAGIC):
        for marker, what in _ZIP_KINDS:
            if marker in head:
                return what
        return "a ZIP archive"
    if head.startswith(b"PAR1") and tail.endswith(b"PAR1"):
        return "a Parquet file"
    if head.startswith(b"BZh") and head[4:10] == b"1AY&SY":
        return "a bzip2-compressed file"
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
