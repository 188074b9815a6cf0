"""`runlens runs`, `runlens show RUN` and `runlens reindex`: past runs from the run store, one
run's story, and workspaces read (back) into the store.

The store (`runlens.store`) answers the listing and the lookup; workspaces under the runs
home it does not hold yet are indexed on the way, so runs made before the store existed, or
while it could not be reached, are listed all the same. `show` prints from the workspace,
the record of truth, when it is on this machine, else from what the store holds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from runlens.cli.common import UsageFailure, json_text, one_line, terminal_safe
from runlens.cli.run import database_url_option

if TYPE_CHECKING:
    from runlens.store.clashes import WorkspaceClash
    from runlens.store.db import RunStore
    from runlens.store.rows import RunDetail, RunSummary
    from runlens.store.sync import IndexReport


def _safe(value: object) -> str:
    """Recorded text (a model's, a file's) for rich markup: inert markup, no control codes."""
    return escape(terminal_safe(str(value)))


_STYLE = {
    "queued": "blue",
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "interrupted": "magenta",
}


@click.command("runs")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder (default: $RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
@click.option(
    "--status", default=None, help="Only runs in this status (queued, completed, failed, ...)."
)
@click.option("--plugin", default=None, help="Only runs of this plugin.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def runs_command(
    home: Path | None,
    database_url: str | None,
    status: str | None,
    plugin: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List past runs from the run store, newest first.

    Workspaces under the runs home the store does not know yet are indexed on the way. A run
    whose process died (kill -9, a crash) is shown, and recorded, as `interrupted`; a run a
    worker holds is not (another worker resumes it). Runs submitted to the workers and not
    started yet are `queued`.
    """

    from rich.console import Console
    from rich.table import Table

    from runlens.records.store import runs_home
    from runlens.ui.views import duration

    with _store(database_url, home) as store:
        report = _catch_up(store, home)
        summaries, _ = store.list_runs(status=status, plugin=plugin, limit=limit)
    for clash in report.clashes:  # on stderr: the JSON on stdout stays one document
        _print_clash(Console(stderr=as_json), clash)
    if as_json:
        click.echo(json_text([_summary(run) for run in summaries]))
        return
    console = Console()
    if not summaries:
        console.print(f"No runs in {_safe(runs_home(home))}", highlight=False)
        return
    # Ids never wrap nor shrink: they are what `runlens show` takes (or a unique prefix or
    # suffix of one). A run that recorded warnings has `⚠ N` beside its status (the warnings
    # follow the table). At 80 columns the input and the plugin and model give way first.
    rows = [
        (
            terminal_safe(run.run_id),
            terminal_safe(run.status),
            _warnings_mark(run),
            _short_time(run.created_at),
            duration(run),
            str(run.finding_count),
            run.input_name or "",
            f"{run.plugin} · {run.model}",
        )
        for run in summaries
    ]
    status_width = max(len(row[1]) + (len(row[2]) + 1 if row[2] else 0) for row in rows)
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("run", no_wrap=True, min_width=max(len(row[0]) for row in rows))
    table.add_column("status", no_wrap=True, min_width=status_width)
    table.add_column("created", no_wrap=True, min_width=11)
    table.add_column("took", justify="right", no_wrap=True, min_width=7)
    table.add_column("findings", justify="right", no_wrap=True, min_width=8)
    table.add_column("input", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column("plugin · model", no_wrap=True, overflow="ellipsis", ratio=1)
    for run_id, run_status, warned, created, took, findings, input_name, what in rows:
        mark = f" [yellow]{warned}[/]" if warned else ""
        table.add_row(
            escape(run_id),
            f"[{_STYLE.get(run_status, 'cyan')}]{escape(run_status)}[/]{mark}",
            created,
            took,
            findings,
            _safe(input_name),
            _safe(what),
        )
    console.print(table)
    for run in summaries:
        for warning in run.warnings:
            flat = " ".join(warning.split())
            console.print(f"[yellow]warning[/] {_safe(run.run_id)}: {_safe(flat)}", highlight=False)
    for run in summaries:
        for problem in run.problems:
            console.print(
                f"[red]damaged[/] {_safe(Path(run.workspace).name)}: {_safe(problem)}",
                highlight=False,
            )


@contextlib.contextmanager
def _store(database_url: str | None, home: Path | None) -> Iterator[RunStore]:
    """The run store of `--database-url`, else of the environment, else of the runs home; a
    usage error (exit 2) naming the URL when it cannot be opened."""
    from runlens.cli.common import usage_errors
    from runlens.store.db import open_store, store_url

    with usage_errors():
        store = open_store(store_url(database_url, home))
    try:
        yield store
    finally:
        store.close()


def _catch_up(store: RunStore, home: Path | None) -> IndexReport:
    """Index the home's workspaces the store does not hold in their current state, and
    re-read the live runs of this machine (one whose process died is settled)."""
    from runlens.records.store import runs_home
    from runlens.store.sync import index_home, refresh_live

    report = index_home(store, runs_home(home))
    refresh_live(store)
    return report


def _print_clash(console: Any, clash: WorkspaceClash) -> None:
    console.print(
        f"[red]clash[/] {_safe(clash.workspace)} names run {_safe(clash.run_id)}, which the "
        f"run store knows at {_safe(clash.known)}: not indexed (a copy never takes a run over)",
        highlight=False,
        soft_wrap=True,
    )


def _warnings_mark(run: RunSummary) -> str:
    """`⚠ 2` for a run that recorded warnings (listed under the table), else nothing."""
    return f"⚠ {len(run.warnings)}" if run.warnings else ""


def _short_time(value: Any) -> str:
    text = str(value or "")
    return f"{text[5:10]} {text[11:16]}" if len(text) >= 16 else text


def _summary(run: RunSummary) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "run_id": run.run_id,
        "status": run.status,
        "plugin": run.plugin,
        "model": run.model,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "input_name": run.input_name,
        "error_message": run.error_message,
        "warnings": run.warnings,
        "workspace": run.workspace,
        "worker": run.worker,
    }
    if run.problems:
        summary["problems"] = run.problems
    if run.clashes:
        summary["clashes"] = run.clashes
    return summary


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
    from runlens.records.events import read_event_log
    from runlens.records.store import read_json_object
    from runlens.runtime.recovery import load_run, workspace_changes
    from runlens.store.sync import missing_events
    from runlens.tools.workspace import Workspace

    with _store(database_url, home) as store:
        with usage_errors():
            workspace, detail, notes = _locate(store, run, home)
        stored_events = store.events(detail.run_id) if workspace is None else []
    if workspace is not None:
        # A live run's record is brought up to date from its events; one whose process died
        # is settled, unless a worker holds it (another worker resumes it, perhaps here).
        view = load_run(workspace, settle=detail.worker is None)
        record = view.record
        manifest, problem = read_json_object(workspace / Workspace.MANIFEST, Workspace.MANIFEST)
        problems = [*notes, *view.problems, *([problem] if problem else [])]
        timeline, event_problems = read_event_log(workspace / Workspace.EVENTS)
        problems.extend(event_problems or missing_events(workspace))
        changes = workspace_changes(workspace, record, manifest or {})
    else:
        record, manifest, timeline = _stored_record(detail), _stored_manifest(detail), stored_events
        problems = [
            *detail.problems,
            f"workspace {detail.workspace} is not on this machine: shown from the run store",
        ]
        changes = []
    defect = None if changes else _defect(record, manifest or {})
    if as_json:
        click.echo(
            json_text(
                {
                    "run": record,
                    "worker": detail.worker,
                    "manifest": manifest or {},
                    "artifact_hashes": _artifact_hashes(manifest or {}),
                    "events": timeline,
                    "problems": problems,
                    "changed_since_run": changes,
                    "defect": defect,
                },
            )
        )
        return
    shown_at = workspace if workspace is not None else Path(detail.workspace)
    console = Console()
    _print_header(console, record, shown_at)
    for line in problems:
        console.print(f"[red]damaged record[/] {_safe(line)}", highlight=False)
    for line in changes:
        console.print(f"[red]changed since the run[/] {_safe(line)}", highlight=False)
    if changes:
        console.print(
            "[red]The deliverables no longer match this run's verdict:[/] run "
            "`runlens validate` on the workspace to judge them as they are now.",
            highlight=False,
        )
    _print_plan(console, record)
    _print_artifacts(console, manifest or {})
    _print_run_findings(console, manifest or {})
    render_defect(console, defect)
    if events:
        _print_timeline(console, timeline)


def _defect(record: dict[str, Any], manifest: dict[str, Any]) -> str | None:
    """The notice that the run's findings are RunLens's own defect, or None."""
    from runlens.validation.defects import recorded_defect

    artifacts = [a for a in manifest.get("artifacts") or [] if isinstance(a, dict)]
    findings = [f for a in artifacts for f in a.get("findings") or []]
    findings += manifest.get("findings") or []
    return recorded_defect(record, (str(f.get("code")) for f in findings if isinstance(f, dict)))


def _artifact_hashes(manifest: dict[str, Any]) -> dict[str, str | None]:
    """The manifest's artifacts' sha256 by name (None for one not written)."""
    artifacts = manifest.get("artifacts")
    return {
        str(entry.get("name")): entry["sha256"] if isinstance(entry.get("sha256"), str) else None
        for entry in (artifacts if isinstance(artifacts, list) else [])
        if isinstance(entry, dict)
    }


def _locate(
    store: RunStore, run: str, home: Path | None
) -> tuple[Path | None, RunDetail, list[str]]:
    """The run `run` names and its workspace (None when it is not on this machine,
    `runlens.store.sync.local_workspace`), the store brought up to date with it first; and
    what to say of the folder besides. A folder named that is a copy of a run the store
    knows elsewhere (`WorkspaceClash`) is shown as it is, and the store left alone."""
    from runlens.errors import UserError
    from runlens.store.clashes import WorkspaceClash
    from runlens.store.sync import local_workspace, sync_workspace

    named = _workspace_named(run, home)
    if named is not None:
        try:
            run_id = sync_workspace(store, named)
        except WorkspaceClash as clash:
            known = store.get_run(clash.run_id)
            if known is None:
                raise
            return named, known, [f"clash: {clash} (shown from this folder)"]
    else:
        _catch_up(store, home)
        run_id = store.resolve_run(run)
    detail = store.get_run(run_id) if run_id is not None else None
    if detail is None:
        raise UserError(f"no run {run!r} (looked in the run store {store.url})")
    workspace = local_workspace(store, detail)
    if workspace is None:
        return None, detail, []
    if named is None or workspace.resolve() != named.resolve():
        sync_workspace(store, workspace)
    return workspace, detail, []


def _workspace_named(run: str, home: Path | None) -> Path | None:
    """The workspace `run` names on disk (a path, or a folder name, prefix or suffix under
    the runs home), as `runlens show` always found them; None when none does. Two folders
    that match are ambiguous, even when one is a copy of the other (same run id)."""
    from runlens.errors import UserError
    from runlens.records.store import find_workspace

    try:
        return find_workspace(run, home)
    except UserError as error:
        if str(error).startswith("no run "):
            return None
        raise


def _stored_record(detail: RunDetail) -> dict[str, Any]:
    """What the store holds of a run's `run.json`."""
    return {
        "run_id": detail.run_id,
        "plugin": detail.plugin,
        "model": detail.model,
        "status": detail.status,
        "error_message": detail.error_message,
        "warnings": detail.warnings,
        "input": f"input/{detail.input_name}" if detail.input_name else None,
        "plan": detail.plan,
        "metrics": detail.metrics,
        "created_at": detail.created_at,
        "finished_at": detail.finished_at,
        "evidence_index_sha256": detail.evidence_index_sha256,
    }


def _stored_manifest(detail: RunDetail) -> dict[str, Any]:
    """What the store holds of a run's `manifest.json` (its artifacts and their findings,
    and the findings that belong to none of them)."""
    findings: dict[str, list[dict[str, Any]]] = {}
    for finding in detail.findings:
        findings.setdefault(finding.artifact, []).append(
            {
                "validator": finding.validator,
                "artifact": finding.artifact,
                "code": finding.code,
                "path": finding.path,
                "message": finding.message,
                "details": finding.details,
            }
        )
    listed = {artifact.name for artifact in detail.artifacts}
    return {
        "run_id": detail.run_id,
        "status": detail.status,
        "artifacts": [
            {
                **artifact.model_dump(exclude={"finding_count"}),
                "findings": findings.get(artifact.name, []),
            }
            for artifact in detail.artifacts
        ],
        "findings": [f for name, own in findings.items() if name not in listed for f in own],
    }


@click.command("reindex")
@click.argument("workspaces", nargs=-1, type=click.Path(path_type=Path), metavar="[WORKSPACE]...")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder to index (default: $RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
def reindex_command(
    workspaces: tuple[Path, ...], home: Path | None, database_url: str | None
) -> None:
    """Re-read workspaces into the run store: every run under the runs home, or the
    WORKSPACE folders given.

    For runs made before the store existed, or while it could not be reached; the
    workspaces are the record of truth and are only read (a run whose process died is
    settled as `interrupted`, as `runlens runs` does).
    """
    from rich.console import Console

    from runlens.errors import UserError
    from runlens.records.store import runs_home
    from runlens.store.clashes import WorkspaceClash, note_clashes
    from runlens.store.sync import IndexReport, index_home, not_indexed, sync_workspace

    console = Console()
    with _store(database_url, home) as store:
        if workspaces:
            report = IndexReport()
            known = store.sync_states()
            for workspace in workspaces:
                try:
                    run_id = sync_workspace(store, workspace)
                except WorkspaceClash as found:
                    report.clashes.append(found)
                    continue
                except Exception as error:  # named; the other workspaces are read all the same
                    report.damaged.append((workspace, not_indexed(error)))
                    continue
                if run_id is None:
                    raise UsageFailure(
                        one_line(UserError(f"{workspace} is not a run workspace (no run.json)"))
                    )
                (report.updated if run_id in known else report.added).append(run_id)
                detail = store.get_run(run_id)
                for problem in detail.problems if detail is not None else ():
                    report.damaged.append((workspace, problem))
            note_clashes(store, report.clashes)
            where = f"{len(workspaces)} workspace(s)"
        else:
            report = index_home(store, runs_home(home), force=True)
            where = str(runs_home(home))
        console.print(
            f"Indexed {where} into {_safe(store.url)}: {len(report.added)} added, "
            f"{len(report.updated)} updated, {report.unchanged} unchanged"
            f"{f', {len(report.clashes)} clash(es)' if report.clashes else ''}",
            highlight=False,
            soft_wrap=True,  # one line, however long the paths: scripts read it
        )
    for workspace, problem in report.damaged:
        console.print(f"[red]damaged[/] {_safe(workspace.name)}: {_safe(problem)}", highlight=False)
    for clash in report.clashes:
        _print_clash(console, clash)


def _print_header(console: Any, record: dict[str, Any], workspace: Path) -> None:
    status = str(record.get("status", "unknown"))
    console.print(
        f"[bold]{_safe(str(record.get('run_id')))}[/]  [{_STYLE.get(status, 'cyan')}]"
        f"{_safe(status)}[/]  {_safe(str(record.get('plugin')))} · "
        f"{_safe(str(record.get('model')))}",
        highlight=False,
    )
    if record.get("error_message"):
        console.print(f"[red]{_safe(str(record['error_message']))}[/]", highlight=False)
    warnings = record.get("warnings")
    for warning in warnings if isinstance(warnings, list) else ():
        console.print(f"[yellow]Warning: {_safe(str(warning))}[/]", highlight=False)
    console.print(f"workspace: {_safe(str(workspace))}", highlight=False)


def _print_plan(console: Any, record: dict[str, Any]) -> None:
    icons = {
        "completed": "[green]✓[/]",
        "failed": "[red]✗[/]",
        "running": "[cyan]…[/]",
        "pending": "[dim]○[/]",
    }
    plan = record.get("plan")
    steps = [step for step in plan if isinstance(step, dict)] if isinstance(plan, list) else []
    if not steps:
        return
    finished = record.get("status") in ("completed",)
    console.print("\n[bold]Plan[/]")
    for step in steps:
        status = str(step.get("status"))
        line = f"  {icons.get(status, '?')} {_safe(str(step.get('title', step.get('id'))))}"
        if step.get("reason"):
            line += f" [dim]— {_safe(str(step['reason']))}[/]"
        elif status == "pending" and not finished:
            line += " [dim]— not started[/]"
        elif status == "completed":
            criteria = step.get("success_criteria") or []
            line += f" [dim]({_safe(', '.join(map(str, criteria)))})[/]"
        console.print(line, highlight=False)


def _print_artifacts(console: Any, manifest: dict[str, Any]) -> None:
    from rich.table import Table

    artifacts = manifest.get("artifacts")
    entries = [a for a in artifacts if isinstance(a, dict)] if isinstance(artifacts, list) else []
    if not entries:
        return
    table = Table("artifact", "status", "findings", title="Artifacts", title_justify="left")
    for artifact in entries:
        status = str(artifact.get("status"))
        style = {"validated": "green", "rejected": "red", "missing": "red"}.get(status, "yellow")
        findings = artifact.get("findings")
        if status == "missing" and artifact.get("required") is False and not findings:
            status, style = "missing (optional)", "dim"  # not written, and nothing asked for it
        lines = [
            _safe(f"{f.get('path') or '(file)'} [{f.get('code')}] {f.get('message')}")
            for f in (findings if isinstance(findings, list) else [])
            if isinstance(f, dict)
        ]
        table.add_row(
            f"{_safe(artifact.get('label', ''))}\n[dim]{_safe(artifact.get('name', ''))}[/]",
            f"[{style}]{_safe(status)}[/]",
            "\n".join(lines) or "-",
        )
    console.print(table)


def _print_run_findings(console: Any, manifest: dict[str, Any]) -> None:
    """The findings that belong to no deliverable (about the run as a whole, such as a
    validator that crashed), which the artifacts table cannot show."""
    findings = manifest.get("findings")
    entries = [f for f in findings if isinstance(f, dict)] if isinstance(findings, list) else []
    if not entries:
        return
    console.print("\n[bold]Run findings[/]")
    for finding in entries:
        where = f"{finding.get('artifact')} " if finding.get("artifact") else ""
        where += f"{finding.get('path')} " if finding.get("path") else ""
        line = f"{where}[{finding.get('code')}] {finding.get('message')}"
        console.print(f"  [red]✗[/] {_safe(line)}", highlight=False)


def _describe(event: dict[str, Any]) -> str:
    data = event.get("data")
    if not isinstance(data, dict):
        return ""
    kind = event.get("type")
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


def _print_timeline(console: Any, timeline: list[dict[str, Any]]) -> None:
    console.print("\n[bold]Events[/]")
    for event in timeline:
        kind = str(event.get("type"))
        style = "red" if kind.endswith(("failed", "rejected", "blocked", "interrupted")) else "dim"
        seq = event.get("seq")
        console.print(
            f"  {seq if isinstance(seq, int) else '?':>4} {_safe(str(event.get('ts'))[11:23])} "
            f"[{style}]{_safe(kind):<20}[/] {_safe(_describe(event))}",
            highlight=False,
            soft_wrap=True,
        )
