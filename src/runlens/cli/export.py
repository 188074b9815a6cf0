"""`runlens export RUN --html FILE`: one self-contained HTML file of a run that checks itself
(SPEC section 18); `runlens export-trace RUN`: send a run's trace to an OpenTelemetry
collector (OTLP/HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from runlens.cli.common import exit_on_user_error

if TYPE_CHECKING:
    from runlens.ui.export import ExportedPage


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


@click.command("export")
@click.argument("run")
@click.option(
    "--html",
    "target",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="The HTML file to write (replaced if it exists).",
)
@click.option("--home", type=click.Path(path_type=Path), default=None)
@exit_on_user_error()
def export_command(run: str, target: Path, home: Path | None) -> None:
    """Write RUN (a run id or a workspace folder) as one self-contained HTML file that checks
    itself when opened: the verdict and review state, the deliverables for readers, every
    cited row with its quote marked, the findings, the source lock, the reviews and the
    signed statement. `runlens verify FILE` is the authoritative check of the file."""
    from runlens.atomic import write_atomic
    from runlens.errors import UserError

    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"cannot write {target}: the folder {folder} does not exist")
    page = _exported(run, home)
    try:
        write_atomic(target, page.html, mode=0o644)
    except OSError as error:
        raise UserError(f"cannot write {target}: {error.strerror or error}") from None
    click.echo(f"wrote {target} ({_size(page.size)})")
    click.echo(
        f"  {len(page.files_embedded)} deliverable(s), {page.rows_embedded} cited row(s)"
        + ("" if page.row_list_embedded else ", not the whole input (too large to embed)")
    )
    click.echo(f"  signed by key id {page.export_key_id}")
    click.echo(f"  check it: runlens verify {target}  (or open it in a browser)")


def _exported(run: str, home: Path | None) -> ExportedPage:
    """The export of RUN, its files read from its workspace, or from the store's copy of
    them when the run was done on another machine."""
    import tempfile

    from runlens.cli.runs import run_store
    from runlens.cli.show import locate_run
    from runlens.errors import UserError
    from runlens.store.rows import run_detail
    from runlens.ui.export import build_export

    with run_store(None, home) as store:
        workspace, located, _ = locate_run(store, run, home)
        detail = run_detail(located)
        citations = store.citations(detail.run_id)
        if workspace is not None:
            return build_export(
                detail.model_copy(update={"workspace": str(workspace)}), citations, home=home
            )
        if not store.file_index(detail.run_id):
            raise UserError(
                f"run {detail.run_id}: its workspace {detail.workspace} is not on this machine "
                "and the run store holds no copy of its files"
            )
        with tempfile.TemporaryDirectory(prefix="runlens-export-") as copy:
            store.materialize(detail.run_id, Path(copy))
            return build_export(detail.model_copy(update={"workspace": copy}), citations, home=home)


def _size(size: int) -> str:
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.0f} KiB ({size} bytes)"
