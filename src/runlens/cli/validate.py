"""`runlens validate WORKSPACE`: run the Stop validators on an existing workspace.

Exit codes: 0 when every validator passes, 1 when there are findings, 2 for a usage error
(a missing workspace, an unknown plugin, an unreadable `runtime/run.json`, or a `--source`
CSV that cannot be read: that CSV is the user's own input, so it is a usage error here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from runlens.cli.common import echo_json, exit_on_user_error
from runlens.cli.render import render_verdict, verdict_payload
from runlens.cli.run import encoding_option
from runlens.errors import InputError, UserError
from runlens.plugins import Plugin, load_plugin
from runlens.secrets import known_secrets
from runlens.validation import validate_workspace
from runlens.validation.base import EVIDENCE_INDEX

DEFAULT_PLUGIN = "feedback-analysis"
RUN_RECORD = "runtime/run.json"
#: Where `--source` writes the index it builds: beside the run's own, never over it.
REBUILT_INDEX = "runtime/evidence_index.source.json"


def read_run_record(workspace: Path) -> dict[str, Any]:
    """`runtime/run.json` as a dict; {} when the workspace has none (e.g. written by hand)."""
    path = workspace / RUN_RECORD
    if not path.is_file():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as error:
        raise UserError(f"{path} cannot be read as JSON: {error}") from error
    if not isinstance(record, dict):
        raise UserError(f"{path} must hold a JSON object")
    return record


def _expected_hash(record: dict[str, Any]) -> str | None:
    value = record.get("evidence_index_sha256")
    if value is not None and not isinstance(value, str):
        raise UserError(f"{RUN_RECORD}: evidence_index_sha256 must be a string, got {value!r}")
    return value or None


def rebuild_index(
    workspace: Path, source: Path, plugin: Plugin, encoding: str | None = None
) -> Path:
    """Build the Evidence Index of `source` (in `encoding`, or the one detected) into
    `runtime/`, beside the run's own index (never over it: that one is evidence of what the
    run used); return the file written."""
    from runlens.evidence import build_evidence_index, require_regular_file

    require_regular_file(source, "source CSV")
    index = build_evidence_index(
        source,
        id_column=plugin.id_column,
        text_column=plugin.text_column,
        source_name=source.name,
        encoding=encoding,
    )
    target = workspace / REBUILT_INDEX
    target.parent.mkdir(parents=True, exist_ok=True)
    index.write(target)
    return target


@click.command("validate")
@click.argument("workspace", type=click.Path(path_type=Path))
@click.option(
    "--plugin",
    "plugin_name",
    metavar="NAME",
    help=f"Plugin whose contracts apply (default: the one in {RUN_RECORD}, else {DEFAULT_PLUGIN}).",
)
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    metavar="CSV",
    help=(
        f"Judge the evidence against this CSV instead of input/: its index is written to "
        f"{REBUILT_INDEX} (used for citations when the workspace has no {EVIDENCE_INDEX})."
    ),
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@encoding_option
@exit_on_user_error(InputError)
def validate_command(
    workspace: Path,
    plugin_name: str | None,
    source: Path | None,
    as_json: bool,
    encoding: str | None,
) -> None:
    """Run the Stop validators on an existing WORKSPACE.

    Exit 0 when all pass, 1 when there are findings, 2 for a usage error.
    """
    if not workspace.is_dir():
        raise UserError(f"workspace not found: {workspace}")
    if encoding is not None and source is None:
        raise UserError("--encoding names the encoding of the --source CSV: give --source too")
    record = read_run_record(workspace)
    plugin = load_plugin(plugin_name or record.get("plugin") or DEFAULT_PLUGIN)
    expected = _expected_hash(record)
    index_file = None
    if source is not None:
        rebuilt = rebuild_index(workspace, source, plugin, encoding)
        if not (workspace / EVIDENCE_INDEX).is_file():
            index_file, expected = rebuilt, None  # no index of its own: cite against the source's
    report = validate_workspace(
        workspace,
        plugin.contracts,
        expected_index_sha256=expected,
        plugin=plugin,
        source=source,
        index_file=index_file,
        secrets=known_secrets(),
    )
    if as_json:
        echo_json(verdict_payload(report))
    else:
        render_verdict(Console(highlight=False), report, plugin.contracts)
    raise click.exceptions.Exit(0 if report.passed else 1)
