"""Write docs/screenshots/*.png: the pages of a real `runlens ui`, as Chromium shows them.

    python scripts/ui_screenshots.py [--out docs/screenshots]

Makes real runs with the CLI into a temporary RunLens home (the README's first run: the
offline model on examples/sample_feedback.csv; the UI tests' failed run and its revised
version), starts `runlens ui` on a free loopback port over that home, and drives Debian's
Chromium (/usr/bin/chromium) through Playwright: the /new page with a file chosen, the page
of the run it starts while that run is live, the runs list meanwhile, the failed run's page,
the reader view (and its chart), an evidence row with its metadata and analysis, the
analysed rows filtered by sentiment, the comparison of the failed and the revised run, the
revised run's reader view after its report was edited, review by people: the queue
(`/reviews`), the reader view's mark controls and the run page's review panel, after a
reviewer marked a quote wrong and requested changes; and that run's self-verifying HTML file
opened from disk (its check, and a claim clicked to its row). Run it again after changing the pages.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from playwright.sync_api import (
    Browser,
    FloatRect,
    Page,
    ViewportSize,
    expect,
    sync_playwright,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the UI tests' run helpers: tests/ui/runs.py

from tests.ui.reviewers import add_reviewer  # noqa: E402
from tests.ui.runs import (  # noqa: E402
    SAMPLE_CSV,
    failed_run,
    revised_run,
    run_cli,
)

CHROMIUM = "/usr/bin/chromium"
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
#: Seconds `runlens ui` may take to answer.
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def ui_server(home: Path) -> Iterator[str]:
    """A `runlens ui` process over `home`, until the block ends; yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RUNLENS_HOME": str(home)}
    command = [sys.executable, "-m", "runlens", "ui", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                _, stderr = process.communicate()
                raise SystemExit(f"runlens ui exited {process.returncode}: {stderr.decode()}")
            try:
                httpx.get(f"{url}/api/runs", timeout=1.0).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"runlens ui did not answer on {url}") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def shoot(
    page: Page,
    out: Path,
    *,
    start: str | None = None,
    until: str | None = None,
    height: int | None = None,
) -> None:
    """Screenshot the page as it is: whole, or from the top of the element `start` (else the
    page's top) down to the top of the element `until` or `height` pixels (long pages would
    make unreadable images)."""
    top = 0 if start is None else max(_top(page, start) - 16, 0)
    if until is not None:
        height = _top(page, until) - 8 - top
    if height is None:
        page.screenshot(path=str(out), full_page=True)
    else:
        clip: FloatRect = {"x": 0, "y": top, "width": VIEWPORT["width"], "height": height}
        page.screenshot(path=str(out), full_page=True, clip=clip)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


def _top(page: Page, selector: str) -> int:
    """Where the first element matching `selector` starts, in page pixels."""
    top = page.locator(selector).first.evaluate(
        "element => element.getBoundingClientRect().top + window.scrollY"
    )
    return int(top)


def many_rows(path: Path, copies: int) -> Path:
    """The sample's rows `copies` times over, each copy with ids of its own: a run that lasts
    long enough to be seen live."""
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        columns = list(reader.fieldnames or [])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for copy in range(copies):
        writer.writerows({**row, "feedback_id": f"{row['feedback_id']}_{copy}"} for row in rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    out: Path = parser.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="runlens-screens-") as scratch:
        folder = Path(scratch)
        home = folder / "home"
        completed = run_cli(home, SAMPLE_CSV)
        assert completed.status == "completed", completed.verdict
        failed = failed_run(home)
        revised = revised_run(home)
        upload = many_rows(folder / "feedback_export.csv", 50)
        with ui_server(home) as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            context = browser.new_context(base_url=url, viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(20_000)
            # A run started from /new, seen live, and the runs list while it runs.
            page.goto("/new")
            page.set_input_files('input[name="file"]', upload)
            shoot(page, out / "new_run.png")
            page.locator('form [type="submit"]').click()
            page.wait_for_url("**/runs/run_*")
            live = page.url
            expect(page.locator("#verdict")).to_have_attribute("data-status", "running")
            expect(page.locator("#events > *").nth(7)).to_be_visible()
            shoot(page, out / "live_run.png", height=1250)
            page.goto("/")
            shoot(page, out / "runs.png")
            page.goto(live)
            expect(page.locator("#verdict")).to_have_attribute(
                "data-status", "completed", timeout=180_000
            )
            # The other pages, from the runs made by the CLI.
            page.goto(f"/runs/{failed.run_id}")
            shoot(page, out / "failed_run.png", until="section:has(#events)")
            page.goto(f"/runs/{completed.run_id}/report")
            shoot(page, out / "reader.png", start='.prose h2:has-text("Evidence")', height=1000)
            chart = page.locator("img.md-figure").first
            chart.scroll_into_view_if_needed()
            page.wait_for_function("img => img.naturalWidth > 0", arg=chart.element_handle())
            summary = '.prose h2:has-text("Executive Summary")'
            shoot(page, out / "reader_chart.png", start=summary, height=1000)
            evidence = page.locator('a[href*="/evidence/"]').first.get_attribute("href")
            assert evidence, "the reader view links no evidence row"
            page.goto(evidence)
            shoot(page, out / "evidence.png")
            page.goto(f"/runs/{completed.run_id}/rows?sentiment=negative")
            shoot(page, out / "rows.png", height=1100)
            page.goto(f"/compare?a={failed.run_id}&b={revised.run_id}")
            shoot(page, out / "compare.png")
            # The revised run's report edited after its verdict, as a user's `sed` would.
            report = revised.workspace / "artifacts" / "insight_report.md"
            subprocess.run(
                ["sed", "-i", "s/takes three minutes/takes an hour/", str(report)], check=True
            )
            page.goto(f"/runs/{revised.run_id}/report")
            expect(page.locator("#changed-after-validation")).to_be_visible()
            shoot(page, out / "changed_after_validation.png", until=".prose h2")
            review_screens(page, url, home, completed.run_id, out)
            export_screens(browser, url, completed.run_id, folder, out)
            browser.close()


def review_screens(page: Page, url: str, home: Path, run_id: str, out: Path) -> None:
    """Review by people: a reviewer marks two quotes of `run_id` and requests changes (through
    the API, as a client would), then the queue, the reader view's mark controls (signed in)
    and the run page's review panel."""
    from runlens.store.db import store_url

    alice = add_reviewer(home, store_url(None, home), "alice")
    bob = add_reviewer(home, store_url(None, home), "bob")
    page.goto("/reviews")
    page.locator('.reviewer-sign-in input[name="token"]').fill(bob)
    page.locator('.reviewer-sign-in [type="submit"]').click()
    page.goto(f"/runs/{run_id}/report")
    claims = page.locator(".claim-review:has(.claim-quote)")
    marked = []
    for index in range(2):
        claim = claims.nth(index)
        marked.append(
            {
                "artifact": claim.locator('input[name="artifact"]').get_attribute("value"),
                "location": claim.get_attribute("data-claim-location"),
                "row_id": claim.get_attribute("data-claim-row"),
            }
        )
    with httpx.Client(base_url=url, headers={"X-RunLens-Reviewer": alice}) as client:
        for claim, mark, note in (
            (marked[0], "wrong", "The row complains about the bill, not about seats."),
            (marked[1], "correct", "Checked against the row."),
        ):
            client.post(
                f"/api/runs/{run_id}/marks", json={**claim, "mark": mark, "note": note}
            ).raise_for_status()
        client.post(
            f"/api/runs/{run_id}/reviews",
            json={
                "decision": "request-changes",
                "note": "One quote is attributed to the wrong issue; see my marks.",
            },
        ).raise_for_status()
    page.goto("/reviews")
    shoot(page, out / "review_queue.png")
    page.goto(f"/runs/{run_id}/report")
    first = page.locator(".claims").first
    first.scroll_into_view_if_needed()
    shoot(page, out / "review_marks.png", start=".claims", height=900)
    page.goto(f"/runs/{run_id}")
    shoot(page, out / "review_panel.png", start="#review", until="#signature")


def export_screens(browser: Browser, url: str, run_id: str, folder: Path, out: Path) -> None:
    """The reviewed run's self-verifying HTML file, as the run page's download gives it,
    opened from disk with every request refused: its check and the verdict, then a claim
    clicked to its row."""
    target = folder / f"runlens-{run_id}.html"
    with httpx.Client(base_url=url) as client:
        response = client.get(f"/api/runs/{run_id}/export.html")
        response.raise_for_status()
        target.write_bytes(response.content)
    context = browser.new_context(viewport=VIEWPORT)
    context.route(
        "**/*",
        lambda route: route.abort() if route.request.url != target.as_uri() else route.continue_(),
    )
    page = context.new_page()
    page.goto(target.as_uri())
    expect(page.locator("#runlens-check")).to_have_class("check check-verified")
    shoot(page, out / "export.png", height=900)
    page.locator("#file-1 a.cite").first.click()
    expect(page.locator(".cited-row:target")).to_be_visible()
    shoot(page, out / "export_row.png", start=".cited-row:target", height=600)
    context.close()


if __name__ == "__main__":
    main()
