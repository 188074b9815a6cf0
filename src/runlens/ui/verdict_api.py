"""The HTTP API of a run's signed verdict and of its input's drift (SPEC section 16), under
`/api` beside `runlens.ui.api`, behind the same rules (`runlens.ui.security`).

- `GET /api/runs/{run_id}/verdict`: the DSSE envelope as the run wrote it.
- `GET /api/runs/{run_id}/export.html`: the run as one self-contained HTML file that checks
  itself (`runlens export RUN --html FILE`, SPEC section 18), signed by the server's home
  key, as an attachment.
- `POST /api/runs/{run_id}/verify`: `runlens verify` of the run's workspace (in a thread: it
  rebuilds the Evidence Index and re-runs the validators); only for a workspace on this
  machine (409 otherwise: a copy from the store is not what a verifier should vouch for).
- `POST /api/runs/{run_id}/drift`: a newer copy of the input (multipart `file`), compared
  with the run's source lock; every claim citing an added, removed or changed row is stale.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from runlens.errors import UserError
from runlens.store.rows import RunDetail
from runlens.ui.context import UIContext, ui_context
from runlens.ui.drift import DRIFT_FIELDS, DriftUnavailable, DriftView, receive_upload
from runlens.ui.params import RunId
from runlens.ui.schemas import DriftBody, ErrorBody, VerifyBody
from runlens.ui.verdicts import VERDICT_PATH, RecordUnavailable, read_verdict

router = APIRouter(prefix="/api", tags=["verdict"])

_NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {404: {"model": ErrorBody}}


def _run(ui: UIContext, run_id: str) -> RunDetail:
    run = ui.store.get_run(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id!r}")
    return run


@router.get(
    "/runs/{run_id}/verdict",
    responses={
        **_NOT_FOUND,
        200: {
            "description": (
                "The run's DSSE envelope (`runtime/verdict.dsse.json`): `payloadType` "
                "`application/vnd.in-toto+json`, `payload` the base64 of an in-toto "
                "Statement v1, `signatures` of `{keyid, sig}` (Ed25519 over DSSE's "
                "pre-authentication encoding). Any DSSE verifier can check it."
            ),
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        409: {"model": ErrorBody, "description": "The envelope is there but cannot be read"},
    },
    summary="A run's signed verdict (DSSE envelope)",
)
def get_verdict(request: Request, run_id: RunId) -> JSONResponse:
    ui = ui_context(request)
    run = _run(ui, run_id)
    try:
        envelope = read_verdict(Path(ui.files_of(run).workspace))
    except RecordUnavailable as error:
        if error.missing:
            raise HTTPException(
                404,
                f"run {run_id} has no signed verdict ({VERDICT_PATH}): a run signs one when "
                f"it ends after validating; this one is {run.status}"
                + (" (it ended before validating)" if run.is_terminal else ""),
            ) from None
        raise HTTPException(409, f"run {run_id}: {error}") from None
    return JSONResponse(envelope)


#: The exported file's own policy, should a browser show it in place rather than save it: a
#: sandbox in which it runs nothing (opened from disk, its page's policy applies instead).
EXPORT_CSP: Final = "sandbox; default-src 'none'"


@router.get(
    "/runs/{run_id}/export.html",
    responses={
        **_NOT_FOUND,
        200: {
            "description": (
                "One self-contained HTML file (attachment `runlens-<run_id>.html`): the "
                "verdict, the deliverables for readers, the cited rows, findings, source "
                "lock, reviews and the signed statement; it checks its own hashes and "
                "signatures when opened, and `runlens verify FILE` checks it too."
            ),
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
        409: {
            "model": ErrorBody,
            "description": "The run has no signed verdict (still going, or ended before "
            "validating), or its files are not what it signed",
        },
    },
    response_class=Response,
    summary="A run as one HTML file that checks itself",
)
def export_run(request: Request, run_id: RunId) -> Response:
    from runlens.ui.export import build_export, export_filename

    ui = ui_context(request)
    run = _run(ui, run_id)
    try:
        page = build_export(ui.files_of(run), ui.store.citations(run.run_id), home=ui.home)
    except UserError as error:
        raise HTTPException(409, str(error)) from None
    headers = {
        "content-disposition": f'attachment; filename="{export_filename(run.run_id)}"',
        "content-security-policy": EXPORT_CSP,
        "x-content-type-options": "nosniff",
    }
    return Response(page.html, media_type="text/html; charset=utf-8", headers=headers)


@router.post(
    "/runs/{run_id}/verify",
    response_model=VerifyBody,
    responses={
        **_NOT_FOUND,
        409: {
            "model": ErrorBody,
            "description": "The run's workspace is not on this machine, the run is still "
            "going, or it is being verified already",
        },
    },
    summary="Re-check a run: signature, hashes, the index rebuilt, the validators re-run",
)
async def verify_run(request: Request, run_id: RunId) -> VerifyBody:
    from runlens.store.sync import local_workspace
    from runlens.verdict.verify import verify_workspace

    ui = ui_context(request)
    run = await run_in_threadpool(_run, ui, run_id)
    if not run.is_terminal:
        raise HTTPException(409, f"run {run_id} is {run.status}: verify it once it has ended")
    workspace = await run_in_threadpool(local_workspace, ui.store, run)
    if workspace is None:
        where = f" (it ran on {run.host})" if run.host else ""
        raise HTTPException(
            409,
            f"run {run_id}'s workspace is not on this machine{where}: run "
            f"`runlens verify {run_id}` where it is, or on an exported copy",
        )
    if not ui.verifying.claim(run.run_id):
        raise HTTPException(409, f"run {run_id} is being verified already: wait for that answer")
    try:
        report = await run_in_threadpool(lambda: verify_workspace(workspace, home=ui.home))
    finally:
        ui.verifying.release(run.run_id)
    return VerifyBody.model_validate(report.as_json())


@router.post(
    "/runs/{run_id}/drift",
    response_model=DriftBody,
    responses={
        **_NOT_FOUND,
        409: {"model": ErrorBody, "description": "The run cannot be compared with the file"},
        413: {"model": ErrorBody, "description": "The upload is over the size limit"},
        415: {"model": ErrorBody, "description": "The file is not of an accepted type"},
        422: {"model": ErrorBody, "description": "A field is missing or not acceptable"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {
                                "type": "string",
                                "format": "binary",
                                "description": "The newer input (csv, tsv, tab, txt, xlsx)",
                            },
                            **{
                                name: {"type": "string", "description": what}
                                for name, what in DRIFT_FIELDS.items()
                            },
                        },
                    }
                }
            },
        }
    },
    summary="Compare a newer input with the run's: changed rows and the claims made stale",
)
async def drift_run(request: Request, run_id: RunId) -> DriftBody:
    ui = ui_context(request)
    run = await run_in_threadpool(_run, ui, run_id)
    upload_id, saved = await receive_upload(
        request,
        ui.home,
        run.run_id,
        ui.config.max_upload_bytes,
        what=f"POST /api/runs/{run.run_id}/drift",
    )
    try:
        view = await run_in_threadpool(drift_view, ui, run, upload_id)
    except HTTPException:
        # Nothing to show for it: the upload is not kept.
        await run_in_threadpool(shutil.rmtree, saved.parent, True)
        raise
    return DriftBody(
        **view.as_json(),
        page_url=f"/runs/{run.run_id}?drift={upload_id}#drift",
        report_url=f"/runs/{run.run_id}/report?drift={upload_id}",
    )


def drift_view(ui: UIContext, run: RunDetail, upload_id: str) -> DriftView:
    """The comparison of `run` with its upload `upload_id` (HTTP 404/409 when there is none)."""
    try:
        workspace = Path(ui.files_of(run).workspace)
        return ui.drift.compare(ui.home, run.run_id, workspace, upload_id)
    except DriftUnavailable as error:
        raise HTTPException(404 if error.missing else 409, str(error)) from None


__all__ = ["router"]
