"""Hostile .xlsx files, generated in a second or two, never committed.

`bomb(...)` writes a workbook whose worksheet part is a long run of one repeated unit (a
single cell of a billion characters, or millions of rows). The deflate stream is built from
one compressed segment repeated: after a full flush a deflate compressor starts afresh, so
compressing the same unit again gives the same bytes, and a 4 GiB part costs one segment's
compression and a CRC pass. The archive is written by hand so that the sizes its central
directory declares can be the true ones or lies.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

_MIB = 1024 * 1024

_XML = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_OOXML = b"application/vnd.openxmlformats-"
_SML = _OOXML + b"officedocument.spreadsheetml."
_RELS = b"http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_RELS = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"

CONTENT_TYPES = (
    _XML + b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels" ContentType="' + _OOXML + b'package.relationships+xml"/>'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/xl/workbook.xml" ContentType="' + _SML + b'sheet.main+xml"/>'
    b'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="'
    + _SML
    + b'worksheet+xml"/></Types>'
)
ROOT_RELS = (
    _XML
    + b'<Relationships xmlns="'
    + _RELS
    + b'"><Relationship Id="rId1" Type="'
    + _DOC_RELS
    + b'/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
WORKBOOK = (
    _XML + b'<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    b'xmlns:r="' + _DOC_RELS + b'"><sheets><sheet name="Bomb" sheetId="1" r:id="rId1"/>'
    b"</sheets></workbook>"
)
WORKBOOK_RELS = (
    _XML
    + b'<Relationships xmlns="'
    + _RELS
    + b'"><Relationship Id="rId1" Type="'
    + _DOC_RELS
    + b'/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
)
SHEET_HEAD = (
    _XML
    + b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    b'<row r="1"><c r="A1" t="inlineStr"><is><t>feedback_id</t></is></c>'
    b'<c r="B1" t="inlineStr"><is><t>text</t></is></c></row>'
)
SHEET_TAIL = b"</sheetData></worksheet>"


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    deflated: bytes
    size: int
    crc: int


def deflated_part(name: str, data: bytes) -> Part:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    return Part(name, deflated, len(data), zlib.crc32(data))


def repeated_part(name: str, head: bytes, unit: bytes, count: int, tail: bytes) -> Part:
    """`head + unit * count + tail`, deflated without ever holding it whole."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    pieces = [compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)]
    segment = compressor.compress(unit) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(unit) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert segment == again, "a full flush restarts the compressor"
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(unit, crc)
    body = segment * (count - 2)
    closing = compressor.compress(tail) + compressor.flush()
    crc = zlib.crc32(tail, crc)
    size = len(head) + len(unit) * count + len(tail)
    return Part(name, pieces[0] + segment + again + body + closing, size, crc)


def write_zip(
    path: Path, parts: list[Part], *, declared_sizes: dict[str, int] | None = None
) -> Path:
    """A ZIP archive of deflated `parts`; `declared_sizes` overrides the inflated size the
    headers give for some parts (a lie)."""
    lies = declared_sizes or {}
    central = bytearray()
    with path.open("wb") as out:
        for part in parts:
            offset = out.tell()
            name = part.name.encode()
            size = lies.get(part.name, part.size)
            fields = (20, 0, 8, 0, 0x21, part.crc, len(part.deflated), size, len(name), 0)
            out.write(struct.pack("<4s5HL2L2H", b"PK\x03\x04", *fields) + name)
            out.write(part.deflated)
            central += struct.pack(
                "<4s6HL2L5H2L",
                b"PK\x01\x02",
                20,
                *fields,
                0,
                0,
                0,
                0,
                offset,
            )
            central += name
        start = out.tell()
        out.write(central)
        out.write(
            struct.pack(
                "<4s4H2LH", b"PK\x05\x06", 0, 0, len(parts), len(parts), len(central), start, 0
            )
        )
    return path


def frame(sheet: Part) -> list[Part]:
    """The parts of a one-sheet workbook around `sheet`."""
    return [
        deflated_part("[Content_Types].xml", CONTENT_TYPES),
        deflated_part("_rels/.rels", ROOT_RELS),
        deflated_part("xl/workbook.xml", WORKBOOK),
        deflated_part("xl/_rels/workbook.xml.rels", WORKBOOK_RELS),
        sheet,
    ]


def one_cell_bomb(path: Path, inflated: int, *, lie: bool = False) -> Path:
    """A workbook whose row 2 holds one cell of about `inflated` bytes of `A`."""
    unit = b"A" * _MIB
    head = (
        SHEET_HEAD
        + b'<row r="2"><c r="A2" t="inlineStr"><is><t>fb_1</t></is></c>'
        + b'<c r="B2" t="inlineStr"><is><t>'
    )
    tail = b"</t></is></c></row>" + SHEET_TAIL
    sheet = repeated_part("xl/worksheets/sheet1.xml", head, unit, inflated // _MIB, tail)
    return write_zip(path, frame(sheet), declared_sizes={sheet.name: 4096} if lie else None)


def many_rows_bomb(path: Path, inflated: int, *, lie: bool = False) -> Path:
    """A workbook of about `inflated` bytes of rows, each `fb` and a short text."""
    row = (
        b'<row><c t="inlineStr"><is><t>fb</t></is></c>'
        b'<c t="inlineStr"><is><t>slow</t></is></c></row>'
    )
    unit = row * (_MIB // len(row))
    sheet = repeated_part(
        "xl/worksheets/sheet1.xml", SHEET_HEAD, unit, inflated // len(unit), SHEET_TAIL
    )
    return write_zip(path, frame(sheet), declared_sizes={sheet.name: 4096} if lie else None)


def rows_workbook(path: Path, rows: int) -> Path:
    """A legitimate workbook of `rows` feedback rows (ids fb_000001...), written fast."""
    body = b"".join(
        b'<row><c t="inlineStr"><is><t>fb_%06d</t></is></c><c t="inlineStr"><is><t>'
        b"Exporting the weekly report takes three minutes (case %d)</t></is></c></row>"
        % (number, number)
        for number in range(1, rows + 1)
    )
    sheet = deflated_part("xl/worksheets/sheet1.xml", SHEET_HEAD + body + SHEET_TAIL)
    return write_zip(path, frame(sheet))
