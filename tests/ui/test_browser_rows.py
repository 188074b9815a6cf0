"""The rows page, a row's metadata on its evidence page and the chart in the reader view, in
Debian's Chromium (/usr/bin/chromium) through Playwright, against a real `runlens ui`."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from tests.ui.conftest import UIServer
from tests.ui.runs import SAMPLE_CSV, MadeRun, run_cli

TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def sample_run(ui_server: UIServer) -> MadeRun:
    made = run_cli(ui_server.home, SAMPLE_CSV, database_url=ui_server.db_url)
    assert made.status == "completed", made.verdict
    return made


@pytest.fixture
def page(browser: Browser, ui_server: UIServer) -> Iterator[Page]:
    headers = {"Authorization": f"Bearer {ui_server.token}"} if ui_server.token else {}
    context = browser.new_context(
        base_url=ui_server.url,
        extra_http_headers=headers,
        viewport={"width": 1280, "height": 900},
    )
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


def counts(page: Page) -> tuple[int, int]:
    """(rows matching, rows analysed), as the rows page says them."""
    found = re.match(r"(\d+) of (\d+) rows?", page.locator("#rows .count").inner_text())
    assert found, page.locator("#rows .count").inner_text()
    return int(found[1]), int(found[2])


def test_the_rows_page_filters_and_links_each_row_to_its_evidence(
    page: Page, sample_run: MadeRun
) -> None:
    page.goto(f"/runs/{sample_run.run_id}")
    page.locator("#rows-link").click()
    page.wait_for_url(f"**/runs/{sample_run.run_id}/rows")
    rows = page.locator("table.rows tbody tr")
    assert rows.count() > 1
    total = counts(page)[1]
    page.select_option('select[name="sentiment"]', "negative")
    page.locator('#row-filters button[type="submit"]').click()
    page.wait_for_url("**sentiment=negative**")
    matched, of_total = counts(page)
    assert of_total == total and 0 < matched < total
    cells = page.locator('table.rows td[data-field="sentiment"]')
    assert set(cells.all_inner_texts()) == {"negative"}
    first = rows.first
    row_id = first.get_attribute("data-row-id")
    first.locator("a").first.click()
    page.wait_for_url(f"**/evidence/{row_id}")
    expect(page.locator("h1")).to_contain_text(str(row_id))


def test_the_evidence_page_shows_the_rows_metadata_and_analysis(
    page: Page, sample_run: MadeRun
) -> None:
    page.goto(f"/runs/{sample_run.run_id}/evidence/fb_001")
    columns = page.locator("#row-metadata")
    for name in ("channel", "created_at", "rating", "user_segment"):
        expect(columns.locator("dt", has_text=name)).to_be_visible()
    analysis = page.locator("#row-analysis")
    expect(analysis.locator("dt", has_text="sentiment")).to_be_visible()
    expect(analysis.locator("dt", has_text="severity")).to_be_visible()


def test_the_reader_view_loads_the_chart_and_its_tables_fit(
    page: Page, sample_run: MadeRun
) -> None:
    page.goto(f"/runs/{sample_run.run_id}/report")
    chart = page.locator("img.md-figure").first
    chart.scroll_into_view_if_needed()
    expect(chart).to_be_visible()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=chart.element_handle()
    )
    assert chart.evaluate("img => img.naturalWidth") > 0
    for table in page.locator(".reader-artifact .prose table").all():
        fits = table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1")
        assert fits, "a report table is wider than the article"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
