"""Out-of-range parameters get a 4xx, never a 500, over real HTTP.

The sweep reads the server's own `/openapi.json` and sends every parameter of every route
(path, query and header) values past any sensible range: huge and negative numbers, a
superscript digit that `str.isdigit` accepts, 5,000 digits (past Python's int conversion
limit), and a 100 KB string. The HTML pages, which are not in the schema, get the same.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from tests.ui.conftest import UIServer
from tests.ui.runs import MadeRun, revised_run

#: Long, but within what an HTTP client sends in a URL (httpx stops at 64 KiB).
HUGE_TEXT = "r" * 60_000
NUMBERS = ["-1", str(2**63), "9" * 30, "9" * 5000, "²", "1e9", "0x10"]
TEXTS = [HUGE_TEXT, "²", "%00", "..%2F..%2Fetc%2Fpasswd"]


@pytest.fixture(scope="module")
def run(ui_server: UIServer) -> MadeRun:
    return revised_run(ui_server.home, database_url=ui_server.db_url)


@pytest.fixture(scope="module")
def client(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as client:
        yield client


def answer(client: httpx.Client, method: str, url: str, **options: Any) -> int:
    """The status the server answers; a closed connection counts as a refusal (h11 drops a
    request line longer than it accepts before the app sees it)."""
    try:
        return client.request(method, url, **options).status_code
    except httpx.RemoteProtocolError:
        return 400


def routes(client: httpx.Client) -> list[tuple[str, str, list[dict[str, Any]]]]:
    schema = client.get("/openapi.json").json()
    found = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if method in {"get", "post"}:
                found.append((method.upper(), path, operation.get("parameters", [])))
    return found


def values_for(parameter: dict[str, Any]) -> list[str]:
    kind = parameter.get("schema", {})
    types = {kind.get("type")} | {part.get("type") for part in kind.get("anyOf", [])}
    return NUMBERS if "integer" in types else [*TEXTS, *NUMBERS]


def test_every_parameter_of_the_api_refuses_out_of_range_values_with_a_4xx(
    client: httpx.Client, run: MadeRun
) -> None:
    swept = 0
    failures: list[str] = []
    for method, template, parameters in routes(client):
        defaults = {
            "run_id": run.run_id,
            "name": "artifacts/insight_report.md",
            "row_id": "fb_001",
        }
        for parameter in parameters:
            for value in values_for(parameter):
                where, name = parameter["in"], parameter["name"]
                path_values = {**defaults, **({name: value} if where == "path" else {})}
                path = template
                for key, filled in path_values.items():
                    path = path.replace("{" + key + "}", quote(filled, safe="/"))
                params = {name: value} if where == "query" else {}
                # As one byte per character: b"\xb2" reaches the app as "²".
                headers = {name: value.encode("latin-1")} if where == "header" else {}
                if where == "header":
                    headers["accept"] = b"text/event-stream"
                status = answer(client, method, path, params=params, headers=headers)
                swept += 1
                if status >= 500:
                    failures.append(f"{method} {template} {where} {name}={value[:20]!r}: {status}")
    assert swept > 100, swept
    assert failures == []


@pytest.mark.parametrize("value", ["²", "9" * 5000, str(2**63), "-3", "x"])
def test_a_bad_last_event_id_is_a_422_naming_it(
    client: httpx.Client, run: MadeRun, value: str
) -> None:
    response = client.get(
        f"/api/runs/{run.run_id}/events",
        headers={b"accept": b"text/event-stream", b"last-event-id": value.encode("latin-1")},
    )
    assert response.status_code == 422, response.text[:200]
    assert "Last-Event-ID" in response.json()["detail"] or "last-event-id" in response.text


def test_a_valid_last_event_id_resumes_the_stream_after_it(
    client: httpx.Client, run: MadeRun
) -> None:
    response = client.get(
        f"/api/runs/{run.run_id}/events",
        headers={"accept": "text/event-stream", "last-event-id": "3"},
    )
    assert response.status_code == 200
    ids = [int(line[4:]) for line in response.text.splitlines() if line.startswith("id: ")]
    assert ids and ids[0] == 4


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/", {"page": str(2**63)}),
        ("/", {"page": "9" * 5000}),
        ("/", {"q": HUGE_TEXT[:20_000]}),
        ("/api/runs", {"offset": str(2**63)}),
        ("/api/runs", {"offset": "99999999999"}),
        ("/api/runs/{run}/events", {"after": str(2**63)}),
        ("/api/runs/{run}/rows", {"page": str(2**63)}),
        ("/runs/{run}/rows", {"page": str(2**63)}),
        ("/compare", {"a": HUGE_TEXT[:20_000], "b": "x"}),
        ("/runs/" + "r" * 5_000, {}),
        ("/runs/" + "r" * 5_000 + "/report", {}),
        ("/api/runs/" + "r" * 5_000, {}),
        ("/runs/{run}/evidence/" + "r" * 5_000, {}),
    ],
)
def test_the_named_out_of_range_values_get_a_4xx(
    client: httpx.Client, run: MadeRun, path: str, params: dict[str, str]
) -> None:
    status = answer(client, "GET", path.replace("{run}", run.run_id), params=params)
    assert 400 <= status < 500, (path, status)


def raw_status(server: UIServer, method: str, path: str) -> int:
    """The status line's code of one request sent on a plain socket (no client-side limit on
    the URL's length)."""
    address = urlsplit(server.url)
    assert address.hostname is not None and address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
        request = (
            f"{method} {path} HTTP/1.1\r\nHost: {address.netloc}\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        sock.sendall(request.encode("ascii"))
        reply = b""
        while b"\r\n" not in reply and (chunk := sock.recv(4096)):
            reply += chunk
    status_line = reply.split(b"\r\n", 1)[0].decode("latin-1")
    assert status_line.startswith("HTTP/1.1 "), repr(reply[:200])
    return int(status_line.split()[1])


def test_a_100_kb_run_id_is_refused_not_a_500(ui_server: UIServer) -> None:
    run_id = "r" * 100_000
    for method, path in (
        ("GET", f"/api/runs/{run_id}"),
        ("GET", f"/runs/{run_id}"),
        ("GET", f"/runs/{run_id}/report"),
        ("POST", f"/api/runs/{run_id}/cancel"),
    ):
        status = raw_status(ui_server, method, path)
        assert 400 <= status < 500, (method, path[:40], status)
