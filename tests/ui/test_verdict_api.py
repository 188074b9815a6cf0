"""The signed verdict, `runlens verify` and drift through the HTTP API and the pages, over
real HTTP against the session's real `runlens ui` process (`ui_server`).

Runs are made by the CLI into the server's home (`tests.ui.runs`): they sign their verdicts
with the home's default key, which the server checks them against. Each test that changes a
workspace makes a run of its own.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.ui.conftest import UIServer
from tests.ui.runs import (
    FAILED_CSV,
    HOSTILE_CSV,
    IMG_ONERROR,
    SCRIPT_TAG,
    HostileRun,
    MadeRun,
    hostile_run,
    revised_run,
    run_cli,
)

from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

#: The revised run's input with row fb_001 reworded (its report quotes that row).
CHANGED_CSV = FAILED_CSV.replace("takes three minutes", "takes ten minutes")
#: A file name with markup: the drift panel shows it.
HOSTILE_UPLOAD_NAME = "newer <img src=x onerror=window.__pwned=1>.csv"


def as_tsv(text: str) -> str:
    """The same rows, tab-separated."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerows(csv.reader(io.StringIO(text)))
    return out.getvalue()


def home_key_ids(home: Path) -> set[str]:
    from runlens.verdict.keys import load_public_keys

    return set(load_public_keys((), home))


def detail(response: httpx.Response) -> str:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("detail"), str), body
    return str(body["detail"])


def post_drift(
    client: httpx.Client, run_id: str, content: bytes, name: str = "newer.csv"
) -> httpx.Response:
    return client.post(f"/api/runs/{run_id}/drift", files={"file": (name, content, "text/csv")})


def workspace_files(workspace: Path) -> set[str]:
    return {p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file()}


@dataclass(frozen=True)
class Runs:
    """The module's runs: a completed run with citations, and a hostile one."""

    revised: MadeRun
    hostile: HostileRun


@pytest.fixture(scope="module")
def api(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as client:
        yield client


@pytest.fixture(scope="module")
def runs(ui_server: UIServer) -> Runs:
    home, url = ui_server.home, ui_server.db_url
    return Runs(revised_run(home, database_url=url), hostile_run(home, database_url=url))


# -- GET /api/runs/{run_id}/verdict -----------------------------------------------------------


def test_the_verdict_is_the_runs_dsse_envelope_signed_by_the_homes_key(
    api: httpx.Client, runs: Runs, ui_server: UIServer
) -> None:
    response = api.get(f"/api/runs/{runs.revised.run_id}/verdict")
    assert response.status_code == 200, response.text
    envelope = response.json()
    on_disk = json.loads((runs.revised.workspace / "runtime/verdict.dsse.json").read_text())
    assert envelope == on_disk
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    [signature] = envelope["signatures"]
    assert signature["keyid"] in home_key_ids(ui_server.home)
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    names = {subject["name"] for subject in statement["subject"]}
    assert {REPORT, ANALYSIS, BACKLOG} <= names


def test_a_run_without_a_verdict_answers_404_saying_why(
    api: httpx.Client, ui_server: UIServer
) -> None:
    # A run whose envelope is gone: to the server, a run that never signed.
    home = ui_server.home
    run = run_cli(home, _input(home, "unsigned.csv", FAILED_CSV), database_url=ui_server.db_url)
    (run.workspace / "runtime/verdict.dsse.json").unlink()
    response = api.get(f"/api/runs/{run.run_id}/verdict")
    assert response.status_code == 404
    assert "has no signed verdict" in detail(response)
    assert "runtime/verdict.dsse.json" in detail(response)
    assert api.get("/api/runs/no-such-run/verdict").status_code == 404
    page = api.get(f"/runs/{run.run_id}")
    assert "Not signed:" in page.text


def _input(home: Path, name: str, text: str) -> Path:
    folder = home / "inputs"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# -- POST /api/runs/{run_id}/verify -----------------------------------------------------------


def test_verify_answers_verified_with_every_check(api: httpx.Client, runs: Runs) -> None:
    response = api.post(f"/api/runs/{runs.revised.run_id}/verify")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verified"] is True, body
    names = [check["check"] for check in body["checks"]]
    assert {"signature", "statement", "evidence_index", "validators"} <= set(names)
    assert f"subject:{REPORT}" in names
    assert all(check["ok"] for check in body["checks"])


def test_verify_names_a_deliverable_changed_after_signing(
    api: httpx.Client, ui_server: UIServer
) -> None:
    run = revised_run(ui_server.home, database_url=ui_server.db_url)
    report = run.workspace / REPORT
    report.write_bytes(report.read_bytes().replace(b"About", b"About!", 1))
    body = api.post(f"/api/runs/{run.run_id}/verify").json()
    assert body["verified"] is False
    failed = {check["check"]: check["detail"] for check in body["checks"] if not check["ok"]}
    assert f"subject:{REPORT}" in failed, body
    # The run page's cheap check still holds: the signature is over the statement, intact.
    page = api.get(f"/runs/{run.run_id}").text
    assert 'data-signature-verified="true"' in page


def test_verify_of_a_run_whose_workspace_is_not_here_is_409(
    api: httpx.Client, ui_server: UIServer
) -> None:
    run = revised_run(ui_server.home, database_url=ui_server.db_url)
    shutil.move(run.workspace, run.workspace.with_name(run.workspace.name + ".moved"))
    response = api.post(f"/api/runs/{run.run_id}/verify")
    assert response.status_code == 409
    assert "not on this machine" in detail(response)
    assert api.post("/api/runs/no-such-run/verify").status_code == 404
    # Nor can a newer input be compared with it; the upload is not kept.
    drift = post_drift(api, run.run_id, FAILED_CSV.encode())
    assert drift.status_code == 409, drift.text
    assert f"run {run.run_id} cannot be compared with newer.csv" in detail(drift)
    kept = ui_server.home / "drift" / run.run_id
    assert not kept.exists() or list(kept.iterdir()) == []


def test_the_new_routes_are_documented_and_behind_the_token(
    api: httpx.Client, token_server: UIServer
) -> None:
    spec = api.get("/openapi.json").json()
    paths = spec["paths"]
    assert "get" in paths["/api/runs/{run_id}/verdict"]
    assert "post" in paths["/api/runs/{run_id}/verify"]
    assert "post" in paths["/api/runs/{run_id}/drift"]
    verify = paths["/api/runs/{run_id}/verify"]["post"]["responses"]
    assert {"200", "404", "409"} <= set(verify)
    with token_server.client(authorised=False) as anonymous:
        assert anonymous.get("/api/runs/any/verdict").status_code == 401
        assert anonymous.post("/api/runs/any/verify").status_code == 401
        assert post_drift(anonymous, "any", FAILED_CSV.encode()).status_code == 401
    with token_server.client() as client:
        assert client.get("/api/runs/any/verdict").status_code == 404


# -- the run page's panels --------------------------------------------------------------------


def test_the_run_page_shows_the_signature_and_the_source_lock(
    api: httpx.Client, runs: Runs, ui_server: UIServer
) -> None:
    page = api.get(f"/runs/{runs.revised.run_id}")
    assert page.status_code == 200
    html = page.text
    [key_id] = home_key_ids(ui_server.home)
    assert f"data-key-id>{key_id}</dd>" in html
    assert 'data-signature-verified="true"' in html
    assert 'id="verify-run"' in html
    record = json.loads((runs.revised.workspace / "runtime/run.json").read_text())
    lock = record["source_lock"]
    assert lock["bytes_sha256"] in html
    assert lock["rows_digest"] in html


# -- drift ------------------------------------------------------------------------------------


def test_drift_with_the_same_bytes_and_the_same_rows(api: httpx.Client, runs: Runs) -> None:
    run_id = runs.revised.run_id
    same = post_drift(api, run_id, FAILED_CSV.encode())
    assert same.status_code == 200, same.text
    assert same.json()["result"] == "identical"
    assert same.json()["stale"] == []
    tsv = post_drift(api, run_id, as_tsv(FAILED_CSV).encode(), name="newer.tsv")
    assert tsv.status_code == 200, tsv.text
    assert tsv.json()["result"] == "same-rows"


def test_drift_names_the_changed_row_and_every_stale_claim(
    api: httpx.Client, runs: Runs, ui_server: UIServer
) -> None:
    run = runs.revised
    before = workspace_files(run.workspace)
    response = post_drift(api, run.run_id, CHANGED_CSV.encode())
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["result"] == "rows-changed"
    assert body["changed"] == ["fb_001"] and body["added"] == [] and body["removed"] == []
    stale = {(claim["artifact"], claim["kind"], claim["row_id"]) for claim in body["stale"]}
    assert (REPORT, "quote", "fb_001") in stale
    assert (ANALYSIS, "item", "fb_001") in stale
    assert (BACKLOG, "item", "fb_001") in stale
    assert {claim["row_id"] for claim in body["stale"]} == {"fb_001"}
    assert body["changed_since_run"] == []
    # The upload is kept in the home, out of the run's workspace.
    assert workspace_files(run.workspace) == before
    kept = ui_server.home / "drift" / run.run_id / body["upload_id"] / "newer.csv"
    assert kept.read_text(encoding="utf-8") == CHANGED_CSV

    page = api.get(body["page_url"]).text
    assert 'data-drift-result="rows-changed"' in page
    assert 'data-stale-kind="item"' in page
    reader = api.get(body["report_url"]).text
    assert 'class="cite cite-verified stale"' in reader
    assert 'data-stale-row="fb_001" data-stale-change="changed"' in reader
    assert "stale: row fb_001 changed in the newer file" in reader


def test_drift_uploads_pass_the_upload_checks(api: httpx.Client, runs: Runs) -> None:
    run_id = runs.revised.run_id
    response = post_drift(api, run_id, b"MZ\x90\x00", name="newer.exe")
    assert response.status_code == 415
    assert "not accepted" in detail(response)
    empty = post_drift(api, run_id, b"")
    assert empty.status_code == 422
    assert "is empty" in detail(empty)
    form = api.post(f"/api/runs/{run_id}/drift", data={"plugin": "x"})
    assert form.status_code in (415, 422)
    assert api.get(f"/runs/{run_id}?drift=0123456789abcdef").status_code == 200
    assert "is not here" in api.get(f"/runs/{run_id}?drift=0123456789abcdef").text
    assert "is not an upload id" in api.get(f"/runs/{run_id}?drift=../../x").text


def test_hostile_text_in_the_new_panels_is_escaped(api: httpx.Client, runs: Runs) -> None:
    run = runs.hostile
    changed = HOSTILE_CSV.replace("and then", "and later")
    response = post_drift(api, run.run_id, changed.encode(), name=HOSTILE_UPLOAD_NAME)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["file"] == HOSTILE_UPLOAD_NAME
    assert body["changed"] == ["fb_002"]
    assert any(claim["kind"] == "quote" for claim in body["stale"]), body
    for url in (body["page_url"], body["report_url"]):
        html = api.get(url).text
        for raw in (SCRIPT_TAG, IMG_ONERROR, "<img src=x onerror=window.__pwned=1>"):
            assert raw not in html, f"{url} shows {raw!r} unescaped"
        assert "newer &lt;img src=x onerror=window.__pwned=1&gt;.csv" in html
    reader = api.get(body["report_url"]).text
    assert "stale: row fb_002 changed in the newer file" in reader


def test_a_hostile_source_ref_is_shown_as_text(api: httpx.Client, ui_server: UIServer) -> None:
    home = ui_server.home
    ref = f"https://example.com/data.csv?{SCRIPT_TAG}"
    run = run_cli(
        home,
        _input(home, "referenced.csv", FAILED_CSV),
        "--source-ref",
        ref,
        database_url=ui_server.db_url,
    )
    record = json.loads((run.workspace / "runtime/run.json").read_text())
    assert record["source_lock"]["ref"]["uri"] == ref
    html = api.get(f"/runs/{run.run_id}").text
    assert SCRIPT_TAG not in html
    assert "https://example.com/data.csv?&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
