"""Samples of a file's bytes: the first 64 KiB and, in a larger file, 64 KiB from its
middle and its end (cut at newlines), or a window around one byte; and what they decode to.

The file is never read whole to choose how to read it (`runlens.evidence._detect`).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runlens.evidence._encoding import SNIFF_BYTES, UTF8, cannot_read


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


def _non_ascii(text: str) -> int:
    return len(text) - len(text.encode("ascii", "ignore"))
