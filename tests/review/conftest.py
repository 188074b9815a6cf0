"""Reviews for the review tests: reviewers with keys in a home, and lines signed and appended
to a run's `runtime/reviews.jsonl` the way `runlens.review.record` writes them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.verdict.conftest import SignedRun, fresh_copy, passing_run

from runlens.review.entries import (
    REVIEWS_PATH,
    ReviewEntry,
    artifact_subject,
    decision_payload,
    mark_payload,
    sign_entry,
)
from runlens.review.ledger import current_digests, ledger_text, next_link, read_ledger
from runlens.review.reviewers import new_reviewer_key, reviewer_key
from runlens.verdict.keys import SigningKey

REPORT = "artifacts/insight_report.md"

__all__ = ["SignedRun", "fresh_copy", "passing_run"]  # the verdict tests' real runs


def reviewer(home: Path, name: str) -> SigningKey:
    """Reviewer NAME's key in HOME, made on first use."""
    from runlens.review.reviewers import reviewer_private_path

    if reviewer_private_path(name, home).exists():
        return reviewer_key(name, home)
    return new_reviewer_key(name, home)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def decision(
    entries: Sequence[ReviewEntry],
    key: SigningKey,
    run_id: str,
    subjects: Mapping[str, str],
    verdict: str = "approve",
    *,
    note: str = "looks right",
    artifact: str | None = None,
    name: str | None = None,
) -> ReviewEntry:
    seq, previous = next_link(entries)
    return sign_entry(
        decision_payload(
            run_id=run_id, seq=seq, previous=previous, reviewer=name or key.label,
            keyid=key.keyid, decision=verdict, note=note, artifact=artifact, subjects=subjects,
        ),
        key,
    )  # fmt: skip


def mark(
    entries: Sequence[ReviewEntry],
    key: SigningKey,
    run_id: str,
    subjects: Mapping[str, str],
    judged: str = "wrong",
    *,
    note: str = "not what the row says",
    artifact: str = REPORT,
    location: str = "line 21",
    row_id: str = "fb_005",
    quote: str | None = "这个月为什么多扣了两个席位的钱？",
    correction: Mapping[str, str] | None = None,
) -> ReviewEntry:
    seq, previous = next_link(entries)
    return sign_entry(
        mark_payload(
            run_id=run_id, seq=seq, previous=previous, reviewer=key.label, keyid=key.keyid,
            mark=judged, note=note, artifact=artifact, location=location, row_id=row_id,
            quote=quote, correction=correction, subjects=subjects,
        ),
        key,
    )  # fmt: skip


def append_decision(workspace: Path, run_id: str, key: SigningKey, **options: Any) -> ReviewEntry:
    """A decision on the workspace's deliverables as they are, appended to its ledger."""
    entries = read_ledger(workspace)
    current = current_digests(workspace)
    artifact = options.get("artifact")
    subjects = (
        {artifact_subject(artifact): current[artifact_subject(artifact)]} if artifact else current
    )
    entry = decision(entries, key, run_id, subjects, **options)
    write_ledger(workspace, [*entries, entry])
    return entry


def append_mark(workspace: Path, run_id: str, key: SigningKey, **options: Any) -> ReviewEntry:
    entries = read_ledger(workspace)
    name = artifact_subject(options.get("artifact", REPORT))
    entry = mark(entries, key, run_id, {name: current_digests(workspace)[name]}, **options)
    write_ledger(workspace, [*entries, entry])
    return entry


def write_ledger(workspace: Path, entries: Sequence[ReviewEntry]) -> None:
    (workspace / REVIEWS_PATH).write_text(ledger_text(entries), encoding="utf-8")


def write_lines(workspace: Path, lines: Sequence[str]) -> None:
    (workspace / REVIEWS_PATH).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def ledger_lines(workspace: Path) -> list[str]:
    return (workspace / REVIEWS_PATH).read_text(encoding="utf-8").splitlines()
