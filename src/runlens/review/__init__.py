"""Review by people (SPEC section 17): decisions and marks, signed by their reviewers, bound
to the hashes of what they judged, chained in `runtime/reviews.jsonl`.

    entries.py    one review: its payload, `sign_entry`, `parse_line`
    ledger.py     the ledger file: `read_ledger`, `ledger_problems`, `current_digests`
    state.py      the review state from the valid decisions and the plugin's policy
    reviewers.py  reviewers' keys and UI tokens
    findings.py   a review as findings for the model of a re-run

Names are imported on first use, as in `runlens.verdict`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runlens._lazy import lazy_names

_HOMES: dict[str, str] = {
    "DECISIONS": "runlens.review.entries",
    "MARKS": "runlens.review.entries",
    "REVIEWS_PATH": "runlens.review.entries",
    "REVIEW_PAYLOAD_TYPE": "runlens.review.entries",
    "REVIEW_STATES": "runlens.review.entries",
    "REVIEW_TYPE": "runlens.review.entries",
    "ReviewEntry": "runlens.review.entries",
    "ReviewError": "runlens.review.entries",
    "artifact_subject": "runlens.review.entries",
    "check_reviewer_name": "runlens.review.entries",
    "claim_location": "runlens.review.entries",
    "decision_payload": "runlens.review.entries",
    "mark_payload": "runlens.review.entries",
    "parse_line": "runlens.review.entries",
    "sign_entry": "runlens.review.entries",
    "current_digests": "runlens.review.ledger",
    "ledger_problems": "runlens.review.ledger",
    "ledger_text": "runlens.review.ledger",
    "next_link": "runlens.review.ledger",
    "parse_ledger": "runlens.review.ledger",
    "read_ledger": "runlens.review.ledger",
    "ReviewRefused": "runlens.review.state",
    "ReviewSummary": "runlens.review.state",
    "is_bound": "runlens.review.state",
    "refuse_decision": "runlens.review.state",
    "review_state": "runlens.review.state",
    "home_reviewer_keys": "runlens.review.reviewers",
    "new_reviewer_key": "runlens.review.reviewers",
    "new_token": "runlens.review.reviewers",
    "reviewer_key": "runlens.review.reviewers",
    "token_digest": "runlens.review.reviewers",
    "findings_for_rerun": "runlens.review.findings",
}

__all__ = [
    "DECISIONS",
    "MARKS",
    "REVIEWS_PATH",
    "REVIEW_PAYLOAD_TYPE",
    "REVIEW_STATES",
    "REVIEW_TYPE",
    "ReviewEntry",
    "ReviewError",
    "ReviewRefused",
    "ReviewSummary",
    "artifact_subject",
    "check_reviewer_name",
    "claim_location",
    "current_digests",
    "decision_payload",
    "findings_for_rerun",
    "home_reviewer_keys",
    "is_bound",
    "ledger_problems",
    "ledger_text",
    "mark_payload",
    "new_reviewer_key",
    "new_token",
    "next_link",
    "parse_ledger",
    "parse_line",
    "read_ledger",
    "refuse_decision",
    "review_state",
    "reviewer_key",
    "sign_entry",
    "token_digest",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)

if TYPE_CHECKING:
    from runlens.review.entries import (
        DECISIONS,
        MARKS,
        REVIEW_PAYLOAD_TYPE,
        REVIEW_STATES,
        REVIEW_TYPE,
        REVIEWS_PATH,
        ReviewEntry,
        ReviewError,
        artifact_subject,
        check_reviewer_name,
        claim_location,
        decision_payload,
        mark_payload,
        parse_line,
        sign_entry,
    )
    from runlens.review.findings import findings_for_rerun
    from runlens.review.ledger import (
        current_digests,
        ledger_problems,
        ledger_text,
        next_link,
        parse_ledger,
        read_ledger,
    )
    from runlens.review.reviewers import (
        home_reviewer_keys,
        new_reviewer_key,
        new_token,
        reviewer_key,
        token_digest,
    )
    from runlens.review.state import (
        ReviewRefused,
        ReviewSummary,
        is_bound,
        refuse_decision,
        review_state,
    )
