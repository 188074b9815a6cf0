"""The review state: which decisions count, what voids them, what the policy refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.review.conftest import (
    REPORT,
    SignedRun,
    append_decision,
    append_mark,
    decision,
    digest,
    mark,
    reviewer,
)

from runlens.plugins import ReviewPolicy, load_plugin
from runlens.review.entries import ReviewEntry
from runlens.review.findings import findings_for_rerun
from runlens.review.ledger import current_digests, read_ledger
from runlens.review.state import ReviewRefused, refuse_decision, review_state

BACKLOG = "artifacts/product_backlog.json"
CURRENT = {REPORT: digest("report"), BACKLOG: digest("backlog")}
ONE = ReviewPolicy()


def ledger(tmp_path: Path, *steps: tuple[str, str, dict[str, Any]]) -> list[ReviewEntry]:
    """Decisions by (reviewer, decision, options), each chained after the last."""
    entries: list[ReviewEntry] = []
    for name, verdict, options in steps:
        subjects = options.pop("subjects", CURRENT)
        key = reviewer(tmp_path, name)
        entries.append(decision(entries, key, "run_1", subjects, verdict, **options))
    return entries


def test_no_decision_is_unreviewed(tmp_path: Path) -> None:
    summary = review_state([], CURRENT, ONE, "sam")
    assert summary.as_json() == {
        "state": "unreviewed", "approvals": 0, "required": 1, "decisions": 0, "void": 0,
        "marks": 0, "void_marks": 0,
    }  # fmt: skip


def test_one_approval_approves_and_reject_or_changes_win(tmp_path: Path) -> None:
    approved = ledger(tmp_path, ("alice", "approve", {}))
    assert review_state(approved, CURRENT, ONE, "sam").state == "approved"
    changes = ledger(tmp_path, ("alice", "approve", {}), ("bob", "request-changes", {}))
    assert review_state(changes, CURRENT, ONE, "sam").state == "changes-requested"
    rejected = ledger(
        tmp_path,
        ("alice", "request-changes", {}),
        ("bob", "reject", {"artifact": REPORT, "subjects": {REPORT: CURRENT[REPORT]}}),
    )
    assert review_state(rejected, CURRENT, ONE, "sam").state == "rejected"


def test_a_reviewers_latest_valid_decision_counts(tmp_path: Path) -> None:
    entries = ledger(tmp_path, ("alice", "request-changes", {}), ("alice", "approve", {}))
    summary = review_state(entries, CURRENT, ONE, None)
    assert (summary.state, summary.approvals) == ("approved", 1)
    assert summary.decisions == entries  # both valid; the latest counts


def test_two_approvals_need_two_distinct_reviewers(tmp_path: Path) -> None:
    two = ReviewPolicy(approvals=2)
    same = ledger(tmp_path, ("alice", "approve", {}), ("alice", "approve", {}))
    assert review_state(same, CURRENT, two, None).as_json()["approvals"] == 1
    assert review_state(same, CURRENT, two, None).state == "unreviewed"
    both = ledger(tmp_path, ("alice", "approve", {}), ("bob", "approve", {}))
    assert review_state(both, CURRENT, two, None).state == "approved"
    # the submitter's approval does not count towards the two (were it ever recorded)
    with_submitter = ledger(tmp_path, ("alice", "approve", {}), ("sam", "approve", {}))
    summary = review_state(with_submitter, CURRENT, two, "sam")
    assert (summary.state, summary.approvals, summary.required) == ("unreviewed", 1, 2)
    lenient = ReviewPolicy(approvals=2, submitter_may_approve=True)
    assert review_state(with_submitter, CURRENT, lenient, "sam").state == "approved"


def test_approving_every_deliverable_one_by_one_approves_the_run(tmp_path: Path) -> None:
    entries = ledger(
        tmp_path,
        ("alice", "approve", {"artifact": REPORT, "subjects": {REPORT: CURRENT[REPORT]}}),
    )
    assert review_state(entries, CURRENT, ONE, None).state == "unreviewed"
    entries += ledger(
        tmp_path,
        ("alice", "approve", {"artifact": BACKLOG, "subjects": {BACKLOG: CURRENT[BACKLOG]}}),
    )
    assert review_state(entries, CURRENT, ONE, None).state == "approved"


def test_a_run_that_did_not_complete_is_never_approved(tmp_path: Path) -> None:
    """A failed run whose required deliverable is missing: approving each file it has would
    approve it one by one, but approvals never stand in for the validators."""
    entries = ledger(
        tmp_path,
        ("alice", "approve", {"artifact": REPORT, "subjects": {REPORT: CURRENT[REPORT]}}),
        ("alice", "approve", {"artifact": BACKLOG, "subjects": {BACKLOG: CURRENT[BACKLOG]}}),
    )
    summary = review_state(entries, CURRENT, ONE, None, completed=False)
    assert summary.state == "unreviewed"
    assert summary.approvals == 1
    assert review_state(entries, CURRENT, ONE, None, completed=True).state == "approved"


def test_a_changed_or_added_file_voids_the_decisions_on_it(tmp_path: Path) -> None:
    entries = ledger(
        tmp_path,
        ("alice", "approve", {}),
        ("bob", "reject", {"artifact": BACKLOG, "subjects": {BACKLOG: CURRENT[BACKLOG]}}),
    )
    changed = {**CURRENT, BACKLOG: digest("backlog, edited")}
    summary = review_state(entries, changed, ONE, None)
    assert summary.state == "unreviewed"
    assert summary.void == entries and summary.decisions == []
    added = {**CURRENT, "artifacts/insight_chart.svg": digest("chart")}
    summary = review_state(entries, added, ONE, None)
    assert summary.void == entries[:1]  # the run decision judged two deliverables, not three
    assert summary.state == "rejected"  # the backlog the reject judged is unchanged


def test_the_latest_mark_per_claim_and_reviewer_counts(tmp_path: Path) -> None:
    alice, bob = reviewer(tmp_path, "alice"), reviewer(tmp_path, "bob")
    bound = {REPORT: CURRENT[REPORT]}
    entries: list[ReviewEntry] = []
    for key, judged in ((alice, "wrong"), (bob, "correct"), (alice, "correct")):
        entries.append(mark(entries, key, "run_1", bound, judged))
    entries.append(
        mark(entries, alice, "run_1", {REPORT: digest("old")}, "wrong", location="line 3")
    )
    summary = review_state(entries, CURRENT, ONE, None)
    assert [(e.reviewer, e.mark) for e in summary.marks] == [
        ("bob", "correct"),
        ("alice", "correct"),
    ]
    assert summary.void_marks == entries[3:]
    assert summary.state == "unreviewed"  # marks are no decisions


def test_the_submitter_may_not_approve() -> None:
    with pytest.raises(
        ReviewRefused,
        match="sam submitted run run_1: the feedback-analysis plugin's review policy does not "
        "let the submitter approve it",
    ):
        refuse_decision(
            ONE,
            submitter="sam",
            reviewer="sam",
            decision="approve",
            run_id="run_1",
            plugin="feedback-analysis",
        )
    refuse_decision(
        ONE, submitter="sam", reviewer="sam", decision="request-changes", run_id="run_1"
    )
    refuse_decision(ONE, submitter="sam", reviewer="alice", decision="approve", run_id="run_1")
    refuse_decision(ONE, submitter=None, reviewer="sam", decision="approve", run_id="run_1")
    refuse_decision(
        ReviewPolicy(submitter_may_approve=True),
        submitter="sam",
        reviewer="sam",
        decision="approve",
        run_id="run_1",
    )


def test_a_one_byte_edit_voids_an_approval_of_a_real_run(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run = fresh_copy()
    run_id = run.record["run_id"]
    policy = load_plugin("feedback-analysis").review_policy
    append_decision(run.workspace, run_id, reviewer(run.home, "alice"), note="ship it")
    append_mark(run.workspace, run_id, reviewer(run.home, "bob"), judged="wrong", note="<b>no</b>")
    entries = read_ledger(run.workspace)
    before = review_state(entries, current_digests(run.workspace), policy, "sam")
    assert (before.state, len(before.decisions), len(before.marks)) == ("approved", 1, 1)

    report = run.workspace / REPORT
    data = bytearray(report.read_bytes())
    data[-2] ^= 1  # one byte of the report
    report.write_bytes(bytes(data))

    after = review_state(entries, current_digests(run.workspace), policy, "sam")
    assert after.state == "unreviewed"
    assert after.void == entries[:1] and after.decisions == []
    assert after.marks == [] and after.void_marks == entries[1:]


def test_findings_for_a_rerun(tmp_path: Path) -> None:
    alice, bob = reviewer(tmp_path, "alice"), reviewer(tmp_path, "bob")
    bound = {REPORT: CURRENT[REPORT]}
    entries: list[ReviewEntry] = []
    entries.append(decision(entries, alice, "run_1", CURRENT, "approve", note="fine"))
    entries.append(mark(entries, bob, "run_1", bound, "correct", location="line 9"))
    entries.append(
        mark(
            entries,
            bob,
            "run_1",
            bound,
            "wrong",
            note='say "billing"\nnot login',
            correction={"theme": "billing_pricing"},
        )
    )
    entries.append(decision(entries, bob, "run_1", CURRENT, "request-changes", note="fix line 21"))
    entries.append(
        decision(
            entries, alice, "run_1", {REPORT: digest("old")}, "reject", note="void", artifact=REPORT
        )
    )
    summary = review_state(entries, CURRENT, ONE, None)

    lines = findings_for_rerun(entries, summary, "run_1")

    assert lines == (
        "Reviewer bob marked the citation of row fb_005 at artifacts/insight_report.md line 21 "
        'wrong; quote "这个月为什么多扣了两个席位的钱？"; note "say \\"billing\\"\\nnot login"; '
        'correction: theme = "billing_pricing"',
        'Reviewer bob requested changes to run run_1: "fix line 21"',
    )
    assert all("\n" not in line for line in lines)


def test_the_feedback_plugin_declares_its_policy_and_the_theme_correction(
    passing_run: SignedRun,
) -> None:
    plugin = load_plugin("feedback-analysis")
    assert plugin.review_policy == ReviewPolicy(approvals=1, submitter_may_approve=False)
    assert plugin.review_policy.describe() == "1 approval; the submitter may not approve"
    theme = plugin.correction("theme")
    assert theme is not None and theme.label == "Another theme for this row"
    choices = theme.options(passing_run.workspace)
    analysis = json.loads(
        (passing_run.workspace / "artifacts/feedback_analysis.json").read_text(encoding="utf-8")
    )
    assert choices == tuple(sorted({i["theme"] for i in analysis["items"] if i.get("theme")}))
    assert "billing_pricing" in choices
    assert theme.options(passing_run.workspace / "nowhere") == ()
