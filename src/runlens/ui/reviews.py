"""The pages of review by people (SPEC section 17): the queue of runs awaiting review
(`/reviews`) and a reviewer's sign-in and sign-out.

`POST /reviews/sign-in` takes the token `runlens reviewers add` printed and, when it is a
reviewer's, sets the `runlens_reviewer` cookie (HttpOnly, SameSite=Strict, `Secure` over
HTTPS, for `REVIEWER_COOKIE_MAX_AGE` seconds): the token's SHA-256 under this server
process's HMAC (`runlens.ui.security.ReviewerSessions`), never the token itself. The pages
then show the decision form and the mark controls, and the API identifies the reviewer by
it. A wrong token is refused with the same answer whatever it is: it never says whether some
reviewer exists. Both forms pass the same cross-site and token checks as every POST
(`runlens.ui.security`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from runlens.ui.context import ui_context
from runlens.ui.params import Text
from runlens.ui.reviewing import (
    MAX_TOKEN,
    REVIEWER_COOKIE,
    REVIEWER_COOKIE_MAX_AGE,
    local_path,
    review_state_of,
    reviewer_for,
    signed_in,
)

if TYPE_CHECKING:
    from runlens.review.entries import ReviewEntry
    from runlens.store.db import RunStore

router = APIRouter(include_in_schema=False)

#: How many runs the queue shows at most.
QUEUE_LIMIT: Final = 200
#: The states a run awaiting review is in.
AWAITING: Final = ("unreviewed", "changes-requested")


@router.get("/reviews", response_class=HTMLResponse)
def review_queue(
    request: Request, plugin: Text = "", status: Text = "", state: Text = ""
) -> HTMLResponse:
    """The runs awaiting review, oldest first, filtered by plugin, status and review state."""
    from runlens.ui.pages import render

    ui = ui_context(request)
    ui.refresh_live()
    problem = None
    if state and state not in AWAITING:
        problem = f"state {state!r}: the queue holds runs {' or '.join(AWAITING)}"
        runs = []
    else:
        runs = ui.store.review_queue(
            plugin=plugin or None, status=status or None, limit=QUEUE_LIMIT
        )
        if state:
            runs = [run for run in runs if review_state_of(run) == state]
    asked = {
        run.run_id: found
        for run in runs
        if review_state_of(run) == "changes-requested"
        and (found := changes_asked(ui.store, run.run_id)) is not None
    }
    return render(
        "reviews.html",
        status_code=400 if problem else 200,
        title="Awaiting review",
        runs=runs,
        problem=problem,
        filters={"plugin": plugin, "status": status, "state": state},
        plugins=ui.store.distinct_values("plugin"),
        reviewer=signed_in(request),
        asked=asked,
    )


def changes_asked(store: RunStore, run_id: str) -> ReviewEntry | None:
    """The latest request for changes in the run's ledger (what the queue quotes), or None
    when there is none or the ledger cannot be read (the run page says why)."""
    from runlens.errors import UserError
    from runlens.review.ledger import parse_ledger

    lines = store.review_lines(run_id)
    try:
        entries = parse_ledger("".join(line + "\n" for line in lines)) if lines else []
    except UserError:
        return None
    asked = [e for e in entries if e.kind == "decision" and e.decision == "request-changes"]
    return asked[-1] if asked else None


@router.post("/reviews/sign-in", response_class=HTMLResponse)
async def sign_in(request: Request) -> Response:
    """Sign a reviewer in (the `runlens_reviewer` cookie) and go back to `next`."""
    from starlette.concurrency import run_in_threadpool

    from runlens.ui.pages import render

    form = await request.form(max_files=0, max_fields=10)
    try:
        token = form.get("token")
        next_path = form.get("next")
    finally:
        await form.close()
    token = token.strip() if isinstance(token, str) else ""
    target = local_path(next_path, "/reviews")
    from runlens.review.reviewers import token_digest

    ui = ui_context(request)
    reviewer = None
    digest = token_digest(token) if 0 < len(token) <= MAX_TOKEN else None
    if digest is not None:
        reviewer = await run_in_threadpool(reviewer_for, ui, digest)
    if reviewer is None:
        return render(
            "error.html",
            status_code=403,
            title="Not signed in",
            message="That is not a reviewer's token. Use the token `runlens reviewers add` "
            "printed for you, or ask for a new one.",
        )
    response = RedirectResponse(target, status_code=303)
    assert digest is not None
    response.set_cookie(
        REVIEWER_COOKIE,
        ui.reviewer_sessions.issue(digest),
        max_age=REVIEWER_COOKIE_MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/reviews/sign-out", response_class=HTMLResponse)
async def sign_out(request: Request) -> Response:
    """Forget the reviewer's cookie."""
    form = await request.form(max_files=0, max_fields=10)
    try:
        next_path = form.get("next")
    finally:
        await form.close()
    response = RedirectResponse(local_path(next_path, "/reviews"), status_code=303)
    response.delete_cookie(
        REVIEWER_COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


__all__ = ["AWAITING", "QUEUE_LIMIT", "router"]
