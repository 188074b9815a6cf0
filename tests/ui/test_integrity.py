"""Deliverables edited after the verdict, over real HTTP and in a real browser.

A completed run is made by the CLI into the server's home, then its report is edited with a
real `sed -i`, as a user would. Every page of the run and the API must then say that the
file on disk is not the one validated, with the validated and the current SHA-256; and the
artifact API serves the validated bytes when the store holds a copy of them.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, expect
from tests.ui.conftest import UIServer, server_env
from tests.ui.runs import GOOD_QUOTE, MadeRun, revised_run

from runlens.store.db import open_store
from runlens.store.sync import upload_workspace
from runlens_feedback.contracts import ANALYSIS, REPORT

BANNER = "Changed after validation"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sed(path: Path, expression: str) -> None:
    subprocess.run(["sed", "-i", expression, str(path)], check=True)


@pytest.fixture(scope="module")
def edited(ui_server: UIServer) -> Iterator[tuple[MadeRun, str, str]]:
    """A completed run whose report was edited after the verdict: (run, validated, current)."""
    made = revised_run(ui_server.home, database_url=ui_server.db_url)
    report = made.workspace / REPORT
    validated = sha256(report)
    with ui_server.client() as client:
        before = client.get(f"/api/runs/{made.run_id}")
        assert before.status_code == 200
        assert before.json()["changed_after_validation"] == []
        raw = client.get(f"/api/runs/{made.run_id}/artifacts/{REPORT}")
        assert raw.headers["x-runlens-changed-after-validation"] == "false"
        assert raw.headers["x-runlens-sha256"] == validated
        assert raw.headers["x-runlens-validated-sha256"] == validated
        page = client.get(f"/runs/{made.run_id}/report")
        assert BANNER not in page.text
    sed(report, "s/## Executive Summary/## Executive Summary\\n\\nAll customers love us./")
    current = sha256(report)
    assert current != validated
    yield made, validated, current


def test_every_page_of_an_edited_run_says_so_with_both_hashes(
    ui_server: UIServer, edited: tuple[MadeRun, str, str]
) -> None:
    made, validated, current = edited
    run = quote(made.run_id)
    paths = [
        f"/runs/{run}",
        f"/runs/{run}/report",
        f"/runs/{run}/artifacts/{REPORT}",
        f"/runs/{run}/evidence/{GOOD_QUOTE[1]}",
        f"/runs/{run}/rows",
    ]
    with ui_server.client() as client:
        for path in paths:
            response = client.get(path)
            assert response.status_code == 200, (path, response.text[:300])
            assert BANNER in response.text, path
            assert validated in response.text and current in response.text, path
            assert 'id="changed-after-validation"' in response.text, path
        # Only the edited file is named: the analysis is still the one validated.
        page = client.get(f"/runs/{run}").text
        assert f'data-changed-artifact="{REPORT}"' in page
        assert f'data-changed-artifact="{ANALYSIS}"' not in page
        reader = client.get(f"/runs/{run}/report").text
        assert "All customers love us." in reader  # the file as it is now, flagged
        assert 'class="change-notice"' in reader


def test_the_api_names_the_changed_file_and_both_hashes(
    ui_server: UIServer, edited: tuple[MadeRun, str, str]
) -> None:
    made, validated, current = edited
    with ui_server.client() as client:
        detail = client.get(f"/api/runs/{made.run_id}").json()
        assert detail["status"] == "completed"
        [change] = detail["changed_after_validation"]
        assert change["name"] == REPORT
        assert change["validated_sha256"] == validated
        assert change["current_sha256"] == current
        assert validated in change["message"] and current in change["message"]
        raw = client.get(f"/api/runs/{made.run_id}/artifacts/{REPORT}")
        assert raw.status_code == 200
        # The store holds no copy of a local run's files: the file as it is, flagged.
        assert raw.headers["x-runlens-changed-after-validation"] == "true"
        assert raw.headers["x-runlens-served"] == "current"
        assert raw.headers["x-runlens-validated-sha256"] == validated
        assert raw.headers["x-runlens-sha256"] == current
        assert hashlib.sha256(raw.content).hexdigest() == current
        untouched = client.get(f"/api/runs/{made.run_id}/artifacts/{ANALYSIS}")
        assert untouched.headers["x-runlens-changed-after-validation"] == "false"
        row = client.get(f"/api/runs/{made.run_id}/evidence/{GOOD_QUOTE[1]}").json()
        assert [c["name"] for c in row["changed_after_validation"]] == [REPORT]
        assert row["changed_after_validation"][0]["current_sha256"] == current


def test_the_api_serves_the_validated_bytes_when_the_store_holds_them(
    ui_server: UIServer,
) -> None:
    made = revised_run(ui_server.home, database_url=ui_server.db_url)
    report = made.workspace / REPORT
    validated_bytes = report.read_bytes()
    store = open_store(ui_server.db_url)
    try:
        upload_workspace(store, made.run_id, made.workspace)
    finally:
        store.close()
    sed(report, "s/takes three minutes/takes three hours/")
    with ui_server.client() as client:
        raw = client.get(f"/api/runs/{made.run_id}/artifacts/{REPORT}")
    assert raw.status_code == 200
    assert raw.content == validated_bytes
    assert raw.headers["x-runlens-served"] == "validated"
    assert raw.headers["x-runlens-changed-after-validation"] == "true"
    assert raw.headers["x-runlens-sha256"] == hashlib.sha256(validated_bytes).hexdigest()
    assert raw.headers["x-runlens-current-sha256"] == sha256(report)


def test_a_deleted_deliverable_is_named_on_the_run_page(ui_server: UIServer) -> None:
    made = revised_run(ui_server.home, database_url=ui_server.db_url)
    (made.workspace / ANALYSIS).unlink()
    with ui_server.client() as client:
        page = client.get(f"/runs/{quote(made.run_id)}").text
        detail = httpx.Response(200, content=client.get(f"/api/runs/{made.run_id}").content)
    assert BANNER in page and f'data-changed-artifact="{ANALYSIS}"' in page
    [change] = detail.json()["changed_after_validation"]
    assert change["name"] == ANALYSIS and change["current_sha256"] is None
    assert "does not exist" in change["problem"]


def test_the_reader_view_shows_the_notice_in_a_browser(
    browser: Browser, ui_server: UIServer, edited: tuple[MadeRun, str, str], tmp_path: Path
) -> None:
    made, validated, current = edited
    context = browser.new_context(base_url=ui_server.url, viewport={"width": 1100, "height": 760})
    try:
        page = context.new_page()
        response = page.goto(f"/runs/{quote(made.run_id)}/report")
        assert response is not None and response.ok
        banner = page.locator("#changed-after-validation")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text(BANNER)
        expect(banner.locator("[data-validated-sha256]")).to_have_text(validated)
        expect(banner.locator("[data-current-sha256]")).to_have_text(current)
        expect(page.locator(".verdict-changed")).to_be_visible()
        expect(page.locator(".change-notice").first).to_be_visible()
        # What the reader sees first (scripts/ui_screenshots.py makes the docs' copy).
        shot = tmp_path / "changed_after_validation.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 0
    finally:
        context.close()


def test_a_copied_workspace_is_named_on_the_run_page_and_never_served(
    ui_server: UIServer, tmp_path: Path
) -> None:
    """`cp -r` of a run's folder, then an edit: the store keeps the run's own folder, and the
    run page names the copy instead of showing it."""
    made = revised_run(ui_server.home, database_url=ui_server.db_url)
    copy = made.workspace.parent / f"{made.workspace.name}-copy"
    subprocess.run(["cp", "-r", str(made.workspace), str(copy)], check=True)
    sed(copy / REPORT, "s/## Executive Summary/## Executive Summary\\n\\nA forged line./")
    listed = subprocess.run(
        [sys.executable, "-m", "runlens", "runs", "--limit", "1000"],
        env=server_env(ui_server.home, RUNLENS_DATABASE_URL=ui_server.db_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    with ui_server.client() as client:
        run = client.get(f"/api/runs/{made.run_id}").json()
        assert run["workspace"] == str(made.workspace)
        assert run["clashes"] == [str(copy)]
        page = client.get(f"/runs/{made.run_id}")
        assert "data-verdict-clashes" in page.text
        assert str(copy) in page.text
        report = client.get(f"/api/runs/{made.run_id}/artifacts/{REPORT}")
        assert "A forged line." not in report.text
        assert report.headers["x-runlens-changed-after-validation"] == "false"
