"""Reviews in the run store (SPEC section 17), on SQLite and PostgreSQL: reviewers found by
their token's digest, review lines keyed by `(run_id, seq)`, the review state and the queue,
and two reviewers recording decisions and marks at once on a real offline run, whose chain
comes out gap-free, in step with `runtime/reviews.jsonl`, and verifies."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens.review.ledger import ledger_problems, read_ledger
from runlens.review.record import record_decision, record_mark, run_reviews
from runlens.review.reviewers import home_reviewer_keys, new_reviewer_key, token_digest
from runlens.store import RunStore, open_store
from runlens.store.reader import open_read_first
from runlens.store.sync import sync_workspace
from runlens.verdict.keys import public_pem
from runlens.verdict.verify import verify_workspace

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"


def _run(store: RunStore, run_id: str, created_at: str, **fields: object) -> None:
    values: dict[str, object] = {
        "plugin": "feedback-analysis", "model": "offline", "status": "completed",
        "workspace": f"/runs/{run_id}", "created_at": created_at,
    }  # fmt: skip
    store.upsert_run(run_id, **{**values, **fields})


# -- reviewers, lines, state, queue (no run needed) -----------------------------------------


def test_a_reviewer_is_found_by_its_token_digest_only(store: RunStore) -> None:
    store.add_reviewer("alice", "a" * 64, "PEM-A", token_digest("token-a"))
    store.add_reviewer("bob", "b" * 64, "PEM-B", token_digest("token-b"))
    found = store.reviewer_for_token(token_digest("token-a"))
    assert found is not None and (found.name, found.keyid, found.public_key) == (
        "alice", "a" * 64, "PEM-A",
    )  # fmt: skip
    assert store.reviewer_for_token(token_digest("token-c")) is None
    assert store.reviewer_for_token("token-a") is None  # the clear token finds nobody
    assert [r.name for r in store.list_reviewers()] == ["alice", "bob"]
    got = store.get_reviewer("bob")
    assert got is not None and got.keyid == "b" * 64
    with pytest.raises(ValueError, match="alice"):
        store.add_reviewer("alice", "c" * 64, "PEM-C", token_digest("token-d"))
    with pytest.raises(ValueError):  # a token digest names one reviewer
        store.add_reviewer("carol", "c" * 64, "PEM-C", token_digest("token-a"))


@dataclass(frozen=True)
class _Line:
    seq: int
    created_at: str = "2026-12-05T10:00:00.000+00:00"
    kind: str = "decision"
    reviewer: str = "alice"
    digest: str = "d" * 64
    line: str = '{"x":1}'


def test_a_taken_seq_is_refused_and_lines_come_back_in_order(store: RunStore) -> None:
    _run(store, "run_a", "2026-12-01T10:00:00Z")
    assert store.append_review_line("run_a", _Line(2, line="two"))
    assert store.append_review_line("run_a", _Line(1, line="one"))
    assert not store.append_review_line("run_a", _Line(1, line="other"))  # another came first
    assert store.review_lines("run_a") == ["one", "two"]
    assert store.review_lines("run_b") == []
    store.delete_run("run_a")  # the lines go with their run
    assert store.review_lines("run_a") == []


def test_review_state_filters_and_the_queue_is_oldest_first(store: RunStore) -> None:
    _run(store, "run_new", "2026-12-03T10:00:00Z")
    _run(store, "run_old", "2026-12-01T10:00:00Z", submitted_by="carol")
    _run(store, "run_mid", "2026-12-02T10:00:00Z", rerun_of="run_old")
    _run(store, "run_live", "2026-11-30T10:00:00Z", status="running")  # not judged yet
    _run(store, "run_broke", "2026-11-29T10:00:00Z", status="failed")  # before validation
    store.set_review_state("run_new", "approved")
    store.set_review_state("run_mid", "changes-requested")
    with pytest.raises(ValueError):
        store.set_review_state("run_old", "fine")
    assert [r.run_id for r in store.review_queue()] == ["run_old", "run_mid"]
    assert [r.run_id for r in store.review_queue(limit=1)] == ["run_old"]
    assert store.review_queue(plugin="other") == []
    runs, total = store.list_runs(review_state="approved")
    assert [r.run_id for r in runs] == ["run_new"] and total == 1
    detail = store.get_run("run_old")
    assert detail is not None
    assert (detail.submitted_by, detail.review_state, detail.reruns) == (
        "carol", "unreviewed", ["run_mid"],
    )  # fmt: skip
    mid = store.get_run("run_mid")
    assert mid is not None and (mid.rerun_of, mid.review_state) == ("run_old", "changes-requested")


def test_the_sqlite3_reader_reads_the_review_columns(sqlite_url: str) -> None:
    with open_store(sqlite_url) as store:
        _run(store, "run_old", "2026-12-01T10:00:00Z", submitted_by="carol")
        _run(store, "run_mid", "2026-12-02T10:00:00Z", rerun_of="run_old")
        store.set_review_state("run_mid", "rejected")
    reader = open_read_first(sqlite_url)
    try:
        old, mid = reader.get_run("run_old"), reader.get_run("run_mid")
        assert old is not None and mid is not None
        assert (old.submitted_by, old.reruns, old.review_state) == (
            "carol", ["run_mid"], "unreviewed",
        )  # fmt: skip
        assert (mid.rerun_of, mid.review_state) == ("run_old", "rejected")
        listed = {run.run_id: run.review_state for run in reader.listed_runs()}  # type: ignore[union-attr]
        assert listed == {"run_old": "unreviewed", "run_mid": "rejected"}
    finally:
        reader.close()


# -- a real offline run reviewed by two reviewers at once -------------------------------------


@pytest.fixture(scope="module")
def offline_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs home holding one offline run (submitted by carol) and its signing key."""
    home = tmp_path_factory.mktemp("reviewed-home")
    runner = CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home)})
    result = runner.invoke(
        cli, ["run", "feedback-analysis", str(SAMPLE), "--model", "offline", "--as", "carol",
              "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return home


@dataclass
class Reviewed:
    home: Path
    workspace: Path
    run_id: str


@pytest.fixture
def reviewed(offline_home: Path, tmp_path: Path) -> Callable[[RunStore], Reviewed]:
    """A copy of the offline run's home (keys and workspace, no store) indexed into `store`,
    with reviewers alice and bob."""

    def make(store: RunStore) -> Reviewed:
        home = tmp_path / "home"
        shutil.copytree(offline_home, home, ignore=shutil.ignore_patterns("runlens.db*"))
        [workspace] = [p for p in home.iterdir() if (p / "runtime" / "run.json").is_file()]
        run_id = sync_workspace(store, workspace)
        assert run_id is not None
        for name in ("alice", "bob"):
            key = new_reviewer_key(name, home)
            store.add_reviewer(name, key.keyid, public_pem(key.public_key), token_digest(name))
        return Reviewed(home, workspace, run_id)

    return make


def _claims(workspace: Path) -> list[tuple[str, str, str]]:
    """(artifact, location, row id) of the report's citations."""
    document = json.loads((workspace / "runtime" / "citations.json").read_text("utf-8"))
    return [
        (c["artifact"], c["location"], c["row_id"])
        for c in document["citations"]
        if c["artifact"].endswith(".md")
    ]


def test_two_reviewers_at_once_give_a_gap_free_chain_that_verifies(
    store: RunStore, reviewed: Callable[[RunStore], Reviewed]
) -> None:
    run = reviewed(store)
    claims = _claims(run.workspace)
    assert len(claims) >= 6
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def review(name: str, offset: int) -> None:
        try:
            barrier.wait(timeout=30)
            for number in range(3):
                artifact, location, row_id = claims[offset + number]
                record_mark(
                    store, run.run_id, reviewer=name, mark="wrong", note=f"{name} {number}",
                    artifact=artifact, location=location, row_id=row_id, home=run.home,
                )  # fmt: skip
                record_decision(
                    store, run.run_id, reviewer=name, decision="approve",
                    note=f"{name} approves {number}", home=run.home,
                )  # fmt: skip
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [
        threading.Thread(target=review, args=("alice", 0)),
        threading.Thread(target=review, args=("bob", 3)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    lines = store.review_lines(run.run_id)
    entries = read_ledger(run.workspace)
    # Twelve lines, seq 1..12, each naming the one before: none lost, none twice.
    assert [entry.seq for entry in entries] == list(range(1, 13))
    assert [entry.line for entry in entries] == lines
    keys = home_reviewer_keys(run.home)
    problems = ledger_problems(
        entries,
        run_id=run.run_id,
        keys={keyid: key for keyid, (_, key) in keys.items()},
        names={keyid: name for keyid, (name, _) in keys.items()},
    )
    assert problems == []
    assert sorted(e.reviewer for e in entries) == ["alice"] * 6 + ["bob"] * 6
    _, summary = run_reviews(store, run.run_id, home=run.home)
    assert (summary.state, summary.approvals, len(summary.marks)) == ("approved", 2, 6)
    detail = store.get_run(run.run_id)
    assert detail is not None and detail.review_state == "approved"
    report = verify_workspace(run.workspace, home=run.home)
    checks = {check.check: check for check in report.checks}
    assert checks["reviews"].ok, checks["reviews"].detail
    assert report.verified, [c.detail for c in report.failed]
    # The verdict was re-signed with the twelve reviews in it.
    envelope = json.loads((run.workspace / "runtime" / "verdict.dsse.json").read_text("utf-8"))
    assert envelope["signatures"]


def test_lines_appended_to_the_workspace_ledger_join_the_store(
    store: RunStore, reviewed: Callable[[RunStore], Reviewed], tmp_path: Path
) -> None:
    run = reviewed(store)
    record_decision(
        store, run.run_id, reviewer="alice", decision="request-changes", note="n",
        home=run.home,
    )  # fmt: skip
    lines = store.review_lines(run.run_id)
    # A fresh store indexing the workspace takes its ledger in; a forged file is not.
    with open_store(f"sqlite:///{tmp_path / 'other.db'}") as other:
        assert sync_workspace(other, run.workspace) == run.run_id
        assert other.review_lines(run.run_id) == lines
        detail = other.get_run(run.run_id)
        assert detail is not None and detail.review_state == "changes-requested"
    # A store whose lines are not the file's beginning takes nothing from the file.
    with open_store(f"sqlite:///{tmp_path / 'third.db'}") as third:
        third.upsert_run(run.run_id, plugin="p", model="m", status="completed", workspace="/x")
        assert third.append_review_line(run.run_id, _Line(1, line="another ledger"))
        assert sync_workspace(third, run.workspace) == run.run_id
        assert third.review_lines(run.run_id) == ["another ledger"]


def test_a_run_whose_workspace_is_elsewhere_is_reviewed_in_the_store(
    store: RunStore, reviewed: Callable[[RunStore], Reviewed], tmp_path: Path
) -> None:
    from runlens.store.sync import upload_workspace

    run = reviewed(store)
    upload_workspace(store, run.run_id, run.workspace)
    shutil.move(run.workspace, tmp_path / "moved")  # no longer on this machine
    recorded = record_decision(
        store, run.run_id, reviewer="alice", decision="approve", note="ok", home=run.home
    )
    assert recorded.summary.state == "approved"
    assert not recorded.resigned and "not on this machine" in str(recorded.warning)
    stored = store.read_file(run.run_id, "runtime/reviews.jsonl")
    assert stored is not None and stored.decode("utf-8") == recorded.entry.line + "\n"
    assert set(recorded.entry.subjects) == {
        path for path in store.file_index(run.run_id) if path.startswith("artifacts/")
    }


def test_a_verdict_re_signed_here_reaches_the_store_s_copy_of_the_run(
    store: RunStore, reviewed: Callable[[RunStore], Reviewed]
) -> None:
    """A run whose files the store keeps (a worker's) is read by other machines from the
    store: the verdict re-signed with a review goes there beside the ledger."""
    from runlens.store.sync import upload_workspace

    run = reviewed(store)
    upload_workspace(store, run.run_id, run.workspace)
    recorded = record_decision(
        store, run.run_id, reviewer="alice", decision="approve", note="ok", home=run.home
    )
    assert recorded.resigned, recorded.warning
    verdict = (run.workspace / "runtime" / "verdict.dsse.json").read_bytes()
    assert store.read_file(run.run_id, "runtime/verdict.dsse.json") == verdict
    assert store.read_file(run.run_id, "runtime/reviews.jsonl") == (
        recorded.entry.line + "\n"
    ).encode("utf-8")
