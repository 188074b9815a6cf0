"""`runlens reviewers`, `review`, `mark`, `reviews` and `marks` through the real CLI, on a real
offline run submitted by carol: the token is printed once and never stored in clear, the
submitter's approval is refused (exit 1), a one-byte edit voids an approval (and `runlens
verify` fails), the exports hold one row per claim and reviewer, and a note full of markup
and escape codes prints inert."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from runlens.cli import cli
from runlens.review.reviewers import token_digest
from runlens.store import open_store
from runlens.store.location import store_url

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
HOSTILE = "<b>bold</b> <script>x()</script> **strong** [red]red[/] \x1b[2J\x1b]0;title\x07 end"


def _invoke(home: Path, *args: object) -> Result:
    runner = CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home), "RUNLENS_USER": ""})
    result = runner.invoke(cli, [str(arg) for arg in args])
    assert "Traceback" not in result.output, result.output
    return result


@pytest.fixture(scope="module")
def offline_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("review-cli")
    result = _invoke(
        home, "run", "feedback-analysis", SAMPLE, "--model", "offline", "--as", "carol", "--json"
    )
    assert result.exit_code == 0, result.output
    return home


@pytest.fixture
def home(offline_home: Path, tmp_path: Path) -> Path:
    """A copy of the home with the offline run (its store left behind: indexed afresh)."""
    copy = tmp_path / "home"
    shutil.copytree(offline_home, copy, ignore=shutil.ignore_patterns("runlens.db*"))
    return copy


def _run_id(home: Path) -> str:
    [workspace] = [p for p in home.iterdir() if p.name.startswith("run_")]
    return workspace.name


def _add(home: Path, name: str) -> str:
    """`runlens reviewers add NAME`: its UI token."""
    result = _invoke(home, "reviewers", "add", name)
    assert result.exit_code == 0, result.output
    match = re.search(r"UI token:\s+(\S+)", result.output)
    assert match is not None, result.output
    return match.group(1)


def _claim(home: Path, suffix: str) -> dict[str, str]:
    document = json.loads((home / _run_id(home) / "runtime" / "citations.json").read_text())
    return next(c for c in document["citations"] if c["artifact"].endswith(suffix))


def test_a_reviewer_is_added_once_and_its_token_is_never_stored_in_clear(home: Path) -> None:
    token = _add(home, "alice")
    assert len(token) >= 40
    again = _invoke(home, "reviewers", "add", "alice")
    assert again.exit_code == 2 and "exists already" in again.output
    bad = _invoke(home, "reviewers", "add", "../evil")
    assert bad.exit_code == 2 and "reviewer name" in bad.output
    assert not (home / "evil.pem").exists()
    stored = b"".join(p.read_bytes() for p in home.glob("runlens.db*") if p.is_file())
    assert stored and token.encode() not in stored
    assert token_digest(token).encode() in stored
    with open_store(store_url(None, home)) as store:
        found = store.reviewer_for_token(token_digest(token))
        assert found is not None and found.name == "alice"
        assert store.reviewer_for_token(token) is None
    listed = _invoke(home, "reviewers", "list", "--json")
    [entry] = json.loads(listed.stdout)
    assert (entry["name"], entry["key_here"]) == ("alice", True)
    assert oct((home / "reviewers" / "alice.pem").stat().st_mode & 0o777) == "0o600"


def test_review_mark_reviews_and_marks_through_the_cli(home: Path) -> None:
    run_id = _run_id(home)
    _add(home, "alice")
    _add(home, "bob")
    quote = _claim(home, ".md")
    item = _claim(home, ".json")
    location = item["location"].split(".")[0]  # items[0].evidence_text -> items[0]
    no_reviewer = _invoke(home, "review", run_id, "--approve", "--note", "ok")
    assert no_reviewer.exit_code == 2 and "--as" in no_reviewer.output  # two reviewers here
    done = _invoke(home, "review", run_id, "--approve", "--note", "fine", "--as", "alice")
    assert done.exit_code == 0, done.output
    assert "approved (1 of 1 approval(s))" in done.output
    marked = _invoke(
        home, "mark", run_id, "--artifact", Path(quote["artifact"]).name,
        "--location", quote["location"], "--row-id", quote["row_id"], "--wrong",
        "--note", "=not this row", "--as", "bob",
    )  # fmt: skip
    assert marked.exit_code == 0, marked.output
    themed = _invoke(
        home, "mark", run_id, "--artifact", item["artifact"], "--location", location,
        "--row-id", item["row_id"], "--unsure", "--note", "theme?", "--correction",
        "theme=other", "--as", "bob",
    )  # fmt: skip
    assert themed.exit_code == 0, themed.output
    unknown = _invoke(
        home, "mark", run_id, "--artifact", item["artifact"], "--location", location,
        "--row-id", "fb_none", "--wrong", "--note", "x", "--as", "bob",
    )  # fmt: skip
    assert unknown.exit_code == 2 and "makes no claim" in unknown.output
    changes = _invoke(
        home, "review", run_id, "--request-changes", "--note", "fix row", "--as", "bob"
    )
    assert changes.exit_code == 0 and "changes-requested" in changes.output

    shown = _invoke(home, "reviews", run_id, "--json")
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    assert document["review_state"] == "changes-requested"
    assert [e["seq"] for e in document["entries"]] == [1, 2, 3, 4]
    assert [e["kind"] for e in document["entries"]] == ["decision", "mark", "mark", "decision"]
    assert document["entries"][1]["quote"] == quote["quote"]  # the citation's, by default
    assert document["entries"][2]["correction"] == {"theme": "other"}
    assert all(e["valid"] for e in document["entries"])
    assert document["review"]["approvals"] == 1 and document["rerun_of"] is None

    csv_text = _invoke(home, "marks", run_id, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [(r["reviewer"], r["mark"], r["row_id"]) for r in rows] == [
        ("bob", "wrong", quote["row_id"]), ("bob", "unsure", item["row_id"]),
    ]  # fmt: skip
    assert rows[0]["note"] == "'=not this row"  # no formula for a spreadsheet to run
    assert json.loads(rows[1]["correction"]) == {"theme": "other"}
    output = home / "marks.jsonl"
    written = _invoke(home, "marks", run_id, "--format", "jsonl", "--output", output)
    assert written.exit_code == 0
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [line["location"] for line in lines] == [quote["location"], location]
    assert lines[0]["note"] == "=not this row"  # JSON lines keep the note as written

    listed = json.loads(_invoke(home, "runs", "--json").stdout)
    assert [(r["run_id"], r["review_state"], r["submitted_by"]) for r in listed] == [
        (run_id, "changes-requested", "carol"),
    ]  # fmt: skip
    show = _invoke(home, "show", run_id, "--no-events")
    assert "review: changes-requested" in show.output
    assert json.loads(_invoke(home, "show", run_id, "--json").stdout)["review_state"] == (
        "changes-requested"
    )
    table = _invoke(home, "runs").output
    assert re.search(r"completed\s+changes-requested", table), table


def test_the_submitter_may_not_approve_their_own_run(home: Path) -> None:
    run_id = _run_id(home)
    _add(home, "carol")
    refused = _invoke(home, "review", run_id, "--approve", "--note", "mine is fine")
    assert refused.exit_code == 1, refused.output
    assert f"carol submitted run {run_id}" in refused.output
    assert "may not approve" in refused.output
    assert not (home / run_id / "runtime" / "reviews.jsonl").exists()
    # Asking for changes to one's own run is allowed.
    asked = _invoke(home, "review", run_id, "--request-changes", "--note", "redo")
    assert asked.exit_code == 0, asked.output


def test_a_json_field_and_its_item_are_one_claim(home: Path) -> None:
    """A mark given at a cited field (`items[0].evidence_text`) is recorded on its item, as
    drift names claims: a later mark at `items[0]` replaces it."""
    run_id = _run_id(home)
    _add(home, "alice")
    claim = _claim(home, ".json")
    assert "." in claim["location"], claim
    item = claim["location"].rsplit(".", 1)[0]
    for location, mark in ((claim["location"], "--wrong"), (item, "--correct")):
        marked = _invoke(
            home,
            "mark",
            run_id,
            "--artifact",
            claim["artifact"],
            "--location",
            location,
            "--row-id",
            claim["row_id"],
            mark,
            "--note",
            "checked",
            "--as",
            "alice",
        )
        assert marked.exit_code == 0, marked.output
    rows = [
        json.loads(line)
        for line in _invoke(home, "marks", run_id, "--format", "jsonl").output.splitlines()
    ]
    assert {row["location"] for row in rows} == {item}
    document = json.loads(_invoke(home, "reviews", run_id, "--json").output)
    assert document["review"]["marks"] == 1


def test_what_the_validators_failed_cannot_be_approved(tmp_path: Path) -> None:
    """Fabricated quotes fail the run and its deliverables: neither can be approved, and
    changes can still be requested."""
    conformance = ROOT / "src" / "runlens_feedback" / "conformance"
    home = tmp_path / "home"
    model = f"scripted:{conformance / 'fabricating.yaml'}"
    ran = _invoke(home, "run", "feedback-analysis", conformance / "feedback.csv", "--model", model)
    assert ran.exit_code == 1, ran.output
    run_id = _run_id(home)
    _add(home, "alice")
    whole = _invoke(home, "review", run_id, "--approve", "--note", "fine", "--as", "alice")
    assert whole.exit_code == 1, whole.output
    assert f"run {run_id} is failed: only a completed run can be approved" in whole.output
    report = _invoke(
        home,
        "review",
        run_id,
        "--artifact",
        "insight_report.md",
        "--approve",
        "--note",
        "ok",
        "--as",
        "alice",
    )
    assert report.exit_code == 1, report.output
    assert "the validators rejected artifacts/insight_report.md" in report.output
    assert not (home / run_id / "runtime" / "reviews.jsonl").exists()
    asked = _invoke(
        home, "review", run_id, "--request-changes", "--note", "fix the quote", "--as", "alice"
    )
    assert asked.exit_code == 0, asked.output
    state = json.loads(_invoke(home, "reviews", run_id, "--json").output)["review_state"]
    assert state == "changes-requested"


def test_a_one_byte_edit_voids_the_approval_and_verify_fails(home: Path) -> None:
    run_id = _run_id(home)
    _add(home, "alice")
    done = _invoke(home, "review", run_id, "--approve", "--note", "ship it")
    assert done.exit_code == 0, done.output
    assert _invoke(home, "verify", run_id).exit_code == 0
    report = home / run_id / "artifacts" / "insight_report.md"
    data = bytearray(report.read_bytes())
    data[-1] = ord("!") if data[-1] != ord("!") else ord("?")
    report.write_bytes(bytes(data))
    document = json.loads(_invoke(home, "reviews", run_id, "--json").stdout)
    assert document["review_state"] == "unreviewed"
    [entry] = document["entries"]
    assert (entry["valid"], entry["void"]) == (False, True)
    assert document["review"]["void"] == 1
    text = _invoke(home, "reviews", run_id).output
    assert "VOID" in text and "unreviewed" in text
    listed = json.loads(_invoke(home, "runs", "--json").stdout)
    assert listed[0]["review_state"] == "unreviewed"
    verified = _invoke(home, "verify", run_id)
    assert verified.exit_code == 1, verified.output


def test_a_note_with_markup_and_escape_codes_prints_inert(home: Path) -> None:
    run_id = _run_id(home)
    _add(home, "alice")
    done = _invoke(home, "review", run_id, "--reject", "--note", HOSTILE)
    assert done.exit_code == 0, done.output
    text = _invoke(home, "reviews", run_id).output
    assert "\x1b" not in text and "\x07" not in text
    assert "<b>bold</b> <script>x()</script> **strong** [red]red[/]" in text
    assert "\\x1b[2J" in text  # shown as an escape, not sent to the terminal
    document = json.loads(_invoke(home, "reviews", run_id, "--json").stdout)
    assert document["entries"][0]["note"] == HOSTILE  # kept and signed as written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--approve",), "Missing option '--note'"),
        (("--note", "x"), "say the decision"),
        (("--approve", "--note", "x", "--artifact", "nope.md"), "no deliverable 'nope.md'"),
        (("--approve", "--note", "x", "--as", "nobody"), "no reviewer 'nobody'"),
    ],
)
def test_usage_errors_exit_2(home: Path, args: tuple[str, ...], message: str) -> None:
    _add(home, "alice")
    result = _invoke(home, "review", _run_id(home), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
