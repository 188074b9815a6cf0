"""Review by people through the HTTP API and the pages (SPEC section 17), over real HTTP
against the session's real `runlens ui` processes (`ui_server`, `token_server`).

Runs are made by the CLI into the server's home (`tests.ui.runs`); reviewers as `runlens
reviewers add` makes them (`tests.ui.reviewers`). Decisions and marks are signed by the
server with the reviewer's key in that home and appended to the run's ledger. Each test that
needs a run of its own (a decision changes its state) makes one.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.ui.conftest import UIServer
from tests.ui.reviewers import HOSTILE_NOTE, add_reviewer, assert_inert
from tests.ui.runs import SAMPLE_CSV, MadeRun, completed_run, failed_run, run_cli

from runlens.ui.reviewing import REVIEWER_COOKIE, REVIEWER_HEADER

#: Seconds a rerun (the offline model) may take to end.
RERUN_SECONDS = 180


@dataclass(frozen=True)
class Team:
    """The module's reviewers: their tokens, by name."""

    alice: str
    bob: str


@pytest.fixture(scope="module")
def team(ui_server: UIServer) -> Team:
    return Team(
        alice=add_reviewer(ui_server.home, ui_server.db_url, "alice"),
        bob=add_reviewer(ui_server.home, ui_server.db_url, "bob"),
    )


@pytest.fixture(scope="module")
def api(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as client:
        yield client


def as_reviewer(token: str) -> dict[str, str]:
    return {REVIEWER_HEADER: token}


def detail(response: httpx.Response) -> str:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("detail"), str), body
    return str(body["detail"])


def first_report_claim(client: httpx.Client, run_id: str) -> dict[str, Any]:
    """The first quote of the run's report, as the reader view's mark controls name it (the
    client must be signed in as a reviewer to see them)."""
    page = client.get(f"/runs/{run_id}/report")
    assert page.status_code == 200
    match = re.search(
        r'name="artifact" value="([^"]+\.md)">\s*<input type="hidden" name="location" '
        r'value="(line \d+)">\s*<input type="hidden" name="row_id" value="([^"]+)">\s*'
        r'<input type="hidden" name="quote" value="([^"]*)">',
        page.text,
    )
    assert match, "the reader view offers no mark controls on a quote"
    return {
        "artifact": html.unescape(match[1]),
        "location": match[2],
        "row_id": html.unescape(match[3]),
        "quote": html.unescape(match[4]),
    }


def reviews(api: httpx.Client, run_id: str) -> dict[str, Any]:
    response = api.get(f"/api/runs/{run_id}/reviews")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@contextmanager
def signed_in_client(server: UIServer, token: str) -> Iterator[httpx.Client]:
    """A client signed in at `/reviews/sign-in` with `token` (the reviewer cookie set)."""
    with server.client() as client:
        response = client.post(
            "/reviews/sign-in", data={"token": token, "next": "/reviews"}, follow_redirects=False
        )
        assert response.status_code == 303, response.text
        yield client


# -- fixtures of runs ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def marked(ui_server: UIServer, team: Team, api: httpx.Client) -> tuple[MadeRun, dict[str, Any]]:
    """A completed run whose first report quote alice marked wrong with the hostile note, on
    which bob requested changes with it."""
    run = completed_run(ui_server.home)
    # The reader view shows mark controls to a signed-in reviewer only.
    with signed_in_client(ui_server, team.alice) as alice:
        claim = first_report_claim(alice, run.run_id)
    mark = api.post(
        f"/api/runs/{run.run_id}/marks",
        json={**claim, "mark": "wrong", "note": HOSTILE_NOTE},
        headers=as_reviewer(team.alice),
    )
    assert mark.status_code == 201, mark.text
    decision = api.post(
        f"/api/runs/{run.run_id}/reviews",
        json={"decision": "request-changes", "note": HOSTILE_NOTE},
        headers=as_reviewer(team.bob),
    )
    assert decision.status_code == 201, decision.text
    return run, claim


# -- the API ------------------------------------------------------------------------------------


def test_a_new_run_is_unreviewed_everywhere(
    ui_server: UIServer, api: httpx.Client, team: Team
) -> None:
    run = completed_run(ui_server.home)
    body = reviews(api, run.run_id)
    assert body["review_state"] == "unreviewed"
    assert body["entries"] == [] and body["run_id"] == run.run_id
    assert api.get(f"/api/runs/{run.run_id}").json()["review_state"] == "unreviewed"
    listed = api.get("/api/runs", params={"limit": 500}).json()["runs"]
    assert {r["run_id"]: r["review_state"] for r in listed}[run.run_id] == "unreviewed"
    queue = api.get("/reviews")
    assert queue.status_code == 200 and run.run_id in queue.text


def test_marks_and_decisions_are_signed_entries_and_set_the_state(
    api: httpx.Client, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    body = reviews(api, run.run_id)
    assert body["review_state"] == "changes-requested"
    kinds = [(e["kind"], e["reviewer"]["name"], e["seq"]) for e in body["entries"]]
    assert kinds == [("mark", "alice", 1), ("decision", "bob", 2)]
    mark = body["entries"][0]
    assert (mark["mark"], mark["location"], mark["row_id"]) == (
        "wrong",
        claim["location"],
        claim["row_id"],
    )
    assert mark["note"] == HOSTILE_NOTE
    assert body["entries"][1]["previous"] == mark["digest"]
    assert [(e["valid"], e["void"]) for e in body["entries"]] == [(True, False), (True, False)]
    assert list(mark["subjects"]) == [claim["artifact"]]
    ledger = (run.workspace / "runtime" / "reviews.jsonl").read_text("utf-8").splitlines()
    assert len(ledger) == 2 and all(json.loads(line)["signatures"] for line in ledger)


def test_the_marks_export_has_one_row_per_claim_and_reviewer(
    api: httpx.Client, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    as_csv = api.get(f"/api/runs/{run.run_id}/marks", params={"format": "csv"})
    assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [(r["reviewer"], r["mark"], r["row_id"], r["note"]) for r in rows] == [
        ("alice", "wrong", claim["row_id"], HOSTILE_NOTE)
    ]
    lines = api.get(f"/api/runs/{run.run_id}/marks", params={"format": "jsonl"}).text
    assert [json.loads(line)["location"] for line in lines.splitlines()] == [claim["location"]]
    assert api.get(f"/api/runs/{run.run_id}/marks", params={"format": "xml"}).status_code == 422


def test_a_post_without_a_reviewer_token_is_401_and_a_wrong_one_403(
    ui_server: UIServer, api: httpx.Client, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    before = len(reviews(api, run.run_id)["entries"])
    for path, body in (
        ("reviews", {"decision": "approve", "note": "fine"}),
        ("marks", {**claim, "mark": "correct", "note": "fine"}),
        ("rerun", {}),
    ):
        url = f"/api/runs/{run.run_id}/{path}"
        missing = api.post(url, json=body)
        assert missing.status_code == 401, missing.text
        assert "reviewer token is required" in detail(missing)
        wrong = api.post(url, json=body, headers=as_reviewer("not-a-token"))
        assert wrong.status_code == 403, wrong.text
        assert "not valid" in detail(wrong) and "alice" not in detail(wrong)
        for cookie in ("forged", team.alice, f"1.{'0' * 64}.{'0' * 64}"):
            # Neither a made-up cookie nor the token itself as one names the reviewer.
            forged = httpx.Client(base_url=ui_server.url, cookies={REVIEWER_COOKIE: cookie})
            with forged:
                assert forged.post(url, json=body).status_code == 403
    assert len(reviews(api, run.run_id)["entries"]) == before


def test_cross_site_review_posts_are_refused(
    ui_server: UIServer, api: httpx.Client, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    before = len(reviews(api, run.run_id)["entries"])
    cross = [
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "null"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
    ]
    for headers in cross:
        for path, body in (
            ("reviews", {"decision": "approve", "note": "fine"}),
            ("marks", {**claim, "mark": "correct", "note": "fine"}),
            ("rerun", {}),
        ):
            response = api.post(
                f"/api/runs/{run.run_id}/{path}",
                json=body,
                headers={**headers, **as_reviewer(team.alice)},
            )
            assert response.status_code == 403, (headers, path, response.text)
            assert "cross-site" in detail(response)
        for path in ("/reviews/sign-in", "/reviews/sign-out"):
            response = api.post(path, data={"token": team.alice}, headers=headers)
            assert response.status_code == 403, (headers, path)
            assert "set-cookie" not in response.headers
    assert len(reviews(api, run.run_id)["entries"]) == before


def test_bad_fields_are_named(
    api: httpx.Client, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    url = f"/api/runs/{run.run_id}"
    cases = [
        ("reviews", {"decision": "maybe", "note": "x"}, 422, "decision"),
        ("reviews", {"decision": "approve"}, 422, "note"),
        ("reviews", {"decision": "reject", "note": "x", "artifact": "nope.md"}, 422, "nope.md"),
        ("marks", {**claim, "mark": "perhaps"}, 422, "mark"),
        ("marks", {**claim, "mark": "wrong", "location": "line 99999"}, 422, "no claim"),
        ("marks", {**claim, "mark": "wrong", "correction": {"colour": "red"}}, 422, "colour"),
    ]
    for path, body, status, named in cases:
        response = api.post(f"{url}/{path}", json=body, headers=as_reviewer(team.alice))
        assert response.status_code == status, (body, response.text)
        assert named in detail(response), detail(response)
    unknown = api.post(
        "/api/runs/no-such-run/reviews",
        json={"decision": "approve", "note": "x"},
        headers=as_reviewer(team.alice),
    )
    assert unknown.status_code == 404


def test_the_policy_refuses_the_submitter_s_approval(
    ui_server: UIServer, api: httpx.Client, team: Team
) -> None:
    run = run_cli(ui_server.home, SAMPLE_CSV, "--as", "dora")
    assert api.get(f"/api/runs/{run.run_id}").json()["submitted_by"] == "dora"
    token = add_reviewer(ui_server.home, ui_server.db_url, "dora")
    refused = api.post(
        f"/api/runs/{run.run_id}/reviews",
        json={"decision": "approve", "note": "my own work is fine"},
        headers=as_reviewer(token),
    )
    assert refused.status_code == 403, refused.text
    assert "submitter" in detail(refused)
    assert reviews(api, run.run_id)["entries"] == []
    # Another reviewer may approve it; the submitter may still request changes.
    other = api.post(
        f"/api/runs/{run.run_id}/reviews",
        json={"decision": "approve", "note": "fine"},
        headers=as_reviewer(team.alice),
    )
    assert other.status_code == 201 and other.json()["review_state"] == "approved"


def test_a_failed_run_is_not_approved_and_its_page_says_why(
    ui_server: UIServer, api: httpx.Client, team: Team
) -> None:
    run = failed_run(ui_server.home)
    refused = api.post(
        f"/api/runs/{run.run_id}/reviews",
        json={"decision": "approve", "note": "good enough"},
        headers=as_reviewer(team.alice),
    )
    assert refused.status_code == 403, refused.text
    assert "only a completed run can be approved" in detail(refused)
    assert reviews(api, run.run_id)["entries"] == []
    with signed_in_client(ui_server, team.alice) as client:
        page = client.get(f"/runs/{run.run_id}")
    assert "This run is failed: it cannot be approved as a whole" in page.text


def test_an_approval_shows_void_after_a_one_byte_edit(
    ui_server: UIServer, api: httpx.Client, team: Team
) -> None:
    run = completed_run(ui_server.home)
    approved = api.post(
        f"/api/runs/{run.run_id}/reviews",
        json={"decision": "approve", "note": "checked every quote"},
        headers=as_reviewer(team.alice),
    )
    assert approved.status_code == 201, approved.text
    assert approved.json()["review_state"] == "approved"
    assert reviews(api, run.run_id)["review_state"] == "approved"
    assert api.get(f"/api/runs/{run.run_id}").json()["review_state"] == "approved"
    report = run.workspace / "artifacts" / "insight_report.md"
    report.write_bytes(report.read_bytes() + b" ")
    body = reviews(api, run.run_id)
    assert body["review_state"] == "unreviewed"
    assert body["review"]["void"] == 1
    page = api.get(f"/runs/{run.run_id}").text
    assert 'data-valid="0"' in page and "void: a file changed since" in page


# -- the pages ------------------------------------------------------------------------------------


def test_a_note_stays_inert_on_every_page(
    api: httpx.Client, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, _ = marked
    run_page = api.get(f"/runs/{run.run_id}")
    assert run_page.status_code == 200
    assert_inert(run_page.text)
    assert 'data-review-state="changes-requested"' in run_page.text
    reader = api.get(f"/runs/{run.run_id}/report")
    assert_inert(reader.text)
    queue = api.get("/reviews")
    assert run.run_id in queue.text and "changes-requested" in queue.text
    assert_inert(queue.text)
    rows = api.get(f"/runs/{run.run_id}/rows", params={"mark": "wrong"})
    assert rows.status_code == 200
    assert_inert(rows.text)
    body = reviews(api, run.run_id)
    assert body["entries"][0]["note"] == HOSTILE_NOTE


def test_the_rows_page_filters_by_mark(
    api: httpx.Client, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    wrong = api.get(f"/runs/{run.run_id}/rows", params={"mark": "wrong"})
    assert wrong.status_code == 200
    shown = re.findall(r'<tr data-row-id="([^"]+)">', wrong.text)
    assert shown == [claim["row_id"]]
    correct = api.get(f"/runs/{run.run_id}/rows", params={"mark": "correct"})
    assert re.findall(r'<tr data-row-id="([^"]+)">', correct.text) == []
    everything = api.get(f"/runs/{run.run_id}/rows")
    assert len(re.findall(r'<tr data-row-id="', everything.text)) > 1
    bad = api.get(f"/runs/{run.run_id}/rows", params={"mark": "maybe"})
    assert bad.status_code == 400 and "marks: correct, wrong, unsure" in bad.text


def test_sign_in_sets_an_http_only_cookie_and_a_wrong_token_is_refused(
    ui_server: UIServer, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, _ = marked
    with ui_server.client() as client:
        wrong = client.post("/reviews/sign-in", data={"token": "guess"}, follow_redirects=False)
        assert wrong.status_code == 403 and "set-cookie" not in wrong.headers
        assert "not a reviewer" in wrong.text
        page = client.get(f"/runs/{run.run_id}/report")
        assert 'class="mark-form"' not in page.text and "Sign in to review" in page.text
        signed = client.post(
            "/reviews/sign-in",
            data={"token": team.alice, "next": f"/runs/{run.run_id}/report"},
            follow_redirects=False,
        )
        assert signed.status_code == 303
        assert signed.headers["location"] == f"/runs/{run.run_id}/report"
        cookie = signed.headers["set-cookie"].lower()
        assert cookie.startswith(f"{REVIEWER_COOKIE}=")
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert team.alice.lower() not in cookie, "the token itself is never in the cookie"
        page = client.get(f"/runs/{run.run_id}/report")
        assert 'class="mark-form"' in page.text and "Reviewing as" in page.text
        away = client.post(
            "/reviews/sign-in",
            data={"token": team.alice, "next": "//evil.example/x"},
            follow_redirects=False,
        )
        assert away.headers["location"] == "/reviews"
        out = client.post("/reviews/sign-out", data={"next": "/reviews"}, follow_redirects=False)
        assert out.status_code == 303
        client.cookies.delete(REVIEWER_COOKIE)
        assert 'class="mark-form"' not in client.get(f"/runs/{run.run_id}/report").text


def test_a_form_from_the_page_records_and_goes_back(
    ui_server: UIServer, team: Team, api: httpx.Client
) -> None:
    run = completed_run(ui_server.home)
    with signed_in_client(ui_server, team.bob) as bob:
        claim = first_report_claim(bob, run.run_id)
        marked = bob.post(
            f"/api/runs/{run.run_id}/marks",
            data={
                **claim,
                "mark": "unsure",
                "note": "the row says it less strongly",
                "back": f"/runs/{run.run_id}/report#claim-1",
            },
            follow_redirects=False,
        )
        assert marked.status_code == 303, marked.text
        assert marked.headers["location"] == f"/runs/{run.run_id}/report#claim-1"
        decided = bob.post(
            f"/api/runs/{run.run_id}/reviews",
            data={"decision": "reject", "note": "no", "artifact": "", "back": "https://x.example"},
            follow_redirects=False,
        )
        assert decided.status_code == 303
        assert decided.headers["location"] == f"/runs/{quote(run.run_id)}#review"
    assert reviews(api, run.run_id)["review_state"] == "rejected"
    assert [e["mark"] for e in reviews(api, run.run_id)["entries"] if e["kind"] == "mark"] == [
        "unsure"
    ]


def test_the_token_server_asks_for_its_token_before_the_reviewer_s(
    token_server: UIServer,
) -> None:
    run = completed_run(token_server.home)
    token = add_reviewer(token_server.home, token_server.db_url, "carol")
    url = f"/api/runs/{run.run_id}/reviews"
    body = {"decision": "request-changes", "note": "x"}
    with token_server.client(authorised=False) as anonymous:
        refused = anonymous.post(url, json=body, headers=as_reviewer(token))
        assert refused.status_code == 401 and "RUNLENS_UI_TOKEN" in detail(refused)
        assert anonymous.get("/reviews").status_code == 401
    with token_server.client() as client:
        assert client.post(url, json=body).status_code == 401
        accepted = client.post(url, json=body, headers=as_reviewer(token))
        assert accepted.status_code == 201, accepted.text
        assert client.get("/reviews").status_code == 200


def test_reviews_of_an_unknown_run_are_404(api: httpx.Client) -> None:
    assert api.get("/api/runs/nothing-here/reviews").status_code == 404
    assert api.get("/api/runs/nothing-here/marks").status_code == 404


def test_a_rerun_with_the_review_links_both_ways(
    ui_server: UIServer, api: httpx.Client, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, _ = marked
    started = api.post(f"/api/runs/{run.run_id}/rerun", json={}, headers=as_reviewer(team.alice))
    assert started.status_code == 202, started.text
    body = started.json()
    new_id = body["run_id"]
    assert body["rerun_of"] == run.run_id and new_id != run.run_id
    assert started.headers["location"] == f"/api/runs/{new_id}"
    deadline = time.monotonic() + RERUN_SECONDS
    while True:
        new = api.get(f"/api/runs/{new_id}").json()
        if new["status"] in {"completed", "failed", "cancelled", "interrupted"}:
            break
        assert time.monotonic() < deadline, f"the rerun is still {new['status']}"
        time.sleep(0.5)
    assert new["status"] == "completed", new
    assert new["rerun_of"] == run.run_id and new["submitted_by"] == "alice"
    assert new_id in reviews(api, run.run_id)["reruns"]
    page = api.get(f"/runs/{new_id}").text
    assert f'id="rerun-of" href="/runs/{run.run_id}"' in page
    assert f"/compare?a={run.run_id}&amp;b={new_id}" in page
    assert f'class="rerun-link" href="/runs/{new_id}"' in api.get(f"/runs/{run.run_id}").text


def test_a_run_whose_review_asks_nothing_is_not_rerun(
    ui_server: UIServer, api: httpx.Client, team: Team
) -> None:
    run = completed_run(ui_server.home)
    refused = api.post(f"/api/runs/{run.run_id}/rerun", json={}, headers=as_reviewer(team.alice))
    assert refused.status_code == 409, refused.text
    assert "cannot be re-run" in detail(refused)
    assert reviews(api, run.run_id)["reruns"] == []


def test_a_refused_form_answers_a_page_that_says_why(
    ui_server: UIServer, team: Team, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, claim = marked
    page_form = {"Accept": "text/html,application/xhtml+xml"}
    with ui_server.client() as anonymous:
        unsigned = anonymous.post(
            f"/api/runs/{run.run_id}/reviews",
            data={"decision": "approve", "note": "x"},
            headers=page_form,
        )
        assert unsigned.status_code == 401
        assert unsigned.headers["content-type"].startswith("text/html")
        assert "reviewer token is required" in unsigned.text and 'href="/reviews"' in unsigned.text
    with signed_in_client(ui_server, team.alice) as alice:
        bad = alice.post(
            f"/api/runs/{run.run_id}/marks",
            data={**claim, "mark": "wrong", "location": "line 99999", "note": HOSTILE_NOTE},
            headers=page_form,
        )
        assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
        assert "no claim" in bad.text and "<script>alert" not in bad.text
        # A client's form (no Accept: text/html) still gets JSON.
        json_answer = alice.post(f"/api/runs/{run.run_id}/marks", data={**claim, "mark": "maybe"})
        assert json_answer.status_code == 422 and "mark" in detail(json_answer)


def test_the_runs_can_be_listed_by_review_state(
    api: httpx.Client, marked: tuple[MadeRun, dict[str, Any]]
) -> None:
    run, _ = marked
    listed = api.get("/api/runs", params={"review_state": "changes-requested", "limit": 500})
    assert run.run_id in {r["run_id"] for r in listed.json()["runs"]}
    assert all(r["review_state"] == "changes-requested" for r in listed.json()["runs"])
    approved = api.get("/api/runs", params={"review_state": "approved", "limit": 500}).json()
    assert run.run_id not in {r["run_id"] for r in approved["runs"]}
    assert api.get("/api/runs", params={"review_state": "maybe"}).status_code == 422
    page = api.get("/", params={"review": "changes-requested"})
    assert f'data-run-id="{run.run_id}"' in page.text


def two_reviewers_at_once(server: UIServer, alice: str, bob: str, *, database_url: str) -> None:
    """Alice and Bob mark and decide on one run at the same time through `server`: every
    request is recorded, in one gap-free chain that `runlens verify` accepts."""
    from concurrent.futures import ThreadPoolExecutor

    from runlens.verdict.verify import verify_workspace

    run = completed_run(server.home, database_url=database_url)
    with signed_in_client(server, alice) as client:
        claim = first_report_claim(client, run.run_id)

    def post(token: str, index: int) -> int:
        with server.client() as client:
            if index % 2:
                body = {**claim, "mark": "unsure", "note": f"note {index}"}
                path = "marks"
            else:
                body = {"decision": "request-changes", "note": f"note {index}"}
                path = "reviews"
            response = client.post(
                f"/api/runs/{run.run_id}/{path}", json=body, headers=as_reviewer(token)
            )
            return response.status_code

    tokens = [alice, bob] * 4
    with ThreadPoolExecutor(max_workers=4) as pool:
        codes = list(pool.map(post, tokens, range(len(tokens))))
    assert codes == [201] * len(tokens)
    with server.client() as client:
        entries = reviews(client, run.run_id)["entries"]
    assert [e["seq"] for e in entries] == list(range(1, len(tokens) + 1))
    assert all(e["previous"] == p["digest"] for p, e in itertools.pairwise(entries))
    assert len({e["reviewer"]["name"] for e in entries}) == 2
    report = verify_workspace(run.workspace, home=server.home).as_json()
    reviews_check = next(c for c in report["checks"] if c["check"] == "reviews")
    assert reviews_check["ok"], reviews_check


def test_two_reviewers_at_once_make_one_gap_free_chain(ui_server: UIServer, team: Team) -> None:
    two_reviewers_at_once(ui_server, team.alice, team.bob, database_url=ui_server.db_url)


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIServer]:
    """A `runlens ui` over a fresh PostgreSQL schema (skipped without PostgreSQL)."""
    import secrets

    import sqlalchemy as sa
    from tests.store.conftest import POSTGRES
    from tests.ui.conftest import running_server

    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        engine.dispose()
        pytest.skip(f"no PostgreSQL at {POSTGRES}: {error.orig}")
    schema = f"rl_{secrets.token_hex(6)}"
    with engine.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = f"{POSTGRES}?options=-csearch_path%3D{schema}"
    try:
        home = tmp_path_factory.mktemp("ui-postgres-home")
        with running_server(home, "--database-url", url) as server:
            yield UIServer(url=server.url, home=home, db_url=url)
    finally:
        with engine.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def test_two_reviewers_at_once_on_postgresql(postgres_server: UIServer) -> None:
    server = postgres_server
    alice = add_reviewer(server.home, server.db_url, "alice")
    bob = add_reviewer(server.home, server.db_url, "bob")
    two_reviewers_at_once(server, alice, bob, database_url=server.db_url)
