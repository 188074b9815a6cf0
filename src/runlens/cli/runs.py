"""`runlens runs` and `runlens show RUN`: past runs, and one run's story."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from runlens.cli.common import terminal_safe

if TYPE_CHECKING:
    from runlens.runtime.recovery import RunView


def _safe(value: object) -> str:
    """Recorded text (a model's, a file's) for rich markup: inert markup, no control codes."""
    return escape(terminal_safe(str(value)))


_STYLE = {"completed": "green", "failed": "red", "cancelled": "yellow", "interrupted": "magenta"}


@click.command("runs")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder (default: $RUNLENS_HOME or ./runlens-runs).",
)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def runs_command(home: Path | None, limit: int, as_json: bool) -> None:
    """List past runs, newest first.

    A run whose process died (kill -9, a crash) is shown, and recorded, as `interrupted`.
    """
    import json

    from rich.console import Console
    from rich.table import Table

    from runlens.records.store import run_workspaces, runs_home
    from runlens.runtime.recovery import load_run

    views = sorted(
        (load_run(workspace) for workspace in run_workspaces(home)),
        key=lambda view: str(view.record.get("created_at", "")),
        reverse=True,
    )[:limit]
    if as_json:
        click.echo(json.dumps([_summary(view) for view in views], ensure_ascii=False, indent=2))
        return
    console = Console()
    if not views:
        console.print(f"No runs in {runs_home(home)}")
        return
    # Ids never wrap nor shrink: they are what `runlens show` takes (or a unique prefix or
    # suffix of one). At 80 columns the plugin and model column gives way first.
    rows = []
    for view in views:
        record = view.record
        status = "damaged" if view.problems and "status" not in record else view.status
        rows.append(
            (
                terminal_safe(str(record.get("run_id"))),
                status,
                _short_time(record.get("created_at")),
                str(_finding_count(record)),
                f"{record.get('plugin', '?')} · {record.get('model', '?')}",
            )
        )
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("run", no_wrap=True, min_width=max(len(row[0]) for row in rows))
    table.add_column("status", no_wrap=True, min_width=max(len(row[1]) for row in rows))
    table.add_column("created", no_wrap=True, min_width=11)
    table.add_column("findings", justify="right", no_wrap=True, min_width=8)
    table.add_column("plugin · model", no_wrap=True, overflow="ellipsis", ratio=1)
    for run_id, status, created, findings, what in rows:
        table.add_row(
            escape(run_id),
            f"[{_STYLE.get(status, 'cyan')}]{_safe(status)}[/]",
            created,
            findings,
            _safe(what),
        )
    console.print(table)
    for view in views:
        for problem in view.problems:
            console.print(
                f"[red]damaged[/] {_safe(view.workspace.name)}: {_safe(problem)}", highlight=False
            )


def _short_time(value: Any) -> str:
    text = str(value or "")
    return f"{text[5:10]} {text[11:16]}" if len(text) >= 16 else text


def _finding_count(record: dict[str, Any]) -> int:
    metrics = record.get("metrics")
    by_code = metrics.get("findings_by_code") if isinstance(metrics, dict) else None
    if not isinstance(by_code, dict):
        return 0
    return sum(value for value in by_code.values() if isinstance(value, int))


def _summary(view: RunView) -> dict[str, Any]:
    keys = (
        "run_id",
        "status",
        "plugin",
        "model",
        "created_at",
        "finished_at",
        "error_message",
        "warnings",
    )
    summary = {key: view.record.get(key) for key in keys}
    summary["workspace"] = str(view.workspace)
    if view.problems:
        summary["problems"] = view.problems
    return summary


@click.command("show")
@click.argument("run")
@click.option("--home", type=click.Path(path_type=Path), default=None)
@click.option(
    "--events/--no-events", default=True, show_default=True, help="Print the event timeline."
)
@click.option("--json", "as_json", is_flag=True)
def show_command(run: str, home: Path | None, events: bool, as_json: bool) -> None:
    """Show RUN: status, plan, artifacts, findings and events.

    RUN is a workspace path, a run id, or a unique prefix or suffix of one (`runlens show
    0a23ec`). Damaged records are reported by name and the rest is shown; files changed since
    the run are reported too.
    """
    import json

    from rich.console import Console

    from runlens.cli.common import exit_on_user_error
    from runlens.records.events import read_event_log
    from runlens.records.store import find_workspace, read_json_object
    from runlens.runtime.recovery import load_run, workspace_changes
    from runlens.tools.workspace import Workspace

    workspace = exit_on_user_error()(find_workspace)(run, home)
    view = load_run(workspace)  # a live run's record is brought up to date from its events
    manifest, problem = read_json_object(workspace / Workspace.MANIFEST, Workspace.MANIFEST)
    problems = [*view.problems, *([problem] if problem else [])]
    timeline, event_problems = read_event_log(workspace / Workspace.EVENTS)
    problems.extend(event_problems)
    changes = workspace_changes(workspace, view.record, manifest or {})
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run": view.record,
                    "manifest": manifest or {},
                    "events": timeline,
                    "problems": problems,
                    "changed_since_run": changes,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    console = Console()
    _print_header(console, view.record, workspace)
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
    _print_plan(console, view.record)
    _print_artifacts(console, manifest or {})
    if events:
        _print_timeline(console, timeline)


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
