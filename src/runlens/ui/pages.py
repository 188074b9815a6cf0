"""The HTML pages of `runlens ui` (SPEC section 14), rendered on the server with Jinja2.

Each route reads the run store (`request.app.state.ui.store`) for runs, findings and
citations, hands what it shows to `runlens.ui.views` (deliverables read through
`runlens.ui.files`, rendered by `markdown` and `json_view`) and source rows to
`runlens.ui.evidence`, and renders a template. Files are read where `UIContext.files_of`
says: the run's workspace on this machine, else the store's copy of its files. Templates
escape everything (autoescape on); the only markup inserted unescaped is what `markdown` and
`json_view` build, which escape every string of the deliverable themselves. No page has an
inline script or style: `static/app.js` reads what it needs from `data-*` attributes.

An ended run's page also shows its signed verdict and source lock (`runlens.ui.verdicts`)
and, with `?drift=<upload id>`, a newer input's comparison and stale claims
(`runlens.ui.drift`); the reader view takes the same parameter to mark the stale citations.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

from runlens.errors import UserError
from runlens.store.rows import STORE_STATUSES, RunDetail, RunSummary, duration
from runlens.ui.analysed import (
    METADATA_PREFIX,
    AnalysisUnavailable,
    BadFilter,
    declared_row_fields,
    rows_page,
    split_filters,
)
from runlens.ui.compare import compare_runs, contract_id_fields
from runlens.ui.context import ui_context
from runlens.ui.drift import DriftUnavailable, DriftView
from runlens.ui.evidence import EvidenceUnavailable
from runlens.ui.integrity import ChangedArtifact, changed_artifacts
from runlens.ui.params import ArtifactName, PageNumber, RowId, RunId, Text
from runlens.ui.reviewing import (
    MARKS,
    REVIEW_STATES,
    ReviewView,
    claims_of,
    corrections_for,
    corrections_of,
    review_state_of,
    review_view,
    signed_in,
)
from runlens.ui.verdicts import source_panel, verdict_panel
from runlens.ui.views import (
    VERDICT_TEXTS,
    artifact_bytes,
    artifact_url,
    citation_href,
    compact_json,
    evidence_url,
    finding_location,
    format_time,
    group_findings,
    is_live,
    marked_segments,
    model_label,
    raw_url,
    reader_artifacts,
    render_artifact,
    rows_url,
    run_url,
    shown_plan,
    summarize_event,
    verdict_text,
)

if TYPE_CHECKING:
    from runlens.review.entries import ReviewEntry
    from runlens.store.db import RunStore

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 25
#: How many of a run's latest events its page shows (the API has them all).
EVENTS_SHOWN = 300
#: How many row ids of each kind (added, removed, changed) a drift panel lists.
DRIFT_IDS_SHOWN = 200


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("runlens.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals.update(
        run_url=run_url,
        artifact_url=artifact_url,
        raw_url=raw_url,
        evidence_url=evidence_url,
        rows_url=rows_url,
        describes_rows=lambda plugin: bool(declared_row_fields(plugin)),
        is_live=is_live,
        verdict_text=verdict_text,
        verdict_texts=VERDICT_TEXTS,
        shown_plan=shown_plan,
        review_state=review_state_of,
        review_states=REVIEW_STATES,
        marks=MARKS,
    )
    environment.filters.update(
        when=format_time,
        duration=duration,
        compact=compact_json,
        model_label=model_label,
    )
    return environment


_TEMPLATES = _environment()


# -- the request's context --------------------------------------------------------------------


def _store(request: Request, *, refresh: bool = False) -> RunStore:
    """The run store; `refresh` first brings the live runs up to date (throttled), so a run
    whose process died shows `interrupted` rather than `running` forever."""
    ui = ui_context(request)
    if refresh:
        ui.refresh_live()
    return ui.store


def render(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """The page `template` rendered with `context` (autoescaped)."""
    html = _TEMPLATES.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status_code)


_render = render


def _changes(request: Request, run: RunDetail) -> list[ChangedArtifact]:
    """The run's deliverables whose files are not the bytes its validation judged."""
    return changed_artifacts(ui_context(request).files_of(run))


def _not_found(message: str) -> HTMLResponse:
    return _render("error.html", status_code=404, title="Not found", message=message)


def _find_run(request: Request, text: str, *, refresh: bool = False) -> RunDetail | str:
    """The run `text` names (its id or a unique part of it), or why there is none."""
    store = _store(request, refresh=refresh)
    try:
        run = store.get_run(store.resolve_run(text))
    except UserError as error:
        return str(error)
    return run if run is not None else f"no run {text!r}"


def _run_page(
    request: Request, asked: str, suffix: str = "", *, refresh: bool = False
) -> RunDetail | Response:
    """The run a page's URL names, or the answer instead of the page: a 404 page when there
    is no such run, a redirect to the full id (with the page's `suffix`) for a unique part."""
    run = _find_run(request, asked, refresh=refresh)
    if isinstance(run, str):
        return _not_found(run)
    if run.run_id != asked:
        return RedirectResponse(run_url(run.run_id) + suffix, status_code=307)
    return run


# -- the runs list ----------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def runs_page(
    request: Request,
    status: Text = "",
    plugin: Text = "",
    model: Text = "",
    q: Text = "",
    page: PageNumber = 1,
    review: Text = "",
) -> HTMLResponse:
    """Every run, newest first, filtered by status, plugin, model, review state and a text
    search."""
    store = _store(request, refresh=True)
    page = max(page, 1)
    runs, total = store.list_runs(
        status=status or None,
        plugin=plugin or None,
        model=model or None,
        query=q or None,
        limit=PAGE_SIZE,
        offset=(page - 1) * PAGE_SIZE,
        review_state=review or None,
    )
    filters = {"status": status, "plugin": plugin, "model": model, "q": q, "review": review}
    pages = max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1)

    def page_url(number: int) -> str:
        kept = {k: v for k, v in filters.items() if v}
        return "/?" + urlencode({**kept, "page": number})

    return _render(
        "runs.html",
        title="Runs",
        runs=runs,
        total=total,
        filters=filters,
        statuses=STORE_STATUSES,
        plugins=store.distinct_values("plugin"),
        models=store.distinct_values("model"),
        page=page,
        pages=pages,
        previous_url=page_url(page - 1) if page > 1 else None,
        next_url=page_url(page + 1) if page < pages else None,
        live=any(is_live(run) for run in runs),
    )


# -- one run ----------------------------------------------------------------------------------


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: RunId, drift: Text = "") -> Response:
    """A run: verdict, signature and source lock, plan, artifacts, findings at their places,
    events (live while it runs); with `drift=<upload id>`, a newer input's comparison and the
    claims it makes stale."""
    suffix = f"?{urlencode({'drift': drift})}" if drift else ""
    run = _run_page(request, run_id, suffix, refresh=True)
    if isinstance(run, Response):
        return run
    store = _store(request)
    first_seq = max(run.last_seq - EVENTS_SHOWN, 0)
    events = store.events(run.run_id, after_seq=first_seq)
    changes = _changes(request, run)
    ui = ui_context(request)
    workspace = Path(ui.files_of(run).workspace)
    drift_view, drift_problem = _drift(request, run, drift)
    return _render(
        "run.html",
        title=f"Run {run.run_id}",
        run=run,
        signature=verdict_panel(workspace, ui.home) if run.is_terminal else None,
        source=source_panel(workspace, ended=run.is_terminal),
        drift=drift_view,
        drift_problem=drift_problem,
        drift_limit=DRIFT_IDS_SHOWN,
        changes=changes,
        changed_names={change.name for change in changes},
        groups=group_findings(run),
        finding_location=finding_location,
        events=events,
        events_hidden=first_seq,
        last_seq=events[-1]["seq"] if events else run.last_seq,
        summarize=summarize_event,
        previous=previous_run(store, run),
        review=review_view(ui, run) if run.is_terminal else None,
        reviewer=signed_in(request),
    )


def _drift(request: Request, run: RunDetail, upload_id: str) -> tuple[DriftView | None, str | None]:
    """The comparison the page was asked to show (`?drift=<upload id>`), or why there is none."""
    if not upload_id:
        return None, None
    ui = ui_context(request)
    try:
        workspace = Path(ui.files_of(run).workspace)
        return ui.drift.compare(ui.home, run.run_id, workspace, upload_id), None
    except DriftUnavailable as error:
        return None, str(error)


def previous_run(store: RunStore, run: RunSummary) -> RunSummary | None:
    """The latest earlier run of the same plugin on an input of the same name (what a
    comparison most often wants), among that plugin's recent runs."""
    recent, _ = store.list_runs(plugin=run.plugin, limit=100)
    return next(
        (
            other
            for other in recent
            if other.run_id != run.run_id
            and other.input_name == run.input_name
            and (other.created_at or "") < (run.created_at or "")
        ),
        None,
    )


# -- an artifact ------------------------------------------------------------------------------


@router.get("/runs/{run_id}/artifacts/{name:path}", response_class=HTMLResponse)
def artifact_page(request: Request, run_id: RunId, name: ArtifactName) -> Response:
    """One deliverable, rendered, with its findings marked where they point."""
    run = _run_page(request, run_id, f"/artifacts/{quote(name, safe='/')}")
    if isinstance(run, Response):
        return run
    row = next((a for a in run.artifacts if a.name == name), None)
    if row is None:
        return _not_found(f"run {run.run_id} has no deliverable {name!r}")
    citations = _store(request).citations(run.run_id, artifact=name)
    files = ui_context(request).files_of(run)
    return _render(
        "artifact.html",
        title=f"{row.label or row.name} · {run.run_id}",
        run=run,
        artifact=render_artifact(files, row, citations),
        changes=changed_artifacts(files),
        findings=[f for f in run.findings if f.artifact == name],
        finding_location=finding_location,
        citations=citations,
    )


# -- the reader view --------------------------------------------------------------------------


@router.get("/runs/{run_id}/report", response_class=HTMLResponse)
def report_page(request: Request, run_id: RunId, drift: Text = "") -> Response:
    """The reader's view: the verdict, then the user-facing deliverables, every quote linked;
    with `drift=<upload id>`, the quotes citing rows a newer input changed marked stale and
    the other stale claims listed with their location."""
    suffix = f"?{urlencode({'drift': drift})}" if drift else ""
    run = _run_page(request, run_id, "/report" + suffix)
    if isinstance(run, Response):
        return run
    store = _store(request)
    files = ui_context(request).files_of(run)
    drift_view, drift_problem = _drift(request, run, drift)
    shown = reader_artifacts(run)
    cited = {row.name: store.citations(run.run_id, artifact=row.name) for row in shown}
    rendered = [
        render_artifact(
            files,
            row,
            cited[row.name],
            readable=True,
            stale=drift_view.stale_rows(row.name) if drift_view else None,
        )
        for row in shown
    ]
    ui = ui_context(request)
    reviewer = signed_in(request)
    review = review_view(ui, run) if run.is_terminal else None
    corrections = corrections_for(run.plugin, Path(files.workspace)) if reviewer and review else {}
    claims = {name: claims_of(name, citations) for name, citations in cited.items()}
    return _render(
        "report.html",
        title=f"Report · {run.run_id}",
        run=run,
        artifacts=rendered,
        changes=changed_artifacts(files),
        drift=drift_view,
        drift_problem=drift_problem,
        drift_limit=DRIFT_IDS_SHOWN,
        review=review,
        reviewer=reviewer,
        claims=claims,
        corrections=lambda name: corrections_of(corrections, name),
        back=f"{run_url(run.run_id)}/report",
    )


# -- one evidence row -------------------------------------------------------------------------


@router.get("/runs/{run_id}/evidence/{row_id:path}", response_class=HTMLResponse)
def evidence_page(request: Request, run_id: RunId, row_id: RowId) -> Response:
    """One source row whole, every quote that cites it in `<mark>`, and every citation of it."""
    run = _run_page(request, run_id, f"/evidence/{quote(row_id, safe='')}")
    if isinstance(run, Response):
        return run
    citations = _store(request).citations(run.run_id, row_id=row_id)
    try:
        ui = ui_context(request)
        row = ui.evidence.row(Path(ui.files_of(run).workspace), row_id)
    except EvidenceUnavailable as error:
        return _render(
            "evidence.html",
            status_code=404 if error.missing else 500,
            title=f"Row {row_id} · {run.run_id}",
            run=run,
            row_id=row_id,
            row=None,
            problem=str(error),
            changes=_changes(request, run),
            segments=[],
            citations=citations,
            labels={a.name: a.label or a.name for a in run.artifacts},
            citation_href=lambda c: citation_href(run, c),
        )
    spans = [
        (c.start, c.end)
        for c in citations
        if c.status == "verified" and c.start is not None and c.end is not None
    ]
    workspace = Path(ui.files_of(run).workspace)
    return _render(
        "evidence.html",
        title=f"Row {row_id} · {run.run_id}",
        run=run,
        row_id=row_id,
        row=row,
        problem=None,
        changes=_changes(request, run),
        analyses=ui.analysed.analyses(workspace, run.plugin, row_id),
        described=bool(declared_row_fields(run.plugin)),
        segments=marked_segments(row.text, spans),
        citations=citations,
        labels={a.name: a.label or a.name for a in run.artifacts},
        citation_href=lambda c: citation_href(run, c),
    )


# -- the analysed rows ------------------------------------------------------------------------

#: Rows a page of the rows page shows.
ROWS_PAGE_SIZE = 50


@router.get("/runs/{run_id}/rows", response_class=HTMLResponse)
def rows_page_view(
    request: Request, run_id: RunId, page: PageNumber = 1, mark: Text = ""
) -> Response:
    """The rows the run analysed, with what its deliverable says of each and their metadata,
    filtered by a GET form (fields, metadata columns, and the marks reviewers gave the claims
    citing a row: `mark=wrong`) and paged on the server."""
    run = _run_page(request, run_id, "/rows")
    if isinstance(run, Response):
        return run
    declared = declared_row_fields(run.plugin)
    context: dict[str, Any] = {
        "title": f"Rows · {run.run_id}",
        "run": run,
        "changes": _changes(request, run),
    }
    if not declared:
        problem = f"plugin {run.plugin!r} declares no fields that describe its rows"
        return _render("rows.html", 404, problem=problem, **context)
    ui = ui_context(request)
    workspace = Path(ui.files_of(run).workspace)
    try:
        index = ui.evidence.index(workspace)
        table = ui.analysed.table(workspace, declared[0])
        filters = split_filters(request.query_params, table, index, reserved=("page", "mark"))
    except (EvidenceUnavailable, AnalysisUnavailable) as error:
        return _render("rows.html", 404, problem=str(error), **context)
    except BadFilter as error:
        return _render("rows.html", 400, problem=str(error), **context)
    if mark and mark not in MARKS:
        problem = f"cannot filter by mark {mark!r}; marks: {', '.join(MARKS)}"
        return _render("rows.html", 400, problem=problem, **context)
    review = review_view(ui, run) if mark else None
    only = marked_rows(review, mark) if review is not None else None
    chosen = {**filters[0], **{METADATA_PREFIX + k: v for k, v in filters[1].items()}}
    if mark:
        chosen["mark"] = mark
    return _render(
        "rows.html",
        problem=None,
        table=table,
        metadata_columns=index.metadata_columns,
        chosen=chosen,
        mark=mark,
        row_marks=marks_by_row(review, mark) if review is not None else {},
        review_problem=review.problem if review is not None else None,
        listing=rows_page(table, index, filters, page, ROWS_PAGE_SIZE, only=only),
        page_url=lambda number: rows_url(run.run_id, **chosen, page=str(number)),
        **context,
    )


def marked_rows(review: ReviewView, mark: str) -> frozenset[str]:
    """The rows cited by a claim whose latest mark by some reviewer is `mark`."""
    return frozenset(
        entry.row_id or ""
        for entries in review.marks.values()
        for entry in entries
        if entry.mark == mark
    )


def marks_by_row(review: ReviewView, mark: str) -> dict[str, list[ReviewEntry]]:
    """Per row id, the latest marks `mark` of the claims citing it (what the rows page
    shows beside a row when it is filtered by mark)."""
    found: dict[str, list[ReviewEntry]] = {}
    for entries in review.marks.values():
        for entry in entries:
            if entry.mark == mark and entry.row_id:
                found.setdefault(entry.row_id, []).append(entry)
    return found


# -- compare ----------------------------------------------------------------------------------


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, a: Text = "", b: Text = "") -> HTMLResponse:
    """Two runs of one plugin side by side: what changed in their deliverables and findings."""
    store = _store(request)
    recent, _ = store.list_runs(limit=100)
    context: dict[str, Any] = {"title": "Compare runs", "a": a, "b": b, "recent": recent}
    if not a or not b:
        return _render("compare.html", comparison=None, problem=None, **context)
    runs: list[RunDetail] = []
    for asked in (a, b):
        found = _find_run(request, asked)
        if isinstance(found, str):
            return _render("compare.html", 404, comparison=None, problem=found, **context)
        runs.append(ui_context(request).files_of(found))
    try:
        comparison = compare_runs(
            runs[0], runs[1], read=artifact_bytes, id_fields=contract_id_fields(runs[0].plugin)
        )
    except UserError as error:
        return _render("compare.html", 400, comparison=None, problem=str(error), **context)
    return _render("compare.html", comparison=comparison, problem=None, **context)


# -- start a run ------------------------------------------------------------------------------


@router.get("/new", response_class=HTMLResponse)
def new_page(request: Request) -> HTMLResponse:
    """The form that uploads an input and starts a run (`POST /api/runs`)."""
    from runlens.kit.listing import installed_plugins

    plugins = [p for p in installed_plugins() if p.plugin is not None]
    return _render("new.html", title="New run", plugins=plugins)
