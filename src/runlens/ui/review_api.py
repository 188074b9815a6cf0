"""The HTTP API of review by people (SPEC section 17), under `/api` beside `runlens.ui.api`,
behind the same rules (`runlens.ui.security`: token, Host, cross-site writes).

- `GET /api/runs/{run_id}/reviews`: the run's review state, its summary, every signed entry
  of its ledger, its reruns and the run it re-ran.
- `POST /api/runs/{run_id}/reviews`: a decision (`decision`, `note`, `artifact`), JSON or a
  form; `POST /api/runs/{run_id}/marks`: a mark on one claim (`artifact`, `location`,
  `row_id`, `mark`, `note`, `correction`).
- `POST /api/runs/{run_id}/rerun`: a new run of the same input whose model is given the
  review's notes and marks as findings (202 with its id).
- `GET /api/runs/{run_id}/marks?format=csv|jsonl`: the run's marks, one row per claim and
  reviewer (`runlens marks`).

Every POST names its reviewer by token (`X-RunLens-Reviewer`, or the `runlens_reviewer`
cookie of `POST /reviews/sign-in`): none is 401, one that is no reviewer's is 403. The
reviewer is signed with their own key on this server (`runlens.review.record`). A form sent
by a page (no JavaScript) is answered with a redirect to the page it came from (`back`, a
path on this server); everything else with JSON. Errors are `{"detail": ...}`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from runlens.errors import UserError, one_line
from runlens.review.record import (
    MARK_COLUMNS,
    RecordedReview,
    marks_table,
    marks_text,
    record_decision,
    record_mark,
)
from runlens.store.rows import RunDetail
from runlens.ui.context import UIContext, ui_context
from runlens.ui.params import MAX_ARTIFACT_NAME, MAX_ROW_ID, MAX_TEXT, RunId
from runlens.ui.reviewing import (
    DECISIONS,
    MARKS,
    REVIEWER_COOKIE,
    REVIEWER_HEADER,
    local_path,
    request_credential,
    reviewer_for,
)
from runlens.ui.schemas import ErrorBody

if TYPE_CHECKING:
    from runlens.store.rows import ReviewerRow

router = APIRouter(prefix="/api", tags=["reviews"])

#: The longest note a reviewer may write.
MAX_NOTE: Final = 10_000
#: The largest body a review or mark request may send.
MAX_BODY: Final = 64 * 1024
_FORM_TYPES: Final = ("application/x-www-form-urlencoded", "multipart/form-data")
_REVIEWER_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    401: {"model": ErrorBody, "description": "No reviewer token was sent"},
    403: {
        "model": ErrorBody,
        "description": "The token is no reviewer's, or the policy refuses this reviewer",
    },
    404: {"model": ErrorBody},
    422: {"model": ErrorBody, "description": "A field is missing or not acceptable"},
}


def _run(ui: UIContext, run_id: str) -> RunDetail:
    run = ui.store.get_run(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id!r}")
    return run


def _reviewer(request: Request) -> ReviewerRow:
    """The reviewer the request names by token; 401 without one, 403 for a wrong one (which
    never says whether any reviewer of some name exists)."""
    digest = request_credential(request)
    if digest is None:
        raise HTTPException(
            401,
            f"a reviewer token is required: send '{REVIEWER_HEADER.title()}: <token>' (the "
            "token `runlens reviewers add NAME` printed), or sign in at /reviews",
        )
    row = reviewer_for(ui_context(request), digest)
    if row is None:
        raise HTTPException(
            403, "the reviewer token is not valid: ask for a new one (runlens reviewers add)"
        )
    return row


# -- reading --------------------------------------------------------------------------------


@router.get(
    "/runs/{run_id}/reviews",
    responses={404: {"model": ErrorBody}, 422: {"model": ErrorBody}},
    summary="A run's review: state, decisions and marks (signed entries), reruns",
)
def get_reviews(request: Request, run_id: RunId) -> JSONResponse:
    ui = ui_context(request)
    run = _run(ui, run_id)
    return JSONResponse(reviews_body(ui, run))


def reviews_body(ui: UIContext, run: RunDetail) -> dict[str, Any]:
    """`GET /api/runs/{run_id}/reviews`'s answer: `runlens reviews --json`'s document (each
    entry with `valid` and `void`), with the run's status and submitter."""
    from runlens.review.record import reviews_document, run_reviews

    entries, summary = run_reviews(ui.store, run.run_id, home=ui.home)
    document = reviews_document(run.run_id, entries, summary, run.reruns, run.rerun_of)
    return {**document, "status": run.status, "submitted_by": run.submitted_by}


@router.get(
    "/runs/{run_id}/marks",
    responses={
        404: {"model": ErrorBody},
        200: {
            "description": "One row per claim and reviewer: "
            + ", ".join(MARK_COLUMNS)
            + " (`correction` as JSON in CSV)",
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        },
    },
    response_class=Response,
    summary="A run's marks as CSV or JSON lines",
)
def export_marks(
    request: Request,
    run_id: RunId,
    format: str = Query("csv", pattern="^(csv|jsonl)$", description="csv or jsonl"),
) -> Response:

    ui = ui_context(request)
    run = _run(ui, run_id)
    rows = marks_table(ui.store, [run.run_id], home=ui.home)
    name = f"marks-{run.run_id}.{format}"
    disposition = {"content-disposition": f'attachment; filename="{name}"'}
    media = "application/x-ndjson" if format == "jsonl" else "text/csv; charset=utf-8"
    return Response(marks_text(rows, format), media_type=media, headers=disposition)


# -- writing --------------------------------------------------------------------------------


async def _fields(request: Request) -> tuple[dict[str, Any], bool]:
    """The request's fields (JSON object or form) and whether it was a form."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise HTTPException(413, f"the request is over {MAX_BODY} bytes")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in _FORM_TYPES:
        form = await request.form(max_files=0, max_fields=50)
        try:
            values: dict[str, Any] = {}
            for key, value in form.multi_items():
                if isinstance(value, str):
                    values.setdefault(key, value)
            return values, True
        finally:
            await form.close()
    body = await request.body()
    if len(body) > MAX_BODY:
        raise HTTPException(413, f"the request is over {MAX_BODY} bytes")
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        raise HTTPException(
            422, "the body is neither JSON nor a form (send Content-Type: application/json)"
        ) from None
    if not isinstance(parsed, dict):
        raise HTTPException(422, "the body must be a JSON object")
    return parsed, False


def _text(fields: Mapping[str, Any], name: str, *, limit: int, required: bool = False) -> str:
    value = fields.get(name)
    if value is None or value == "":
        if required:
            raise HTTPException(422, f"field {name!r} is required")
        return ""
    if not isinstance(value, str):
        raise HTTPException(422, f"field {name!r} must be text")
    if len(value) > limit:
        raise HTTPException(422, f"field {name!r} is over {limit} characters")
    return value


def _choice(fields: Mapping[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = _text(fields, name, limit=64, required=True)
    if value not in choices:
        raise HTTPException(422, f"field {name!r} is {value!r}: one of {', '.join(choices)}")
    return value


def _correction(fields: Mapping[str, Any], *, form: bool) -> dict[str, str] | None:
    """A mark's correction: a JSON object of text, or in a form `correction.<name>` fields
    (or one `correction` field `name=value`); empty values left out."""
    found: dict[str, Any] = {}
    given = fields.get("correction")
    if isinstance(given, dict):
        found.update(given)
    elif isinstance(given, str) and given.strip():
        name, sep, value = given.partition("=")
        if not sep or not name.strip():
            raise HTTPException(422, "field 'correction' must be name=value")
        found[name.strip()] = value
    elif given is not None and not (form and given == ""):
        raise HTTPException(422, "field 'correction' must be an object of text values")
    for key, value in fields.items():
        if key.startswith("correction.") and len(key) > len("correction."):
            found[key.removeprefix("correction.")] = value
    cleaned: dict[str, str] = {}
    for name, value in found.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise HTTPException(422, "a correction's name and value must be text")
        if len(name) > 64 or len(value) > MAX_TEXT:
            raise HTTPException(422, f"correction {name[:64]!r} is too long")
        if value.strip():
            cleaned[name] = value.strip()
    return cleaned or None


def _refused(error: UserError) -> HTTPException:
    """A refusal of `runlens.review.record` as HTTP: the policy's is 403, the rest 422."""
    from runlens.review.state import ReviewRefused

    status = 403 if isinstance(error, ReviewRefused) else 422
    return HTTPException(status, one_line(error))


async def _answered(request: Request, work: Awaitable[Response]) -> Response:
    """`work`'s answer; a refusal of a page's form (no JavaScript) as a page that says why and
    links back, any other refusal as JSON."""
    from runlens.ui.launcher import LaunchError

    try:
        return await work
    except (HTTPException, LaunchError) as error:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in _FORM_TYPES or "text/html" not in request.headers.get("accept", ""):
            raise
        from runlens.ui.pages import render

        status = error.status_code
        return render(
            "error.html",
            status_code=status,
            title="Not recorded" if status != 401 else "Sign in to review",
            message=str(error.detail if isinstance(error, HTTPException) else error),
            back="/reviews" if status in (401, 403) and "token" in str(error) else None,
        )


def _recorded_body(recorded: Any, run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "entry": recorded.entry.as_json(),
        "review_state": recorded.summary.state,
        "review": recorded.summary.as_json(),
        "resigned": recorded.resigned,
        "warning": recorded.warning,
    }


async def _record(
    record: Callable[[], RecordedReview],
    run_id: str,
    *,
    back: object | None,
    default_back: str,
) -> Response:
    """Record a decision or a mark off the event loop. A refusal is the reviewer's error
    (403 for the policy, else 422, naming why); a form post goes back to its page (`back`,
    a local path); an API call gets the recorded entry (201)."""
    try:
        recorded = await run_in_threadpool(record)
    except UserError as error:
        raise _refused(error) from None
    if back is not None:
        return RedirectResponse(local_path(back, default_back), status_code=303)
    return JSONResponse(_recorded_body(recorded, run_id), status_code=201)


@router.post(
    "/runs/{run_id}/reviews",
    status_code=201,
    responses=_REVIEWER_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                media: {
                    "schema": {
                        "type": "object",
                        "required": ["decision", "note"],
                        "properties": {
                            "decision": {"type": "string", "enum": list(DECISIONS)},
                            "note": {"type": "string"},
                            "artifact": {
                                "type": "string",
                                "description": "A deliverable (report.md); none: the run",
                            },
                        },
                    }
                }
                for media in ("application/json", "application/x-www-form-urlencoded")
            },
        }
    },
    summary="Approve, request changes to or reject a run or one deliverable, with a note",
)
async def post_review(request: Request, run_id: RunId) -> Response:
    return await _answered(request, _post_review(request, run_id))


async def _post_review(request: Request, run_id: str) -> Response:
    ui = ui_context(request)
    reviewer = await run_in_threadpool(_reviewer, request)
    fields, form = await _fields(request)
    run = await run_in_threadpool(_run, ui, run_id)
    decision = _choice(fields, "decision", DECISIONS)
    note = _text(fields, "note", limit=MAX_NOTE, required=True)
    artifact = _text(fields, "artifact", limit=MAX_ARTIFACT_NAME) or None

    return await _record(
        functools.partial(
            record_decision,
            ui.store,
            run.run_id,
            reviewer=reviewer.name,
            decision=decision,
            note=note,
            artifact=artifact,
            home=ui.home,
        ),
        run.run_id,
        back=fields.get("back") if form else None,
        default_back=f"/runs/{run.run_id}#review",
    )


@router.post(
    "/runs/{run_id}/marks",
    status_code=201,
    responses=_REVIEWER_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                media: {
                    "schema": {
                        "type": "object",
                        "required": ["artifact", "location", "row_id", "mark"],
                        "properties": {
                            "artifact": {"type": "string", "description": "report.md"},
                            "location": {"type": "string", "description": "line 12, items[3]"},
                            "row_id": {"type": "string"},
                            "mark": {"type": "string", "enum": list(MARKS)},
                            "note": {"type": "string"},
                            "quote": {"type": "string"},
                            "correction": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                            },
                        },
                    }
                }
                for media in ("application/json", "application/x-www-form-urlencoded")
            },
        }
    },
    summary="Mark one claim (a citation of a row) correct, wrong or unsure",
)
async def post_mark(request: Request, run_id: RunId) -> Response:
    return await _answered(request, _post_mark(request, run_id))


async def _post_mark(request: Request, run_id: str) -> Response:
    ui = ui_context(request)
    reviewer = await run_in_threadpool(_reviewer, request)
    fields, form = await _fields(request)
    run = await run_in_threadpool(_run, ui, run_id)
    mark = _choice(fields, "mark", MARKS)
    artifact = _text(fields, "artifact", limit=MAX_ARTIFACT_NAME, required=True)
    location = _text(fields, "location", limit=MAX_TEXT, required=True)
    row_id = _text(fields, "row_id", limit=MAX_ROW_ID, required=True)
    note = _text(fields, "note", limit=MAX_NOTE)
    quote = _text(fields, "quote", limit=MAX_NOTE) or None
    correction = _correction(fields, form=form)

    return await _record(
        functools.partial(
            record_mark,
            ui.store,
            run.run_id,
            reviewer=reviewer.name,
            mark=mark,
            note=note,
            artifact=artifact,
            location=location,
            row_id=row_id,
            quote=quote,
            correction=correction,
            home=ui.home,
        ),
        run.run_id,
        back=fields.get("back") if form else None,
        default_back=f"/runs/{run.run_id}/report",
    )


@router.post(
    "/runs/{run_id}/rerun",
    status_code=202,
    responses={
        **_REVIEWER_ERRORS,
        409: {"model": ErrorBody, "description": "The review gives the rerun nothing to do"},
        429: {"model": ErrorBody, "description": "Too many runs going; see Retry-After"},
    },
    summary="Start a new run of the same input whose model addresses the review",
)
async def post_rerun(request: Request, run_id: RunId) -> Response:
    return await _answered(request, _post_rerun(request, run_id))


async def _post_rerun(request: Request, run_id: str) -> Response:
    ui = ui_context(request)
    reviewer = await run_in_threadpool(_reviewer, request)
    fields, form = await _fields(request)
    run = await run_in_threadpool(_run, ui, run_id)
    model = _text(fields, "model", limit=MAX_TEXT) or None
    new_id = await run_in_threadpool(
        lambda: ui.launcher.rerun(run, submitted_by=reviewer.name, model=model)
    )
    url = f"/runs/{new_id}"
    if form:
        return RedirectResponse(url, status_code=303)
    body = {"run_id": new_id, "url": url, "rerun_of": run.run_id}
    return JSONResponse(body, status_code=202, headers={"location": f"/api/runs/{new_id}"})


__all__ = ["REVIEWER_COOKIE", "reviews_body", "router"]
