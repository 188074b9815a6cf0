"""A real, scripted HTTP server on 127.0.0.1 for provider and end-to-end tests.

    with FaultServer() as server:                       # or the `fault_server` fixture
        server.enqueue(
            OpenAIWire.error(429, "slow down", retry_after="2"),
            OpenAIWire.tool_calls(WireCall("read_feedback_csv", {"offset": 0})),
            hang(5.0),                                   # longer than the client's timeout
            OpenAIWire.text("Done."),
        )
        model = OpenAIModel("m", base_url=OpenAIWire.base_url(server), timeout=0.5)
        ...
        server.requests[0].json["tools"]                 # what the client sent

Every request, to any path, takes the next scripted `Reply` and is recorded (method, path,
headers, body). When the script has run out the server answers 418 with a message saying
so, which providers treat as not retryable, so a test that under-scripts fails fast and
clearly. `OpenAIWire` and `AnthropicWire` build replies in the Chat Completions and Messages
wire formats; `hang`, `disconnect` and `garbage` inject transport faults, and `endless_body`,
`gzip_bomb`, `raw_response` and `Reply(content_length=...)` hostile ones (bodies without end,
decompression bombs, malformed HTTP, a `Content-Length` that lies).

Stdlib only (`http.server.ThreadingHTTPServer` in a background thread), so any test can use
it without extra dependencies; it does not import RunLens either.
"""

from __future__ import annotations

import functools
import json
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON_TYPE = "application/json"
#: `Reply.content_length` default: the body's real length.
ACTUAL = "actual"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `delay` waits before answering (a hang when it exceeds the
    client's timeout); `disconnect` closes the connection without answering at all.

    Hostile variants: `chunks` streams the body chunked from a fresh iterator, until it ends,
    the client hangs up or the server closes (an endless body); `content_length` is sent
    verbatim (a lie), or not at all when None (the body then ends when the connection does);
    `raw` is written to the socket instead of a response, which then closes.
    """

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    disconnect: bool = False
    chunks: Callable[[], Iterator[bytes]] | None = None
    content_length: str | None = ACTUAL
    raw: bytes | None = None

    @classmethod
    def json(
        cls,
        payload: Any,
        *,
        status: int = 200,
        headers: tuple[tuple[str, str], ...] = (),
        delay: float = 0.0,
    ) -> Reply:
        try:
            body = json.dumps(payload, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate: sent as its `\ud800` escape
            body = json.dumps(payload).encode()
        return cls(status, body, (("Content-Type", JSON_TYPE), *headers), delay)


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it. Header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.raw_body)
        except ValueError:
            return None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Say nothing for `seconds` (cut short when the server closes), then answer `then`."""
    after = then or Reply.json({"error": {"message": "fault server: hang ended"}}, status=504)
    return Reply(after.status, after.body, after.headers, delay=seconds)


def disconnect() -> Reply:
    """Read the request, then close the connection without a response."""
    return Reply(disconnect=True)


def garbage(body: bytes = b"<html><body>Welcome</body></html>", status: int = 200) -> Reply:
    """A body that is not JSON, as a wrong base URL pointing at a web page would give."""
    return Reply(status, body, (("Content-Type", "text/html"),))


def endless_body(
    chunk: bytes = b"0, " * 21845, *, start: bytes = b'{"choices": [', status: int = 200
) -> Reply:
    """A chunked JSON body that never ends: `start`, then `chunk` (64 KiB) again and again."""

    def forever() -> Iterator[bytes]:
        yield start
        while True:
            yield chunk

    return Reply(status, headers=(("Content-Type", JSON_TYPE),), chunks=forever)


@functools.cache
def _bomb(decoded_size: int, encoding: str) -> bytes:
    """`{"choices": [], "pad": "<spaces>"}` of `decoded_size` bytes, compressed in a blink.

    After a full flush deflate starts afresh, so every 1 MiB block of spaces compresses to
    the same ~1 KiB segment: compressed once, repeated. The container (gzip or zlib header
    and checksum) is written by hand around the raw deflate stream, so the body is valid.
    """
    block = b" " * (1 << 20)
    start, end = b'{"choices": [], "pad": "', b'"}'
    blocks = max(decoded_size - len(start) - len(end), 0) >> 20
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = packer.compress(start) + packer.flush(zlib.Z_FULL_FLUSH)
    segment = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) if blocks else b""
    deflated = b"".join([head, segment * blocks, packer.compress(end), packer.flush()])
    if encoding == "raw-deflate":
        return deflated
    gzip = encoding == "gzip"
    checksum = zlib.crc32 if gzip else zlib.adler32
    running = checksum(start, 0 if gzip else 1)
    for _ in range(blocks):
        running = checksum(block, running)
    running = checksum(end, running)
    total = len(start) + len(end) + blocks * len(block)
    if gzip:
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        trailer = running.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little")
        return header + deflated + trailer
    return b"\x78\xda" + deflated + running.to_bytes(4, "big")


def gzip_bomb(decoded_size: int = 1 << 30, *, encoding: str = "gzip") -> Reply:
    """A small body (about 1 KiB per MiB) inflating to about `decoded_size` bytes of JSON.

    `encoding` is `gzip`, `deflate` (zlib-wrapped) or `raw-deflate` (sent as `deflate`).
    """
    headers = (("Content-Type", JSON_TYPE), ("Content-Encoding", encoding.removeprefix("raw-")))
    return Reply(200, _bomb(decoded_size, encoding), headers)


def compressed(reply: Reply, encoding: str = "gzip") -> Reply:
    """`reply` with its body compressed and `Content-Encoding` set, as servers may send it."""
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS, "raw-deflate": -15}
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits[encoding])
    body = packer.compress(reply.body) + packer.flush()
    header = ("Content-Encoding", encoding.removeprefix("raw-"))
    return Reply(reply.status, body, (*reply.headers, header), reply.delay)


def raw_response(data: bytes) -> Reply:
    """`data` written to the socket as the whole response (malformed HTTP), then a close."""
    return Reply(raw=data)


@dataclass(frozen=True)
class WireCall:
    """A tool call to put in a scripted model answer.

    `arguments` as a dict is sent well-formed; as a str it is sent verbatim (for malformed
    arguments). `call_id` None gets a generated id unless the builder is told to omit ids.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None


class OpenAIWire:
    """Replies in the Chat Completions format (`POST /v1/chat/completions`)."""

    path = "/v1/chat/completions"

    @staticmethod
    def base_url(server: FaultServer) -> str:
        """What OPENAI_BASE_URL should be to reach `server`."""
        return f"{server.base_url}/v1"

    @staticmethod
    def text(content: str | None, *, usage: tuple[int, int] = (11, 7)) -> Reply:
        return OpenAIWire._completion({"role": "assistant", "content": content}, "stop", usage)

    @staticmethod
    def tool_calls(
        *calls: WireCall,
        content: str | None = None,
        omit_ids: bool = False,
        usage: tuple[int, int] = (11, 7),
    ) -> Reply:
        wire_calls = [OpenAIWire._call(i, call, omit_ids) for i, call in enumerate(calls)]
        message = {"role": "assistant", "content": content, "tool_calls": wire_calls}
        return OpenAIWire._completion(message, "tool_calls", usage)

    @staticmethod
    def empty() -> Reply:
        return OpenAIWire.text(None)

    @staticmethod
    def error(status: int, message: str, *, retry_after: str | None = None) -> Reply:
        payload = {"error": {"message": message, "type": "fault_injected", "code": status}}
        headers = (("Retry-After", retry_after),) if retry_after is not None else ()
        return Reply.json(payload, status=status, headers=headers)

    @staticmethod
    def _call(index: int, call: WireCall, omit_ids: bool) -> dict[str, Any]:
        arguments = call.arguments
        wire: dict[str, Any] = {
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        if not omit_ids:
            wire["id"] = call.call_id or f"call_{index}"
        return wire

    @staticmethod
    def _completion(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> Reply:
        prompt, completion = usage
        return Reply.json(
            {
                "id": "chatcmpl-fault",
                "object": "chat.completion",
                "model": "fault-model",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )


class AnthropicWire:
    """Replies in the Messages API format (`POST /v1/messages`)."""

    path = "/v1/messages"

    @staticmethod
    def base_url(server: FaultServer) -> str:
        """What ANTHROPIC_BASE_URL should be to reach `server`."""
        return server.base_url

    @staticmethod
    def text(content: str | None, *, usage: tuple[int, int] = (11, 7)) -> Reply:
        blocks = [{"type": "text", "text": content}] if content is not None else []
        return AnthropicWire._message(blocks, "end_turn", usage)

    @staticmethod
    def tool_calls(
        *calls: WireCall,
        content: str | None = None,
        omit_ids: bool = False,
        usage: tuple[int, int] = (11, 7),
    ) -> Reply:
        blocks = [{"type": "text", "text": content}] if content is not None else []
        blocks += [AnthropicWire._use(i, call, omit_ids) for i, call in enumerate(calls)]
        return AnthropicWire._message(blocks, "tool_use", usage)

    @staticmethod
    def empty() -> Reply:
        return AnthropicWire.text(None)

    @staticmethod
    def error(status: int, message: str, *, retry_after: str | None = None) -> Reply:
        payload = {"type": "error", "error": {"type": "fault_injected", "message": message}}
        headers = (("Retry-After", retry_after),) if retry_after is not None else ()
        return Reply.json(payload, status=status, headers=headers)

    @staticmethod
    def _use(index: int, call: WireCall, omit_ids: bool) -> dict[str, Any]:
        # A str `arguments` is sent as `input` verbatim: the real API never does that, but a
        # broken proxy or a compatible server might, and the client must not crash on it.
        block: dict[str, Any] = {"type": "tool_use", "name": call.name, "input": call.arguments}
        if not omit_ids:
            block["id"] = call.call_id or f"toolu_{index}"
        return block

    @staticmethod
    def _message(blocks: list[dict[str, Any]], stop: str, usage: tuple[int, int]) -> Reply:
        return Reply.json(
            {
                "id": "msg_fault",
                "type": "message",
                "role": "assistant",
                "model": "fault-model",
                "content": blocks,
                "stop_reason": stop,
                "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
            }
        )


class FaultServer:
    """A real HTTP server on 127.0.0.1 (a free port) answering from a script of replies."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._script: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server((host, 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> FaultServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop serving; replies still hanging end at once without an answer."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def address(self) -> str:
        """`127.0.0.1:PORT`, as provider error messages name the server."""
        host, port = self._httpd.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the script; each request consumes the next one."""
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            if self._script:
                return self._script.popleft()
        message = f"fault server: no scripted reply left for {request.method} {request.path}"
        return Reply.json({"error": {"message": message}}, status=418)

    def _wait(self, seconds: float) -> bool:
        """Sleep `seconds`; False when the server is closing and the reply should be dropped."""
        return not self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], owner: FaultServer
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-reply are part of the tests; stay quiet about them."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request stderr log."""

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            raw_body=self.rfile.read(length) if length else b"",
        )
        reply = self.server.owner._take(request)
        hung_up = reply.delay > 0 and not self.server.owner._wait(reply.delay)
        if hung_up or reply.disconnect:
            self.close_connection = True
            return
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        try:
            if reply.raw is not None:
                self.close_connection = True
                self.wfile.write(reply.raw)
                return
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if reply.chunks is not None:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._send_chunks(reply.chunks())
                return
            length = str(len(reply.body)) if reply.content_length == ACTUAL else None
            length = reply.content_length if length is None else length
            if length is not None:
                self.send_header("Content-Length", length)
            if reply.content_length != ACTUAL:
                self.close_connection = True  # a lie leaves the connection unusable
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up waiting (a timeout test)

    def _send_chunks(self, chunks: Iterator[bytes]) -> None:
        self.close_connection = True
        for chunk in chunks:
            if self.server.owner._stopping.is_set():
                return
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
