"""`runlens runs` and `runlens show RUN`: past runs, and one run's story."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

_STYLE = {"completed": "green", "failed": "red", "cancelled": "yellow"}


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
    """List past runs, newest first."""
    import json

    from rich.console import Console
    from rich.table import Table

    from runlens.records.store import list_runs, runs_home

    records = list_runs(home)[:limit]
    if as_json:
        click.echo(json.dumps([_summary(r) for r in records], ensure_ascii=False, indent=2))
        return
    console = Console()
    if not records:
        console.print(f"No runs in {runs_home(home)}")
        return
    table = Table("run", "status", "plugin", "model", "created", "findings")
    for record in records:
        status = str(record.get("status"))
        findings = sum((record.get("metrics") or {}).get("findings_by_code", {}).values())
        table.add_row(
            record.get("run_id"),
            f"[{_STYLE.get(status, 'cyan')}]{status}[/]",
            record.get("plugin"),
            record.get("model"),
            str(record.get("created_at", ""))[:19],
            str(findings),
        )
    console.print(table)


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "run_id",
        "status",
        "plugin",
        "model",
        "created_at",
        "finished_at",
        "error_message",
        "workspace",
    )
    return {key: record.get(key) for key in keys}


@click.command("show")
@click.argument("run")
@click.option("--home", type=click.Path(path_type=Path), default=None)
@click.option(
    "--events/--no-events", default=True, show_default=True, help="Print the event timeline."
)
@click.option("--json", "as_json", is_flag=True)
def show_command(run: str, home: Path | None, events: bool, as_json: bool) -> None:
    """Show RUN (a run id or a workspace path): status, plan, findings and events."""
    import json

    from rich.console import Console

    from runlens.cli.common import exit_on_user_error
    from runlens.records.events import read_events
    from runlens.records.store import find_workspace, read_run_record

    workspace = exit_on_user_error()(find_workspace)(run, home)
    record = exit_on_user_error()(read_run_record)(workspace)
    manifest_path = workspace / "manifest.json"
    manifest = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    )
    timeline = list(read_events(workspace / "runtime" / "events.jsonl"))
    if as_json:
        click.echo(
            json.dumps(
                {"run": record, "manifest": manifest, "events": timeline},
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    console = Console()
    _print_header(console, record, workspace)
    _print_plan(console, record)
    _print_artifacts(console, manifest)
    if events:
        _print_timeline(console, timeline)


def _print_header(console: Any, record: dict[str, Any], workspace: Path) -> None:
    status = str(record.get("status"))
    console.print(
        f"[bold]{record.get('run_id')}[/]  [{_STYLE.get(status, 'cyan')}]"
        f"{status}[/]  {record.get('plugin')} · {record.get('model')}",
        highlight=False,
    )
    if record.get("error_message"):
        console.print(f"[red]{record['error_message']}[/]", highlight=False)
    console.print(f"workspace: {workspace}", highlight=False)


def _print_plan(console: Any, record: dict[str, Any]) -> None:
    icons = {
        "completed": "[green]✓[/]",
        "failed": "[red]✗[/]",
        "running": "[cyan]…[/]",
        "pending": "[dim]○[/]",
    }
    console.print("\n[bold]Plan[/]")
    for step in record.get("plan", []):
        console.print(
            f"  {icons.get(step['status'], '?')} {step['title']} "
            f"[dim]({', '.join(step.get('success_criteria', []))})[/]",
            highlight=False,
        )


def _print_artifacts(console: Any, manifest: dict[str, Any]) -> None:
    from rich.table import Table

    if not manifest.get("artifacts"):
        return
    table = Table("artifact", "status", "findings", title="Artifacts", title_justify="left")
    for artifact in manifest["artifacts"]:
        status = artifact["status"]
        style = {"validated": "green", "rejected": "red", "missing": "red"}.get(status, "yellow")
        lines = [
            f"{f['path'] or '(file)'} [{f['code']}] {f['message']}"
            for f in artifact.get("findings", [])
        ]
        table.add_row(
            f"{artifact['label']}\n[dim]{artifact['name']}[/]",
            f"[{style}]{status}[/]",
            "\n".join(lines) or "-",
        )
    console.print(table)


def _describe(event: dict[str, Any]) -> str:
    data = event.get("data", {})
    kind = event.get("type")
    if kind == "tool.called":
        return f"{data.get('name')}({', '.join(map(str, (data.get('arguments') or {}).keys()))})"
    if kind == "tool.failed":
        return f"{data.get('name')}: {data.get('error')}"
    if kind == "tool.completed":
        return f"{data.get('name')} ({data.get('duration_ms')} ms)"
    if kind == "model.called":
        calls = ", ".join(data.get("tool_calls") or []) or "final answer"
        return f"turn {data.get('turn')} → {calls} ({data.get('duration_ms')} ms)"
    if kind == "plan.step.updated":
        return f"{data.get('step_id')} → {data.get('status')}"
    if kind in ("artifact.validated", "artifact.rejected"):
        return f"{data.get('artifact')} {', '.join(data.get('finding_codes') or [])}".strip()
    if kind == "validator.completed":
        return f"{data.get('validator')}: {data.get('summary') or 'passed'}"
    if kind in ("run.failed", "hook.blocked"):
        return str(data.get("error_message") or data.get("reason") or "")
    return ", ".join(f"{k}={v}" for k, v in data.items() if not isinstance(v, (dict, list)))


def _print_timeline(console: Any, timeline: list[dict[str, Any]]) -> None:
    console.print("\n[bold]Events[/]")
    for event in timeline:
        kind = str(event.get("type"))
        style = "red" if kind.endswith(("failed", "rejected", "blocked")) else "dim"
        console.print(
            f"  {event.get('seq'):>4} {str(event.get('ts'))[11:23]} "
            f"[{style}]{kind:<20}[/] {_describe(event)}",
            highlight=False,
            soft_wrap=True,
        )
