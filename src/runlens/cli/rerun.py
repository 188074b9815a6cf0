"""`runlens rerun RUN --with-review`: run the same input again, the review's findings given to
the model to address (SPEC 17)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from runlens.cli.run import RUN_ID, database_url_option, submitter_option

if TYPE_CHECKING:
    from runlens.runtime.run import Run
    from runlens.start import RerunPlan
    from runlens.store.mirror import StoreMirror


@click.command("rerun")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--with-review",
    is_flag=True,
    help="Give the model the review's findings to address: every valid request-changes or "
    "reject note and every wrong or unsure mark (required).",
)
@click.option(
    "--model",
    "model_spec",
    default=None,
    help="offline, scripted:PATH, openai:MODEL, anthropic:MODEL, ... (default: the run's).",
)
@submitter_option
@click.option(
    "--workspace",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder of the new run (default: $RUNLENS_HOME or ./runlens-runs, then its id).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for machines.")
@database_url_option
@click.option("--run-id", default=None, hidden=True, help="The new run's id (runlens ui gives it).")
@click.option(
    "--origin",
    type=click.Choice(["cli", "ui", "api"]),
    default="cli",
    hidden=True,
    help="Who started the run, for the run store.",
)
def rerun_command(as_json: bool, **options: Any) -> None:
    """Start a new run of RUN's plugin on RUN's input, with RUN's options, whose model is given
    RUN's review as findings to address. The new run records `rerun_of` RUN; RUN's page links
    to it, and the compare page shows the two.

    A run whose review asks for nothing (no request-changes or reject note, no wrong or unsure
    mark on its current files) is not re-run: exit 2, as for any usage error. Otherwise the
    exit code is `runlens run`'s: 0 when the new run completed, 1 when it failed.
    """
    from runlens.cli.common import exit_on_user_error
    from runlens.cli.run import execute_run

    run, mirror, plan = exit_on_user_error()(_prepare)(as_json=as_json, **options)
    try:
        code = execute_run(run, as_json)
    finally:
        mirror.finish()
        mirror.store.close()
    if not as_json:
        click.echo(f"Compare the two in runlens ui: /compare?a={plan.rerun_of}&b={run.run_id}")
    raise SystemExit(code)


def _prepare(
    run_ref: str,
    with_review: bool,
    model_spec: str | None,
    submitted_by: str | None,
    workspace: Path | None,
    database_url: str | None,
    run_id: str | None,
    origin: Literal["cli", "ui", "api"],
    as_json: bool,
) -> tuple[Run, StoreMirror, RerunPlan]:
    from runlens.errors import UserError
    from runlens.plugins import load_plugin
    from runlens.records.io import new_run_id, runs_home
    from runlens.start import check_model, default_submitter, open_run, rerun_settings
    from runlens.store.db import open_store, store_url

    if run_id is not None and not RUN_ID.fullmatch(run_id):
        raise UserError(f"--run-id {run_id!r}: letters, digits, '_', '.' and '-' only")
    if not with_review:
        raise UserError(
            "runlens rerun re-runs a run with its review: give --with-review (to run the "
            "same input afresh: runlens run PLUGIN INPUT)"
        )
    store = open_store(store_url(database_url))
    try:
        rerun_of = store.resolve_run(run_ref)
        plan = rerun_settings(
            store,
            rerun_of,
            home=None,
            model=model_spec,
            # A rerun the UI starts names its submitter: never the server's login name.
            submitted_by=submitted_by or (default_submitter() if origin == "cli" else None),
        )
        plugin = load_plugin(plan.plugin)
        check_model(plan.model, plugin)
        run_id = run_id or new_run_id()
        if not as_json:
            _print_plan(plan)
        run, mirror = open_run(
            store,
            plan.options,
            plugin,
            plan.input_path,
            workspace or runs_home() / run_id,
            run_id=run_id,
            origin=origin,
        )
    except BaseException:
        store.close()
        raise
    return run, mirror, plan


def _print_plan(plan: RerunPlan) -> None:
    """What the new run's model is given, on stderr (as the run's progress)."""
    from runlens.cli.common import terminal_safe

    count = len(plan.findings)
    click.echo(
        f"Re-running run {plan.rerun_of} ({plan.plugin}, model {plan.model}) with "
        f"{count} review finding{'s' if count != 1 else ''} to address:",
        err=True,
    )
    for finding in plan.findings:
        click.echo(f"  - {terminal_safe(finding)}", err=True)
