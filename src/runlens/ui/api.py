"""The HTTP API under `/api` (SPEC section 14): runs, their events, artifacts and evidence
rows, starting and cancelling runs, the installed plugins.

Handlers read the store (`runlens.store.RunStore`, whose calls are synchronous: plain `def`
handlers run in the thread pool) and leave workspace files to `runlens.ui.files` and
`runlens.ui.evidence`, in the folder `UIContext.files_of` names (the run's workspace, or its
files from the store). Every error is JSON `{"detail": "<what is wrong>"}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Final

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event
from starlette.concurrency import run_in_threadpool

from runlens.store.rows import ArtifactRow, Origin, RunDetail, RunSummary, StoreStatus
from runlens.ui.analysed import (
    AnalysisUnavailable,
    BadFilter,
    declared_row_fields,
    rows_page,
    split_filters,
)
from runlens.ui.context import UIContext, ui_context
from runlens.ui.evidence import EvidenceUnavailable
from runlens.ui.files import WorkspaceFileError, open_in_workspace
from runlens.ui.integrity import change_of, changed_artifacts, opened_sha256, sha256_of
from runlens.ui.launcher import FIELDS
from runlens.ui.params import (
    MAX_SEQ,
    MAX_TEXT,
    ArtifactName,
    Offset,
    PageNumber,
    ReviewState,
    RowId,
    RunId,
    Seq,
    Text,
    seq_header,
)
from runlens.ui.schemas import (
    AnalysedRow,
    ChangedArtifactBody,
    ContractInfo,
    ErrorBody,
    EvidenceRow,
    PluginInfo,
    PluginList,
    RowAnalysisBody,
    RowList,
    RunEvent,
    RunList,
    RunView,
    StartedRun,
)
from runlens.ui.security import RAW_ARTIFACT_CSP

router = APIRouter(prefix="/api", tags=["runs"])

#: Seconds between two looks at the store while a stream waits for a run's next event.
POLL_SECONDS: Final = 0.3
#: Seconds of silence after which a stream sends a keep-alive comment.
KEEPALIVE_SECONDS: Final = 15.0
_EVENT_BATCH: Final = 500
_MEDIA_TYPES: Final = {
    ".json": "application/json; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {404: {"model": ErrorBody}}


def _run(ui: UIContext, run_id: str) -> RunDetail:
    run = ui.store.get_run(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id!r}")
    return run


@router.get("/runs", response_model=RunList, summary="List runs, newest first")
def list_runs(
    request: Request,
    status: StoreStatus | None = None,
    plugin: Text | None = None,
    model: Text | None = None,
    q: str | None = Query(
        None,
        max_length=MAX_TEXT,
        description="Text searched in run id, input name, plugin, model, error message",
    ),
    limit: int = Query(50, ge=1, le=500),
    offset: Offset = 0,
    review_state: ReviewState | None = None,
) -> RunList:
    ui = ui_context(request)
    ui.refresh_live()
    runs, total = ui.store.list_runs(
        status=status,
        plugin=plugin,
        model=model,
        query=q,
        limit=limit,
        offset=offset,
        review_state=review_state,
    )
    return RunList(runs=runs, total=total, limit=limit, offset=offset)


@router.get(
    "/runs/{run_id}",
    response_model=RunView,
    responses=_NOT_FOUND,
    summary="One run, whole, with the deliverables changed after its validation",
)
def get_run(request: Request, run_id: RunId) -> RunView:
    ui = ui_context(request)
    ui.refresh_live()
    run = _run(ui, run_id)
    return RunView(**dict(run), changed_after_validation=_changes(ui, run))


def _changes(ui: UIContext, run: RunDetail) -> list[ChangedArtifactBody]:
    """The run's deliverables whose files are not the bytes its validation judged."""
    return [
        ChangedArtifactBody(
            name=change.name,
            validated_sha256=change.validated_sha256,
            current_sha256=change.current_sha256,
            problem=change.problem,
            message=change.message,
        )
        for change in changed_artifacts(ui.files_of(run))
    ]


@router.get(
    "/runs/{run_id}/events",
    response_model=list[RunEvent],
    responses={
        **_NOT_FOUND,
        200: {
            "description": (
                "The events after `after` as JSON; with `Accept: text/event-stream` a live "
                "stream: `id: <seq>`, `event: run_event`, `data: <event JSON>` for each, and "
                "`event: end` once the run is terminal and every event is sent."
            ),
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
    },
    summary="A run's events (live with Accept: text/event-stream)",
)
async def run_events(
    request: Request,
    run_id: RunId,
    after: Seq = 0,
    limit: int | None = Query(None, ge=1, le=10_000),
    last_event_id: str | None = Header(
        None, max_length=64, description="Resume a stream after this seq"
    ),
) -> Response:
    ui = ui_context(request)
    await run_in_threadpool(_run, ui, run_id)
    if "text/event-stream" in request.headers.get("accept", ""):
        cursor = max(after, _seq(last_event_id))
        return EventSourceResponse(
            _event_stream(request, ui, run_id, cursor), headers={"x-accel-buffering": "no"}
        )
    events = await run_in_threadpool(ui.store.events, run_id, after, limit)
    return JSONResponse([RunEvent.model_validate(event).model_dump() for event in events])


def _seq(last_event_id: str | None) -> int:
    seq = seq_header(last_event_id)
    if seq is None:
        raise HTTPException(
            422, f"Last-Event-ID must be an event's seq (0 to {MAX_SEQ}), not {last_event_id!r}"
        )
    return seq


async def _event_stream(
    request: Request, ui: UIContext, run_id: str, cursor: int
) -> AsyncIterator[bytes]:
    """Every event after `cursor`, then the live ones, then `end` once the run is terminal;
    it stops early when the client goes away.

    The run's status is read before its events: a run seen terminal whose events then show
    nothing new has delivered them all (its last event is written before its final status).
    """
    quiet = 0.0
    while True:
        run = await run_in_threadpool(ui.store.get_run, run_id)
        batch = await run_in_threadpool(ui.store.events, run_id, cursor, _EVENT_BATCH)
        for event in batch:
            cursor = int(event["seq"])
            yield format_sse_event(data_str=_json(event), event="run_event", id=str(cursor))
        if batch:
            quiet = 0.0
            continue
        if run is None or run.is_terminal:
            end = {
                "run_id": run_id,
                "status": run.status if run is not None else "unknown",
                "error_message": run.error_message if run is not None else "the run is gone",
            }
            yield format_sse_event(data_str=_json(end), event="end")
            return
        if quiet >= KEEPALIVE_SECONDS:
            yield KEEPALIVE_COMMENT
            quiet = 0.0
        await asyncio.sleep(POLL_SECONDS)
        quiet += POLL_SECONDS
        if await request.is_disconnected():
            return
        await run_in_threadpool(ui.refresh_live)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@router.get(
    "/runs/{run_id}/artifacts/{name:path}",
    responses={
        **_NOT_FOUND,
        200: {
            "description": (
                "The artifact's bytes. `X-RunLens-SHA256` is the digest of the bytes served, "
                "`X-RunLens-Validated-SHA256` the one the run's validation judged, and "
                "`X-RunLens-Changed-After-Validation` `true` when the file on disk is not "
                "those bytes: the store's copy of the validated bytes is served then when "
                "it holds one (`X-RunLens-Served: validated`), else the file as it is now "
                "(`X-RunLens-Served: current`)."
            ),
            "headers": {
                header: {"schema": {"type": "string"}}
                for header in (
                    "X-RunLens-SHA256",
                    "X-RunLens-Validated-SHA256",
                    "X-RunLens-Changed-After-Validation",
                    "X-RunLens-Current-SHA256",
                    "X-RunLens-Served",
                )
            },
        },
    },
    response_class=Response,
    summary="One artifact, raw, by its contract name (e.g. artifacts/report.md)",
)
def get_artifact(request: Request, run_id: RunId, name: ArtifactName) -> Response:
    ui = ui_context(request)
    run = _run(ui, run_id)
    listed = {artifact.name: artifact for artifact in run.artifacts}
    if name not in listed:
        known = ", ".join(sorted(listed)) or "none listed yet"
        raise HTTPException(404, f"run {run_id} has no artifact {name!r} (its artifacts: {known})")
    row = listed[name]
    suffix = PurePosixPath(name).suffix.lower()
    media_type = _MEDIA_TYPES.get(suffix, "application/octet-stream")
    headers = {
        "content-security-policy": RAW_ARTIFACT_CSP,
        "x-content-type-options": "nosniff",
    }
    if suffix not in _MEDIA_TYPES:
        headers["content-disposition"] = "attachment"
    try:
        opened = open_in_workspace(Path(ui.files_of(run).workspace), name)
    except WorkspaceFileError as error:
        validated = _validated_copy(ui, run, row)
        if validated is None:
            raise HTTPException(404, f"artifact {name!r} of run {run_id}: {error}") from None
        headers.update(_integrity_headers(row, validated_copy=True, current=None))
        return Response(validated, media_type=media_type, headers=headers)
    try:
        current = opened_sha256(opened)
    except OSError:
        opened.close()
        raise
    changed = run.is_terminal and change_of(row, current) is not None
    if changed:
        validated = _validated_copy(ui, run, row)
        if validated is not None:
            opened.close()
            headers.update(_integrity_headers(row, validated_copy=True, current=current))
            return Response(validated, media_type=media_type, headers=headers)
    headers["content-length"] = str(opened.size)
    headers.update(_integrity_headers(row, validated_copy=False, current=current, changed=changed))
    return StreamingResponse(opened.chunks(), media_type=media_type, headers=headers)


def _validated_copy(ui: UIContext, run: RunDetail, row: ArtifactRow) -> bytes | None:
    """The store's copy of the artifact when it holds the validated bytes, else None."""
    if not run.is_terminal or not row.sha256:
        return None
    try:
        data = ui.store.read_file(run.run_id, row.name)
    except ValueError:
        return None
    if data is None or sha256_of(data) != row.sha256.lower():
        return None
    return data


def _integrity_headers(
    row: ArtifactRow, *, validated_copy: bool, current: str | None, changed: bool = True
) -> dict[str, str]:
    """What the artifact's headers say of its bytes against the validated ones."""
    headers: dict[str, str] = {}
    if row.sha256:
        headers["x-runlens-validated-sha256"] = row.sha256.lower()
    if validated_copy:
        headers["x-runlens-sha256"] = (row.sha256 or "").lower()
        headers["x-runlens-served"] = "validated"
        headers["x-runlens-changed-after-validation"] = "true"
        headers["x-runlens-current-sha256"] = current or "unreadable"
        return headers
    assert current is not None
    headers["x-runlens-sha256"] = current
    headers["x-runlens-current-sha256"] = current
    headers["x-runlens-served"] = "current"
    headers["x-runlens-changed-after-validation"] = "true" if changed else "false"
    return headers


@router.get(
    "/runs/{run_id}/evidence/{row_id:path}",
    response_model=EvidenceRow,
    responses=_NOT_FOUND,
    summary="One source row, whole, with every citation of it",
)
def get_evidence(request: Request, run_id: RunId, row_id: RowId) -> EvidenceRow:
    ui = ui_context(request)
    run = _run(ui, run_id)
    workspace = Path(ui.files_of(run).workspace)
    try:
        row = ui.evidence.row(workspace, row_id)
    except EvidenceUnavailable as error:
        raise HTTPException(404 if error.missing else 409, f"run {run_id}: {error}") from None
    analyses = ui.analysed.analyses(workspace, run.plugin, row_id)
    return EvidenceRow(
        run_id=run_id,
        row_id=row_id,
        text=row.text,
        source=row.source,
        metadata={
            "id_column": row.id_column,
            "text_column": row.text_column,
            "row_hash": row.row_hash,
        },
        columns=row.metadata,
        analysis=[RowAnalysisBody(**asdict(analysis)) for analysis in analyses],
        citations=ui.store.citations(run_id, row_id=row_id),
        changed_after_validation=_changes(ui, run),
    )


@router.get(
    "/runs/{run_id}/rows",
    response_model=RowList,
    responses={
        **_NOT_FOUND,
        400: {"model": ErrorBody, "description": "A filter names no field or column"},
    },
    summary="The analysed rows, filtered by field (`sentiment=negative`) or metadata "
    "column (`meta.channel=app`), a page at a time",
)
def list_rows(
    request: Request,
    run_id: RunId,
    page: PageNumber = 1,
    limit: int = Query(50, ge=1, le=500),
) -> RowList:
    ui = ui_context(request)
    run = _run(ui, run_id)
    declared = declared_row_fields(run.plugin)
    if not declared:
        raise HTTPException(404, f"plugin {run.plugin!r} declares no fields that describe rows")
    workspace = Path(ui.files_of(run).workspace)
    try:
        index = ui.evidence.index(workspace)
        table = ui.analysed.table(workspace, declared[0])
        filters = split_filters(request.query_params, table, index, ("page", "limit"))
    except (EvidenceUnavailable, AnalysisUnavailable) as error:
        raise HTTPException(404, f"run {run_id}: {error}") from None
    except BadFilter as error:
        raise HTTPException(400, str(error)) from None
    listing = rows_page(table, index, filters, page, limit)
    return RowList(
        run_id=run_id,
        artifact=table.fields.artifact,
        fields=list(table.fields.names),
        metadata_columns=list(index.metadata_columns),
        total=listing.total,
        matched=listing.matched,
        page=listing.page,
        pages=listing.pages,
        limit=limit,
        rows=[AnalysedRow(**asdict(row)) for row in listing.rows],
    )


_UPLOAD_FORM: Final = {
    "type": "object",
    "required": ["plugin", "file"],
    "properties": {
        "file": {"type": "string", "format": "binary", "description": "The input file"},
        **{name: {"type": "string", "description": what} for name, what in FIELDS.items()},
    },
}


@router.post(
    "/runs",
    status_code=202,
    response_model=StartedRun,
    responses={
        413: {"model": ErrorBody, "description": "The upload is over the size limit"},
        415: {"model": ErrorBody, "description": "The file is not of an accepted type"},
        422: {
            "model": ErrorBody,
            "description": "A field is missing or not acceptable (a model whose provider has "
            "no credentials here, say)",
        },
        429: {
            "model": ErrorBody,
            "description": "As many runs as the server starts at once are still going; "
            "`Retry-After` says when to try again",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        },
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": _UPLOAD_FORM}},
        }
    },
    summary="Start a run on an uploaded file (csv, tsv, tab, txt, xlsx)",
)
async def start_run(request: Request, response: Response) -> StartedRun:
    ui = ui_context(request)
    # The pages' own requests come from a browser on this origin; anything else is a client.
    origin: Origin = "ui" if request.headers.get("sec-fetch-site") == "same-origin" else "api"
    run_id = await ui.launcher.start(request, origin)
    response.headers["location"] = f"/api/runs/{run_id}"
    return StartedRun(run_id=run_id, url=f"/runs/{run_id}")


@router.post(
    "/runs/{run_id}/cancel",
    status_code=202,
    response_model=RunSummary,
    responses={
        **_NOT_FOUND,
        409: {"model": ErrorBody, "description": "The run has already ended"},
    },
    summary="Ask a run to stop",
)
def cancel_run(request: Request, run_id: RunId) -> RunSummary:
    return ui_context(request).launcher.cancel(run_id)


@router.get("/plugins", response_model=PluginList, tags=["plugins"], summary="Installed plugins")
def list_plugins(request: Request) -> PluginList:
    from runlens.models.registry import known_providers

    ui = ui_context(request)
    providers = [
        name for name in known_providers() if name != "scripted" or ui.config.allow_scripted_models
    ]
    return PluginList(plugins=list(_plugins()), model_providers=providers)


@lru_cache(maxsize=1)
def _plugins() -> tuple[PluginInfo, ...]:
    """The installed plugins, loaded once per server process (entry points do not change)."""
    from runlens.kit.listing import contract_row, installed_plugins

    return tuple(
        PluginInfo(
            name=entry.name,
            description=entry.plugin.description if entry.plugin else None,
            version=entry.version,
            error=entry.error,
            offline_model=entry.plugin is not None and entry.plugin.offline_model is not None,
            contracts=[
                ContractInfo.model_validate(contract_row(contract))
                for contract in (entry.plugin.contracts if entry.plugin else ())
            ],
        )
        for entry in installed_plugins()
    )


__all__ = ["router"]
