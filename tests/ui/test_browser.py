"""The pages in a real browser: Chromium (Debian's, /usr/bin/chromium) driven by Playwright
against a real `runlens ui` process (`ui_server`) whose home holds real runs made by the CLI.

One browser, one server and one set of runs serve the whole session; each test gets a fresh
browser context (no shared cookies or storage). The hostile run's pages are opened with a
dialog recorder and a request recorder: its scripts, event handlers and `javascript:` links
must be shown as text and run nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Dialog, Page, Request, expect
from tests.ui.conftest import UIServer
from tests.ui.runs import (
    ADDED_TITLE,
    CHANGED_TITLE,
    FAILED_CSV,
    HOSTILE_ROW,
    JAVASCRIPT_LINK,
    MISATTRIBUTED,
    REMOVED_TITLE,
    SCRIPT_TAG,
    TEMPLATE,
    UNSOURCED,
    FailedRun,
    HostileRun,
    MadeRun,
    completed_run,
    failed_run,
    hostile_run,
    revised_run,
)

from runlens_feedback.contracts import BACKLOG

#: How long an `expect` waits for a page to show something (milliseconds).
TIMEOUT_MS = 15_000
#: How long a run started from /new may take to complete (milliseconds).
RUN_TIMEOUT_MS = 90_000
#: Scripts that may run on a page: the UI's own, from /static.
OWN_SCRIPT = re.compile(r"^/static/[\w.-]+\.js$")


@dataclass(frozen=True)
class BrowserRuns:
    """The runs every browser test reads (made once, into the server's home)."""

    completed: MadeRun
    failed: FailedRun
    hostile: HostileRun
    revised: MadeRun


@pytest.fixture(scope="session")
def browser_runs(ui_server: UIServer) -> BrowserRuns:
    home, url = ui_server.home, ui_server.db_url
    # Two at a time: the offline run beside the three short scripted ones.
    with ThreadPoolExecutor(max_workers=2) as pool:
        completed = pool.submit(completed_run, home, database_url=url)
        failed = failed_run(home, database_url=url)
        hostile = hostile_run(home, database_url=url)
        revised = revised_run(home, database_url=url)
        return BrowserRuns(completed.result(), failed, hostile, revised)


@dataclass
class Watched:
    """A page with what it did that a page of untrusted content must not do."""

    page: Page
    origin: str
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def record(self, request: Request) -> None:
        self.requests.append(request.url)

    @property
    def foreign_requests(self) -> list[str]:
        """Requests to anywhere but the server, or for the hostile `<img src=x>`."""
        return [
            url
            for url in self.requests
            if not url.startswith(self.origin) or urlsplit(url).path.rsplit("/", 1)[-1] == "x"
        ]


@pytest.fixture
def watched(browser: Browser, ui_server: UIServer) -> Iterator[Watched]:
    headers = {"Authorization": f"Bearer {ui_server.token}"} if ui_server.token else {}
    context = browser.new_context(base_url=ui_server.url, extra_http_headers=headers)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(ui_server.url))
    seen = Watched(page, origin)

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", seen.record)
    yield seen
    context.close()


@pytest.fixture
def page(watched: Watched) -> Page:
    return watched.page


def open_page(page: Page, path: str) -> None:
    response = page.goto(path)
    assert response is not None and response.ok, f"{path}: {response and response.status}"


# -- the runs list, a failed run, the reader view and the evidence page ----------------------


def test_the_runs_list_shows_every_run_with_its_status(
    page: Page, browser_runs: BrowserRuns
) -> None:
    open_page(page, "/")
    for run in (browser_runs.completed, browser_runs.failed, browser_runs.revised):
        row = page.locator(f'[data-run-id="{run.run_id}"]')
        expect(row).to_be_visible()
        expect(row).to_contain_text(run.status)
    hostile = page.locator(f'[data-run-id="{browser_runs.hostile.run_id}"]')
    expect(hostile).to_contain_text(browser_runs.hostile.input_name)


def test_the_failed_run_page_shows_the_verdict_and_every_finding_at_its_location(
    page: Page, browser_runs: BrowserRuns
) -> None:
    failed = browser_runs.failed
    open_page(page, f"/runs/{failed.run_id}")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-status", "failed")
    assert failed.error_message is not None
    expect(verdict).to_contain_text(failed.error_message.split(";")[0])
    for code, artifact, path in failed.expected:
        finding = page.locator(f'[data-finding-code="{code}"]').filter(has_text=path)
        expect(finding.filter(has_text=artifact)).to_have_count(1)


def test_a_report_quote_leads_to_its_row_with_the_quote_marked(
    page: Page, browser_runs: BrowserRuns
) -> None:
    run, citation = browser_runs.revised, browser_runs.failed.good_citation
    assert citation is not None
    open_page(page, f"/runs/{run.run_id}/report")
    link = page.locator(f'a.cite[href*="/evidence/{citation.row_id}"]').filter(
        has_text=citation.quote
    )
    expect(link).to_have_count(1)
    expect(link).to_have_class(re.compile(r"\bcite-verified\b"))
    link.click()
    page.wait_for_url(re.compile(rf"/runs/{run.run_id}/evidence/{citation.row_id}\b"))
    row_text = next(line for line in FAILED_CSV.splitlines() if line.startswith("fb_001,"))
    expect(page.locator("body")).to_contain_text(row_text.split('"')[1])
    marks = page.locator("#row-text mark").all_inner_texts()
    assert citation.quote in marks, marks


def test_the_reader_view_shows_failed_citations_failed_with_their_reason(
    page: Page, browser_runs: BrowserRuns
) -> None:
    failed = browser_runs.failed
    open_page(page, f"/runs/{failed.run_id}/report")
    expect(page.locator("#verdict")).to_have_attribute("data-status", "failed")
    quote, row_id = MISATTRIBUTED
    link = page.locator(f'a.cite.cite-failed[href*="/evidence/{row_id}"]').filter(has_text=quote)
    expect(link).to_have_count(1)
    expect(link).to_have_attribute("title", re.compile("evidence_text_mismatch"))
    note = page.locator("blockquote").filter(has=link)
    expect(note).to_contain_text("is not a verbatim fragment of fb_003")
    unsourced = page.locator("blockquote").filter(has_text=UNSOURCED)
    expect(unsourced).to_contain_text("unsourced_quote")


# -- starting a run from /new ----------------------------------------------------------------


def test_a_run_started_by_upload_reaches_completed_on_its_page_live(
    page: Page, tmp_path: Path, browser_runs: BrowserRuns
) -> None:
    upload = tmp_path / "uploaded_feedback.csv"
    upload.write_text(FAILED_CSV, encoding="utf-8")
    open_page(page, "/new")
    page.set_input_files('input[name="file"]', upload)
    page.select_option('select[name="plugin"]', "feedback-analysis")
    model = page.locator('[name="model"]')
    if model.evaluate("element => element.tagName") == "SELECT":
        model.select_option("offline")
    else:
        model.fill("offline")
    page.locator('form [type="submit"]').click()
    page.wait_for_url(re.compile(r"/runs/run_\w+$"))
    # A marker that a navigation or reload would wipe: the page must update itself.
    page.evaluate("() => { window.__stayed = true }")
    verdict, events = page.locator("#verdict"), page.locator("#events > *")
    initial, shown = verdict.get_attribute("data-status"), events.count()
    assert initial in ("created", "running", "validating"), initial
    expect(verdict).to_have_attribute("data-status", "completed", timeout=RUN_TIMEOUT_MS)
    expect(verdict).to_contain_text("completed")
    assert page.evaluate("() => window.__stayed === true"), "the run page was reloaded"
    assert events.count() > shown, "the events timeline did not grow"


#: Records, in the page, every state the run page shows: the banner's status and sentence
#: and the plan's step statuses, after each change anywhere in `#run` (the sections swapped
#: in at the end included).
RECORD_STATES = """() => {
  window.__states = [];
  const snapshot = () => {
    const verdict = document.querySelector("#verdict");
    const message = verdict && verdict.querySelector("[data-verdict-message]");
    window.__states.push({
      status: verdict ? verdict.dataset.status : null,
      text: message ? message.textContent.trim() : null,
      steps: Array.from(document.querySelectorAll("#plan [data-step-id]"), (step) =>
        step.querySelector("[data-step-status]").textContent.trim()),
    });
  };
  snapshot();
  new MutationObserver(snapshot).observe(document.querySelector("#run"),
    { subtree: true, childList: true, attributes: true, characterData: true });
}"""
#: The first words of the banner's sentence while the run is in each live status.
LIVE_TEXT = {"created": "Created:", "running": "Running:", "validating": "Validating:"}


def feedback_rows(rows: int) -> str:
    phrases = (
        "Exporting the weekly report takes three minutes and often times out.",
        "Login fails with error 500 every morning.",
        "I would love to reorder the dashboard metrics myself.",
    )
    lines = ["feedback_id,text,channel"]
    lines += [f"fb_{n:05d},{phrases[n % len(phrases)]} ({n}),web" for n in range(1, rows + 1)]
    return "\n".join(lines) + "\n"


def test_the_run_page_follows_the_verdict_text_and_the_plan_live(
    page: Page, tmp_path: Path, browser_runs: BrowserRuns
) -> None:
    upload = tmp_path / "many_rows.csv"
    upload.write_text(feedback_rows(1500), encoding="utf-8")
    open_page(page, "/new")
    page.set_input_files('input[name="file"]', upload)
    page.select_option('select[name="plugin"]', "feedback-analysis")
    page.locator('form [type="submit"]').click()
    page.wait_for_url(re.compile(r"/runs/run_\w+$"))
    page.evaluate(RECORD_STATES)
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-status", "completed", timeout=RUN_TIMEOUT_MS)
    states = page.evaluate("() => window.__states")
    live = [s for s in states if s["status"] in LIVE_TEXT]
    assert live, states[:3]
    for state in live:  # the sentence always says the status shown beside it
        assert state["text"].startswith(LIVE_TEXT[state["status"]]), state
    assert {s["status"] for s in live} >= {"running", "validating"}, {s["status"] for s in live}
    # The plan was on the page, and moving, while the run was live.
    assert all(s["steps"] for s in live), [s for s in live if not s["steps"]][:1]
    moving = [s["steps"] for s in live if s["status"] == "running"]
    assert any("running" in steps or "completed" in steps for steps in moving), moving
    # The end: the final verdict, every step completed, the deliverables and no findings.
    expect(verdict.locator("[data-verdict-message]")).to_contain_text("Every deliverable passed")
    steps = page.locator("#plan [data-step-status]")
    expect(steps).to_have_count(len(states[-1]["steps"]))
    assert set(steps.all_text_contents()) == {"completed"}
    expect(page.locator("#artifacts tr[data-artifact]")).to_have_count(4)
    expect(page.locator("#cancel")).to_have_count(0)


# -- the compare page ------------------------------------------------------------------------


def test_the_compare_page_shows_what_changed_between_two_runs(
    page: Page, browser_runs: BrowserRuns
) -> None:
    a, b = browser_runs.failed, browser_runs.revised
    open_page(page, f"/compare?a={a.run_id}&b={b.run_id}")
    backlog = page.locator(f'[data-artifact="{BACKLOG}"]')
    for kind, title in (("added", ADDED_TITLE), ("removed", REMOVED_TITLE)):
        expect(backlog.locator(f'[data-change="{kind}"]').filter(has_text=title)).to_have_count(1)
    changed = backlog.locator('[data-change="changed"]').filter(has_text=CHANGED_TITLE)
    expect(changed).to_contain_text("priority")
    expect(changed).to_contain_text("P1")
    expect(changed).to_contain_text("P0")
    # Two invented ids in A (the analysis's and the backlog's), none in B.
    unknown = page.locator('#findings-by-code [data-code="unknown_evidence_id"] td')
    expect(unknown).to_have_text(["unknown_evidence_id", "2", "0", "-2"])


# -- untrusted content runs nothing ----------------------------------------------------------


def hostile_paths(run: HostileRun) -> list[str]:
    citation = run.hostile_citation
    assert citation is not None
    return [
        f"/runs/{run.run_id}",
        f"/runs/{run.run_id}/report",
        f"/runs/{run.run_id}/evidence/{citation.row_id}",
    ]


def assert_inert(watched: Watched) -> None:
    """Nothing the run's content carries ran, loaded or became a live link."""
    page = watched.page
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert watched.dialogs == []
    assert watched.foreign_requests == []
    scripts = page.evaluate(
        "() => Array.from(document.scripts, s => s.getAttribute('src') || s.textContent)"
    )
    assert all(OWN_SCRIPT.match(script) for script in scripts), scripts
    handlers = page.evaluate(
        "() => Array.from(document.querySelectorAll('*')).flatMap(e => "
        "Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => a.name))"
    )
    assert handlers == []
    assert page.locator('a[href^="javascript:" i]').count() == 0
    assert page.locator("iframe, object, embed").count() == 0
    assert page.locator("img[src='x']").count() == 0


def test_the_hostile_run_pages_show_its_markup_as_text_and_run_none_of_it(
    watched: Watched, browser_runs: BrowserRuns
) -> None:
    page, run = watched.page, browser_runs.hostile
    for path in hostile_paths(run):
        open_page(page, path)
        expect(page.locator("body")).to_be_visible()
        assert_inert(watched)
    open_page(page, f"/runs/{run.run_id}")
    expect(page.locator("body")).to_contain_text(run.input_name)
    open_page(page, "/")
    expect(page.locator(f'[data-run-id="{run.run_id}"]')).to_contain_text(run.input_name)
    assert_inert(watched)
    open_page(page, f"/runs/{run.run_id}/report")
    expect(page.locator("body")).to_contain_text(SCRIPT_TAG)
    expect(page.locator("body")).to_contain_text(TEMPLATE)  # shown, not evaluated


def test_the_hostile_evidence_row_is_shown_whole_with_its_markup_marked_as_text(
    watched: Watched, browser_runs: BrowserRuns
) -> None:
    page, run = watched.page, browser_runs.hostile
    citation = run.hostile_citation
    assert citation is not None
    open_page(page, f"/runs/{run.run_id}/evidence/{citation.row_id}")
    expect(page.locator("body")).to_contain_text(HOSTILE_ROW)
    assert citation.quote in page.locator("#row-text mark").all_inner_texts()
    assert_inert(watched)


def test_the_hostile_artifact_views_run_nothing(
    watched: Watched, browser_runs: BrowserRuns
) -> None:
    page, run = watched.page, browser_runs.hostile
    open_page(page, f"/runs/{run.run_id}")
    views = page.locator(f'a[href^="/runs/{run.run_id}/artifacts/"]').evaluate_all(
        "links => [...new Set(links.map(a => a.getAttribute('href').split('#')[0]))]"
    )
    assert len(views) >= 3, views
    for path in views:
        open_page(page, path)
        assert_inert(watched)


def test_clicking_the_hostile_links_does_nothing(
    watched: Watched, browser_runs: BrowserRuns
) -> None:
    page, run = watched.page, browser_runs.hostile
    path = f"/runs/{run.run_id}/report"
    open_page(page, path)
    expect(page.locator("body")).to_contain_text(JAVASCRIPT_LINK.split("]")[0].lstrip("["))
    for text in ("click me", "harmless link", "pwned"):
        target = page.get_by_text(text, exact=False).first
        target.click()
        assert urlsplit(page.url).path == path
        assert_inert(watched)
