"""What the pages and the API of review by people (SPEC section 17) share: who the reviewer of
a request is, a run's review as its pages show it, the claims a reader may mark, and the
plugin's corrections.

A reviewer is identified by the UI token `runlens reviewers add` printed once: the header
`X-RunLens-Reviewer: <token>` (clients) or the `runlens_reviewer` cookie that
`POST /reviews/sign-in` sets (pages; it holds the token's SHA-256 under this server's HMAC,
`runlens.ui.security.ReviewerSessions`, never the token). Only the token's SHA-256 is
stored; the store answers which reviewer has that digest. Everything a reviewer wrote
(names, notes, corrections) is untrusted text: the templates escape it (autoescape), nothing
here builds markup from it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from fastapi import Request

from runlens.errors import UserError
from runlens.review.entries import DECISIONS, MARKS
from runlens.review.entries import claim_location as entry_claim_location
from runlens.store.rows import CitationRow, RunDetail, RunSummary
from runlens.ui.context import UIContext, ui_context

if TYPE_CHECKING:
    from runlens.review.entries import ReviewEntry
    from runlens.review.state import ReviewSummary
    from runlens.store.rows import ReviewerRow

logger = logging.getLogger(__name__)

#: The header a client names its reviewer token in.
REVIEWER_HEADER: Final = "x-runlens-reviewer"
#: The cookie `POST /reviews/sign-in` sets (HttpOnly, SameSite=Strict).
REVIEWER_COOKIE: Final = "runlens_reviewer"
#: Seconds a reviewer's sign-in lasts in the browser.
REVIEWER_COOKIE_MAX_AGE: Final = 12 * 60 * 60
#: The longest token accepted (`secrets.token_urlsafe(32)` is 43 characters).
MAX_TOKEN: Final = 256
#: What a run shows before the store knows its review state.
UNREVIEWED: Final = "unreviewed"
#: The review states (`runlens.review.REVIEW_STATES`), for filters.
REVIEW_STATES: Final = ("unreviewed", "approved", "changes-requested", "rejected")

#: `items[3].row_ref` -> `items[3]`; `items[3].ids[0]` -> `items[3]`.


def review_state_of(run: RunSummary) -> str:
    """The run's review state as the store has it (`unreviewed` when it has none)."""
    state = getattr(run, "review_state", None)
    return state if isinstance(state, str) and state else UNREVIEWED


# -- who is reviewing -----------------------------------------------------------------------


def request_credential(request: Request) -> str | None:
    """The SHA-256 of the reviewer token the request proves: from `X-RunLens-Reviewer`
    (the token), else from the `runlens_reviewer` cookie this server issued. None when it
    carries neither; "" when what it carries proves nothing (a wrong or stale cookie)."""
    from runlens.review.reviewers import token_digest

    token = request.headers.get(REVIEWER_HEADER)
    if token is not None:
        token = token.strip()
        return token_digest(token) if 0 < len(token) <= MAX_TOKEN else ""
    cookie = request.cookies.get(REVIEWER_COOKIE)
    if not cookie:
        return None
    return ui_context(request).reviewer_sessions.digest_of(cookie) or ""


def reviewer_for(ui: UIContext, digest: str | None) -> ReviewerRow | None:
    """The reviewer whose token has SHA-256 `digest`, or None."""
    if not digest:
        return None
    return ui.store.reviewer_for_token(digest)


def signed_in(request: Request) -> str | None:
    """The name of the reviewer signed in on this request, or None. Synchronous."""
    try:
        row = reviewer_for(ui_context(request), request_credential(request))
    except Exception:  # the store's reviewers may be unreadable: the page shows no one
        logger.warning("could not read the reviewer of a request", exc_info=True)
        return None
    return row.name if row is not None else None


def local_path(given: object, default: str) -> str:
    """Where a page's form sends the browser back to: `given` when it is a path on this
    server (never `//other.example`, `https:`, a backslash or a control character), else
    `default`."""
    if (
        not isinstance(given, str)
        or not given.startswith("/")
        or given.startswith("//")
        or "\\" in given
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in given)
        or len(given) > 2000
    ):
        return default
    return given


# -- the claims of a run ----------------------------------------------------------------------


def claim_location(citation: CitationRow) -> str:
    """Where a mark places the claim of `citation` (`runlens.review.claim_location`)."""
    return entry_claim_location(citation.location)


@dataclass(frozen=True)
class Claim:
    """One cited claim of a deliverable a reviewer may mark: where, which row, what quote."""

    artifact: str
    location: str
    row_id: str
    quote: str | None
    status: str
    #: The anchor of the claim's controls on the reader view.
    anchor: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.artifact, self.location, self.row_id)


def claims_of(artifact: str, citations: Sequence[CitationRow]) -> list[Claim]:
    """The claims of one deliverable: one per (location, row), the quote it cites when any,
    in the deliverable's order."""
    claims: dict[tuple[str, str], Claim] = {}
    ordered = sorted(citations, key=lambda c: (c.line or 0, c.column or 0, c.ordinal))
    for citation in ordered:
        location = claim_location(citation)
        key = (location, citation.row_id)
        known = claims.get(key)
        if known is not None and (known.quote or citation.quote is None):
            continue
        claims[key] = Claim(
            artifact=artifact,
            location=location,
            row_id=citation.row_id,
            quote=citation.quote
            if citation.quote is not None
            else (known.quote if known else None),
            status=citation.status,
            anchor=known.anchor if known else f"claim-{citation.ordinal}",
        )
    return list(claims.values())


# -- a run's review -------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A decision as the run page lists it."""

    entry: ReviewEntry
    valid: bool


@dataclass
class ReviewView:
    """A run's review for its pages: the state, the decisions (valid or void), the latest
    marks by claim, the plugin's policy; `problem` when the review cannot be read."""

    run_id: str
    state: str
    policy: str = ""
    approvals: int = 0
    required: int = 1
    decisions: list[Decision] = field(default_factory=list)
    marks: dict[tuple[str, str, str], list[ReviewEntry]] = field(default_factory=dict)
    entries: int = 0
    problem: str | None = None

    def marks_of(self, claim: Claim) -> list[ReviewEntry]:
        return self.marks.get(claim.key, [])

    @property
    def wrong_marks(self) -> int:
        return sum(1 for found in self.marks.values() for e in found if e.mark == "wrong")

    @property
    def can_rerun(self) -> bool:
        """Whether the page offers a rerun with the review: changes requested, a rejection,
        or a claim marked wrong."""
        return self.state in {"changes-requested", "rejected"} or self.wrong_marks > 0


def review_view(ui: UIContext, run: RunDetail) -> ReviewView:
    """The run's review as its pages show it. Synchronous: call it from a thread-pool
    handler. A run whose review cannot be read shows why, never an error page."""
    view = ReviewView(run_id=run.run_id, state=review_state_of(run))
    try:
        from runlens.review.record import run_reviews

        entries, summary = run_reviews(ui.store, run.run_id, home=ui.home)
    except UserError as error:
        view.problem = str(error)
        return view
    except Exception:
        logger.warning("could not read run %s's reviews", run.run_id, exc_info=True)
        view.problem = "the run's reviews could not be read (the server's log has the details)"
        return view
    fill_view(view, entries, summary)
    view.policy = policy_text(run.plugin)
    return view


def fill_view(view: ReviewView, entries: Sequence[ReviewEntry], summary: ReviewSummary) -> None:
    """Put a run's ledger and its summary into `view`."""
    view.state = summary.state
    view.approvals, view.required = summary.approvals, summary.required
    view.entries = len(entries)
    decisions = [Decision(e, True) for e in summary.decisions]
    decisions += [Decision(e, False) for e in summary.void]
    view.decisions = sorted(decisions, key=lambda d: d.entry.seq)
    marks: dict[tuple[str, str, str], list[ReviewEntry]] = {}
    for entry in sorted(summary.marks, key=lambda e: e.seq):
        key = (entry.artifact or "", entry.location or "", entry.row_id or "")
        marks.setdefault(key, []).append(entry)
    view.marks = marks


def policy_text(plugin_name: str) -> str:
    """The plugin's review policy in words, or "" when the plugin does not load."""
    plugin = _plugin(plugin_name)
    policy = getattr(plugin, "review_policy", None)
    return policy.describe() if policy is not None else ""


def _plugin(name: str) -> Any:
    from runlens.plugins.loader import load_plugin

    try:
        return load_plugin(name)
    except Exception:  # a plugin that does not load must not break the page
        return None


@dataclass(frozen=True)
class CorrectionField:
    """A correction a mark may carry on one deliverable: its key, label and choices (None:
    free text)."""

    name: str
    label: str
    choices: tuple[str, ...] | None


def corrections_for(plugin_name: str, workspace: Path) -> Mapping[str, list[CorrectionField]]:
    """Per deliverable name, the corrections the plugin declares for it ("" = any)."""
    plugin = _plugin(plugin_name)
    fields: dict[str, list[CorrectionField]] = {}
    for correction in getattr(plugin, "corrections", ()) or ():
        choices: tuple[str, ...] | None = None
        if correction.choices is not None:
            try:
                choices = tuple(str(c) for c in correction.choices(workspace))
            except Exception:  # the deliverable may be unreadable: free text then
                logger.warning("correction %r: no choices", correction.name, exc_info=True)
                choices = None
        shown = CorrectionField(correction.name, correction.label, choices)
        for artifact in correction.artifacts or ("",):
            fields.setdefault(artifact, []).append(shown)
    return fields


def corrections_of(
    fields: Mapping[str, list[CorrectionField]], artifact: str
) -> list[CorrectionField]:
    """The corrections a mark on `artifact` may carry."""
    return [*fields.get(artifact, []), *fields.get("", [])]


__all__ = [
    "DECISIONS",
    "MARKS",
    "REVIEWER_COOKIE",
    "REVIEWER_COOKIE_MAX_AGE",
    "REVIEWER_HEADER",
    "REVIEW_STATES",
    "Claim",
    "CorrectionField",
    "Decision",
    "ReviewView",
    "claim_location",
    "claims_of",
    "corrections_for",
    "corrections_of",
    "fill_view",
    "local_path",
    "policy_text",
    "request_credential",
    "review_state_of",
    "review_view",
    "reviewer_for",
    "signed_in",
]
