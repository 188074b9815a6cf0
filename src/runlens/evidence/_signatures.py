"""What a file is when it is not CSV text: a file signature (an image, an archive, an
Office or PDF document ...), or decoded text in which control characters abound.

Steps 1 and 6 of choosing how to read a CSV file (`runlens.evidence._detect`).
"""

from __future__ import annotations

import unicodedata

from runlens.errors import InputError

#: Share of control characters from which a decoded file is binary data, not text (random
#: bytes give 10-25%; text with a few stray controls well under 5%).
BINARY_SHARE = 0.1
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
_LOW_CONTROL_BYTES = bytes((*range(0, 9), *range(14, 32)))
_ODD = frozenset({"Co", "Cn", "Cs"})


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


def _implausible(text: str) -> int:
    """Characters no CSV text holds many of: control characters, private-use, unassigned
    and surrogate code points."""
    controls = len(text) - len(text.translate(_CONTROLS))
    others = sum(1 for char in text if char > "\x7f" and unicodedata.category(char) in _ODD)
    return controls + others


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
