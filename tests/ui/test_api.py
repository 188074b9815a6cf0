"""The HTTP API of `runlens ui`, over real HTTP against real server processes.

Runs come from real uploads (`POST /api/runs`, which starts `runlens run` as a child) and
from the CLI (`tests.ui.runs.failed_run`), into the session's `ui_server` home.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.ui.conftest import UPLOAD_LIMIT_MB, UIServer, running_server, server_env
from tests.ui.runs import SAMPLE_CSV, FailedRun, failed_run

from runlens.ui.security import CSP, SESSION_COOKIE, session_cookie_name

PLUGIN = "feedback-analysis"
REPORT = "artifacts/insight_report.md"
ANALYSIS = "artifacts/feedback_analysis.json"
#: Seconds a run started by upload may take to end.
RUN_TIMEOUT = 180.0
#: Row ids a URL must carry percent-encoded: a slash, a percent sign, a question mark,
#: a hash, a space and non-ASCII letters.
ODD_IDS = ("row/1", "50% off?", "ü #3")
ODD_CSV = "ref,comment\n" + "".join(
    f'"{row_id}","The export of the weekly report is slow, entry {n}."\n'
    for n, row_id in enumerate(ODD_IDS, start=1)
)
#: The odd-ids upload's file name: a path, a leading dot and a bidi override to be dropped.
ODD_NAME = "../../.odd\u202eids.csv"


# -- helpers ----------------------------------------------------------------------------------


def upload(
    client: httpx.Client,
    content: bytes,
    *,
    name: str = "input.csv",
    plugin: str = PLUGIN,
    model: str | None = "offline",
    **fields: str,
) -> httpx.Response:
    data = {"plugin": plugin, **fields}
    if model is not None:
        data["model"] = model
    return client.post("/api/runs", data=data, files={"file": (name, content, "text/csv")})


def wait_for(
    client: httpx.Client, run_id: str, statuses: set[str], timeout: float = RUN_TIMEOUT
) -> dict[str, Any]:
    """The run once its status is one of `statuses` (polling GET /api/runs/{id})."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(f"/api/runs/{run_id}")
        assert response.status_code == 200, response.text
        run: dict[str, Any] = response.json()
        if run["status"] in statuses:
            return run
        assert time.monotonic() < deadline, f"run {run_id} is still {run['status']}"
        time.sleep(0.3)


TERMINAL = {"completed", "failed", "cancelled", "interrupted"}


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: dict[str, Any]
    id: str | None


def read_stream(client: httpx.Client, path: str, **headers: str) -> list[SseEvent]:
    """Every server-sent event of `path` until the server ends the stream."""
    events: list[SseEvent] = []
    fields: dict[str, str] = {}
    request_headers = {"Accept": "text/event-stream", **headers}
    with client.stream("GET", path, headers=request_headers, timeout=RUN_TIMEOUT) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
                continue
            if fields:
                events.append(
                    SseEvent(
                        fields.get("event", "message"), json.loads(fields["data"]), fields.get("id")
                    )
                )
                fields = {}
    return events


def detail(response: httpx.Response) -> str:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("detail"), str), body
    return str(body["detail"])


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as client:
        yield client


@dataclass(frozen=True)
class Uploaded:
    """The module's runs started by upload, once ended."""

    sample: dict[str, Any]
    odd: dict[str, Any]
    workbook: dict[str, Any]


def workbook_bytes() -> bytes:
    """A small .xlsx workbook of three rows (ids and texts)."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["feedback_id", "text"])
    for n in range(1, 4):
        sheet.append([f"wb_{n}", f"Exporting the weekly report takes minutes, case {n}."])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def uploaded(api: httpx.Client) -> Uploaded:
    """The sample CSV and a CSV with odd row ids, uploaded together, polled to their end."""
    started = []
    for name, content in (
        ("sample_feedback.csv", SAMPLE_CSV.read_bytes()),
        (ODD_NAME, ODD_CSV.encode()),
        ("book.xlsx", workbook_bytes()),
    ):
        # The odd file names its columns its own way: the options say which they are.
        columns = {"id_column": "ref", "text_column": "comment"} if name == ODD_NAME else {}
        response = upload(api, content, name=name, **columns)
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["url"] == f"/runs/{body['run_id']}"
        assert response.headers["location"] == f"/api/runs/{body['run_id']}"
        started.append(body["run_id"])
    sample, odd, workbook = (wait_for(api, run_id, TERMINAL) for run_id in started)
    return Uploaded(sample=sample, odd=odd, workbook=workbook)


@pytest.fixture(scope="module")
def failed(ui_server: UIServer) -> FailedRun:
    """A failed run made with the CLI into the server's home (findings, failed citations)."""
    return failed_run(ui_server.home)


# -- the API's description --------------------------------------------------------------------


def test_openapi_lists_every_route(api: httpx.Client) -> None:
    response = api.get("/openapi.json")
    assert response.status_code == 200
    spec = response.json()
    assert spec["info"]["title"] == "RunLens"
    routes = {(method, path) for path, item in spec["paths"].items() for method in item}
    assert {
        ("get", "/api/runs"),
        ("post", "/api/runs"),
        ("get", "/api/runs/{run_id}"),
        ("get", "/api/runs/{run_id}/events"),
        ("get", "/api/runs/{run_id}/artifacts/{name}"),
        ("get", "/api/runs/{run_id}/evidence/{row_id}"),
        ("post", "/api/runs/{run_id}/cancel"),
        ("get", "/api/plugins"),
    } <= routes
    form = spec["paths"]["/api/runs"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert {"plugin", "model", "file"} <= set(form["schema"]["properties"])
    events = spec["paths"]["/api/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]
    assert "text/event-stream" in events


def test_plugins_lists_the_installed_plugin_and_no_scripted_models(api: httpx.Client) -> None:
    body = api.get("/api/plugins").json()
    plugin = next(p for p in body["plugins"] if p["name"] == PLUGIN)
    assert plugin["offline_model"] is True and plugin["error"] is None
    assert REPORT in {contract["name"] for contract in plugin["contracts"]}
    assert "offline" in body["model_providers"]
    assert "scripted" not in body["model_providers"]


# -- runs -------------------------------------------------------------------------------------


def test_a_run_started_by_upload_completes_with_its_input_name_and_origin(
    uploaded: Uploaded, ui_server: UIServer
) -> None:
    run = uploaded.sample
    assert run["status"] == "completed", run
    assert run["origin"] == "api" and run["input_name"] == "sample_feedback.csv"
    assert run["workspace"] == str(ui_server.home / run["run_id"])
    names = {artifact["name"]: artifact["status"] for artifact in run["artifacts"]}
    assert names[REPORT] == "validated" and names[ANALYSIS] == "validated"
    assert [step["status"] for step in run["plan"]] == ["completed"] * len(run["plan"])


def test_an_uploaded_file_name_is_sanitised(uploaded: Uploaded, ui_server: UIServer) -> None:
    run = uploaded.odd
    assert run["input_name"] == "oddids.csv"
    saved = ui_server.home / "uploads" / run["run_id"] / "oddids.csv"
    assert saved.read_text(encoding="utf-8") == ODD_CSV


def test_an_xlsx_workbook_upload_runs(uploaded: Uploaded) -> None:
    run = uploaded.workbook
    assert run["input_name"] == "book.xlsx"
    assert run["status"] == "completed", run


def test_the_runs_list_filters_and_searches(
    api: httpx.Client, uploaded: Uploaded, failed: FailedRun
) -> None:
    # The server is the session's: other modules' runs are in its store too.
    every = api.get("/api/runs", params={"limit": 500}).json()
    ids = [run["run_id"] for run in every["runs"]]
    assert {uploaded.sample["run_id"], failed.run_id} <= set(ids)
    assert every["total"] == len(ids)
    only_failed = api.get("/api/runs", params={"status": "failed"}).json()
    assert failed.run_id in {run["run_id"] for run in only_failed["runs"]}
    assert {run["status"] for run in only_failed["runs"]} == {"failed"}
    offline = api.get("/api/runs", params={"model": "offline"}).json()
    assert uploaded.sample["run_id"] in {run["run_id"] for run in offline["runs"]}
    assert failed.run_id not in {run["run_id"] for run in offline["runs"]}
    found = api.get("/api/runs", params={"q": "FAILED_FEEDBACK", "limit": 500}).json()
    assert failed.run_id in {run["run_id"] for run in found["runs"]}
    assert uploaded.sample["run_id"] not in {run["run_id"] for run in found["runs"]}
    assert all("failed_feedback" in run["input_name"].lower() for run in found["runs"])
    by_id = api.get("/api/runs", params={"q": failed.run_id[-6:].upper()}).json()
    assert [run["run_id"] for run in by_id["runs"]] == [failed.run_id]
    assert api.get("/api/runs", params={"plugin": "no-such-plugin"}).json()["total"] == 0
    page = api.get("/api/runs", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == every["total"] and [r["run_id"] for r in page["runs"]] == ids[1:2]


def test_bad_list_parameters_are_named(api: httpx.Client) -> None:
    response = api.get("/api/runs", params={"status": "finished"})
    assert response.status_code == 422 and "status" in detail(response)
    response = api.get("/api/runs", params={"limit": 0})
    assert response.status_code == 422 and "limit" in detail(response)


def test_a_failed_run_has_its_findings_and_error(api: httpx.Client, failed: FailedRun) -> None:
    run = api.get(f"/api/runs/{failed.run_id}").json()
    assert run["status"] == "failed" and run["error_message"]
    found = {(f["code"], f["artifact"], f["path"]) for f in run["findings"]}
    assert set(failed.expected) <= found


def test_an_unknown_run_is_404_naming_it(api: httpx.Client) -> None:
    for path in (
        "/api/runs/run_nope",
        "/api/runs/run_nope/events",
        "/api/runs/run_nope/evidence/x",
    ):
        response = api.get(path)
        assert response.status_code == 404 and "run_nope" in detail(response), path


# -- events -----------------------------------------------------------------------------------


def test_events_come_in_order_and_after_filters(api: httpx.Client, uploaded: Uploaded) -> None:
    run_id = uploaded.sample["run_id"]
    events = api.get(f"/api/runs/{run_id}/events").json()
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "run.completed"
    assert {event["run_id"] for event in events} == {run_id}
    later = api.get(f"/api/runs/{run_id}/events", params={"after": 3, "limit": 2}).json()
    assert [event["seq"] for event in later] == [4, 5]


def test_the_event_stream_sends_everything_then_ends(api: httpx.Client, uploaded: Uploaded) -> None:
    run_id = uploaded.sample["run_id"]
    events = api.get(f"/api/runs/{run_id}/events").json()
    streamed = read_stream(api, f"/api/runs/{run_id}/events")
    assert [e.data for e in streamed[:-1]] == events
    assert [e.id for e in streamed[:-1]] == [str(event["seq"]) for event in events]
    assert {e.event for e in streamed[:-1]} == {"run_event"}
    assert streamed[-1].event == "end" and streamed[-1].data["status"] == "completed"
    resumed = read_stream(
        api, f"/api/runs/{run_id}/events", **{"Last-Event-ID": str(len(events) - 2)}
    )
    assert [e.id for e in resumed] == [str(len(events) - 1), str(len(events)), None]


# -- cancelling -------------------------------------------------------------------------------


def big_csv(rows: int = 3000) -> bytes:
    """The sample's rows repeated under fresh ids: enough work for the offline model to be
    stopped half-way."""
    sample = list(csv.DictReader(io.StringIO(SAMPLE_CSV.read_text(encoding="utf-8"))))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(sample[0]))
    writer.writeheader()
    for n in range(rows):
        row = dict(sample[n % len(sample)])
        writer.writerow({**row, "feedback_id": f"fb_{n:05d}", "text": f"{row['text']} (#{n})"})
    return out.getvalue().encode("utf-8")


def test_a_running_run_is_cancelled_and_its_stream_ends_cancelled(api: httpx.Client) -> None:
    response = upload(api, big_csv(), name="big.csv")
    assert response.status_code == 202, response.text
    run_id = response.json()["run_id"]
    wait_for(api, run_id, {"running", "validating", *TERMINAL}, timeout=60)
    cancelled = api.post(f"/api/runs/{run_id}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    assert cancelled.json()["cancel_requested"] is True
    streamed = read_stream(api, f"/api/runs/{run_id}/events")
    assert streamed[-1].event == "end" and streamed[-1].data["status"] == "cancelled"
    assert [int(e.id or 0) for e in streamed[:-1]] == list(range(1, len(streamed)))
    assert wait_for(api, run_id, TERMINAL)["status"] == "cancelled"
    again = api.post(f"/api/runs/{run_id}/cancel")
    assert again.status_code == 409 and "cancelled" in detail(again)


def test_a_pending_run_without_a_process_is_cancelled_at_once(
    api: httpx.Client, ui_server: UIServer
) -> None:
    from runlens.store.db import open_store

    store = open_store(ui_server.db_url)
    try:
        store.create_pending(
            "run_pending_test",
            plugin=PLUGIN,
            model="offline",
            input_name="never.csv",
            workspace=str(ui_server.home / "run_pending_test"),
            origin="api",
        )
    finally:
        store.close()
    response = api.post("/api/runs/run_pending_test/cancel")
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "cancelled"
    assert "before the run started" in (response.json()["error_message"] or "")


@pytest.mark.parametrize(
    ("model", "variable"),
    [("anthropic:claude-test", "ANTHROPIC_API_KEY"), ("openai:gpt-4o", "OPENAI_API_KEY")],
)
def test_a_model_whose_provider_has_no_key_is_refused_before_any_run(
    api: httpx.Client, model: str, variable: str
) -> None:
    # The server's environment holds no provider key: the run could only fail.
    before = api.get("/api/runs").json()["total"]
    response = upload(api, SAMPLE_CSV.read_bytes(), model=model)
    assert response.status_code == 422, response.text
    assert model in detail(response) and variable in detail(response)
    assert api.get("/api/runs").json()["total"] == before


def lock_pid(workspace: Path, timeout: float = 60) -> int:
    """The pid holding a run's workspace lock, once the run has claimed it."""
    lock = workspace / "runtime" / "lock.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return int(json.loads(lock.read_text(encoding="utf-8"))["pid"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise AssertionError(f"{lock} never named its holder")


def test_a_run_whose_process_died_shows_interrupted(api: httpx.Client) -> None:
    response = upload(api, big_csv(), name="doomed.csv")
    assert response.status_code == 202, response.text
    run = wait_for(api, response.json()["run_id"], {"running", "validating", *TERMINAL}, 60)
    os.kill(lock_pid(Path(run["workspace"])), signal.SIGKILL)
    ended = wait_for(api, run["run_id"], TERMINAL, timeout=60)
    assert ended["status"] == "interrupted", ended
    streamed = read_stream(api, f"/api/runs/{run['run_id']}/events")
    assert streamed[-1].event == "end" and streamed[-1].data["status"] == "interrupted"


def test_runs_outlive_the_server_that_started_them(tmp_path: Path) -> None:
    from runlens.store.db import open_store

    with running_server(tmp_path / "home") as server, server.client() as client:
        response = upload(client, big_csv(), name="long.csv")
        assert response.status_code == 202, response.text
        run_id = response.json()["run_id"]
        run = wait_for(client, run_id, {"running", "validating", *TERMINAL}, 60)
        pid = lock_pid(Path(run["workspace"]))
    os.kill(pid, 0)  # the server is gone; the run's process is not
    store = open_store(server.db_url)
    try:
        assert store.request_cancel(run_id) is not None
        deadline = time.monotonic() + 60
        while (detail_row := store.get_run(run_id)) is not None and not detail_row.is_terminal:
            assert time.monotonic() < deadline, "the orphaned run never acted on the cancel"
            time.sleep(0.3)
    finally:
        store.close()
    assert detail_row is not None and detail_row.status == "cancelled"


def test_cancelling_an_unknown_run_is_404(api: httpx.Client) -> None:
    response = api.post("/api/runs/run_nope/cancel")
    assert response.status_code == 404 and "run_nope" in detail(response)


# -- artifacts --------------------------------------------------------------------------------


def test_an_artifact_is_served_raw_and_sandboxed(api: httpx.Client, uploaded: Uploaded) -> None:
    run = uploaded.sample
    workspace = Path(run["workspace"])
    report = api.get(f"/api/runs/{run['run_id']}/artifacts/{REPORT}")
    assert report.status_code == 200
    assert report.content == (workspace / REPORT).read_bytes()
    assert report.headers["content-type"] == "text/markdown; charset=utf-8"
    assert report.headers["content-security-policy"].startswith("sandbox;")
    assert report.headers["x-content-type-options"] == "nosniff"
    analysis = api.get(f"/api/runs/{run['run_id']}/artifacts/{ANALYSIS}")
    assert analysis.headers["content-type"] == "application/json; charset=utf-8"
    assert analysis.json() == json.loads((workspace / ANALYSIS).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("raw_name", "seen"),
    [
        ("artifacts/..%2fmanifest.json", "artifacts/../manifest.json"),
        ("%2e%2e/%2e%2e/%2e%2e/etc/passwd", "../../../etc/passwd"),
        ("artifacts/%2e%2e/runtime/run.json", "artifacts/../runtime/run.json"),
        ("%2Fetc%2Fpasswd", "/etc/passwd"),
        ("/etc/passwd", "/etc/passwd"),
        ("runtime/run.json", "runtime/run.json"),
        ("manifest.json", "manifest.json"),
        ("artifacts/other.md", "artifacts/other.md"),
    ],
)
def test_only_contract_named_artifacts_are_served(
    api: httpx.Client, uploaded: Uploaded, raw_name: str, seen: str
) -> None:
    run_id = uploaded.sample["run_id"]
    response = api.get(f"/api/runs/{run_id}/artifacts/{raw_name}")
    assert response.status_code == 404
    assert repr(seen) in detail(response)
    assert "root:" not in response.text


def test_a_dot_dot_path_sent_raw_is_refused(api: httpx.Client, uploaded: Uploaded) -> None:
    run_id = uploaded.sample["run_id"]
    request = api.build_request("GET", "/")
    raw = f"/api/runs/{run_id}/artifacts/artifacts/../manifest.json".encode()
    request.url = request.url.copy_with(raw_path=raw)
    response = api.send(request)
    # Whoever resolves the dots on the way (client or server), nothing outside the
    # contract's names is served.
    assert response.status_code == 404
    assert "manifest.json' (its artifacts:" in detail(response)


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.md"
    secret.write_text("# outside the workspace\n", encoding="utf-8")
    return secret


def test_an_artifact_that_is_a_symlink_out_is_refused(
    api: httpx.Client, uploaded: Uploaded, outside_file: Path
) -> None:
    run = uploaded.sample
    target = Path(run["workspace"]) / REPORT
    kept = target.with_name("kept.md")
    target.rename(kept)
    try:
        target.symlink_to(outside_file)
        response = api.get(f"/api/runs/{run['run_id']}/artifacts/{REPORT}")
    finally:
        target.unlink(missing_ok=True)
        kept.rename(target)
    assert response.status_code == 404
    assert "symbolic link" in detail(response)
    assert "outside the workspace" not in response.text


def test_an_artifacts_folder_that_is_a_symlink_out_is_refused(
    api: httpx.Client, uploaded: Uploaded, outside_file: Path
) -> None:
    run = uploaded.sample
    folder = Path(run["workspace"]) / "artifacts"
    kept = folder.with_name("artifacts.kept")
    shutil.copy(outside_file, outside_file.parent / Path(REPORT).name)
    folder.rename(kept)
    try:
        folder.symlink_to(outside_file.parent, target_is_directory=True)
        response = api.get(f"/api/runs/{run['run_id']}/artifacts/{REPORT}")
    finally:
        folder.unlink(missing_ok=True)
        kept.rename(folder)
    assert response.status_code == 404
    assert "artifacts is a symbolic link" in detail(response)
    assert "outside the workspace" not in response.text


# -- evidence ---------------------------------------------------------------------------------


def test_an_evidence_row_comes_whole_with_its_citations(
    api: httpx.Client, uploaded: Uploaded
) -> None:
    run_id = uploaded.sample["run_id"]
    row = next(csv.DictReader(io.StringIO(SAMPLE_CSV.read_text(encoding="utf-8"))))
    body = api.get(f"/api/runs/{run_id}/evidence/{row['feedback_id']}").json()
    assert body["row_id"] == row["feedback_id"] and body["text"] == row["text"]
    assert body["source"] == "sample_feedback.csv"
    assert body["metadata"]["id_column"] == "feedback_id"
    assert body["citations"], body
    for citation in body["citations"]:
        assert citation["status"] == "verified" and citation["row_id"] == row["feedback_id"]
        if citation["quote"] is None:  # cited by its id alone (a list of evidence ids)
            assert citation["start"] is None and citation["end"] is None
        else:
            assert row["text"][citation["start"] : citation["end"]] == citation["quote"]
    assert any(c["quote"] for c in body["citations"]), body


def test_an_evidence_row_shows_the_citations_that_failed(
    api: httpx.Client, failed: FailedRun
) -> None:
    body = api.get(f"/api/runs/{failed.run_id}/evidence/fb_002").json()
    failures = [c for c in body["citations"] if c["status"] == "failed"]
    assert failures and {c["code"] for c in failures} == {"evidence_text_mismatch"}
    assert all(c["reason"] for c in failures)


@pytest.mark.parametrize("row_id", ODD_IDS)
def test_any_row_id_can_be_asked_for_percent_encoded(
    api: httpx.Client, uploaded: Uploaded, row_id: str
) -> None:
    run_id = uploaded.odd["run_id"]
    response = api.get(f"/api/runs/{run_id}/evidence/{quote(row_id, safe='')}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["row_id"] == row_id
    assert body["text"].startswith("The export of the weekly report is slow")
    assert body["metadata"]["id_column"] == "ref" and body["metadata"]["text_column"] == "comment"


def test_a_row_not_in_the_index_is_404(api: httpx.Client, uploaded: Uploaded) -> None:
    response = api.get(f"/api/runs/{uploaded.sample['run_id']}/evidence/fb_999")
    assert response.status_code == 404 and "'fb_999'" in detail(response)


# -- starting runs: what is refused -----------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


@pytest.mark.parametrize(
    ("fields", "name", "content", "status", "named"),
    [
        ({}, "notes.pdf", b"%PDF-1.7", 415, "'.pdf'"),
        ({}, "noextension", b"a,b\n", 415, "'(none)'"),
        ({}, "picture.csv", PNG, 415, "PNG"),
        ({}, "book.xlsx", b"feedback_id,text\n", 415, "not an .xlsx workbook"),
        ({}, "empty.csv", b"", 422, "empty"),
        ({"plugin": "no-such-plugin"}, "input.csv", b"a,b\n", 422, "no-such-plugin"),
        ({"model": "scripted:/etc/passwd"}, "input.csv", b"a,b\n", 422, "scripted"),
        ({"model": "nosuch:model"}, "input.csv", b"a,b\n", 422, "'nosuch'"),
        ({"model": "openai"}, "input.csv", b"a,b\n", 422, "openai:NAME"),
        ({"repair_turns": "many"}, "input.csv", b"a,b\n", 422, "repair_turns"),
        ({"encoding": "klingon-8"}, "input.csv", b"a,b\n", 422, "klingon-8"),
        ({"colour": "blue"}, "input.csv", b"a,b\n", 422, "'colour'"),
    ],
)
def test_a_bad_upload_is_refused_naming_the_problem(
    api: httpx.Client,
    ui_server: UIServer,
    fields: dict[str, str],
    name: str,
    content: bytes,
    status: int,
    named: str,
) -> None:
    before = api.get("/api/runs").json()["total"]
    uploads = (
        set(os.listdir(ui_server.home / "uploads"))
        if (ui_server.home / "uploads").is_dir()
        else set()
    )
    response = upload(api, content, name=name, **{"plugin": PLUGIN, "model": "offline", **fields})
    assert response.status_code == status, response.text
    assert named in detail(response)
    assert api.get("/api/runs").json()["total"] == before
    after = (
        set(os.listdir(ui_server.home / "uploads"))
        if (ui_server.home / "uploads").is_dir()
        else set()
    )
    assert after == uploads


def test_an_upload_without_a_file_or_a_form_is_refused(api: httpx.Client) -> None:
    # A multipart form whose only part is a plain field (a `None` file name).
    response = api.post("/api/runs", files={"plugin": (None, PLUGIN)})
    assert response.status_code == 422 and "no file" in detail(response)
    response = api.post("/api/runs", json={"plugin": PLUGIN})
    assert response.status_code == 415 and "multipart/form-data" in detail(response)
    response = api.post(
        "/api/runs", files={"file": ("input.csv", b"a,b\n")}, data={"model": "offline"}
    )
    assert response.status_code == 422 and "plugin" in detail(response)


@pytest.mark.parametrize("over", [1, 1024 * 1024], ids=["just-over", "length-says-so"])
def test_an_upload_over_the_limit_is_413_naming_it(api: httpx.Client, over: int) -> None:
    too_big = b"feedback_id,text\n" + b"x" * (UPLOAD_LIMIT_MB * 1024 * 1024 + over)
    response = upload(api, too_big, name="big.csv")
    assert response.status_code == 413
    assert f"{UPLOAD_LIMIT_MB} MiB" in detail(response)


def test_an_upload_streamed_without_a_length_is_cut_at_the_limit(api: httpx.Client) -> None:
    before = api.get("/api/runs").json()["total"]
    boundary = "runlensboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="plugin"\r\n\r\n{PLUGIN}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
        "Content-Type: text/csv\r\n\r\nfeedback_id,text\n"
    ).encode()
    chunk = b"fb_1,slow export\n" * 4096
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        yield head
        while sent < 4 * UPLOAD_LIMIT_MB * 1024 * 1024:
            sent += len(chunk)
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    try:
        response: httpx.Response | None = api.post("/api/runs", content=body(), headers=headers)
    except httpx.TransportError:
        response = None  # the server answered and closed the connection mid-body
    if response is not None:
        assert response.status_code == 413 and f"{UPLOAD_LIMIT_MB} MiB" in detail(response)
    assert sent < 4 * UPLOAD_LIMIT_MB * 1024 * 1024 or response is not None
    assert api.get("/api/runs").json()["total"] == before


# -- request rules: hosts, cross-site writes, headers -----------------------------------------


def test_a_foreign_host_header_is_refused(api: httpx.Client, ui_server: UIServer) -> None:
    response = api.get("/api/runs", headers={"Host": "evil.example"})
    assert response.status_code == 400 and "evil.example" in detail(response)
    port = httpx.URL(ui_server.url).port
    assert api.get("/api/runs", headers={"Host": f"localhost:{port}"}).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cross_site_write_is_refused(
    api: httpx.Client, uploaded: Uploaded, headers: dict[str, str]
) -> None:
    response = api.post(
        "/api/runs",
        data={"plugin": PLUGIN, "model": "offline"},
        files={"file": ("input.csv", SAMPLE_CSV.read_bytes())},
        headers=headers,
    )
    assert response.status_code == 403 and "cross-site" in detail(response)
    cancel = api.post(f"/api/runs/{uploaded.sample['run_id']}/cancel", headers=headers)
    assert cancel.status_code == 403


def test_a_same_origin_write_passes(
    api: httpx.Client, uploaded: Uploaded, ui_server: UIServer
) -> None:
    origin = ui_server.url.rstrip("/")
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    response = api.post(f"/api/runs/{uploaded.sample['run_id']}/cancel", headers=headers)
    assert response.status_code == 409  # through the checks, to the run: it has ended


def test_every_response_carries_the_security_headers(api: httpx.Client) -> None:
    for path in ("/api/runs", "/api/runs/run_nope", "/openapi.json", "/api/nowhere"):
        response = api.get(path)
        assert response.headers["content-security-policy"] == CSP, path
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
    refused = api.get("/api/runs", headers={"Host": "evil.example"})
    assert refused.headers["content-security-policy"] == CSP


def test_static_files_are_served_under_the_same_headers(api: httpx.Client) -> None:
    response = api.get("/static/app.css")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == CSP
    assert "no-store" not in response.headers.get("cache-control", "")


# -- the token --------------------------------------------------------------------------------


def test_without_the_token_everything_is_401(token_server: UIServer) -> None:
    with token_server.client(authorised=False) as client:
        for path in ("/api/runs", "/openapi.json", "/api/plugins"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert "RUNLENS_UI_TOKEN" in detail(response)
            assert response.headers["www-authenticate"].startswith("Bearer")
        for path in ("/", "/static/app.css"):
            page = client.get(path)
            assert page.status_code == 401, path
            assert page.headers["content-type"].startswith("text/html")
            assert "Token required" in page.text
        wrong = client.get("/api/runs", headers={"Authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401
        cookie = client.get("/api/runs", headers={"Cookie": f"{SESSION_COOKIE}=forged"})
        assert cookie.status_code == 401
        post = client.post("/api/runs/run_nope/cancel")
        assert post.status_code == 401


def test_the_bearer_token_is_accepted(token_server: UIServer) -> None:
    with token_server.client() as client:
        assert client.get("/api/runs").status_code == 200
        assert client.get("/openapi.json").status_code == 200


def test_a_query_token_becomes_a_cookie_and_leaves_the_url(token_server: UIServer) -> None:
    assert token_server.token is not None
    with token_server.client(authorised=False) as client:
        response = client.get("/api/runs", params={"limit": "5", "token": token_server.token})
        assert response.status_code == 303
        assert response.headers["location"] == "/api/runs?limit=5"
        set_cookie = response.headers["set-cookie"]
        port = httpx.URL(token_server.url).port
        assert set_cookie.startswith(f"{session_cookie_name(port)}=")
        assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
        assert token_server.token not in set_cookie
        followed = client.get(response.headers["location"])
        assert followed.status_code == 200 and followed.json()["limit"] == 5
        # A wrong token in the query is refused even beside a good session cookie.
        assert client.get("/api/runs", params={"token": "not-the-token"}).status_code == 401


# -- the command ------------------------------------------------------------------------------


def run_ui(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runlens", "ui", *args],
        env=server_env(tmp_path / "home", **env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_non_loopback_host_without_a_token_exits_2(tmp_path: Path) -> None:
    result = run_ui(tmp_path, "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "RUNLENS_UI_TOKEN" in result.stderr and "Traceback" not in result.stderr


def test_a_port_in_use_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_ui(tmp_path, "--port", str(port))
    assert result.returncode == 2
    assert f"port {port}" in result.stderr and "in use" in result.stderr


def test_an_unusable_store_url_exits_2(tmp_path: Path) -> None:
    result = run_ui(tmp_path, "--port", "0", "--database-url", "nosuchdb://x/y")
    assert result.returncode == 2
    assert "run store" in result.stderr and "Traceback" not in result.stderr
