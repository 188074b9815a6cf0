"""A run's review state, from its valid decisions and its plugin's review policy (SPEC 17).

A decision is valid while the files it judged are as they were: a run decision while every
deliverable has the hash it signed (none added, none removed), an artifact decision or a
mark while that deliverable does. Of a reviewer's valid decisions on one target (the run,
or one deliverable) the latest counts. Then:

    any counted reject                      -> rejected
    else any counted request-changes        -> changes-requested
    else enough approving reviewers         -> approved (only a completed run)
    else                                    -> unreviewed

A reviewer approves the run by approving it, or by approving every deliverable one by one;
the run's submitter is never counted unless the policy lets them approve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runlens.plugins.review import ReviewPolicy
from runlens.review.entries import DECISIONS, ReviewEntry, ReviewError, artifact_subject


class ReviewRefused(ReviewError):
    """A decision the plugin's review policy does not allow (the submitter's approval)."""


@dataclass(frozen=True)
class ReviewSummary:
    state: str
    approvals: int
    required: int
    #: Valid decisions (bound to the current hashes), in ledger order.
    decisions: list[ReviewEntry]
    #: Decisions bound to other hashes: a file they judged has changed since.
    void: list[ReviewEntry]
    #: The latest valid mark per (reviewer, artifact, location, row id), in ledger order.
    marks: list[ReviewEntry]
    #: Marks on a deliverable that has changed since.
    void_marks: list[ReviewEntry] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "approvals": self.approvals,
            "required": self.required,
            "decisions": len(self.decisions),
            "void": len(self.void),
            "marks": len(self.marks),
            "void_marks": len(self.void_marks),
        }


def is_bound(entry: ReviewEntry, current: Mapping[str, str]) -> bool:
    """Whether `entry` judged the files as they are now (`current`: name -> sha256)."""
    if entry.kind == "decision" and entry.artifact is None:
        return dict(entry.subjects) == dict(current)
    return bool(entry.subjects) and all(
        current.get(name) == digest for name, digest in entry.subjects.items()
    )


def review_state(
    entries: Sequence[ReviewEntry],
    current: Mapping[str, str],
    policy: ReviewPolicy,
    submitter: str | None,
    *,
    completed: bool = True,
) -> ReviewSummary:
    """The review state of a run whose ledger is `entries` and whose deliverables hash to
    `current` now (see the module's docstring). A run that did not complete (`completed`
    False: the validators failed it) is never `approved`, whatever its approvals."""
    decisions = [e for e in entries if e.kind == "decision"]
    valid = [e for e in decisions if is_bound(e, current)]
    void = [e for e in decisions if not is_bound(e, current)]
    latest: dict[tuple[str, str | None], ReviewEntry] = {}
    for entry in sorted(valid, key=lambda e: e.seq):
        latest[(entry.reviewer, entry.artifact)] = entry
    counted = list(latest.values())
    approvers = _approvers(latest, current)
    if not policy.submitter_may_approve and submitter is not None:
        approvers.discard(submitter)
    if any(e.decision == "reject" for e in counted):
        state = "rejected"
    elif any(e.decision == "request-changes" for e in counted):
        state = "changes-requested"
    elif completed and len(approvers) >= policy.approvals:
        state = "approved"
    else:
        state = "unreviewed"
    marks: dict[tuple[str, str | None, str | None, str | None], ReviewEntry] = {}
    void_marks = []
    for entry in sorted((e for e in entries if e.kind == "mark"), key=lambda e: e.seq):
        if is_bound(entry, current):
            marks[(entry.reviewer, entry.artifact, entry.location, entry.row_id)] = entry
        else:
            void_marks.append(entry)
    return ReviewSummary(
        state=state,
        approvals=len(approvers),
        required=policy.approvals,
        decisions=valid,
        void=void,
        marks=sorted(marks.values(), key=lambda e: e.seq),
        void_marks=void_marks,
    )


def _approvers(
    latest: Mapping[tuple[str, str | None], ReviewEntry], current: Mapping[str, str]
) -> set[str]:
    """Reviewers whose latest decision on the run approves it, or whose latest decisions on
    every deliverable approve each."""
    approvers = set()
    reviewers = {reviewer for reviewer, _ in latest}
    for reviewer in reviewers:
        on_run = latest.get((reviewer, None))
        if on_run is not None:
            if on_run.decision == "approve":
                approvers.add(reviewer)
            continue
        approved = {
            artifact_subject(artifact)
            for (who, artifact), entry in latest.items()
            if who == reviewer and artifact is not None and entry.decision == "approve"
        }
        if current and approved >= set(current):
            approvers.add(reviewer)
    return approvers


def refuse_decision(
    policy: ReviewPolicy,
    *,
    submitter: str | None,
    reviewer: str,
    decision: str,
    run_id: str,
    plugin: str | None = None,
) -> None:
    """`ReviewRefused` when the policy does not allow `reviewer`'s `decision` on the run
    `submitter` started; `ReviewError` for a decision that is none."""
    if decision not in DECISIONS:
        raise ReviewError(f"decision {decision!r}: use one of {', '.join(DECISIONS)}")
    if (
        decision == "approve"
        and not policy.submitter_may_approve
        and submitter is not None
        and reviewer == submitter
    ):
        whose = f"the {plugin} plugin's" if plugin else "the plugin's"
        raise ReviewRefused(
            f"{reviewer} submitted run {run_id}: {whose} review policy does not let the "
            f"submitter approve it ({policy.describe()})"
        )


__all__ = ["ReviewRefused", "ReviewSummary", "is_bound", "refuse_decision", "review_state"]
