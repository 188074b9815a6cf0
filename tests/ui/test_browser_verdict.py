"""The verdict, verify and drift panels in a real browser: Debian's Chromium driven by
Playwright against the session's real `runlens ui` (`ui_server`), on runs made by the CLI.

A reader opens a run's page, sees it signed and by which key, presses "Verify everything"
and sees `verified` with each check; uploads a newer input in which one cited row changed
and sees the quote citing it marked stale in the reader view. On the hostile run, markup in
the quote, the rows and the uploaded file's name runs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Dialog, FilePayload, Page, expect
from tests.ui.conftest import UIServer
from tests.ui.runs import FAILED_CSV, HOSTILE_CSV, HostileRun, MadeRun, hostile_run, revised_run

from runlens_feedback.contracts import ANALYSIS, BACKLOG

#: How long an `expect` waits for a page to show something (milliseconds).
TIMEOUT_MS = 20_000
#: The revised run's input with row fb_001 reworded (its report quotes that row).
CHANGED_CSV = FAILED_CSV.replace("takes three minutes", "takes ten minutes")


@dataclass(frozen=True)
class Runs:
    revised: MadeRun
    hostile: HostileRun


@pytest.fixture(scope="module")
def runs(ui_server: UIServer) -> Runs:
    home, url = ui_server.home, ui_server.db_url
    return Runs(revised_run(home, database_url=url), hostile_run(home, database_url=url))


@dataclass
class Watched:
    page: Page
    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


@pytest.fixture
def watched(browser: Browser, ui_server: UIServer) -> Iterator[Watched]:
    context = browser.new_context(base_url=ui_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    seen = Watched(page)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(ui_server.url))

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(url: str) -> None:
        if not url.startswith(origin) or urlsplit(url).path.rsplit("/", 1)[-1] == "x":
            seen.foreign.append(url)

    page.on("dialog", on_dialog)
    page.on("request", lambda request: on_request(request.url))
    yield seen
    context.close()


def key_id_of(home: Path) -> str:
    from runlens.verdict.keys import load_public_keys

    [key_id] = load_public_keys((), home)
    return key_id


def test_verify_then_a_newer_input_marks_the_stale_quote(
    watched: Watched, runs: Runs, ui_server: UIServer, tmp_path: Path
) -> None:
    page, run = watched.page, runs.revised
    response = page.goto(f"/runs/{run.run_id}")
    assert response is not None and response.ok

    panel = page.locator("#signature")
    expect(panel).to_have_attribute("data-signed", "true")
    expect(panel.locator("[data-key-id]")).to_have_text(key_id_of(ui_server.home))
    expect(panel.locator("[data-signature-verified]")).to_contain_text("verified")
    expect(page.locator("#source [data-lock='rows digest']")).to_have_count(1)

    page.locator("#verify-run").click()
    verdict = page.locator("#verify-result .verify-verdict")
    expect(verdict).to_have_attribute("data-verified", "true")
    expect(verdict).to_have_text("verified")
    expect(page.locator('#verify-result [data-check="signature"]')).to_contain_text("✓")
    expect(page.locator('#verify-result [data-check="validators"]')).to_have_count(1)

    newer = tmp_path / "feedback_next_week.csv"
    newer.write_text(CHANGED_CSV, encoding="utf-8")
    page.set_input_files('#drift-form input[name="file"]', newer)
    page.locator('#drift-form [type="submit"]').click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}\?drift=[0-9a-f]{{16}}#drift$"))
    expect(page.locator("[data-drift-result]")).to_have_attribute(
        "data-drift-result", "rows-changed"
    )
    expect(page.locator("[data-drift-changed]")).to_contain_text("fb_001")
    items = page.locator('#drift .stale-claim[data-stale-kind="item"]')
    expect(items.filter(has_text=ANALYSIS)).not_to_have_count(0)
    expect(items.filter(has_text=BACKLOG)).not_to_have_count(0)

    page.locator("#drift-report-link").click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}/report\?drift=[0-9a-f]{{16}}$"))
    stale = page.locator('.prose a.cite.stale[href*="/evidence/fb_001"]')
    expect(stale).to_have_count(1)
    expect(stale).to_contain_text("takes three minutes")
    mark = page.locator('.prose .cite-stale[data-stale-row="fb_001"]')
    expect(mark).to_have_text("stale: row fb_001 changed in the newer file")
    # The other rows' citations are not stale; the items citing fb_001 are marked in their
    # tables and listed with their place.
    expect(page.locator(".prose a.cite.stale")).to_have_count(1)
    expect(page.locator('.data .cite-stale[data-stale-row="fb_001"]')).not_to_have_count(0)
    expect(page.locator('.data .cite-stale:not([data-stale-row="fb_001"])')).to_have_count(0)
    expect(page.locator("#drift .stale-claim").filter(has_text=BACKLOG)).not_to_have_count(0)
    assert watched.dialogs == [] and watched.foreign == []


def test_hostile_text_in_the_new_panels_runs_nothing(watched: Watched, runs: Runs) -> None:
    page, run = watched.page, runs.hostile
    response = page.goto(f"/runs/{run.run_id}")
    assert response is not None and response.ok
    name = "newer <img src=x onerror=alert(1)>.csv"
    newer: FilePayload = {
        "name": name,
        "mimeType": "text/csv",
        "buffer": HOSTILE_CSV.replace("and then", "and later").encode(),
    }
    page.set_input_files('#drift-form input[name="file"]', files=newer)
    page.locator('#drift-form [type="submit"]').click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}\?drift=[0-9a-f]{{16}}#drift$"))
    expect(page.locator("[data-drift-result]")).to_contain_text(name)
    page.locator("#verify-run").click()
    expect(page.locator("#verify-result .verify-verdict")).to_have_count(1)
    page.locator("#drift-report-link").click()
    page.wait_for_url(re.compile(r"/report\?drift=[0-9a-f]{16}$"))
    expect(page.locator('.prose .cite-stale[data-stale-row="fb_002"]')).to_have_count(1)
    expect(page.locator(".prose a.cite.stale").first).to_contain_text("<script>")
    assert page.evaluate("() => window.__pwned === undefined")
    assert watched.dialogs == [] and watched.foreign == []


def test_a_run_followed_live_shows_its_signature_and_the_drift_form_when_it_ends(
    watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    upload = tmp_path / "followed.csv"
    upload.write_text(FAILED_CSV, encoding="utf-8")
    response = page.goto("/new")
    assert response is not None and response.ok
    page.set_input_files('input[name="file"]', upload)
    page.select_option('select[name="plugin"]', "feedback-analysis")
    model = page.locator('[name="model"]')
    if model.evaluate("element => element.tagName") == "SELECT":
        model.select_option("offline")
    else:
        model.fill("offline")
    page.locator('form [type="submit"]').click()
    page.wait_for_url(re.compile(r"/runs/run_\w+$"))
    page.evaluate("() => { window.__stayed = true }")
    expect(page.locator("#verdict")).to_have_attribute("data-status", "completed", timeout=90_000)
    expect(page.locator("#signature")).to_have_attribute("data-signed", "true")
    expect(page.locator("#drift-form")).to_have_count(1)
    assert page.evaluate("() => window.__stayed === true"), "the run page was reloaded"
    page.set_input_files('#drift-form input[name="file"]', upload)
    page.locator('#drift-form [type="submit"]').click()
    expect(page.locator("[data-drift-result]")).to_have_attribute("data-drift-result", "identical")
