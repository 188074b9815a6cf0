"""The verdict binds the reviews: a reviewed run re-signed verifies; every way of tampering
with `runtime/reviews.jsonl` (a forged line, a stranger's key, an impersonation, lines
swapped or removed) fails `runlens verify`'s `reviews` check, which names the line."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.review.conftest import (
    append_decision,
    append_mark,
    decision,
    ledger_lines,
    reviewer,
    write_ledger,
    write_lines,
)
from tests.verdict.conftest import SignedRun, invoke

from runlens.plugins import ReviewPolicy
from runlens.review.entries import ReviewEntry
from runlens.review.ledger import current_digests, read_ledger
from runlens.review.state import review_state
from runlens.verdict.keys import load_private_key, load_public_keys, private_path, public_pem
from runlens.verdict.statement import decode_statement, resign_with_reviews
from runlens.verdict.verify import VerifyReport, verify_workspace


def resign(run: SignedRun, entries: list[ReviewEntry] | None = None) -> bool:
    """Re-sign the run's statement with its ledger, as recording a review does."""
    entries = read_ledger(run.workspace) if entries is None else entries
    keys = {e.reviewer: public_pem(reviewer(run.home, e.reviewer).public_key) for e in entries}
    state = review_state(entries, current_digests(run.workspace), ReviewPolicy(), None).state
    key = load_private_key(private_path("default", run.home), "default", "home")
    return resign_with_reviews(
        run.workspace, entries, keys, state, key, load_public_keys((), run.home)
    )


def reviewed(fresh_copy: Callable[[], SignedRun]) -> tuple[SignedRun, str]:
    """A copy of the passing run with an approval and a mark, the statement re-signed."""
    run = fresh_copy()
    run_id = run.record["run_id"]
    append_decision(
        run.workspace, run_id, reviewer(run.home, "alice"), note="<img src=x onerror=alert(1)>"
    )
    append_mark(
        run.workspace, run_id, reviewer(run.home, "bob"), judged="wrong", note="**not** this row"
    )
    assert resign(run)
    return run, run_id


def reviews_check(report: VerifyReport) -> tuple[bool, str]:
    (check,) = [c for c in report.checks if c.check == "reviews"]
    return check.ok, check.detail


def test_a_reviewed_run_re_signed_verifies(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)

    report = verify_workspace(run.workspace, home=run.home)

    assert report.verified, report.failed
    assert reviews_check(report) == (
        True,
        "2 review(s), signed, chained and bound to the current hashes",
    )
    predicate = decode_statement(run.envelope)["predicate"]
    entries = read_ledger(run.workspace)
    assert predicate["reviews"] == [e.as_json() for e in entries]
    assert predicate["review_state"] == "approved"
    assert set(predicate["reviewers"]) == {"alice", "bob"}
    assert predicate["reviewers"]["alice"]["keyid"] == reviewer(run.home, "alice").keyid
    assert "BEGIN PUBLIC KEY" in predicate["reviewers"]["alice"]["public_key"]


def test_an_unreviewed_run_is_signed_with_no_reviewers(passing_run: SignedRun) -> None:
    predicate = decode_statement(passing_run.envelope)["predicate"]
    assert (predicate["reviews"], predicate["reviewers"], predicate["review_state"]) == (
        [],
        {},
        "unreviewed",
    )
    assert reviews_check(verify_workspace(passing_run.workspace, home=passing_run.home)) == (
        True,
        "no reviews",
    )


def test_the_re_signed_statement_keeps_what_the_run_signed(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run = fresh_copy()
    before = decode_statement(run.envelope)
    append_decision(run.workspace, run.record["run_id"], reviewer(run.home, "alice"))
    assert resign(run)
    after = decode_statement(run.envelope)
    assert after["subject"] == before["subject"]
    changed = {k for k in before["predicate"] if before["predicate"][k] != after["predicate"][k]}
    assert changed == {"reviews", "reviewers", "review_state"}


def test_lines_after_the_signed_ones_pass_when_signed_and_chained(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run, run_id = reviewed(fresh_copy)
    append_decision(run.workspace, run_id, reviewer(run.home, "carol"), verdict="request-changes")

    report = verify_workspace(run.workspace, home=run.home)

    assert report.verified, report.failed
    ok, detail = reviews_check(report)
    assert ok and "1 recorded after the statement was last signed" in detail


def _payload_changed(line: str) -> str:
    """The line with its payload's note changed and its signature kept."""
    envelope = json.loads(line)
    payload = json.loads(base64.b64decode(envelope["payload"]))
    payload["note"] = "approved by everyone"
    envelope["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    return json.dumps(envelope, sort_keys=True, separators=(",", ":"))


def test_a_forged_line_is_caught(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)
    lines = ledger_lines(run.workspace)
    write_lines(run.workspace, [_payload_changed(lines[0]), lines[1]])

    report = verify_workspace(run.workspace, home=run.home)

    assert not report.verified
    ok, detail = reviews_check(report)
    assert not ok
    assert "line 1 (decision by alice): bad signature" in detail
    assert "line 2 (mark by bob): its previous is not line 1's sha256" in detail
    assert "line 1 is not the review the statement signs as review 1" in detail


def test_a_line_signed_by_an_unknown_key_is_caught(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    run, run_id = reviewed(fresh_copy)
    stranger = reviewer(tmp_path / "elsewhere", "mallory")  # a key no one here knows
    entries = read_ledger(run.workspace)
    write_ledger(
        run.workspace,
        [*entries, decision(entries, stranger, run_id, current_digests(run.workspace))],
    )

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok
    assert detail.startswith(
        "line 3 (decision by mallory): unknown key: signed by key id " + stranger.keyid
    )


def test_a_reviewer_signing_as_another_is_caught(fresh_copy: Callable[[], SignedRun]) -> None:
    run, run_id = reviewed(fresh_copy)
    entries = read_ledger(run.workspace)
    bob = reviewer(run.home, "bob")
    forged = decision(entries, bob, run_id, current_digests(run.workspace), name="alice")
    write_ledger(run.workspace, [*entries, forged])

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok
    assert (
        "line 3 (decision by alice): signed by the key of reviewer 'bob', but names reviewer "
        "'alice'" in detail
    )


def test_two_lines_swapped_are_caught(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)
    first, second = ledger_lines(run.workspace)
    write_lines(run.workspace, [second, first])

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok
    assert "line 1 (mark by bob): seq 2 where 1 belongs" in detail
    assert "line 2 (decision by alice): seq 1 where 2 belongs" in detail


@pytest.mark.parametrize("removed", [0, 1])
def test_a_removed_line_is_caught(fresh_copy: Callable[[], SignedRun], removed: int) -> None:
    run, _ = reviewed(fresh_copy)
    lines = ledger_lines(run.workspace)
    write_lines(run.workspace, [line for at, line in enumerate(lines) if at != removed])

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok
    assert (
        "the statement signs 2 review(s), runtime/reviews.jsonl holds 1: line(s) removed" in detail
    )
    if removed == 0:
        assert "line 1 (mark by bob): seq 2 where 1 belongs" in detail


def test_the_whole_ledger_removed_is_caught(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)
    (run.workspace / "runtime" / "reviews.jsonl").unlink()

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok and "holds 0: line(s) removed" in detail


def test_a_review_bound_to_an_edited_file_fails_and_so_does_its_subject(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run, _ = reviewed(fresh_copy)
    report = run.workspace / "artifacts" / "insight_report.md"
    report.write_bytes(report.read_bytes() + b" ")

    result = verify_workspace(run.workspace, home=run.home)

    failed = {c.check: c.detail for c in result.failed}
    assert "subject:artifacts/insight_report.md" in failed
    assert (
        "line 1 (decision by alice) is bound to artifacts/insight_report.md sha256"
        in failed["reviews"]
    )
    assert "line 2 (mark by bob) is bound to artifacts/insight_report.md" in failed["reviews"]


def test_a_malformed_ledger_line_fails_the_check(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)
    lines = ledger_lines(run.workspace)
    write_lines(run.workspace, [lines[0], "{not json"])

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))

    assert not ok and detail.startswith("runtime/reviews.jsonl line 2: not JSON")


def test_verify_json_names_the_forged_line(fresh_copy: Callable[[], SignedRun]) -> None:
    run, _ = reviewed(fresh_copy)
    lines = ledger_lines(run.workspace)
    write_lines(run.workspace, [lines[0], _payload_changed(lines[1])])

    result = invoke("verify", run.workspace, "--json", home=run.home)

    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    failed = {c["check"]: c["detail"] for c in document["checks"] if not c["ok"]}
    assert list(failed) == ["reviews"]
    assert "line 2 (mark by bob): bad signature" in failed["reviews"]


def test_resign_refuses_a_statement_it_cannot_verify(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    run, _ = reviewed(fresh_copy)
    before = run.envelope_path.read_bytes()
    entries = read_ledger(run.workspace)
    key = load_private_key(private_path("default", run.home), "default", "home")

    # a key the envelope was not signed with
    other = reviewer(tmp_path, "other")
    assert not resign_with_reviews(
        run.workspace, entries, {}, "approved", key, {other.keyid: other.public_key}
    )
    assert not resign_with_reviews(run.workspace, entries, {}, "approved", key, {})
    # a statement whose payload was changed after signing
    envelope = json.loads(before)
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["status"] = "completed!"
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    run.envelope_path.write_text(json.dumps(envelope), encoding="utf-8")
    tampered = run.envelope_path.read_bytes()
    assert not resign_with_reviews(
        run.workspace, entries, {}, "approved", key, load_public_keys((), run.home)
    )
    assert run.envelope_path.read_bytes() == tampered
    # no verdict at all
    run.envelope_path.unlink()
    assert not resign_with_reviews(
        run.workspace, entries, {}, "approved", key, load_public_keys((), run.home)
    )
    assert not run.envelope_path.exists()


def test_another_machine_checks_the_reviews_with_the_keys_the_statement_signs(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    """Elsewhere, with only the run's public key and no reviewer keys, the statement's
    `reviewers` vouch for the signed lines; a later line by someone it does not list is
    unknown there."""
    from runlens.verdict.keys import public_path

    run, run_id = reviewed(fresh_copy)
    elsewhere = tmp_path / "elsewhere-home"
    elsewhere.mkdir()
    team_key = [public_path("default", run.home)]

    report = verify_workspace(run.workspace, home=elsewhere, keys=team_key)

    assert report.verified, report.failed
    append_decision(run.workspace, run_id, reviewer(run.home, "dave"), verdict="reject")
    ok, detail = reviews_check(verify_workspace(run.workspace, home=elsewhere, keys=team_key))
    assert not ok and detail.startswith("line 3 (decision by dave): unknown key")
    # at home, where dave's key is, the unsigned-into-the-statement line is accepted
    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))
    assert ok and "1 recorded after the statement was last signed" in detail


def test_a_statement_listing_a_reviewer_under_a_wrong_key_id_fails(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run, _ = reviewed(fresh_copy)
    statement = decode_statement(run.envelope)
    statement["predicate"]["reviewers"]["alice"]["keyid"] = "0" * 64
    from tests.verdict.test_verify import resign as sign_statement

    sign_statement(run, statement, run.home)

    ok, detail = reviews_check(verify_workspace(run.workspace, home=run.home))
    assert not ok
    assert "the statement's reviewer 'alice' names key id 000" in detail
