"""Real `runlens ui` servers for the UI tests, shared by the whole session.

Each server is a `python -m runlens ui --port 0` subprocess on 127.0.0.1 with its own
RUNLENS_HOME (and so its own SQLite store); the fixture reads the URL it prints, waits until
it answers, and stops it at the end of the session. Runs made into `server.home` with the
CLI (`tests.ui.runs`) land in the same store, so the server shows them.

- `ui_server`: no token (loopback), uploads limited to `UPLOAD_LIMIT_MB`.
- `token_server`: RUNLENS_UI_TOKEN set, so every request needs it, on loopback too.
"""

from __future__ import annotations

import os
import secrets
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, sync_playwright

#: The upload limit of `ui_server`, small so the size test sends little.
UPLOAD_LIMIT_MB = 2
#: Runs the shared servers start at once: their tests start a few together on purpose (the
#: limit itself is tested on a server of its own).
SHARED_MAX_RUNS = 8
#: Seconds a server may take to print its URL and answer.
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class UIServer:
    """A running `runlens ui`: its base URL (ends with `/`), runs home, store URL, token."""

    url: str
    home: Path
    db_url: str
    token: str | None = None

    def client(self, *, authorised: bool = True) -> httpx.Client:
        """An HTTP client on the server (with the token, unless `authorised` is False)."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token and authorised else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a server (or CLI run) on `home`: no token, store or provider key
    from outside (no test reaches a real model provider)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"RUNLENS_UI_TOKEN", "RUNLENS_DATABASE_URL"} and not key.endswith("_API_KEY")
    }
    return {**env, "RUNLENS_HOME": str(home), **extra}


@contextmanager
def running_server(home: Path, *args: str, token: str | None = None) -> Iterator[UIServer]:
    """Start `runlens ui --port 0 ARGS` on `home`; yield it once it answers; stop it."""
    from runlens.store.db import store_url

    home.mkdir(parents=True, exist_ok=True)
    env = server_env(home, **({"RUNLENS_UI_TOKEN": token} if token else {}))
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "runlens", "ui", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    try:
        url = _printed_url(process, home)
        server = UIServer(url=url, home=home, db_url=store_url(None, home), token=token)
        _wait_until_answering(server, process)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()


def _printed_url(process: subprocess.Popen[bytes], home: Path) -> str:
    assert process.stdout is not None
    prefix = "RunLens UI: "
    deadline = time.monotonic() + START_TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=0.5):
                if process.poll() is not None:
                    break
                continue
            line = process.stdout.readline().decode("utf-8", "replace").strip()
            if line.startswith(prefix):
                return line[len(prefix) :]
            if not line and process.poll() is not None:
                break
    log = (home / "server.log").read_text("utf-8", "replace")
    raise AssertionError(f"runlens ui did not print its URL (exit {process.poll()}):\n{log}")


def _wait_until_answering(server: UIServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    with server.client() as client:
        while time.monotonic() < deadline:
            try:
                if client.get("/api/runs").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                break
            time.sleep(0.2)
    log = (server.home / "server.log").read_text("utf-8", "replace")
    raise AssertionError(f"runlens ui at {server.url} never answered:\n{log}")


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    """A server without a token, on a fresh home, shared by the session."""
    home = tmp_path_factory.mktemp("ui-home")
    with running_server(
        home, "--max-upload-mb", str(UPLOAD_LIMIT_MB), "--max-runs", str(SHARED_MAX_RUNS)
    ) as server:
        yield server


@pytest.fixture(scope="session")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    """A server with RUNLENS_UI_TOKEN set (on 127.0.0.1: the token is enforced there too)."""
    home = tmp_path_factory.mktemp("ui-token-home")
    token = secrets.token_urlsafe(24)
    with running_server(
        home, "--host", "127.0.0.1", "--max-runs", str(SHARED_MAX_RUNS), token=token
    ) as server:
        yield server


#: Debian's Chromium, which the browser tests drive (Playwright's own download is not used).
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium for each test module. Module-scoped, not session: Playwright's sync API
    keeps an asyncio event loop running on the main thread while it is open, and later
    tests of the session (tests/store, test_pages) call `asyncio.run` there."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"the browser tests need Chromium at {CHROMIUM}: install it as root with "
            "`apt-get install chromium` (scripts/test.sh and .ci/run do so when they can); "
            "Playwright's own browser download is not used",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()
