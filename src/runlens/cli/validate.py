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
from runlens.cli.render import render_defect, render_verdict, verdict_payload
from runlens.cli.run import encoding_option, id_column_option, sheet_option, text_column_option
from runlens.errors import InputError, UserError
from runlens.evidence.rebuild import rebuild_index, recorded_reading
from runlens.plugins import available_plugins, load_plugin
from runlens.secrets import known_secrets
from runlens.tools.workspace import Workspace
from runlens.validation import ValidationReport, validate_workspace
from runlens.validation.defects import recorded_defect, written_by_runlens

RUN_RECORD = Workspace.RUN_RECORD
EVIDENCE_INDEX = Workspace.EVIDENCE_INDEX
#: Where `--source` writes the index it builds: beside the run's own, never over it.
REBUILT_INDEX = Workspace.REBUILT_INDEX


def strict_run_record(workspace: Path) -> dict[str, Any]:
    """`runtime/run.json` as the JSON object it holds, raising UserError when it is not one
    (`validate` judges nothing on a record it cannot read); {} when the workspace has none
    (e.g. written by hand). Read leniently, by its model, everywhere else
    (`runlens.records.readers.read_run_record`)."""
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


def _only_plugin(workspace: Path) -> str:
    """The plugin to judge a workspace without a run record by: the only one installed."""
    installed = available_plugins()
    if len(installed) == 1:
        return installed[0]
    known = ", ".join(installed) or "none installed"
    raise UserError(
        f"{workspace} has no {RUN_RECORD} naming its plugin: name it with --plugin "
        f"(installed: {known})"
    )


def _expected_hash(record: dict[str, Any]) -> str | None:
    value = record.get("evidence_index_sha256")
    if value is not None and not isinstance(value, str):
        raise UserError(f"{RUN_RECORD}: evidence_index_sha256 must be a string, got {value!r}")
    return value or None


def _reading(
    workspace: Path,
    record: dict[str, Any],
    source: Path,
    id_column: str | None,
    text_column: str | None,
    sheet: str | None,
) -> dict[str, Any]:
    """The run's recorded reading of its input, with what the options name instead (a
    recorded sheet is not applied to a --source that is no workbook)."""
    from runlens.evidence import FROM_COLUMN, is_workbook

    reading = dict(recorded_reading(workspace, record))
    if not is_workbook(source):
        reading.pop("sheet", None)
    if id_column is not None:  # a named id column: ids from that column
        reading.update(id_column=id_column, id_rule=FROM_COLUMN)
    if text_column is not None:
        reading["text_column"] = text_column
    if sheet is not None:
        reading["sheet"] = sheet
    return reading


@click.command("validate")
@click.argument("workspace", type=click.Path(path_type=Path))
@click.option(
    "--plugin",
    "plugin_name",
    metavar="NAME",
    help=(
        f"Plugin whose contracts apply (default: the one in {RUN_RECORD}, else the only "
        "plugin installed)."
    ),
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
@id_column_option
@text_column_option
@sheet_option
@exit_on_user_error(InputError)
def validate_command(
    workspace: Path,
    plugin_name: str | None,
    source: Path | None,
    as_json: bool,
    encoding: str | None,
    id_column: str | None,
    text_column: str | None,
    sheet: str | None,
) -> None:
    """Run the Stop validators on an existing WORKSPACE.

    With --source, the source is read as the run read its input (columns, id rule, sheet, as
    runtime/run.json records them), unless --id-column, --text-column or --sheet say
    otherwise. Exit 0 when all pass, 1 when there are findings, 2 for a usage error.
    """
    if not workspace.is_dir():
        raise UserError(f"workspace not found: {workspace}")
    for option, value in (
        ("--encoding", encoding),
        ("--id-column", id_column),
        ("--text-column", text_column),
        ("--sheet", sheet),
    ):
        if value is not None and source is None:
            raise UserError(f"{option} says how to read the --source file: give --source too")
    record = strict_run_record(workspace)
    plugin = load_plugin(plugin_name or record.get("plugin") or _only_plugin(workspace))
    expected = _expected_hash(record)
    index_file = None
    if source is not None:
        reading = _reading(workspace, record, source, id_column, text_column, sheet)
        rebuilt = rebuild_index(workspace, source, plugin, encoding, reading=reading)
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
    defect = _defect(workspace, record, report)
    if as_json:
        echo_json(verdict_payload(report, defect=defect))
    else:
        console = Console(highlight=False)
        render_verdict(console, report, plugin.contracts)
        render_defect(console, defect)
    raise click.exceptions.Exit(0 if report.passed else 1)


def _defect(workspace: Path, record: dict[str, Any], report: ValidationReport) -> str | None:
    """The defect notice, when the findings are on deliverables RunLens's offline analyst
    wrote and nobody changed since (`runlens.validation.defects`)."""
    from runlens.records.readers import RunRecordView, read_manifest
    from runlens.runtime.recovery import workspace_changes

    if not written_by_runlens(record.get("model")):
        return None
    manifest = read_manifest(workspace / Workspace.MANIFEST).view
    if manifest is None or workspace_changes(workspace, RunRecordView.lenient(record)[0], manifest):
        return None
    return recorded_defect(record, (f.code for f in report.findings))
