"""Reading a CSV file's bytes: choosing the encoding, hashing the raw bytes on the way.

Detection: a byte-order mark decides (UTF-8, UTF-16, UTF-32); otherwise the file is UTF-8 if
it decodes as UTF-8, else GB18030 (a superset of GBK and GB2312, so GBK files read too). The
first `SNIFF_BYTES` are checked up front so a GBK file costs no wasted UTF-8 pass; a file that
turns out not to be UTF-8 further on is read again as GB18030.
"""

from __future__ import annotations

import codecs
import hashlib
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runlens.errors import InputError

SNIFF_BYTES = 1 << 16
READ_CHUNK = 1 << 20
UTF8 = "utf-8"
UTF8_SIG = "utf-8-sig"
GB18030 = "gb18030"

# Longest first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, UTF8_SIG),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: Encodings in which a NUL byte in the file is exactly a NUL character in the text.
ASCII_COMPATIBLE = frozenset({UTF8, UTF8_SIG, GB18030})


def file_sha256(path: Path) -> str:
    """SHA-256 (lowercase hex) of the file's raw bytes, read in large chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def candidate_encodings(path: Path, source: str) -> tuple[str, ...]:
    """Look at the file's first bytes and decide which encodings to try, in order.

    InputError if the file cannot be opened at all.
    """
    try:
        with path.open("rb") as stream:
            head = stream.read(SNIFF_BYTES)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InputError(f"{source}: cannot be read ({reason})", file=source) from None
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return (encoding,)
    try:
        # final=False: a multi-byte character cut off at the end of the sample is not an error.
        codecs.getincrementaldecoder(UTF8)().decode(head, final=False)
    except UnicodeDecodeError:
        return (GB18030,)
    return (UTF8, GB18030)


def first_error(path: Path, encoding: str) -> tuple[int, int]:
    """Byte offset and value of the first byte `encoding` cannot decode (slow; errors only).

    Returns `(file size, 0)` when the whole file decodes.
    """
    decoder = codecs.getincrementaldecoder(encoding)()
    consumed = 0
    with path.open("rb") as stream:
        while True:
            chunk = stream.read(READ_CHUNK)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:
                # error.start counts from the bytes the decoder still held back.
                offset = consumed - pending + error.start
                return offset, error.object[error.start]
            if not chunk:
                return consumed, 0
            consumed += len(chunk)


def undecodable(source: str, path: Path, encodings: tuple[str, ...]) -> InputError:
    """The error for a file that none of the candidate `encodings` could read."""
    if GB18030 in encodings:
        what = "not UTF-8 or GB18030 text"
        offset, value = first_error(path, UTF8)
    else:
        # Plain UTF-8 for a UTF-8 BOM: utf-8-sig would count offsets from after the mark.
        codec = UTF8 if encodings[0] == UTF8_SIG else encodings[0]
        what = f"not {codec.upper()} text despite its byte-order mark"
        offset, value = first_error(path, codec)
    return InputError(
        f"{source}: {what} (undecodable byte 0x{value:02x} at byte offset {offset})",
        file=source,
        byte_offset=offset,
    )


@dataclass(slots=True)
class RawProbe:
    """What the raw reader saw: the running SHA-256 and whether any NUL byte went by."""

    digest: Any = field(default_factory=hashlib.sha256)
    nul_seen: bool = False

    @property
    def hexdigest(self) -> str:
        return str(self.digest.hexdigest())


class _HashingReader(io.RawIOBase):
    """A raw stream that hashes every byte read through it (one update per large chunk)."""

    def __init__(self, raw: io.FileIO, probe: RawProbe) -> None:
        self._raw = raw
        self._probe = probe

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        size = len(data)
        buffer[:size] = data
        self._probe.digest.update(data)
        if not self._probe.nul_seen and b"\x00" in data:
            self._probe.nul_seen = True
        return size


@contextmanager
def open_text(path: Path, encoding: str) -> Iterator[tuple[io.TextIOWrapper, RawProbe]]:
    """Open `path` as text for the csv module (newline=''), hashing its raw bytes meanwhile.

    The probe's digest covers the whole file only once the stream has been read to the end.
    """
    probe = RawProbe()
    raw = io.FileIO(path, "r")
    try:
        buffered = io.BufferedReader(_HashingReader(raw, probe), buffer_size=READ_CHUNK)
        text = io.TextIOWrapper(buffered, encoding=encoding, errors="strict", newline="")
        # Decode in large chunks: one readinto (and hash update) per MiB instead of per 8 KiB.
        text._CHUNK_SIZE = READ_CHUNK  # type: ignore[attr-defined]
        with text:
            yield text, probe
    finally:
        raw.close()
