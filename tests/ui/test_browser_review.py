"""Review by people in a real browser (Chromium, Playwright) against the session's real
`runlens ui` process: a reviewer signs in, opens `/reviews`, opens a run, marks a quote
wrong with a note, requests changes, starts the rerun, and the new run links back.

Everything is done through the pages' own forms (they work without JavaScript); the note
carries markup that must stay text: no dialog opens, nothing is fetched from elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect
from tests.ui.conftest import UIServer
from tests.ui.reviewers import HOSTILE_NOTE, add_reviewer
from tests.ui.runs import MadeRun, completed_run

#: How long an `expect` waits for a page to show something (milliseconds).
TIMEOUT_MS = 20_000
#: Seconds the rerun (the offline model) may take to start and link back.
RERUN_SECONDS = 120


@dataclass(frozen=True)
class Setup:
    run: MadeRun
    token: str


@pytest.fixture(scope="module")
def setup(ui_server: UIServer) -> Setup:
    return Setup(
        run=completed_run(ui_server.home),
        token=add_reviewer(ui_server.home, ui_server.db_url, "rita"),
    )


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
        if not url.startswith(origin):
            seen.foreign.append(url)

    page.on("dialog", on_dialog)
    page.on("request", lambda request: on_request(request.url))
    yield seen
    context.close()


def test_a_reviewer_marks_a_quote_requests_changes_and_reruns(
    watched: Watched, setup: Setup
) -> None:
    page, run = watched.page, setup.run

    # Sign in on the queue; the run awaits review there.
    page.goto("/reviews")
    page.locator('.reviewer-sign-in input[name="token"]').fill(setup.token)
    page.locator('.reviewer-sign-in [type="submit"]').click()
    page.wait_for_url(re.compile(r"/reviews$"))
    expect(page.locator("[data-reviewer]")).to_have_text("rita")
    row = page.locator(f'#queue tr[data-run-id="{run.run_id}"]')
    expect(row.locator("[data-review-state]")).to_have_text("unreviewed")

    # Open the run, then its reader view.
    row.get_by_role("link", name=run.run_id).click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}$"))
    expect(page.locator("#verdict [data-review-state]")).to_have_attribute(
        "data-review-state", "unreviewed"
    )
    page.get_by_role("link", name="Reader view").click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}/report$"))

    # Mark the first quote of the report wrong, with a note.
    claim = page.locator(".claim-review:has(.claim-quote)").first
    claim_id = claim.get_attribute("id")
    row_id = claim.get_attribute("data-claim-row")
    assert claim_id and row_id
    claim.locator('input[name="mark"][value="wrong"]').check()
    claim.locator('input[name="note"]').fill(HOSTILE_NOTE)
    claim.get_by_role("button", name="Mark").click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}/report#{claim_id}$"))
    given = page.locator(f"#{claim_id} .mark-wrong")
    expect(given).to_have_count(1)
    expect(given.locator(".mark-note")).to_have_text(HOSTILE_NOTE)
    expect(given).to_contain_text("rita")
    # The row it cites is the one the rows page lists as marked wrong.
    page.goto(f"/runs/{run.run_id}/rows?mark=wrong")
    expect(page.locator("#rows tbody tr")).to_have_count(1)
    expect(page.locator("#rows tbody tr")).to_have_attribute("data-row-id", row_id)

    # Request changes on the run.
    page.goto(f"/runs/{run.run_id}")
    form = page.locator("#review .decision-form")
    form.locator('input[value="request-changes"]').check()
    form.locator('textarea[name="note"]').fill("Fix the quote I marked. " + HOSTILE_NOTE)
    form.get_by_role("button", name="Sign and record").click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}#review$"))
    expect(page.locator("#review")).to_have_attribute("data-review-state", "changes-requested")
    expect(page.locator("#verdict [data-review-state]")).to_have_text("review: changes-requested")
    decision = page.locator('#review .decision[data-decision="request-changes"]')
    expect(decision.locator(".decision-note")).to_have_text(
        "Fix the quote I marked. " + HOSTILE_NOTE
    )

    # The queue shows what was asked, as text.
    page.goto("/reviews")
    queued = page.locator(f'#queue tr[data-run-id="{run.run_id}"]')
    expect(queued.locator("[data-review-state]")).to_have_text("changes-requested")
    expect(queued.locator(".asked .decision-note")).to_contain_text("<script>alert(1)</script>")

    # Start the rerun from the run page: the new run's page opens and links back.
    page.goto(f"/runs/{run.run_id}")
    page.locator("#rerun").click()
    page.wait_for_url(re.compile(r"/runs/(?!" + re.escape(run.run_id) + r")[^/?#]+$"))
    new_id = page.url.rsplit("/", 1)[-1]
    back = page.locator("#rerun-of")
    for _ in range(RERUN_SECONDS):
        if back.count():
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(back).to_have_text(run.run_id)
    page.locator("#compare-rerun-of").click()
    page.wait_for_url(re.compile(r"/compare\?a=.+&b=.+"))
    expect(page.locator("body")).to_contain_text(new_id)

    # And the reviewed run links to its rerun.
    page.goto(f"/runs/{run.run_id}")
    expect(page.locator(f'.rerun-link[href="/runs/{new_id}"]')).to_have_count(1)
    assert watched.dialogs == [] and watched.foreign == []
