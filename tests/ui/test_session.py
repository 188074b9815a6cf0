"""The session cookie is bound to the server that set it: two real `runlens ui` servers on two
ports of 127.0.0.1, with the same token. Browsers send a host's cookies to every port, so a
session of one server reaches the other; there it must be no session, by name or by value.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser
from tests.ui.conftest import UIServer, running_server

from runlens.ui.security import SESSION_MAX_AGE, session_cookie_name

TOKEN = secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UIServer, UIServer]]:
    home = tmp_path_factory.mktemp("ui-sessions")
    with (
        running_server(home / "a", token=TOKEN) as first,
        running_server(home / "b", token=TOKEN) as second,
    ):
        yield first, second


def port_of(server: UIServer) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def log_in(server: UIServer) -> tuple[str, str]:
    """`?token=` on `server`: the session cookie it sets, as (name, value)."""
    with httpx.Client(base_url=server.url) as client:
        response = client.get("/api/runs", params={"token": TOKEN})
    assert response.status_code == 303, response.text
    set_cookie = response.headers["set-cookie"]
    assert TOKEN not in set_cookie
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    assert f"Max-Age={SESSION_MAX_AGE}" in set_cookie
    name, _, rest = set_cookie.partition("=")
    return name, rest.split(";", 1)[0]


def status_with(server: UIServer, cookie: str) -> int:
    with httpx.Client(base_url=server.url) as client:
        return client.get("/api/runs", headers={b"cookie": cookie.encode("latin-1")}).status_code


def test_each_server_names_its_cookie_by_its_port(servers: tuple[UIServer, UIServer]) -> None:
    first, second = servers
    assert port_of(first) != port_of(second)
    name, _ = log_in(first)
    assert name == session_cookie_name(port_of(first)) == f"runlens_session_{port_of(first)}"
    assert log_in(second)[0] == session_cookie_name(port_of(second))


def test_a_session_works_on_its_own_server_and_not_on_another_port(
    servers: tuple[UIServer, UIServer],
) -> None:
    first, second = servers
    name, value = log_in(first)
    assert status_with(first, f"{name}={value}") == 200
    # What a browser sends to the other port: every cookie of 127.0.0.1.
    assert status_with(second, f"{name}={value}") == 401
    # Renamed to the other server's cookie, the value is still no session there: another
    # server's secret and port.
    assert status_with(second, f"{session_cookie_name(port_of(second))}={value}") == 401


def test_a_tampered_or_expired_session_is_refused(servers: tuple[UIServer, UIServer]) -> None:
    first, _ = servers
    name, value = log_in(first)
    issued, _, mac = value.partition(".")
    older = str(int(issued) - SESSION_MAX_AGE - 60)
    for forged in (
        f"{older}.{mac}",  # an old session's date on a fresh signature
        f"{issued}.{'0' * len(mac)}",
        mac,
        "",
        f"{issued}.{mac}x",
        f"²{issued}.{mac}",
    ):
        assert status_with(first, f"{name}={forged}") == 401, forged
    # The pre-binding cookie, an HMAC of the token alone, is no session either.
    assert status_with(first, f"runlens_session={mac}") == 401


def test_a_browser_logged_in_on_one_server_is_not_on_the_other(
    browser: Browser, servers: tuple[UIServer, UIServer], tmp_path: Path
) -> None:
    first, second = servers
    context = browser.new_context()
    try:
        page = context.new_page()
        response = page.goto(f"{first.url}?token={TOKEN}")
        assert response is not None and response.status == 200
        assert "token" not in page.url
        cookies = {cookie["name"]: cookie for cookie in context.cookies()}
        assert session_cookie_name(port_of(first)) in cookies
        # The browser sends that cookie to the other port of 127.0.0.1 too; it gets nothing.
        sent_there = {cookie["name"] for cookie in context.cookies(second.url)}
        assert session_cookie_name(port_of(first)) in sent_there
        other = page.goto(second.url)
        assert other is not None and other.status == 401
        assert "Token required" in page.content()
        again = page.goto(first.url)
        assert again is not None and again.status == 200
    finally:
        context.close()


def test_over_https_the_cookie_is_host_prefixed_and_secure() -> None:
    """The middleware behind TLS (no TLS server here: an ASGI client speaking https)."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from runlens.ui.security import SecurityMiddleware, SecuritySettings, allowed_hosts

    async def hello(_request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = SecurityMiddleware(
        Starlette(routes=[Route("/", hello)]),
        SecuritySettings(token=TOKEN, hosts=allowed_hosts("127.0.0.1")),
    )
    with TestClient(app, base_url="https://127.0.0.1:8443") as client:
        response = client.get("/", params={"token": TOKEN}, follow_redirects=False)
        assert response.status_code == 303
        set_cookie = response.headers["set-cookie"]
        assert set_cookie.startswith(f"{session_cookie_name(8443, secure=True)}=")
        assert set_cookie.startswith("__Host-runlens_session_8443=")
        assert "; Secure" in set_cookie and "Path=/" in set_cookie and "Domain" not in set_cookie
        value = set_cookie.split(";", 1)[0].partition("=")[2]
        client.cookies.clear()  # each request below carries only the cookie it names
        good = client.get("/", headers={"cookie": f"__Host-runlens_session_8443={value}"})
        assert good.status_code == 200 and good.text == "hello"
        # The same value under the plain-HTTP name is not this server's session over HTTPS.
        plain = client.get("/", headers={"cookie": f"runlens_session_8443={value}"})
        assert plain.status_code == 401
