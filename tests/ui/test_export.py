"""`build_export` on real runs (the offline model on the sample, a hostile scripted run) and
`GET /api/runs/{run_id}/export.html` on the session's real `runlens ui` process: the file
carries exactly what the run signed, signed again by the home's key, and everything a model
wrote stays inert in its view."""

from __future__ import annotations

import hashlib
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from tests.ui.conftest import UIServer
from tests.ui.runs import (
    HOSTILE_CSV,
    HOSTILE_CSV_NAME,
    INVENTED_BACKLOG_ID,
    SCRIPT_TAG,
    MadeRun,
    completed_run,
    failed_run,
    hostile_documents,
    scripted_run,
)

from runlens.errors import UserError
from runlens.store.db import RunStore, open_store
from runlens.store.location import store_url
from runlens.store.rows import RunDetail
from runlens.ui.export import ExportedPage, build_export
from runlens.verdict.dsse import open_envelope
from runlens.verdict.exportfile import (
    EXPORT_PAYLOAD_TYPE,
    export_manifest,
    extract_bundle,
    file_bytes,
    public_key_from_b64,
)
from runlens.verdict.keys import key_id, load_public_keys
from runlens.verdict.statement import canonical_json, decode_statement, subject_digests
from runlens_feedback.contracts import REPORT

WHEN = "2026-01-01T00:00:00Z"
EVIL_LINK = "[steal](https://evil.example/steal)"
EVIL_IMAGE = "![pixel](https://evil.example/pixel.png)"
SEPARATORS = "line\u2028separator\u2029paragraph"


class _Tags(HTMLParser):
    """Every start tag of a fragment, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("export-home")


@pytest.fixture(scope="module")
def sample(home: Path) -> MadeRun:
    return completed_run(home)


@pytest.fixture(scope="module")
def hostile(home: Path) -> MadeRun:
    documents = hostile_documents()
    documents[REPORT] = documents[REPORT].replace(
        "## Top Pain Points", f"{EVIL_LINK} {EVIL_IMAGE} {SEPARATORS}\n\n## Top Pain Points"
    )
    return scripted_run(home, HOSTILE_CSV_NAME, HOSTILE_CSV, documents)


def store_of(home: Path) -> RunStore:
    return open_store(store_url(None, home))


def export(home: Path, run_id: str, workspace: Path | None = None) -> ExportedPage:
    """The export of the stored run `run_id`, its files read from `workspace` if given (a
    copy of its workspace a test altered)."""
    store = store_of(home)
    try:
        detail = store.get_run(run_id)
        assert detail is not None
        if workspace is not None:
            detail = detail.model_copy(update={"workspace": str(workspace)})
        return build_export(detail, store.citations(run_id), home=home, exported_at=WHEN)
    finally:
        store.close()


def bundle_of(page: ExportedPage) -> dict[str, Any]:
    return extract_bundle(page.html.decode("utf-8"))


def test_the_file_carries_what_the_run_signed(home: Path, sample: MadeRun) -> None:
    page = export(home, sample.run_id)
    bundle = bundle_of(page)
    statement = decode_statement(bundle["verdict"])
    subjects = subject_digests(statement)

    assert bundle["run_id"] == sample.run_id and bundle["exported_at"] == WHEN
    assert bundle["verdict"] == json.loads(
        (sample.workspace / "runtime/verdict.dsse.json").read_text()
    )
    verdict_key = public_key_from_b64(bundle["verdict_key"])
    assert key_id(verdict_key) == statement["predicate"]["signer"]["keyid"]
    # The readers' deliverables, byte for byte; the developer one and the input left out.
    assert (
        sorted(bundle["files"])
        == sorted(page.files_embedded)
        == [
            "artifacts/insight_chart.svg",
            "artifacts/insight_report.md",
            "artifacts/product_backlog.json",
        ]
    )
    for name, entry in bundle["files"].items():
        data = file_bytes(entry)
        assert data == (sample.workspace / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == subjects[name]
    assert set(bundle["omitted"]) == set(subjects) - set(bundle["files"])
    assert "developer" in bundle["omitted"]["artifacts/feedback_analysis.json"]

    # Every cited row whole: its hash recomputes, its quotes are the verified spans.
    rows = json.loads(bundle["rows"])
    assert len(rows) == page.rows_embedded > 0
    for row in rows:
        assert row["row"] is not None
        assert hashlib.sha256(canonical_json(row["row"])).hexdigest() == row["row_hash"]
        text = row["row"][row["text_column"]]
        assert all(0 <= start < end <= len(text) for start, end in row["quotes"])
    lock = statement["predicate"]["source_lock"]
    assert page.row_list_embedded
    assert hashlib.sha256(bundle["row_list"].encode()).hexdigest() == lock["rows_digest"]
    assert bundle["reviews"] == ""

    # Signed by the home's key, over every part as it is.
    export_key = public_key_from_b64(bundle["export_key"])
    assert key_id(export_key) in load_public_keys((), home)
    payload, _ = open_envelope(
        bundle["export"], {key_id(export_key): export_key}, EXPORT_PAYLOAD_TYPE
    )
    assert json.loads(payload) == export_manifest(bundle)

    # Nothing else varies from one export to the next.
    assert export(home, sample.run_id).html == page.html
    assert page.size == len(page.html) < 400_000


def test_the_view_links_each_claim_to_its_row(home: Path, sample: MadeRun) -> None:
    bundle = bundle_of(export(home, sample.run_id))
    view, rows = bundle["view"], json.loads(bundle["rows"])
    tags = tags_of(view)

    anchors = {attrs.get("id") for _, attrs in tags}
    links = {attrs["href"] for tag, attrs in tags if tag == "a" and attrs.get("href")}
    assert {f"row-{n}" for n in range(len(rows))} <= anchors
    assert {f"#row-{n}" for n in range(len(rows))} <= links
    assert view.count("<mark>") >= sum(1 for row in rows if row["quotes"])
    images = [attrs["src"] for tag, attrs in tags if tag == "img"]
    assert images and all(str(src).startswith("data:image/svg+xml;base64,") for src in images)
    for part in ('id="findings"', 'id="source"', 'id="reviews"', 'id="statement"'):
        assert part in view
    assert bundle["verdict"]["signatures"][0]["keyid"] in view


def test_what_a_model_wrote_stays_inert(home: Path, hostile: MadeRun) -> None:
    page = export(home, hostile.run_id)
    html = page.html.decode("utf-8")
    bundle = bundle_of(page)
    view = bundle["view"]

    report = file_bytes(bundle["files"]["artifacts/insight_report.md"]).decode()
    assert SCRIPT_TAG in report and EVIL_LINK in report and "\u2028" in report
    # The page has its two scripts only: nothing in the bundle closed its script.
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert "\u2028" not in html.split('id="runlens-export">', 1)[1].split("</script>")[0]
    for tag, attrs in tags_of(view):
        assert tag not in {"script", "iframe", "object", "embed", "link", "meta", "base", "form"}
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "style" not in attrs
        source = attrs.get("src")
        assert source is None or source.startswith("data:image/svg+xml;base64,"), source
        href = attrs.get("href")
        if href is not None and not href.startswith("#"):
            # A link a reader may follow, never loaded by the page and telling no referrer.
            assert href.startswith("https://") and "noreferrer" in str(attrs.get("rel"))
    assert "&lt;script&gt;" in view and "https://evil.example/pixel.png" in view


def test_a_failed_run_exports_its_findings_and_verifies(home: Path, tmp_path: Path) -> None:
    """A failed run's file is as checkable as a completed one's: a claim citing an id the
    source lacks is shown with why, but carries no row to check."""
    from runlens.verdict.exported import verify_export

    failed = failed_run(home)
    page = export(home, failed.run_id)
    bundle = bundle_of(page)
    rows = json.loads(bundle["rows"])
    view = bundle["view"]

    assert rows and all(row["row"] is not None and row["row_hash"] for row in rows)
    assert INVENTED_BACKLOG_ID not in {row["id"] for row in rows}
    assert f"row &#39;{INVENTED_BACKLOG_ID}&#39; is not in the run&#39;s Evidence Index" in view
    for code, _, path in failed.expected:
        assert code in view and path in view, (code, path)
    target = tmp_path / "failed.html"
    target.write_bytes(page.html)
    report = verify_export(target, home=home)
    assert report.verified, [check for check in report.checks if not check.ok]


def test_a_run_without_a_signed_verdict_is_refused(
    home: Path, sample: MadeRun, tmp_path: Path
) -> None:
    copy = tmp_path / sample.workspace.name
    shutil.copytree(sample.workspace, copy)
    (copy / "runtime/verdict.dsse.json").unlink()
    with pytest.raises(UserError, match=f"run {sample.run_id} has no signed verdict"):
        export(home, sample.run_id, copy)
    store = store_of(home)
    try:
        detail = store.get_run(sample.run_id)
    finally:
        store.close()
    assert detail is not None
    running = RunDetail.model_validate({**detail.model_dump(), "status": "running"})
    with pytest.raises(UserError, match="is running: it has no signed verdict yet"):
        build_export(running, [], home=home)


def test_a_deliverable_changed_since_signing_is_refused(
    home: Path, sample: MadeRun, tmp_path: Path
) -> None:
    copy = tmp_path / sample.workspace.name
    shutil.copytree(sample.workspace, copy)
    with (copy / "artifacts/insight_report.md").open("a", encoding="utf-8") as report:
        report.write("\nAn added line.\n")
    with pytest.raises(UserError, match=r"insight_report\.md changed since the run signed it"):
        export(home, sample.run_id, copy)


def test_the_api_serves_the_same_file(ui_server: UIServer) -> None:
    made = completed_run(ui_server.home)
    with ui_server.client() as client:
        response = client.get(f"/api/runs/{made.run_id}/export.html")
        missing = client.get("/api/runs/run_nope/export.html")
        page = client.get(f"/runs/{made.run_id}")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert (
        response.headers["content-disposition"]
        == f'attachment; filename="runlens-{made.run_id}.html"'
    )
    bundle = extract_bundle(response.text)
    assert bundle["run_id"] == made.run_id
    assert sorted(bundle["files"]) == [
        "artifacts/insight_chart.svg",
        "artifacts/insight_report.md",
        "artifacts/product_backlog.json",
    ]
    assert missing.status_code == 404 and "no run" in missing.json()["detail"]
    assert f'href="/api/runs/{made.run_id}/export.html"' in page.text
    assert "Download self-verifying HTML" in page.text


def test_the_api_refuses_a_run_with_nothing_signed(ui_server: UIServer) -> None:
    made = completed_run(ui_server.home)
    (made.workspace / "runtime/verdict.dsse.json").unlink()
    with ui_server.client() as client:
        response = client.get(f"/api/runs/{made.run_id}/export.html")
        page = client.get(f"/runs/{made.run_id}")
    assert response.status_code == 409
    assert "no signed verdict" in response.json()["detail"]
    assert "Download self-verifying HTML" not in page.text
