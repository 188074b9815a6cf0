"""Runs started over HTTP are bounded: a real server with `--max-runs 2` gets 20 start
requests at once; two runs start, the other eighteen are told 429 with `Retry-After`, no
more than two run processes exist at any moment, and the runs list answers quickly while
they go. Once they end, a new start is accepted again. `/new` refuses, on its form, a model
whose provider has no credentials on the server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect
from tests.ui.conftest import UIServer, running_server
from tests.ui.test_api import TERMINAL, big_csv, detail, upload, wait_for

LIMIT = 2
REQUESTS = 20


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    home = tmp_path_factory.mktemp("ui-limited")
    with running_server(home, "--max-runs", str(LIMIT)) as server:
        yield server


def run_processes(home: Path) -> int:
    """How many `runlens run` processes on this machine run in `home`'s uploads. A child a
    run process is starting (a `git` it runs, between fork and exec) shows its parent's
    command line for a moment: it is not another run."""
    runs: dict[int, int] = {}  # pid -> parent pid
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"runlens" in argv and b"run" in argv and any(str(home).encode() in a for a in argv):
            runs[int(entry.name)] = parent
    return sum(1 for parent in runs.values() if parent not in runs)


def test_twenty_starts_at_once_start_two_runs_and_refuse_the_rest(limited: UIServer) -> None:
    content = big_csv(400)
    most_processes = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal most_processes
        while not stop.is_set():
            most_processes = max(most_processes, run_processes(limited.home))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    def start(n: int) -> httpx.Response:
        with limited.client() as client:
            return upload(client, content, name=f"burst_{n}.csv")

    try:
        with ThreadPoolExecutor(max_workers=REQUESTS) as pool:
            responses = list(pool.map(start, range(REQUESTS)))
        started = [r for r in responses if r.status_code == 202]
        refused = [r for r in responses if r.status_code == 429]
        assert len(started) == LIMIT, [(r.status_code, r.text[:100]) for r in responses]
        assert len(refused) == REQUESTS - LIMIT
        for response in refused:
            assert int(response.headers["retry-after"]) > 0
            assert "--max-runs 2" in detail(response)
        with limited.client() as client:
            # The list stays quick while the two runs go.
            slowest = 0.0
            for _ in range(5):
                began = time.monotonic()
                listing = client.get("/api/runs")
                slowest = max(slowest, time.monotonic() - began)
                assert listing.status_code == 200
            assert slowest < 2.0, slowest
            assert listing.json()["total"] == LIMIT  # refused starts left no run behind
            runs = [wait_for(client, r.json()["run_id"], TERMINAL, 180) for r in started]
            assert {run["status"] for run in runs} == {"completed"}, runs
            # A slot is free again once the runs have ended.
            deadline = time.monotonic() + 30
            again = upload(client, content, name="after.csv")
            while again.status_code == 429 and time.monotonic() < deadline:
                time.sleep(0.5)  # the server notices the processes' exit
                again = upload(client, content, name="after.csv")
            assert again.status_code == 202, again.text
            wait_for(client, again.json()["run_id"], TERMINAL, 180)
    finally:
        stop.set()
        watcher.join()
    assert 1 <= most_processes <= LIMIT, most_processes


def test_new_refuses_a_model_without_credentials_on_the_form(
    browser: Browser, limited: UIServer, tmp_path: Path
) -> None:
    upload_file = tmp_path / "feedback.csv"
    upload_file.write_bytes(big_csv(5))
    context = browser.new_context(base_url=limited.url)
    try:
        page = context.new_page()
        response = page.goto("/new")
        assert response is not None and response.ok
        with limited.client() as client:
            before = client.get("/api/runs").json()["total"]
        page.set_input_files('input[name="file"]', upload_file)
        page.select_option('select[name="plugin"]', "feedback-analysis")
        page.locator('[name="model"]').fill("openai:gpt-4o")
        page.locator('form [type="submit"]').click()
        status = page.get_by_text("Not started:")
        expect(status).to_be_visible(timeout=15_000)
        expect(status).to_contain_text("OPENAI_API_KEY")
        assert "/new" in page.url
        with limited.client() as client:
            assert client.get("/api/runs").json()["total"] == before
    finally:
        context.close()
