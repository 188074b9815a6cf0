"""`runlens export-trace RUN`: send a run's trace to an OpenTelemetry collector (OTLP/HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from runlens.cli.common import exit_on_user_error


@click.command("export-trace")
@click.argument("run")
@click.option(
    "--endpoint", default=None, help="Collector base URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT)."
)
@click.option("--home", type=click.Path(path_type=Path), default=None)
@exit_on_user_error()
def export_trace_command(run: str, endpoint: str | None, home: Path | None) -> None:
    """Send RUN's trace (a run id or a workspace path) over OTLP/HTTP."""
    from runlens.errors import UserError
    from runlens.records.io import find_workspace
    from runlens.records.otlp import export_trace, traces_url
    from runlens.tools.workspace import Workspace

    workspace = find_workspace(run, home)
    trace_path = workspace / Workspace.TRACE
    if not trace_path.is_file():
        raise UserError(f"run has no trace yet: {trace_path}")
    url = traces_url(endpoint)
    sent = export_trace(json.loads(trace_path.read_text(encoding="utf-8")), url)
    click.echo(f"sent {sent} spans to {url}")
