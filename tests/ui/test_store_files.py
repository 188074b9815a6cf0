"""Runs of the workers in the UI: queued runs and the worker column, cancelling a queued run,
and a run done on another machine read from the copy of its files in the store.

The runs are made by the real CLI into a home of their own (the "worker's machine") with the
server's store, then their files go into the store (`sync_workspace(upload_files=True)`, as a
worker's mirror does), and the store says a worker on another host ran them. One run's
workspace is then deleted; the other's is left behind with a stale report, as a killed
worker's cache would be: the pages read both from the store, escaped as ever.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest
from tests.ui.conftest import UIServer, running_server
from tests.ui.runs import FailedRun, HostileRun, MadeRun, completed_run, failed_run, hostile_run
from tests.ui.test_pages import Page, assert_inert, get_page

from runlens.store.db import open_store
from runlens.store.sync import sync_workspace
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

WORKER = "worker-b:4242:0a1b2c"
QUEUED = "run_20991231T235959Z_queued"


@dataclass(frozen=True)
class Runs:
    #: Done by a worker elsewhere; its workspace deleted since.
    gone: FailedRun
    #: Done by a worker elsewhere; a stale copy of its workspace left here.
    stale: HostileRun
    #: Done here, as ever: read from its workspace.
    local: MadeRun
    #: Done here, its workspace deleted, nothing of it in the store's files.
    lost: MadeRun


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    with running_server(tmp_path_factory.mktemp("ui-store-files")) as running:
        yield running


@pytest.fixture(scope="module")
def runs(server: UIServer, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    elsewhere = tmp_path_factory.mktemp("worker-machine")
    url = server.db_url
    made = Runs(
        gone=failed_run(elsewhere, database_url=url),
        stale=hostile_run(elsewhere, database_url=url),
        local=completed_run(server.home, database_url=url),
        lost=completed_run(server.home, database_url=url),
    )
    store = open_store(url)
    try:
        for run in (made.gone, made.stale):
            store.upsert_run(run.run_id, worker=WORKER)
            sync_workspace(store, run.workspace, upload_files=True)
            store.upsert_run(run.run_id, host="worker-b")
        store.upsert_run(
            QUEUED, plugin="feedback-analysis", model="offline", status="queued",
            workspace="", input_name="queued <b>tickets</b>.csv",
            created_at="2099-12-31T23:59:59.000+00:00",
        )  # fmt: skip
    finally:
        store.close()
    shutil.rmtree(made.gone.workspace)
    shutil.rmtree(made.lost.workspace)
    report = made.stale.workspace / REPORT
    report.chmod(0o644)
    report.write_text("# STALE copy of a killed worker\n", encoding="utf-8")
    return made


@pytest.fixture(scope="module")
def client(server: UIServer) -> Iterator[httpx.Client]:
    with server.client() as http:
        yield http


def _artifact(run: MadeRun, name: str) -> str:
    return f"/runs/{run.run_id}/artifacts/{quote(name)}"


def test_a_gone_workspaces_files_come_from_the_store(
    client: httpx.Client, server: UIServer, runs: Runs
) -> None:
    gone = runs.gone
    assert not gone.workspace.exists()
    page = get_page(client, _artifact(gone, REPORT))
    cited = gone.good_citation
    assert cited is not None and cited.quote in page.visible
    assert "cannot be opened" not in page.visible
    analysis = get_page(client, _artifact(gone, ANALYSIS))
    assert analysis.with_attribute("data-finding-code", "evidence_text_mismatch")
    report_view = get_page(client, f"/runs/{gone.run_id}/report")
    assert cited.quote in report_view.visible
    evidence = get_page(client, f"/runs/{gone.run_id}/evidence/{cited.row_id}")
    assert re.findall(r"<mark[^>]*>", evidence.html)
    row = client.get(f"/api/runs/{gone.run_id}/evidence/{cited.row_id}")
    assert row.status_code == 200 and cited.quote in row.json()["text"]
    store = open_store(server.db_url)
    try:
        stored = store.read_file(gone.run_id, BACKLOG)
    finally:
        store.close()
    raw = client.get(f"/api/runs/{gone.run_id}/artifacts/{BACKLOG}")
    assert raw.status_code == 200 and raw.content == stored
    # The copy is in the runs home's cache, never where the run's own workspace was.
    assert (server.home / ".store-cache" / gone.run_id / BACKLOG).read_bytes() == stored
    assert not gone.workspace.exists()


def test_a_stale_copy_of_a_workers_run_is_not_read(client: httpx.Client, runs: Runs) -> None:
    stale = runs.stale
    page = get_page(client, _artifact(stale, REPORT))
    assert "STALE copy" not in page.visible
    assert "<script>window.__pwned=1</script>" in page.visible  # the store's, as text
    cited = stale.hostile_citation
    assert cited is not None
    paths = [
        f"/runs/{stale.run_id}",
        f"/runs/{stale.run_id}/report",
        _artifact(stale, REPORT),
        _artifact(stale, ANALYSIS),
        _artifact(stale, BACKLOG),
        f"/runs/{stale.run_id}/evidence/{cited.row_id}",
        f"/compare?a={runs.gone.run_id}&b={stale.run_id}",
    ]
    for path in paths:
        assert_inert(get_page(client, path))
    evidence = get_page(client, f"/runs/{stale.run_id}/evidence/{cited.row_id}")
    marks = re.findall(r"<mark[^>]*>(.*?)</mark>", evidence.html)
    assert marks == ["Login fails &lt;script&gt;window.__pwned=1&lt;/script&gt;"]


def test_local_workspaces_are_read_as_ever(
    client: httpx.Client, server: UIServer, runs: Runs
) -> None:
    page = get_page(client, _artifact(runs.local, REPORT))
    assert "cannot be opened" not in page.visible
    assert not (server.home / ".store-cache" / runs.local.run_id).exists()
    lost = get_page(client, _artifact(runs.lost, REPORT))  # nothing to read it from
    assert "workspace cannot be opened" in lost.visible
    missing = client.get(f"/api/runs/{runs.lost.run_id}/artifacts/{REPORT}")
    assert missing.status_code == 404


def test_the_runs_list_shows_queued_runs_and_workers(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, "/")
    row = re.search(rf'<tr data-run-id="{QUEUED}" data-status="queued">(.*?)</tr>', page.html, re.S)
    assert row is not None and 'class="badge status-queued"' in row.group(1)
    assert "queued &lt;b&gt;tickets&lt;/b&gt;.csv" in row.group(1)  # escaped
    assert re.search(r'<td class="mono worker">—</td>', row.group(1))
    gone = re.search(rf'<tr data-run-id="{runs.gone.run_id}".*?</tr>', page.html, re.S)
    # The id is cut to the column's width, the whole of it in the title.
    cell = f'<td class="mono worker"><span class="clip" title="{WORKER}">{WORKER}</span></td>'
    assert gone is not None and cell in gone.group(0)
    assert "<th>Worker</th>" in page.html
    options = [o.get("value") for o in page.named("option")]
    assert "queued" in options
    only = get_page(client, "/?status=queued")
    assert only.with_attribute("data-run-id", QUEUED)
    assert not only.with_attribute("data-run-id", runs.gone.run_id)
    listed = client.get("/api/runs", params={"status": "queued"}).json()["runs"]
    assert [(r["run_id"], r["status"], r["worker"]) for r in listed] == [(QUEUED, "queued", None)]
    detail = client.get(f"/api/runs/{runs.gone.run_id}").json()
    assert detail["worker"] == WORKER


def test_a_queued_run_can_be_cancelled_from_its_page(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, f"/runs/{QUEUED}")
    assert page.with_attribute("id", "cancel")
    assert "Queued: submitted to the workers" in page.visible
    assert "queued" in page.visible
    response = client.post(f"/api/runs/{QUEUED}/cancel")
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "cancelled"
    again = client.post(f"/api/runs/{QUEUED}/cancel")
    assert again.status_code == 409 and "nothing to cancel" in again.json()["detail"]
    ended: Page = get_page(client, f"/runs/{QUEUED}")
    assert not ended.with_attribute("id", "cancel")
