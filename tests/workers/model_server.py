"""A counting, OpenAI-compatible chat server on 127.0.0.1 for the worker tests and benchmark.

    with CountingModelServer(latency=0.2) as server:
        env = {**os.environ, **env_for(server)}
        subprocess.run([..., "runlens", "run", "feedback-analysis", CSV, "--model", MODEL_SPEC],
                       env=env)
        server.requests          # every request: fingerprint, path, kind, start and end time
        server.repeated()        # fingerprints seen more than once -> how many times
        server.in_flight_at(t)   # the requests being answered at time t (e.g. a kill -9)
        server.max_concurrent()  # most requests in flight at once
        server.wait_for(n, timeout=...)  # until n requests have arrived (then kill a worker)

`distinct_inputs(n, folder)` writes n copies of examples/sample_feedback.csv that differ in
their first row: runs of different copies never send the same request, while two runs of
one file send exactly the same requests (the bodies hold the input's file name, but no run
id, workspace path or time), so across distinct inputs a repeated fingerprint is a model
call sent again.

It answers as the offline analyst does (the wire conversion is `tests/feedback/offline_http`'s),
so the same request body always gets the same answer, and a run against it produces the same
artifacts as `--model offline`. Every request sleeps `latency` seconds in its handler thread
before answering, so concurrent requests overlap as they would at a real provider.

A request's fingerprint is the sha256 of its body's canonical JSON (`fingerprint`): a model
call sent again after a crash has the fingerprint of the first one. Times are `time.time()`
seconds, comparable with a time taken in the test process or in another process.

As a script, for the benchmark (prints the base URL as its first line, serves until SIGTERM
or Ctrl-C, then prints one JSON line: requests, distinct, repeated, max_concurrent):

    python tests/workers/model_server.py --port 0 --latency 0.2

Two control paths, never logged: `GET /_counts` answers that JSON object now, and
`POST /_reset` answers it and then forgets the log (`reset`), e.g. after a warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import io
import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

if __name__ == "__main__":  # as a script: tests/ on sys.path, as its conftest.py puts it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from feedback.offline_http import messages_from_wire, response_to_wire  # tests/feedback
from runlens.models.messages import ToolSpec
from runlens_feedback.batches import SUBMIT_TOOL
from runlens_feedback.offline import OfflineAnalyst

#: The model to pass as `--model` (any name works; the server answers every one alike).
MODEL_SPEC = "openai:counting-offline"
#: Sent as the API key, so nothing falls back to a real key in the environment.
API_KEY = "sk-counting-model-server"
SAMPLE_CSV = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
CHAT_PATH = "/v1/chat/completions"
COUNTS_PATH = "/_counts"
RESET_PATH = "/_reset"


def canonical_json(body: Any) -> str:
    """The one JSON text of `body`: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(body: Any) -> str:
    """sha256 (hex) of the canonical JSON of a request body."""
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RecordedRequest:
    """One request. `kind` is "batch" (a batch of rows: the submit tool is offered), "main"
    (the run's conversation) or "invalid" (not a chat request). `ended` is None while the
    request is being answered; `status` is the HTTP status sent (None while in flight, and
    0 when the client had hung up before the answer could be written)."""

    fingerprint: str
    path: str
    kind: str
    started: float
    ended: float | None = None
    status: int | None = None

    def in_flight_at(self, moment: float, grace: float = 0.0) -> bool:
        """Received at or before `moment` and not answered before `moment - grace`."""
        return self.started <= moment and (self.ended is None or self.ended >= moment - grace)


class CountingModelServer:
    """An OpenAI-compatible chat server on `host` (a free port unless `port` is given) that
    answers as the offline analyst after `latency` seconds and logs every request."""

    def __init__(self, latency: float = 0.0, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if latency < 0:
            raise ValueError(f"latency must be >= 0, not {latency}")
        self.latency = latency
        self.analyst = OfflineAnalyst()
        self._log: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._answered: set[int] = set()
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._httpd = _Server((host, port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> CountingModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop serving; requests still sleeping end at once, unanswered."""
        self._stopping.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL (ends in `/v1`) for RUNLENS_OPENAI_BASE_URL; see `env_for`."""
        host = self._httpd.server_address[0]
        return f"http://{host!s}:{self.port}/v1"

    # -- the log ---------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order of arrival (a copy)."""
        with self._changed:
            return list(self._log)

    def fingerprints(self) -> list[str]:
        return [request.fingerprint for request in self.requests]

    def counts(self) -> Counter[str]:
        """How many times each fingerprint was received."""
        return Counter(self.fingerprints())

    def repeated(self) -> dict[str, int]:
        """The fingerprints received more than once, with how many times."""
        return {fp: count for fp, count in self.counts().items() if count > 1}

    def in_flight_at(self, moment: float, *, grace: float = 0.0) -> list[RecordedRequest]:
        """The requests received at or before `moment` and not answered before it.

        `grace` also counts requests answered up to `grace` seconds before `moment`: a
        client killed right after an answer arrived may not have recorded it yet.
        """
        return [r for r in self.requests if r.in_flight_at(moment, grace)]

    def in_flight(self) -> int:
        """How many requests are being answered now."""
        with self._changed:
            return self._in_flight

    def max_concurrent(self) -> int:
        """The most requests that were being answered at the same time."""
        with self._changed:
            return self._max_in_flight

    def wait_for(self, count: int, timeout: float) -> bool:
        """Wait until `count` requests have been received; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._log) >= count, timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is in flight and every answered one is recorded as ended
        (its answer is written before `_end` stamps it); False on timeout."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._in_flight == 0 and not self._answered, timeout
            )

    def reset(self) -> None:
        """Forget the log and the concurrency peak (requests in flight still count)."""
        with self._changed:
            self._log.clear()
            self._max_in_flight = self._in_flight

    def summary(self) -> dict[str, int]:
        counts = self.counts()
        return {
            "requests": sum(counts.values()),
            "distinct": len(counts),
            "repeated": sum(count - 1 for count in counts.values() if count > 1),
            "max_concurrent": self.max_concurrent(),
        }

    # -- answering (handler threads) -------------------------------------------------------

    def answer(self, request: Any) -> dict[str, Any]:
        """The offline analyst's answer to a Chat Completions request body."""
        messages = messages_from_wire(request["messages"])
        tools = [
            ToolSpec(t["function"]["name"], t["function"].get("description", ""), {})
            for t in request.get("tools") or []
        ]
        response = asyncio.run(self.analyst.complete(messages, tools))
        wire: dict[str, Any] = response_to_wire(response)
        return wire

    def _begin(self, request: RecordedRequest) -> int:
        with self._changed:
            self._log.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._changed.notify_all()
            return len(self._log) - 1

    def _answering(self, index: int) -> None:
        """The answer is about to be written: the request stops counting as in flight now,
        before the client can read it and send its next request (which would otherwise
        overlap this one's bookkeeping and count as concurrent)."""
        with self._changed:
            if index not in self._answered:
                self._answered.add(index)
                self._in_flight -= 1
                self._changed.notify_all()

    def _end(self, index: int, status: int) -> None:
        self._answering(index)
        with self._changed:
            self._log[index] = replace(self._log[index], ended=time.time(), status=status)
            self._answered.discard(index)
            self._changed.notify_all()

    def _sleep(self) -> bool:
        """Sleep `latency`; False when the server is stopping and the answer is dropped."""
        return not self._stopping.wait(self.latency) if self.latency > 0 else True


def env_for(server: CountingModelServer | str) -> dict[str, str]:
    """The environment a `runlens` process needs to reach `server` (or a base URL) with
    `--model openai:NAME` (see MODEL_SPEC). The RUNLENS_* names win over OPENAI_BASE_URL and
    OPENAI_API_KEY, so a real key or endpoint in the environment is never used."""
    url = server if isinstance(server, str) else server.url
    return {"RUNLENS_OPENAI_BASE_URL": url, "RUNLENS_OPENAI_API_KEY": API_KEY}


def distinct_inputs(count: int, directory: Path, source: Path = SAMPLE_CSV) -> list[Path]:
    """`count` copies of a feedback CSV whose first row differs (`[input N]` appended to its
    text), named `<stem>_NN.csv`: runs of different copies send different requests from the
    first table read on, so a repeated fingerprint means a model call was sent again."""
    header, first, *rest = source.read_text(encoding="utf-8").splitlines(keepends=True)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(1, count + 1):
        row = _tag_text(header, first, f" [input {number}]")
        path = directory / f"{source.stem}_{number:02d}.csv"
        path.write_text(header + row + "".join(rest), encoding="utf-8")
        paths.append(path)
    return paths


def _tag_text(header: str, row: str, tag: str) -> str:
    columns = next(csv.reader([header]))
    [values] = list(csv.reader([row]))
    values[columns.index("text")] += tag
    out = io.StringIO()
    csv.writer(out, lineterminator=row[len(row.rstrip("\r\n")) :] or "\n").writerow(values)
    return out.getvalue()


def _kind(path: str, body: Any) -> str:
    """A request's `RecordedRequest.kind`."""
    if path != CHAT_PATH or not isinstance(body, dict) or "messages" not in body:
        return "invalid"
    tools = body.get("tools")
    functions = [tool.get("function") for tool in tools or () if isinstance(tool, dict)]
    offered = {function.get("name") for function in functions if isinstance(function, dict)}
    return "batch" if SUBMIT_TOOL in offered else "main"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many workers connecting at once must not wait for a SYN retry

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], owner: CountingModelServer
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client killed mid-request is part of the tests; stay quiet about it."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request stderr log."""

    def do_GET(self) -> None:
        if self.path == COUNTS_PATH:
            self._send(200, self.server.owner.summary())
        else:
            self._send(404, {"error": {"message": f"no such path: {self.path}"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        started = time.time()
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == RESET_PATH:
            counts = owner.summary()
            owner.reset()
            self._send(200, counts)
            return
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        kind = _kind(self.path, body)
        valid = kind != "invalid"
        digest = hashlib.sha256(raw).hexdigest() if body is None else fingerprint(body)
        index = owner._begin(RecordedRequest(digest, self.path, kind, started))
        status = 0
        try:
            if not owner._sleep():
                self.close_connection = True
                return
            if not valid:
                status = 404 if self.path != CHAT_PATH else 400
                error = {"error": {"message": f"not a chat request: {self.path}"}}
                self._send(status, error, lambda: owner._answering(index))
                return
            try:
                answer = owner.answer(body)
            except Exception as error:  # a bug in a test's conversation: say so, do not hang
                status = 500
                failure = {"error": {"message": f"{type(error).__name__}: {error}"}}
                self._send(status, failure, lambda: owner._answering(index))
                return
            status = 200
            self._send(status, answer, lambda: owner._answering(index))
        except (BrokenPipeError, ConnectionResetError):
            status = 0  # the client is gone (killed, or gave up waiting)
            self.close_connection = True
        finally:
            owner._end(index, status)

    def _send(
        self, status: int, payload: dict[str, Any], answering: Callable[[], None] | None = None
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        if answering is not None:
            answering()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    args = parser.parse_args(argv)
    server = CountingModelServer(args.latency, host=args.host, port=args.port)
    done = threading.Event()

    def finish(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    server.start()
    print(server.url, flush=True)
    while not done.wait(0.5):
        pass
    server.stop()
    print(json.dumps(server.summary()), flush=True)


if __name__ == "__main__":
    main()
