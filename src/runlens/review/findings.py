"""What a re-run's model is told to address: the review of the run it re-runs, as findings.

One plain-text line per valid request-changes or reject decision (its note) and per
current `wrong` or `unsure` mark (where, which row, the quote, the note, the correction),
oldest first. Reviewers' words are data to the model: they are quoted, on one line each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from runlens.review.entries import ReviewEntry
from runlens.review.state import ReviewSummary

_VERBS = {"request-changes": "requested changes to", "reject": "rejected"}


def findings_for_rerun(
    entries: Sequence[ReviewEntry], summary: ReviewSummary, run_id: str
) -> tuple[str, ...]:
    """The findings of `summary` (the review of run `run_id`; `entries` its ledger), newest
    last."""
    counted = {entry.digest for entry in summary.decisions} | {e.digest for e in summary.marks}
    lines = []
    for entry in sorted(entries, key=lambda e: e.seq):
        if entry.digest not in counted:
            continue
        if entry.kind == "decision" and entry.decision in _VERBS:
            target = f"{entry.artifact} of run {run_id}" if entry.artifact else f"run {run_id}"
            lines.append(
                f"Reviewer {entry.reviewer} {_VERBS[entry.decision]} {target}: "
                f"{_quoted(entry.note)}"
            )
        elif entry.kind == "mark" and entry.mark in ("wrong", "unsure"):
            parts = [
                f"Reviewer {entry.reviewer} marked the citation of row {entry.row_id} at "
                f"{entry.artifact} {entry.location} {entry.mark}"
            ]
            if entry.quote:
                parts.append(f"quote {_quoted(entry.quote)}")
            parts.append(f"note {_quoted(entry.note)}")
            if entry.correction:
                fixes = ", ".join(f"{k} = {_quoted(v)}" for k, v in entry.correction.items())
                parts.append(f"correction: {fixes}")
            lines.append("; ".join(parts))
    return tuple(lines)


def _quoted(text: str) -> str:
    """`text` as a JSON string: one line, its quotes and newlines escaped."""
    return json.dumps(text, ensure_ascii=False)


__all__ = ["findings_for_rerun"]
