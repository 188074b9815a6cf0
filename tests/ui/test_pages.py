"""The HTML pages over real HTTP: a real `runlens ui` process and real runs made by the CLI.

The runs (`tests.ui.runs`) are made once into the server's home: a completed run, a failed run
with findings in every deliverable, a hostile run whose deliverables, rows and file name carry
markup, and a revised run to compare with the failed one. Pages are read with the standard
library's HTML parser, as a browser tokenises them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.store.helpers import run_level_run
from tests.ui.conftest import UIServer
from tests.ui.runs import (
    ADDED_TITLE,
    CHANGED_TITLE,
    REMOVED_TITLE,
    FailedRun,
    HostileRun,
    MadeRun,
    completed_run,
    failed_run,
    hostile_run,
    revised_run,
)

from runlens.store.db import open_store
from runlens.store.rows import ArtifactRow, RunDetail
from runlens.store.sync import sync_workspace
from runlens.ui.views import VERDICT_TEXTS, marked_segments, model_label, reader_artifacts
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

SAFE_SCHEMES = {None, "http", "https", "mailto"}


class Page(HTMLParser):
    """A page's start tags (with attributes), text, and the text of each element by id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.html = html
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.script_bodies: list[str] = []
        self._in_script = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_bodies.append(data)
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str]]:
        return [attributes for name, attributes in self.tags if name == tag]

    def with_attribute(self, name: str, value: str | None = None) -> list[dict[str, str]]:
        return [a for _, a in self.tags if name in a and (value is None or a[name] == value)]

    @property
    def visible(self) -> str:
        return " ".join(" ".join(self.text).split())


def scheme(url: str) -> str | None:
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url)
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", cleaned)
    return match.group(1).lower() if match else None


def assert_inert(page: Page) -> None:
    """No script but the app's own file, no handler attribute, no unsafe URL, no frame."""
    scripts = page.named("script")
    assert [s.get("src") for s in scripts] == ["/static/app.js"]
    assert "".join(page.script_bodies).strip() == ""
    tags = {name for name, _ in page.tags}
    assert not tags & {"iframe", "object", "embed", "style", "frame", "base"}
    for name, attributes in page.tags:
        handlers = [a for a in attributes if a.lower().startswith("on")]
        assert not handlers, f"<{name} {attributes}>"
        assert "style" not in attributes, f"inline style on <{name}>"
        for attribute in ("href", "src", "action", "formaction", "srcdoc"):
            if attribute in attributes:
                assert scheme(attributes[attribute]) in SAFE_SCHEMES, (name, attributes)
        if name == "img":
            assert attributes["src"].startswith("/"), attributes


@dataclass(frozen=True)
class Runs:
    completed: MadeRun
    failed: FailedRun
    hostile: HostileRun
    revised: MadeRun
    #: A run whose report the store records as confidential (see `confidential`).
    confidential: MadeRun


@pytest.fixture(scope="module")
def runs(ui_server: UIServer) -> Runs:
    home, url = ui_server.home, ui_server.db_url
    made = Runs(
        completed=completed_run(home, database_url=url),
        failed=failed_run(home, database_url=url),
        hostile=hostile_run(home, database_url=url),
        revised=revised_run(home, database_url=url),
        confidential=revised_run(home, database_url=url),
    )
    # No feedback-analysis deliverable is confidential; a plugin's may be. The store is where
    # the pages read sensitivity from, so record the report of this run as confidential there.
    store = open_store(url)
    try:
        detail = store.get_run(made.confidential.run_id)
        assert detail is not None
        artifacts = [
            a.model_copy(update={"sensitivity": "confidential"}) if a.name == REPORT else a
            for a in detail.artifacts
        ]
        citations = store.citations(detail.run_id)
        store.replace_results(detail.run_id, artifacts, detail.findings, citations)
    finally:
        store.close()
    return made


@pytest.fixture(scope="module")
def client(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as http:
        yield http


def get_page(client: httpx.Client, path: str, status: int = 200) -> Page:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    return Page(response.text)


def run_path(run: MadeRun, suffix: str = "") -> str:
    return f"/runs/{run.run_id}{suffix}"


def artifact_path(run: MadeRun, name: str) -> str:
    return run_path(run, f"/artifacts/{quote(name)}")


# -- the runs list ----------------------------------------------------------------------------


def test_the_runs_list_shows_each_run_with_its_status(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, "/")
    listed = {a["data-run-id"]: a["data-status"] for a in page.with_attribute("data-run-id")}
    assert listed[runs.completed.run_id] == "completed"
    assert listed[runs.failed.run_id] == "failed"
    assert listed[runs.hostile.run_id] == runs.hostile.status
    assert "failed_feedback.csv" in page.visible
    assert runs.hostile.input_name in page.visible  # the hostile name, shown as text
    assert_inert(page)


def test_the_runs_list_filters_by_status_and_searches(client: httpx.Client, runs: Runs) -> None:
    failed = get_page(client, "/?status=failed")
    ids = {a["data-run-id"] for a in failed.with_attribute("data-run-id")}
    assert runs.failed.run_id in ids
    assert runs.completed.run_id not in ids and runs.revised.run_id not in ids
    searched = get_page(client, f"/?q={runs.revised.run_id[-6:]}")
    assert [a["data-run-id"] for a in searched.with_attribute("data-run-id")] == [
        runs.revised.run_id
    ]
    nothing = get_page(client, "/?q=no-run-has-this")
    assert not nothing.with_attribute("data-run-id")
    assert "No runs match these filters" in nothing.visible


def test_the_runs_list_shows_a_model_file_by_its_name_with_the_spec_in_the_title(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, "/")
    (row,) = [a for a in page.tags if a[1].get("data-run-id") == runs.failed.run_id]
    index = page.tags.index(row)
    cell = next(
        a for name, a in page.tags[index:] if name == "td" and "model" in a.get("class", "")
    )
    spec = cell["title"]
    assert spec.startswith("scripted:/") and spec.endswith("/script.json"), spec
    assert "scripted:script.json" in page.visible
    assert spec not in page.visible  # the long path only in the title


def test_model_label_shortens_file_paths_only() -> None:
    assert model_label("scripted:/tmp/very/long/path/turns.json") == "scripted:turns.json"
    assert model_label("scripted:C:\\runs\\turns.json") == "scripted:turns.json"
    assert model_label("scripted:turns.json") == "scripted:turns.json"
    assert model_label("openai:gpt-4o") == "openai:gpt-4o"
    assert model_label("offline") == "offline"


# -- one run ----------------------------------------------------------------------------------


def test_the_failed_run_page_shows_the_verdict_first_and_every_finding(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, run_path(runs.failed))
    sections = [a.get("id") for name, a in page.tags if name == "section" and a.get("id")]
    assert sections[0] == "verdict"
    (verdict,) = page.with_attribute("id", "verdict")
    assert verdict["data-status"] == "failed"
    assert runs.failed.error_message and runs.failed.error_message in page.visible
    assert len(page.with_attribute("data-finding-code")) == len(runs.failed.findings)
    for code, artifact, path in runs.failed.expected:
        pattern = re.compile(
            rf'data-finding-code="{code}".*?href="[^"]*/artifacts/{re.escape(artifact)}'
            rf'#finding-\d+">{re.escape(artifact)} · {re.escape(path)}',
            re.S,
        )
        assert pattern.search(page.html), (code, artifact, path)
    assert "unknown_evidence_id × 2" in page.visible


def test_the_run_page_lists_plan_deliverables_and_events(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, run_path(runs.completed))
    (verdict,) = page.with_attribute("id", "verdict")
    assert verdict["data-status"] == "completed"
    steps = page.with_attribute("data-step-id")
    assert steps and all("status-completed" in s["class"] for s in steps)
    assert "Load the feedback CSV and build the Evidence Index" in page.visible
    assert "evidence index built" in page.visible  # a success criterion
    rows = {a["data-artifact"] for a in page.with_attribute("data-artifact")}
    assert {ANALYSIS, BACKLOG, REPORT} <= rows
    hrefs = {a["href"] for a in page.named("a")}
    assert f"/api/runs/{runs.completed.run_id}/artifacts/{REPORT}" in hrefs
    assert artifact_path(runs.completed, REPORT) in hrefs
    assert run_path(runs.completed, "/report") in hrefs
    assert len(page.with_attribute("data-seq")) > 10
    assert "run.completed" in page.visible
    assert not page.with_attribute("data-cancel-url")  # not live: nothing to cancel
    (run,) = page.with_attribute("id", "run")
    assert run["data-live"] == "0"


def test_a_run_not_started_yet_shows_the_declared_plan_and_the_live_texts(
    client: httpx.Client, ui_server: UIServer
) -> None:
    """As the launcher leaves it: `created` in the store, no record on disk yet. The page
    shows the plugin's plan (steps pending, updated live by app.js) and carries the
    banner's sentence for every status, so the script never shows a stale one."""
    store = open_store(ui_server.db_url)
    run_id = "run_20261201T000000Z_c2live"
    store.create_pending(
        run_id,
        plugin="feedback-analysis",
        model="offline",
        input_name="later.csv",
        workspace=ui_server.home / run_id,
        origin="api",
    )
    try:
        page = get_page(client, f"/runs/{run_id}")
    finally:
        store.delete_run(run_id)
        store.close()
    (verdict,) = page.with_attribute("id", "verdict")
    assert verdict["data-status"] == "created"
    for status, text in VERDICT_TEXTS.items():
        assert verdict[f"data-text-{status}"] == text
    assert VERDICT_TEXTS["created"] in page.visible
    assert VERDICT_TEXTS["running"].startswith("Running: the model is working")
    assert VERDICT_TEXTS["validating"].startswith("Validating: ")
    steps = [a["data-step-id"] for a in page.with_attribute("data-step-id")]
    assert steps == [
        "load_feedback",
        "analyze_feedback",
        "build_backlog",
        "write_report",
        "validate_deliverables",
    ]
    badges = page.with_attribute("data-step-status")
    assert len(badges) == 5 and all("status-pending" in b["class"] for b in badges)
    assert "No plan recorded yet" not in page.visible
    assert_inert(page)


def test_an_unknown_run_is_a_404_page_naming_it(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, "/runs/run_nope_000", status=404)
    assert "run_nope_000" in page.visible


def test_a_unique_part_of_a_run_id_redirects_to_the_run(client: httpx.Client, runs: Runs) -> None:
    response = client.get(f"/runs/{runs.failed.run_id[-6:]}")
    assert response.status_code == 307
    assert response.headers["location"] == run_path(runs.failed)


def test_findings_about_the_run_as_a_whole_are_in_the_api_and_on_the_run_page(
    client: httpx.Client,
    ui_server: UIServer,
    feedback_csv: Path,
    good_documents: tuple[dict[str, Any], dict[str, Any], str],
) -> None:
    workspace = ui_server.home / "run_level_findings"
    result = run_level_run(workspace, feedback_csv, good_documents)
    assert result.status.value == "failed"
    store = open_store(ui_server.db_url)
    try:
        assert sync_workspace(store, workspace) == result.run_id  # as the run's mirror does
    finally:
        store.close()
    response = client.get(f"/api/runs/{result.run_id}")
    assert response.status_code == 200, response.text
    found = [(f["code"], f["artifact"], f["validator"]) for f in response.json()["findings"]]
    assert found == [
        ("hook_error", "", "CrashingCheck"),
        ("run_budget_exceeded", "", "RunWideCheck"),
    ]
    assert response.json()["finding_count"] == 2
    page = get_page(client, f"/runs/{result.run_id}")
    assert [a["data-finding-code"] for a in page.with_attribute("data-finding-code")] == [
        code for code, _, _ in found
    ]
    assert "The run as a whole" in page.visible
    assert "validator CrashingCheck failed: RuntimeError: the check itself is broken" in (
        page.visible
    )
    # Not linked to an artifact view: no deliverable holds them.
    assert not [a for a in page.named("a") if a.get("href", "").endswith("/artifacts/")]


# -- artifact views ---------------------------------------------------------------------------


def test_the_json_view_marks_each_finding_at_its_path(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, artifact_path(runs.failed, ANALYSIS))
    by_id = {a["id"]: a for _, a in page.tags if "id" in a}
    assert "has-finding" in by_id["items[1].evidence_text"]["class"]
    assert "has-finding" in by_id["items[3].feedback_id"]["class"]
    assert "items[0].sentiment" in by_id
    good = [a for a in page.named("a") if a.get("href", "").endswith("/evidence/fb_001")]
    assert any("cite-verified" in a["class"] for a in good)


def test_ids_cited_without_a_quote_link_to_their_row_and_back(
    client: httpx.Client, runs: Runs
) -> None:
    run_id = runs.failed.run_id
    location = "items[0].evidence_feedback_ids[0]"  # the backlog cites fb_001 by id only
    view = get_page(client, artifact_path(runs.failed, BACKLOG))
    link = re.search(
        rf'id="{re.escape(location)}"><span class="jindex">0</span> '
        rf'<a class="jstr cite cite-verified" id="cite-(\d+)" '
        rf'href="/runs/{run_id}/evidence/fb_001"',
        view.html,
    )
    assert link, "the cited id links to its row as a verified citation"
    evidence = get_page(client, run_path(runs.failed, "/evidence/fb_001"))
    back = f"{artifact_path(runs.failed, BACKLOG)}#cite-{link.group(1)}"
    rows = re.findall(
        rf'data-citation-status="verified">.*?<a href="{re.escape(back)}">{re.escape(location)}'
        r"</a></td>\s*<td>(.*?)</td>",
        evidence.html,
        re.S,
    )
    assert len(rows) == 1 and "cites this row by its id (no quote)" in rows[0]
    # The analysis cites fb_001 with a quote beside its id: one citation there, the quote's.
    analysis = [a for a in evidence.named("a") if f"{ANALYSIS}#cite-" in a.get("href", "")]
    assert len(analysis) == 1
    marks = re.findall(r"<mark[^>]*>(.*?)</mark>", evidence.html)
    assert runs.failed.good_citation is not None and runs.failed.good_citation.quote in marks


def test_the_markdown_view_links_each_quote_and_shows_findings(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, artifact_path(runs.failed, REPORT))
    good = runs.failed.good_citation
    assert good is not None
    links = re.findall(
        rf'<a class="cite cite-verified" id="cite-\d+" href="/runs/{runs.failed.run_id}'
        rf'/evidence/{good.row_id}"[^>]*>“{re.escape(good.quote)}”</a>',
        page.html,
    )
    assert len(links) == 1
    assert any(a.get("class") == "findings-note" for a in page.named("aside"))
    assert "unsourced_quote" in page.visible
    assert page.with_attribute("id", f"line-{good.line}")


def test_artifact_views_serve_only_the_runs_deliverables(client: httpx.Client, runs: Runs) -> None:
    for name in ("runtime/run.json", "manifest.json", "artifacts/%2e%2e/manifest.json"):
        page = get_page(client, run_path(runs.completed, f"/artifacts/{name}"), status=404)
        assert "has no deliverable" in page.visible, name


def test_the_chart_is_shown_as_an_image_of_the_raw_file(client: httpx.Client, runs: Runs) -> None:
    chart = "artifacts/insight_chart.svg"
    page = get_page(client, artifact_path(runs.completed, chart))
    (image,) = page.named("img")
    assert image["src"] == f"/api/runs/{runs.completed.run_id}/artifacts/{chart}"


# -- the reader view --------------------------------------------------------------------------


def test_the_reader_view_shows_the_verdict_then_user_deliverables(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, run_path(runs.failed, "/report"))
    sections = [a.get("id") for name, a in page.tags if name in {"section", "article"}]
    assert sections[0] == "verdict"
    headings = re.findall(r"<h2>(.*?)</h2>", page.html)
    assert "Insight Report" in headings and "Product Backlog JSON" in headings
    assert "Feedback Analysis JSON" not in headings  # audience developer
    good = runs.failed.good_citation
    assert good is not None
    evidence = f"/runs/{runs.failed.run_id}/evidence/{good.row_id}"
    quoted = [a for a in page.named("a") if a.get("href") == evidence and "cite" in a["class"]]
    assert quoted


def test_confidential_deliverables_are_not_in_the_reader_view(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, run_path(runs.confidential, "/report"))
    assert "Insight Report" not in page.visible
    assert REPORT not in page.html
    assert "Product Backlog JSON" in page.visible
    run_page = get_page(client, run_path(runs.confidential))
    assert "confidential" in run_page.visible  # the run page still lists it, marked


def test_reader_artifacts_filter() -> None:
    def row(name: str, audience: str, sensitivity: str, status: str = "validated") -> ArtifactRow:
        return ArtifactRow(
            name=name,
            label=name,
            audience=audience,
            sensitivity=sensitivity,
            required=True,
            status=status,
        )

    detail = RunDetail(
        run_id="r",
        plugin="p",
        model="offline",
        status="completed",
        workspace="/tmp/r",
        updated_at="2026-01-01T00:00:00+00:00",
        artifacts=[
            row("a.md", "user", "internal"),
            row("b.md", "user", "confidential"),
            row("c.json", "developer", "internal"),
            row("d.svg", "user", "public", status="missing"),
            row("e.json", "user", "public"),
        ],
    )
    assert [a.name for a in reader_artifacts(detail)] == ["a.md", "e.json"]


# -- the evidence page ------------------------------------------------------------------------


def test_the_evidence_page_marks_the_quoted_span(client: httpx.Client, runs: Runs) -> None:
    good = runs.failed.good_citation
    assert good is not None
    page = get_page(client, run_path(runs.failed, f"/evidence/{good.row_id}"))
    marks = re.findall(r"<mark[^>]*>(.*?)</mark>", page.html)
    assert marks == [good.quote]
    assert "Exporting the weekly report takes three minutes" in page.visible
    statuses = [a["data-citation-status"] for a in page.with_attribute("data-citation-status")]
    assert statuses and set(statuses) == {"verified"}
    back = [a["href"] for a in page.named("a") if "#cite-" in a.get("href", "")]
    assert any(REPORT in href for href in back) and any(ANALYSIS in href for href in back)


def test_failed_citations_of_a_row_are_shown_failed_with_reason(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, run_path(runs.failed, "/evidence/fb_002"))
    statuses = [a["data-citation-status"] for a in page.with_attribute("data-citation-status")]
    assert "failed" in statuses
    assert "evidence_text_mismatch" in page.visible
    assert "Login never works on Sundays" in page.visible  # the wrong quote, shown as cited


def test_an_unknown_row_is_a_404_naming_it(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, run_path(runs.failed, "/evidence/fb_404"), status=404)
    assert "fb_404" in page.visible
    assert "unknown_evidence_id" in page.visible  # the deliverable that cites it anyway


def test_marked_segments_merge_overlaps_in_nfc_text() -> None:
    text = "Cafe\u0301 is slow, very slow"  # "Café" decomposed: 5 code points, 4 in NFC
    segments = marked_segments(text, [(0, 4), (2, 7), (14, 18), (18, 23), (40, 50)])
    assert [(s.text, s.marked) for s in segments] == [
        ("Café is", True),
        (" slow, ", False),
        ("very slow", True),
    ]
    assert [s.citations for s in segments if s.marked] == [2, 2]
    assert [(s.text, s.marked) for s in marked_segments("abc", [])] == [("abc", False)]


# -- hostile content --------------------------------------------------------------------------


def test_the_hostile_runs_pages_run_nothing(client: httpx.Client, runs: Runs) -> None:
    hostile = runs.hostile
    cited = hostile.hostile_citation
    assert cited is not None
    paths = [
        "/",
        run_path(hostile),
        run_path(hostile, "/report"),
        artifact_path(hostile, REPORT),
        artifact_path(hostile, ANALYSIS),
        artifact_path(hostile, BACKLOG),
        run_path(hostile, f"/evidence/{cited.row_id}"),
        f"/compare?a={runs.failed.run_id}&b={hostile.run_id}",
    ]
    for path in paths:
        assert_inert(get_page(client, path))


def test_the_hostile_report_shows_its_markup_as_text(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, artifact_path(runs.hostile, REPORT))
    assert "<script>window.__pwned=1</script>" in page.visible
    assert "[click me](javascript:window.__pwned=1)" in page.visible
    assert "Template: {{7*7}} {% raw %}" in page.visible  # template syntax stays text


def test_the_hostile_row_is_marked_as_text(client: httpx.Client, runs: Runs) -> None:
    cited = runs.hostile.hostile_citation
    assert cited is not None
    page = get_page(client, run_path(runs.hostile, f"/evidence/{cited.row_id}"))
    marks = re.findall(r"<mark[^>]*>(.*?)</mark>", page.html)
    assert marks == ["Login fails &lt;script&gt;window.__pwned=1&lt;/script&gt;"]


# -- compare and new --------------------------------------------------------------------------


def test_compare_shows_what_changed(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, f"/compare?a={runs.failed.run_id}&b={runs.revised.run_id}")
    changes = re.findall(
        r'data-change="(\w+)">\s*<span class="change-kind">\w+</span> '
        r'<strong class="change-key">(.*?)</strong>',
        page.html,
    )
    assert ("added", ADDED_TITLE) in changes
    assert ("removed", REMOVED_TITLE) in changes
    assert ("changed", CHANGED_TITLE) in changes
    assert ("removed", "fb_404") in changes  # the analysis item, matched by its row id
    codes = {a["data-code"] for a in page.with_attribute("data-code")}
    assert {"unknown_evidence_id", "evidence_text_mismatch", "unsourced_quote"} <= codes
    assert "matched by feedback_id" in page.visible and "matched by title" in page.visible


def test_a_run_page_offers_to_compare_with_the_previous_run_of_its_input(
    client: httpx.Client, runs: Runs
) -> None:
    page = get_page(client, run_path(runs.revised))
    expected = f"/compare?a={runs.failed.run_id}&b={runs.revised.run_id}"
    assert expected in {a["href"] for a in page.named("a")}


def test_compare_names_a_run_it_cannot_find(client: httpx.Client, runs: Runs) -> None:
    page = get_page(client, f"/compare?a={runs.failed.run_id}&b=run_nope", status=404)
    assert "run_nope" in page.visible
    form = get_page(client, "/compare")
    assert {i["name"] for i in form.named("input")} == {"a", "b"}


def test_the_new_run_form(client: httpx.Client) -> None:
    page = get_page(client, "/new")
    (form,) = page.with_attribute("id", "new-run")
    assert form["action"] == "/api/runs" and form["enctype"] == "multipart/form-data"
    fields = {a["name"] for a in page.with_attribute("name")} - {"referrer", "viewport"}
    assert {"file", "plugin", "model", "id_column", "text_column", "encoding", "sheet"} <= fields
    assert {"repair_turns"} <= fields
    options = [a["value"] for a in page.named("option")]
    assert "feedback-analysis" in options
    (model,) = [a for a in page.named("input") if a.get("name") == "model"]
    assert model["value"] == "offline"


def test_static_assets_are_served(client: httpx.Client) -> None:
    for path, kind in (("/static/app.css", "text/css"), ("/static/app.js", "javascript")):
        response = client.get(path)
        assert response.status_code == 200 and kind in response.headers["content-type"]
