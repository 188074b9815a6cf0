"""`runlens verify-source RUN FILE` and `runlens drift RUN FILE`: is FILE the data RUN read,
and which of RUN's claims does it make stale (SPEC section 16, `runlens.sourcelock`).

Exit codes: verify-source 0 for `identical` or `same-rows`, 1 for `rows-changed`; drift 0
when no claim is stale, 1 otherwise; both 2 for a usage error (an unknown run, a file that
cannot be read as the run read its input), one line naming the file, row or field.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from runlens.cli.common import exit_on_user_error
from runlens.cli.run import encoding_option

if TYPE_CHECKING:
    from runlens.sourcelock.compare import SourceComparison
    from runlens.sourcelock.drift import DriftReport

#: How many row ids of each kind the human output lists (`--json` lists them all).
_IDS_SHOWN = 20

_home_option = click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder RUN is looked up in (default: $RUNLENS_HOME or ./runlens-runs).",
)


def _workspace(run: str, home: Path | None) -> Path:
    """The workspace RUN names: a folder, else a run the run store knows (as `runlens show`
    finds runs), which must be on this machine: its index and deliverables are read."""
    from runlens.cli.runs import run_store
    from runlens.cli.show import locate_run
    from runlens.errors import UserError

    with run_store(None, home, read_first=True) as store:
        workspace, detail, _ = locate_run(store, run, home)
    if workspace is None:
        raise UserError(
            f"run {detail.run_id}: its workspace {detail.workspace} is not on this machine"
        )
    return workspace


@click.command("verify-source")
@click.argument("run")
@click.argument("file", type=click.Path(path_type=Path))
@_home_option
@encoding_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@exit_on_user_error()
def verify_source_command(
    run: str, file: Path, home: Path | None, encoding: str | None, as_json: bool
) -> None:
    """Is FILE the data RUN read? `identical` (same bytes), `same-rows` (other bytes, same
    rows: re-encoded, re-delimited, a workbook copy) or `rows-changed` (with the added,
    removed and changed row ids).

    RUN is a workspace path, or a run id (or a unique prefix or suffix of one) in the run
    store, as `runlens show` finds it. FILE is read as the run read its input (its id and
    text columns, id rule, sheet).
    Exit 0 for identical or same-rows, 1 for rows-changed, 2 for a usage error.
    """
    from runlens.cli.common import echo_json
    from runlens.sourcelock.compare import compare_source

    comparison = compare_source(_workspace(run, home), file, encoding=encoding)
    if as_json:
        echo_json(comparison.as_json())
    else:
        _print_comparison(comparison)
    raise click.exceptions.Exit(1 if comparison.result == "rows-changed" else 0)


@click.command("drift")
@click.argument("run")
@click.argument("file", type=click.Path(path_type=Path))
@_home_option
@encoding_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@exit_on_user_error()
def drift_command(
    run: str, file: Path, home: Path | None, encoding: str | None, as_json: bool
) -> None:
    """Which claims of RUN does FILE make stale? Every report quote (with its line), item
    of a JSON deliverable and figure resting on a row FILE added, removed or changed.

    RUN and FILE as for `runlens verify-source`. Exit 0 when no claim is stale, 1 otherwise,
    2 for a usage error.
    """
    from runlens.cli.common import echo_json
    from runlens.sourcelock.drift import find_drift

    report = find_drift(_workspace(run, home), file, encoding=encoding)
    if as_json:
        echo_json(report.as_json())
    else:
        _print_comparison(report.comparison)
        _print_drift(report)
    raise click.exceptions.Exit(1 if report.stale else 0)


def _say(text: str) -> None:
    from runlens.cli.common import terminal_safe

    click.echo(terminal_safe(text))


def _print_comparison(comparison: SourceComparison) -> None:
    run_lock, file_lock = comparison.run_lock, comparison.file_lock
    _say(f"{comparison.file}: {comparison.result} (run {comparison.run_id})")
    if comparison.result == "identical":
        _say(f"  same bytes: sha256 {file_lock.get('bytes_sha256')}")
        return
    _say(
        f"  run:  {run_lock.get('rows')} rows, {run_lock.get('format')}, "
        f"{run_lock.get('encoding') or '-'}, rows digest {run_lock.get('rows_digest')}"
    )
    _say(
        f"  file: {file_lock.get('rows')} rows, {file_lock.get('format')}, "
        f"{file_lock.get('encoding') or '-'}, rows digest {file_lock.get('rows_digest')}"
    )
    if run_lock.get("columns") != file_lock.get("columns"):
        _say(f"  columns differ: run {run_lock.get('columns')}, file {file_lock.get('columns')}")
    for label, ids in (
        ("added", comparison.added),
        ("removed", comparison.removed),
        ("changed", comparison.changed),
    ):
        if ids:
            shown = ", ".join(ids[:_IDS_SHOWN])
            more = f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else ""
            _say(f"  {label} ({len(ids)}): {shown}{more}")


def _print_drift(report: DriftReport) -> None:
    for line in report.changed_since_run:
        _say(f"changed since the run: {line}")
    if not report.stale:
        _say("no claim of the run is stale")
        return
    _say(f"{len(report.stale)} stale claims:")
    for claim in report.stale:
        rows = claim.row_ids or (claim.row_id,)
        on = claim.row_id if len(rows) == 1 else f"{claim.row_id} and {len(rows) - 1} more rows"
        detail = f" {claim.detail}" if claim.detail else ""
        _say(
            f"  stale {claim.kind} {claim.artifact} {claim.location}: row {on} "
            f"{claim.change}{detail}"
        )
