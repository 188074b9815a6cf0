"""`runlens show RUN`: one run's story, from its workspace (the record of truth) when it is on
this machine, else from what the run store holds.

Damaged records are reported by name and the rest is shown (`runlens.records.readers`);
files changed since the run are reported too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from runlens.cli.common import json_text
from runlens.cli.run import database_url_option
from runlens.cli.runs import STATUS_STYLE, catch_up, markup_safe, review_markup, run_store
from runlens.tools.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from runlens.records.plain import PlainEvent, PlainManifest, PlainRunRecord
    from runlens.records.readers import EventView, ManifestView, RunRecordView
    from runlens.store.db import RunStore
    from runlens.store.listing import ListedDetail
    from runlens.store.rows import RunDetail

    #: A record as `show` prints it: read whole (`runlens.records.plain`), or as a view.
    Record = RunRecordView | PlainRunRecord
    Manifest = ManifestView | PlainManifest
    Event = EventView | PlainEvent
    #: A run as the store gives it: plain while it is read through `sqlite3`.
    Detail = RunDetail | ListedDetail


@click.command("show")
@click.argument("run")
@click.option("--home", type=click.Path(path_type=Path), default=None)
@database_url_option
@click.option(
    "--events/--no-events", default=True, show_default=True, help="Print the event timeline."
)
@click.option("--json", "as_json", is_flag=True)
def show_command(
    run: str, home: Path | None, database_url: str | None, events: bool, as_json: bool
) -> None:
    """Show RUN: status, plan, artifacts, findings and events.

    RUN is a workspace path, a run id, or a unique prefix or suffix of one (`runlens show
    0a23ec`), looked up in the run store (a workspace path is synced into it first). Damaged
    records are reported by name and the rest is shown; files changed since the run are
    reported too. A run whose workspace is not on this machine (a worker's run on another
    one, say) is shown from the store. `--json` gives the artifacts' sha256 by name
    (`artifact_hashes`) and the worker that ran it (`worker`).
    """

    from rich.console import Console

    from runlens.cli.common import usage_errors
    from runlens.cli.render import render_defect
    from runlens.runtime.recovery import workspace_changes

    with run_store(database_url, home, read_first=True) as store:
        with usage_errors():
            workspace, detail, notes = locate_run(store, run, home)
        stored_events = store.events(detail.run_id) if workspace is None else []
    record: Record
    manifest: Manifest | None
    timeline: Sequence[Event]
    whole = None if workspace is None or as_json else read_ended_run(workspace)
    if workspace is not None:
        shown = whole or _read_run(workspace, settle=detail.worker is None)
        record, manifest, problems, timeline = shown
        problems[:0] = notes
        changes = workspace_changes(workspace, record, manifest)
    else:
        record, manifest, timeline = _stored_run(detail, stored_events)
        problems = [
            *detail.problems,
            f"workspace {detail.workspace} is not on this machine: shown from the run store",
        ]
        changes = []
    if manifest is None:
        from runlens.records.readers import ManifestView

        manifest = ManifestView()
    fields = whole[0].raw if whole is not None else cast("RunRecordView", record).encode()
    defect = None if changes else _defect(fields, manifest)
    if as_json:  # read through the views: `encode` gives each record as JSON
        record = cast("RunRecordView", record)
        manifest = cast("ManifestView", manifest)
        timeline = cast("list[EventView]", timeline)
        click.echo(
            json_text(
                {
                    "run": record.encode(),
                    "review_state": detail.review_state,
                    "submitted_by": detail.submitted_by,
                    "rerun_of": detail.rerun_of,
                    "reruns": detail.reruns,
                    "worker": detail.worker,
                    "manifest": manifest.encode(),
                    "artifact_hashes": _artifact_hashes(manifest),
                    "events": [event.encode() for event in timeline],
                    "problems": problems,
                    "changed_since_run": changes,
                    "defect": defect,
                },
            )
        )
        return
    shown_at = workspace if workspace is not None else Path(detail.workspace)
    console = Console()
    _print_header(console, record, shown_at, detail)
    for line in problems:
        console.print(f"[red]damaged record[/] {markup_safe(line)}", highlight=False)
    for line in changes:
        console.print(f"[red]changed since the run[/] {markup_safe(line)}", highlight=False)
    if changes:
        console.print(
            "[red]The deliverables no longer match this run's verdict:[/] run "
            "`runlens validate` on the workspace to judge them as they are now.",
            highlight=False,
        )
    _print_source_lock(console, record)
    _print_plan(console, record)
    _print_artifacts(console, manifest)
    _print_run_findings(console, manifest)
    render_defect(console, defect)
    if events:
        _print_timeline(console, timeline)


def read_ended_run(
    workspace: Path,
) -> tuple[PlainRunRecord, PlainManifest | None, list[str], list[PlainEvent]] | None:
    """An ended run's records read whole (`runlens.records.plain`): its record, its manifest
    (None when there is none), the problems of the files that cannot be read, and its
    events; what `_read_run` gives of it. None when the run has not ended, or a record is
    not whole, or the event log is missing: `_read_run` then reads it (and names what is
    damaged)."""
    from runlens.records.eventlog import read_event_log
    from runlens.records.io import read_json_object
    from runlens.records.plain import PlainEvent, PlainManifest, PlainRunRecord
    from runlens.records.status import is_live

    raw, _ = read_json_object(workspace / Workspace.RUN_RECORD, Workspace.RUN_RECORD)
    record = PlainRunRecord.whole(raw)
    if record is None or record.run_id is None or is_live(record.status):
        return None
    raw, problem = read_json_object(workspace / Workspace.MANIFEST, Workspace.MANIFEST)
    manifest = PlainManifest.whole(raw)
    if raw is not None and manifest is None:
        return None
    if not (workspace / Workspace.EVENTS).is_file():
        return None
    logged, problems = read_event_log(workspace / Workspace.EVENTS)
    events = [PlainEvent.whole(event) for event in logged]
    if any(event is None for event in events):
        return None
    problems[:0] = [problem] if problem else []
    return record, manifest, problems, cast("list[PlainEvent]", events)


def _read_run(
    workspace: Path, *, settle: bool
) -> tuple[RunRecordView, ManifestView | None, list[str], list[EventView]]:
    """A run's records read through the views (`runlens.records.readers`), whatever their
    state: its record, its manifest, the problems and damaged keys of its files, its events."""
    from runlens.records.readers import read_events, read_manifest
    from runlens.runtime.recovery import load_run
    from runlens.store.sync import missing_events

    # A live run's record is brought up to date from its events; one whose process died
    # is settled, unless a worker holds it (another worker resumes it, perhaps here).
    view = load_run(workspace, settle=settle)
    read = read_manifest(workspace / Workspace.MANIFEST)
    problems = [*view.problems, *read.problems, *read.damaged]
    logged = read_events(workspace / Workspace.EVENTS)
    problems.extend(logged.problems or missing_events(workspace))
    problems.extend(logged.damaged)
    return view.record, read.view, problems, logged.events


def _stored_run(
    detail: Detail, stored_events: Sequence[Mapping[str, Any]]
) -> tuple[RunRecordView, ManifestView, list[EventView]]:
    """What the store holds of a run whose workspace is not on this machine: its record,
    its manifest and its events."""
    from runlens.records.readers import event_views
    from runlens.sourcelock.render import lock_from_events

    record, manifest = _stored_record(detail), _stored_manifest(detail)
    timeline, _ = event_views(stored_events)
    record.source_lock = lock_from_events(timeline)
    return record, manifest, timeline


def _defect(record: Mapping[str, Any], manifest: Manifest) -> str | None:
    """The notice that the run's findings (`record`: its JSON object) are RunLens's own
    defect, or None."""
    from runlens.validation.defects import recorded_defect

    findings = [f for a in manifest.artifacts for f in a.findings] + list(manifest.findings)
    return recorded_defect(record, (str(f.code) for f in findings))


def _artifact_hashes(manifest: ManifestView) -> dict[str, str | None]:
    """The manifest's artifacts' sha256 by name (None for one not written)."""
    return {str(entry.name): entry.sha256 for entry in manifest.artifacts}


def locate_run(
    store: RunStore, run: str, home: Path | None
) -> tuple[Path | None, Detail, list[str]]:
    """The run `run` names and its workspace (None when it is not on this machine,
    `runlens.store.sync.local_workspace`), the store brought up to date with it first; and
    what to say of the folder besides. A folder named that is a copy of a run the store
    knows elsewhere (`WorkspaceClash`) is shown as it is, and the store left alone."""
    from runlens.errors import UserError
    from runlens.store.listing import WorkspaceClash

    named = _workspace_named(run, home)
    if named is not None:
        try:
            run_id = _sync(store, named)
        except WorkspaceClash as clash:
            known = store.get_run(clash.run_id)
            if known is None:
                raise
            return named, known, [f"clash: {clash} (shown from this folder)"]
    else:
        catch_up(store, home)
        run_id = store.resolve_run(run)
    detail = store.get_run(run_id) if run_id is not None else None
    if detail is None:
        raise UserError(f"no run {run!r} (looked in the run store {store.url})")
    workspace = _local_workspace(store, detail)
    if workspace is None:
        return None, detail, []
    if named is None or workspace.resolve() != named.resolve():
        _sync(store, workspace)
    return workspace, detail, []


def _sync(store: RunStore, workspace: Path) -> str | None:
    """`sync_workspace(store, workspace, if_changed=True)`, its usual case (`held_ended`)
    answered without loading the sync and the records' views it reads."""
    from runlens.store.listing import held_ended

    run_id = held_ended(store, workspace)
    if run_id is not None:
        return run_id
    from runlens.store.sync import sync_workspace

    return sync_workspace(store, workspace, if_changed=True)


def _local_workspace(store: RunStore, detail: Detail) -> Path | None:
    """`local_workspace(store, detail)`, its usual case (`named_workspace`) answered without
    loading the sync."""
    from runlens.store.listing import named_workspace

    workspace = named_workspace(store, detail)
    if workspace is not None:
        return workspace
    from runlens.store.sync import local_workspace

    return local_workspace(store, detail)


def _workspace_named(run: str, home: Path | None) -> Path | None:
    """The workspace `run` names on disk (a path, or a folder name, prefix or suffix under
    the runs home), as `runlens show` always found them; None when none does. Two folders
    that match are ambiguous, even when one is a copy of the other (same run id)."""
    from runlens.errors import UserError
    from runlens.records.io import find_workspace

    try:
        return find_workspace(run, home)
    except UserError as error:
        if str(error).startswith("no run "):
            return None
        raise


def _stored_record(detail: Detail) -> RunRecordView:
    """What the store holds of a run's `run.json`."""
    from runlens.records.readers import MetricsView, PlanStepView, RunRecordView

    return RunRecordView(
        run_id=detail.run_id,
        plugin=detail.plugin,
        model=detail.model,
        status=detail.status,
        error_message=detail.error_message,
        warnings=detail.warnings,
        input=f"input/{detail.input_name}" if detail.input_name else None,
        plan=[PlanStepView.lenient(step)[0] for step in detail.plan],
        metrics=MetricsView.lenient(detail.metrics)[0],
        created_at=detail.created_at,
        finished_at=detail.finished_at,
        evidence_index_sha256=detail.evidence_index_sha256,
    )


def _stored_manifest(detail: Detail) -> ManifestView:
    """What the store holds of a run's `manifest.json` (its artifacts and their findings,
    and the findings that belong to none of them)."""
    from runlens.records.readers import FindingView, ManifestArtifactView, ManifestView
    from runlens.store.listing import ARTIFACT_FIELDS

    findings: dict[str, list[FindingView]] = {}
    for finding in detail.findings:
        findings.setdefault(finding.artifact, []).append(
            FindingView(
                validator=finding.validator,
                artifact=finding.artifact,
                code=finding.code,
                path=finding.path,
                message=finding.message,
                details=finding.details,
            )
        )
    listed = {artifact.name for artifact in detail.artifacts}
    return ManifestView(
        run_id=detail.run_id,
        status=detail.status,
        artifacts=[
            ManifestArtifactView(
                **{name: getattr(artifact, name) for name in ARTIFACT_FIELDS[:-1]},
                findings=findings.get(artifact.name, []),
            )
            for artifact in detail.artifacts
        ],
        findings=[f for name, own in findings.items() if name not in listed for f in own],
    )


def _print_header(console: Any, record: Record, workspace: Path, detail: Detail) -> None:
    status = record.status or "unknown"
    console.print(
        f"[bold]{markup_safe(str(record.run_id))}[/]  [{STATUS_STYLE.get(status, 'cyan')}]"
        f"{markup_safe(status)}[/]  review: {review_markup(detail.review_state)}  "
        f"{markup_safe(str(record.plugin))} · {markup_safe(str(record.model))}",
        highlight=False,
    )
    if detail.submitted_by:
        console.print(f"submitted by: {markup_safe(detail.submitted_by)}", highlight=False)
    if detail.rerun_of:
        console.print(f"re-runs: {markup_safe(detail.rerun_of)}", highlight=False)
    for rerun in detail.reruns:
        console.print(f"re-run by: {markup_safe(rerun)}", highlight=False)
    if record.error_message:
        console.print(f"[red]{markup_safe(record.error_message)}[/]", highlight=False)
    for warning in record.warnings:
        console.print(f"[yellow]Warning: {markup_safe(warning)}[/]", highlight=False)
    console.print(f"workspace: {markup_safe(str(workspace))}", highlight=False)


def _print_source_lock(console: Any, record: Record) -> None:
    """The source lock (`runlens.sourcelock`): which data the run read, and its reference."""
    from runlens.sourcelock.render import source_lock_lines

    lines = source_lock_lines(record.source_lock)
    if not lines:
        return
    console.print("\n[bold]Source[/]")
    for label, value in lines:
        console.print(f"  {markup_safe(label)}: {markup_safe(value)}", highlight=False)


def _print_plan(console: Any, record: Record) -> None:
    icons = {
        "completed": "[green]✓[/]",
        "failed": "[red]✗[/]",
        "running": "[cyan]…[/]",
        "pending": "[dim]○[/]",
    }
    if not record.plan:
        return
    finished = record.status in ("completed",)
    console.print("\n[bold]Plan[/]")
    for step in record.plan:
        status = str(step.status)
        title = step.title if "title" in step.model_fields_set else step.id
        line = f"  {icons.get(status, '?')} {markup_safe(str(title))}"
        if step.reason:
            line += f" [dim]— {markup_safe(step.reason)}[/]"
        elif status == "pending" and not finished:
            line += " [dim]— not started[/]"
        elif status == "completed":
            line += f" [dim]({markup_safe(', '.join(step.success_criteria))})[/]"
        console.print(line, highlight=False)


def _print_artifacts(console: Any, manifest: Manifest) -> None:
    from rich.table import Table

    if not manifest.artifacts:
        return
    table = Table("artifact", "status", "findings", title="Artifacts", title_justify="left")
    for artifact in manifest.artifacts:
        status = str(artifact.status)
        style = {"validated": "green", "rejected": "red", "missing": "red"}.get(status, "yellow")
        findings = artifact.findings
        if status == "missing" and artifact.required is False and not findings:
            status, style = "missing (optional)", "dim"  # not written, and nothing asked for it
        lines = [markup_safe(f"{f.path or '(file)'} [{f.code}] {f.message}") for f in findings]
        table.add_row(
            f"{markup_safe(artifact.label or '')}\n[dim]{markup_safe(artifact.name or '')}[/]",
            f"[{style}]{markup_safe(status)}[/]",
            "\n".join(lines) or "-",
        )
    console.print(table)


def _print_run_findings(console: Any, manifest: Manifest) -> None:
    """The findings that belong to no deliverable (about the run as a whole, such as a
    validator that crashed), which the artifacts table cannot show."""
    if not manifest.findings:
        return
    console.print("\n[bold]Run findings[/]")
    for finding in manifest.findings:
        where = f"{finding.artifact} " if finding.artifact else ""
        where += f"{finding.path} " if finding.path else ""
        line = f"{where}[{finding.code}] {finding.message}"
        console.print(f"  [red]✗[/] {markup_safe(line)}", highlight=False)


def _describe(event: Event) -> str:
    data = event.data
    if data is None:
        return ""
    kind = event.type
    if kind == "tool.called":
        arguments = data.get("arguments")
        names = ", ".join(map(str, arguments)) if isinstance(arguments, dict) else ""
        return f"{data.get('name')}({names})"
    if kind == "tool.failed":
        return f"{data.get('name')}: {data.get('error')}"
    if kind == "tool.completed":
        return f"{data.get('name')} ({data.get('duration_ms')} ms)"
    if kind == "model.called":
        calls = ", ".join(map(str, data.get("tool_calls") or [])) or "final answer"
        turn = data.get("turn")
        # Batch calls (and other calls a tool makes) belong to no turn of the conversation.
        what = f"turn {turn}" if turn is not None else f"{data.get('purpose') or 'model'} call"
        return f"{what} → {calls} ({data.get('duration_ms')} ms)"
    if kind == "plan.step.updated":
        reason = f" ({data['reason']})" if data.get("reason") else ""
        return f"{data.get('step_id')} → {data.get('status')}{reason}"
    if kind in ("artifact.validated", "artifact.rejected"):
        codes = ", ".join(map(str, data.get("finding_codes") or []))
        return f"{data.get('artifact')} {codes}".strip()
    if kind == "validator.completed":
        return f"{data.get('validator')}: {data.get('summary') or 'passed'}"
    if kind in ("run.failed", "hook.blocked", "run.interrupted", "run.cancelled"):
        return str(data.get("error_message") or data.get("reason") or "")
    if kind == "plugin.event":  # a plugin's own event: its name, then its scalar fields
        inner = data.get("data")
        fields = _scalars(inner) if isinstance(inner, dict) else ""
        return f"{data.get('name')}: {fields}" if fields else str(data.get("name"))
    return _scalars(data)


def _scalars(data: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in data.items() if not isinstance(v, (dict, list)))


def _print_timeline(console: Any, timeline: Sequence[Event]) -> None:
    console.print("\n[bold]Events[/]")
    for event in timeline:
        kind = str(event.type)
        style = "red" if kind.endswith(("failed", "rejected", "blocked", "interrupted")) else "dim"
        seq = event.seq
        console.print(
            f"  {seq if seq is not None else '?':>4} {markup_safe(str(event.ts)[11:23])} "
            f"[{style}]{markup_safe(kind):<20}[/] {markup_safe(_describe(event))}",
            highlight=False,
            soft_wrap=True,
        )
