"""Reading a CSV file's bytes: the format it is read in, and hashing the raw bytes on the way.

`TextFormat` is how a file is read: its encoding (a Python codec name), how sure RunLens is
of it (`confidence`, 0 to 1), how it was chosen (`method`) and the field delimiter. It is
chosen by `runlens.evidence._detect` from samples of the file, or given by the user
(`--encoding`). `open_text` decodes the file as a stream for the csv module while hashing its
raw bytes; `first_error` finds where a file stops decoding (a slow path, for errors only).
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runlens.errors import InputError, UserError

SNIFF_BYTES = 1 << 16
READ_CHUNK = 1 << 20
UTF8 = "utf-8"
UTF8_SIG = "utf-8-sig"
GB18030 = "gb18030"
CP1252 = "cp1252"
#: The field delimiters RunLens recognises, in order of preference (comma first).
DELIMITERS = (",", "\t", ";", "|")

# How an encoding was chosen (`TextFormat.method`, recorded in the index as
# `encoding_method`).
BY_BOM = "bom"  # a byte-order mark
BY_UTF8 = "utf-8"  # the samples decode as UTF-8 (plain ASCII included)
BY_NUL_PATTERN = "nul-pattern"  # UTF-16/32 without a mark: NUL bytes at every 2nd/4th place
BY_GB2312 = "gb2312-characters"  # decodes as GB18030 into GB2312's (everyday) characters
BY_WESTERN = "western-characters"  # decodes as Windows-1252 into Western European words
BY_DETECTOR = "charset-normalizer"  # the detector's best match
GIVEN = "given"  # named by the user (--encoding) or recorded in the index being checked

#: Codecs Python knows that are not character sets a CSV file is written in (escape syntaxes,
#: domain-name encodings, a codec that refuses everything, UTF-7's shifting base64).
_NOT_CHARSETS = frozenset(
    {"unicode-escape", "raw-unicode-escape", "utf-7", "idna", "punycode", "undefined", "charmap"}
)
#: Stateful encodings: a byte's meaning depends on escape sequences before it.
_STATEFUL_PREFIXES = ("iso2022", "hz", "utf-7")


@dataclass(frozen=True, slots=True)
class TextFormat:
    """How a CSV file is read: encoding, the confidence in it, how it was chosen, delimiter."""

    encoding: str
    confidence: float
    method: str
    delimiter: str = ","

    @property
    def detected(self) -> bool:
        """Chosen from samples by weighing evidence (so another reading may be tried)."""
        return self.method in (BY_UTF8, BY_GB2312, BY_WESTERN, BY_DETECTOR)

    def describe(self) -> str:
        """E.g. `cp1252 (western-characters, confidence 0.98)`."""
        return f"{self.encoding} ({self.method}, confidence {self.confidence:.2f})"

    def index_fields(self) -> dict[str, Any]:
        """The format as `EvidenceIndex` (and its file's header) records it."""
        return {
            "encoding": self.encoding,
            "encoding_confidence": self.confidence,
            "encoding_method": self.method,
            "delimiter": self.delimiter,
        }


def check_encoding_name(name: str) -> str:
    """The name Python's codecs know `name` by (`latin-1` -> `iso8859-1`).

    UserError naming it when there is no such codec, or when it is not a character set a CSV
    file can be written in (`rot13`, `base64`, `unicode_escape`, `idna`, `utf-7` ...).
    """
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        raise UserError(f"unknown encoding {name!r}") from None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        raise UserError(f"{name!r} is not a character encoding a CSV file can be written in")
    return info.name


def ascii_compatible(encoding: str) -> bool:
    """ASCII bytes mean ASCII characters wherever they are (UTF-8, GB18030, Windows-1252 ...;
    not UTF-16/32 or the stateful ISO-2022 family), so a file can be cut at any newline."""
    name = codecs.lookup(encoding).name
    if name.startswith(("utf-16", "utf-32", *_STATEFUL_PREFIXES)):
        return False
    try:
        return b'\x00\n\r,\t;|"'.decode(name) == '\x00\n\r,\t;|"'
    except (UnicodeDecodeError, LookupError):
        return False


def require_regular_file(path: Path, label: str = "input file") -> None:
    """UserError unless `path` is a regular file: says "is a directory" for a directory,
    "not found" for a path that does not exist."""
    if path.is_file():
        return
    if path.is_dir():
        raise UserError(f"{label} is a directory, not a file: {path}")
    if not path.exists():
        raise UserError(f"{label} not found: {path}")
    raise UserError(f"{label} is not a regular file: {path}")


def cannot_read(source: str, error: OSError) -> InputError:
    reason = error.strerror or type(error).__name__
    return InputError(f"{source}: cannot be read ({reason})", file=source)


def file_sha256(path: Path) -> str:
    """SHA-256 (lowercase hex) of the file's raw bytes, read in large chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def first_error(path: Path, encoding: str, *, near: int = 0) -> tuple[int, int] | None:
    """Byte offset and value of the first byte `encoding` cannot decode; None if none.

    `near`: the error is known to lie after about this offset (how far a failed read got),
    so an ASCII-compatible encoding starts decoding at the first newline after
    `near - 2 MiB` instead of at the start of the file. Slow; for errors only.
    """
    if codecs.lookup(encoding).name == UTF8_SIG:
        encoding = UTF8  # offsets count from the start of the file, the mark included
    start = 0
    if near > 2 * READ_CHUNK and ascii_compatible(encoding):
        start = _newline_after(path, near - 2 * READ_CHUNK)
    found = _first_error_from(path, encoding, start)
    if found is None and start:
        found = _first_error_from(path, encoding, 0)  # a line longer than the window
    return found


def _newline_after(path: Path, offset: int) -> int:
    with path.open("rb") as stream:
        stream.seek(offset)
        position = offset
        while chunk := stream.read(READ_CHUNK):
            newline = chunk.find(b"\n")
            if newline >= 0:
                return position + newline + 1
            position += len(chunk)
    return 0


def _first_error_from(path: Path, encoding: str, start: int) -> tuple[int, int] | None:
    decoder = codecs.getincrementaldecoder(encoding)()
    consumed = start
    with path.open("rb") as stream:
        stream.seek(start)
        while True:
            chunk = stream.read(READ_CHUNK)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:
                # error.start counts from the bytes the decoder still held back.
                offset = max(consumed - pending + error.start, 0)
                return offset, error.object[error.start]
            if not chunk:
                return None
            consumed += len(chunk)


class DecodeFailure(Exception):
    """The file stopped decoding partway through a read; `bytes_read` is how far it got."""

    def __init__(self, bytes_read: int) -> None:
        super().__init__(f"undecodable after {bytes_read} bytes")
        self.bytes_read = bytes_read


class BackgroundHash:
    """A SHA-256 fed from a thread of its own, so hashing a large file overlaps with the
    work on what was read (hashlib lets go of the GIL while it hashes a large buffer).

    `update` queues the bytes (in order; at most `_QUEUED` buffers wait, so memory stays
    bounded); `hexdigest` waits for the queue to be hashed; `close` stops the thread (after
    `hexdigest`, or when the reading is abandoned). With `threaded=False` it hashes in the
    caller's thread (small inputs: a thread costs more than it saves).
    """

    __slots__ = ("_digest", "_queue", "_thread")

    def __init__(self, *, threaded: bool) -> None:
        self._digest = hashlib.sha256()
        self._queue: queue.Queue[bytes | None] | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._queue = queue.Queue(_QUEUED)
            self._thread = threading.Thread(target=self._run, name="runlens-sha256", daemon=True)
            self._thread.start()

    def update(self, data: bytes) -> None:
        if self._queue is None:
            self._digest.update(data)
        else:
            self._queue.put(data)

    def _run(self) -> None:
        assert self._queue is not None
        while (data := self._queue.get()) is not None:
            self._digest.update(data)

    def close(self) -> None:
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = self._queue = None

    def hexdigest(self) -> str:
        self.close()
        return str(self._digest.hexdigest())


#: Buffers a `BackgroundHash` lets wait; files from this size on are hashed in a thread.
_QUEUED = 4
THREADED_HASH_BYTES = 8 * READ_CHUNK


@dataclass(slots=True)
class RawProbe:
    """What the raw reader saw: the running SHA-256 and the bytes read."""

    digest: BackgroundHash = field(default_factory=lambda: BackgroundHash(threaded=False))
    bytes_read: int = 0

    @property
    def hexdigest(self) -> str:
        return self.digest.hexdigest()


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
        probe = self._probe
        if size:
            probe.digest.update(data)
        probe.bytes_read += size
        return size


@contextmanager
def open_text(path: Path, encoding: str) -> Iterator[tuple[io.TextIOWrapper, RawProbe]]:
    """Open `path` as text for the csv module (newline=''), hashing its raw bytes meanwhile.

    The probe's digest covers the whole file only once the stream has been read to the end.
    A byte that does not decode raises `DecodeFailure` (how far the read got) out of the block.
    """
    raw = io.FileIO(path, "r")
    # A large file is hashed in a thread, beside the decoding and parsing of what was read.
    hasher = BackgroundHash(threaded=os.fstat(raw.fileno()).st_size >= THREADED_HASH_BYTES)
    probe = RawProbe(hasher)
    try:
        buffered = io.BufferedReader(_HashingReader(raw, probe), buffer_size=READ_CHUNK)
        text = io.TextIOWrapper(buffered, encoding=encoding, errors="strict", newline="")
        # Decode in large chunks: one readinto (and hash update) per MiB instead of per 8 KiB
        # (and the allocator, seeing buffers that large, keeps them instead of returning and
        # faulting in memory every batch).
        text._CHUNK_SIZE = READ_CHUNK  # type: ignore[attr-defined]
        with text:
            try:
                yield text, probe
            except UnicodeDecodeError:
                raise DecodeFailure(probe.bytes_read) from None
    finally:
        hasher.close()
        raw.close()
