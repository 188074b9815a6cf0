"""Reading a provider's response body: capped in size, decompressed here, parsed strictly.

A provider's body is untrusted input, read under three rules:

- Size. At most `limit` bytes are kept (16 MiB unless `RUNLENS_MODEL_MAX_RESPONSE_BYTES` says
  otherwise), counted as received and again after decompression, so neither an endless
  chunked body, a `Content-Length` announcing gigabytes, nor a gzip bomb can grow the process.
  Reading stops at the limit; the connection is dropped rather than drained.
- Encoding. `gzip` and `deflate` are undone here, not by httpx, because httpx inflates each
  network chunk without bounding the output (64 KiB of deflate can inflate to 64 MiB at once).
  Here every chunk inflates into what is left of the limit and no further. Other codings are
  passed through untouched, as httpx does; the error for the body that results names them.
- Parsing. A success body must be UTF-8 JSON whose top level is an object. Anything else (an
  empty body, bytes that are not UTF-8, an HTML page, text that is not JSON, JSON nested past
  the parser's depth, a JSON array) is a `BodyError` naming what arrived: its first bytes,
  escaped, so a control character or a stray byte shows as what it is.

`BodyError` carries the two halves of a `ProviderCallError` message (`_wire_errors` builds that,
with the provider's name and the server's address); nothing here knows about providers.
`optional_str` / `optional_int` read one field of a parsed body, whatever type it came as.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the providers that read bodies import it; their settings need not
    import httpx

#: Default cap on a response body, as received and after decompression.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024

#: How much of a body an error message quotes.
_EXCERPT_BYTES = 120

_HTML_START = re.compile(rb"\s*<(!doctype\s+html|html|head|body)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


class BodyError(Exception):
    """A body that cannot be used: `failure` says what the server did (`sent an HTML page ...`,
    to follow its address), `detail` shows what arrived."""

    def __init__(self, failure: str, detail: str = "") -> None:
        super().__init__(failure)
        self.failure = failure
        self.detail = detail

    def describe(self, where: str) -> str:
        """The failure as a sentence about the server at `where`."""
        return f"{where} {self.failure}"


class BodyTooLarge(BodyError):
    """A body past the limit: `failure` is `response body exceeds 16 MiB`."""

    def __init__(self, limit: int, seen: str) -> None:
        super().__init__(
            f"response body exceeds {format_size(limit)}",
            "RUNLENS_MODEL_MAX_RESPONSE_BYTES sets the limit, in bytes",
        )
        self.seen = seen

    def describe(self, where: str) -> str:
        return f"{self.failure} (from {where}: {self.seen}; not retried)"


def format_size(size: int) -> str:
    """`16 MiB`, `64 KiB` or `1000 bytes`: a limit as people write it."""
    for unit, name in ((1024 * 1024, "MiB"), (1024, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


async def read_body(response: httpx.Response, limit: int, *, truncate: bool = False) -> bytes:
    """The body of a streamed `response`, decompressed, at most `limit` bytes.

    Past the limit, `truncate=True` returns the first `limit` bytes (enough for an error
    message); otherwise BodyTooLarge is raised as soon as the limit is crossed.
    """
    declared = _content_length(response)
    if declared is not None and declared > limit and not truncate:
        raise BodyTooLarge(limit, f"Content-Length: {declared}")
    decoder = _Decoder(response.headers.get_list("content-encoding", split_commas=True))
    body = bytearray()
    received = 0
    try:
        async for chunk in response.aiter_raw():
            received += len(chunk)
            for piece in decoder.decode(chunk):
                body += piece
                if len(body) > limit or received > limit:
                    if truncate:
                        return bytes(body[:limit])
                    raise BodyTooLarge(limit, decoder.progress(received, len(body)))
        body += decoder.flush()
    except zlib.error as exc:
        raise BodyError(
            f"sent a body that could not be decompressed ({decoder.name}: {exc})",
            f"inflated so far: {excerpt(bytes(body))}" if body else "",
        ) from exc
    if len(body) > limit:
        if truncate:
            return bytes(body[:limit])
        raise BodyTooLarge(limit, decoder.progress(received, len(body)))
    return bytes(body)


def _content_length(response: httpx.Response) -> int | None:
    value = response.headers.get("content-length", "")
    return int(value) if value.isascii() and value.isdigit() else None


#: Inflated output is produced this much at a time, so the limit is checked between pieces.
_PIECE_BYTES = 256 * 1024


class _Decoder:
    """Undoes a `Content-Encoding` of gzip or deflate without unbounded output.

    `decode` yields the inflated bytes of one chunk `_PIECE_BYTES` at a time and inflates the
    next piece only when asked, so a reader that stops at its limit stops the inflating too.
    A chain of codings (which no provider sends) is refused rather than half undone.
    """

    def __init__(self, codings: list[str]) -> None:
        names = [coding.strip().lower() for coding in codings if coding.strip()]
        zipped = [name for name in names if name in _ZLIB_CODINGS]
        if len(zipped) > 1:
            raise BodyError(
                f"sent a body with Content-Encoding {', '.join(zipped[:3])}, which is "
                "not supported (one of gzip or deflate is)"
            )
        self.name = zipped[0] if zipped else "identity"
        self._inflate = (
            None if not zipped else zlib.decompressobj(_ZLIB_CODINGS[self.name] or zlib.MAX_WBITS)
        )
        self._started = False

    def progress(self, received: int, decoded: int) -> str:
        """How far reading got, for the message when it stops at the limit."""
        if self._inflate is None:
            return f"{received} bytes read"
        return f"{decoded} bytes inflated from {received} bytes of {self.name}"

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self._inflate is None:
            yield data
            return
        while data:
            out = self._inflate_piece(data)
            tail = self._inflate.unconsumed_tail
            if out:
                yield out
            if not out and tail == data:  # no progress: cannot happen, but never spin
                return
            data = tail

    def _inflate_piece(self, data: bytes) -> bytes:
        assert self._inflate is not None
        try:
            out = self._inflate.decompress(data, _PIECE_BYTES)
        except zlib.error:
            # `deflate` should be zlib-wrapped (RFC 9110), but raw deflate is common too.
            if self._started or self.name != "deflate":
                raise
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._inflate.decompress(data, _PIECE_BYTES)
        self._started = True
        return out

    def flush(self) -> bytes:
        """What the inflater still holds once all input is in (a few hundred bytes at most:
        `decode` consumed every input byte)."""
        if self._inflate is None or not self._started:
            return b""
        return self._inflate.flush()


_ZLIB_CODINGS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": 0}


# --- parsing -----------------------------------------------------------------------------------


def _finite_or_none(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def loads(text: str, *, strict_numbers: bool = False) -> Any:
    """JSON as RFC 8259 has it: `NaN`, `Infinity` and numbers past a double's range are not
    numbers. They become null (`strict_numbers=False`, for a response body, where they can
    only be fields nobody reads) or a ValueError (`strict_numbers=True`, for tool arguments,
    which go back to the model as a tool error instead).

    Raises ValueError (not JSON) or RecursionError (nested past the parser's depth).
    """
    parse_constant: Callable[[str], Any] = (
        _reject_constant if strict_numbers else (lambda _name: None)
    )
    parse_float: Callable[[str], Any] = _finite_or_none
    if strict_numbers:
        parse_float = _strict_float
    return json.loads(text, parse_constant=parse_constant, parse_float=parse_float)


def _strict_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is out of the range of a JSON number")
    return number


def parse_object(body: bytes, *, context: str) -> dict[str, Any]:
    """The JSON object in a success body, or a BodyError saying what arrived instead.

    `context` is e.g. `HTTP 200, application/json`, quoted in every message.
    """
    if not body.strip():
        raise BodyError(f"sent an empty response ({context}; expected a JSON object)")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(
            f"sent a response that is not valid UTF-8 (byte 0x{body[exc.start]:02x} at offset "
            f"{exc.start} of {len(body)}; {context})",
            f"starts {excerpt(body)}",
        ) from exc
    if _HTML_START.match(body):
        raise BodyError(
            f"sent an HTML page, not JSON ({context}; is the base URL right?)", _html_detail(text)
        )
    try:
        payload = loads(text.removeprefix("\ufeff"))
    except RecursionError as exc:
        raise BodyError(
            f"sent JSON nested too deeply to read ({context})", f"starts {excerpt(body)}"
        ) from exc
    except ValueError as exc:
        raise BodyError(
            f"sent a response that is not JSON ({context}; {_reason(exc)}; "
            "expected a JSON object: is the base URL right?)",
            f"starts {excerpt(body)}",
        ) from exc
    if not isinstance(payload, dict):
        raise BodyError(
            f"sent JSON that is not an object ({json_type(payload)}; {context}; "
            "expected a JSON object)",
            f"starts {excerpt(body)}",
        )
    return payload


def _reason(error: ValueError) -> str:
    # "Expecting value: line 1 column 1 (char 0)": short enough and says where.
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def _html_detail(text: str) -> str:
    title = _TITLE.search(text[:65536])
    name = " ".join(title.group(1).split())[:120] if title else ""
    named = f"title {json.dumps(name, ensure_ascii=False)}, " if name else ""
    return f"{named}starts {excerpt(text.encode())}"


def excerpt(body: bytes, size: int = _EXCERPT_BYTES) -> str:
    """The first `size` bytes of `body` as a quoted, escaped string (`"<html>\\n..."`).

    Control characters and quotes are escaped as JSON does, bytes that are not UTF-8 as
    `\\xff`; printable non-ASCII text stays readable. A cut body ends in `...` and its size.
    """
    # Incremental, so a character cut in two at `size` is left out rather than shown as bytes.
    decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
    head = decoder.decode(body[:size], final=len(body) <= size)
    quoted = json.dumps(head, ensure_ascii=False).replace("\\\\x", "\\x")
    return quoted if len(body) <= size else f"{quoted}... ({len(body)} bytes)"


def json_type(value: Any) -> str:
    """`an array`, `a string`, `null` ...: a JSON value's type as a message says it."""
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if isinstance(value, dict):
        return "an object"
    return "a number" if isinstance(value, int | float) else type(value).__name__


# --- fields of a parsed body -------------------------------------------------------------------


def optional_str(value: Any) -> str | None:
    """A string field of a response, or None when absent or of another type."""
    return value if isinstance(value, str) else None


#: Token counts outside this range are not counts (and would not fit a 64-bit record field).
_MAX_TOKEN_COUNT = 2**53


def optional_int(value: Any) -> int | None:
    """A token count from a usage block, or None when absent, not an integer or absurd."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if 0 <= value <= _MAX_TOKEN_COUNT else None
