"""`runlens submit`, `runlens worker`, `runlens cancel`: many runs, on any number of machines."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from runlens.cli.run import (
    database_url_option,
    encoding_option,
    id_column_option,
    limit_options,
    sheet_option,
    source_ref_option,
    submitter_option,
    text_column_option,
)


def _provider_limit(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, int]:
    limits: dict[str, int] = {}
    for value in values:
        provider, _, number = value.partition("=")
        if not provider.strip() or not number.strip().isdigit() or int(number) < 1:
            raise click.BadParameter(f"{value!r}: write PROVIDER=N with N at least 1")
        limits[provider.strip()] = int(number)
    return limits


@click.command("submit")
@click.argument("plugin_name", metavar="PLUGIN")
@click.argument(
    "inputs", metavar="INPUT...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--model",
    "model_spec",
    default="offline",
    show_default=True,
    help="offline, openai:MODEL, anthropic:MODEL, ... (the workers hold the API keys).",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder, for the SQLite store (default: $RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
@limit_options
@encoding_option
@id_column_option
@text_column_option
@sheet_option
@source_ref_option
@submitter_option
def submit_command(
    plugin_name: str,
    inputs: tuple[Path, ...],
    model_spec: str,
    home: Path | None,
    database_url: str | None,
    **options: Any,
) -> None:
    """Queue a run of PLUGIN for each INPUT; `runlens worker` processes execute them.

    Prints one line per input, `<run_id> <input path>`; each run is `queued` in the run
    store (with its input file) until a worker takes it. Nothing is queued when the plugin,
    the model or any input is not usable (exit 2). A run resumed by another worker gets its
    --wall-time again.
    """
    from runlens.cli.common import exit_on_user_error

    submitted = exit_on_user_error()(_submit)(
        plugin_name, inputs, model_spec, home, database_url, options
    )
    for run in submitted:
        click.echo(f"{run.run_id} {run.input_path}")


def _submit(
    plugin_name: str,
    inputs: tuple[Path, ...],
    model_spec: str,
    home: Path | None,
    database_url: str | None,
    options: dict[str, Any],
) -> list[Any]:
    from runlens.cli.run import run_options
    from runlens.start import default_submitter
    from runlens.store.db import open_store, store_url
    from runlens.workers.submit import submit_runs

    run = run_options(plugin_name, model_spec, **options)
    if run.submitted_by is None:
        run = dataclasses.replace(run, submitted_by=default_submitter())
    url = store_url(database_url, home)
    with open_store(url) as store:
        return submit_runs(store, url, options=run, inputs=list(inputs))


@click.command("worker")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Runs of each provider queue this worker holds at once, never more (a setting of the "
    "queue: every live worker of a store runs the same value; another one is refused).",
)
@click.option(
    "--provider-limit",
    "provider_limits",
    multiple=True,
    metavar="PROVIDER=N",
    callback=_provider_limit,
    help="At most N runs of PROVIDER at once across all workers (repeatable).",
)
@click.option(
    "--executor-id",
    default=None,
    help="This worker's id (default: host-pid-random); one live worker per id, another one "
    "is refused. Restarted with the same id, a worker resumes its own unfinished runs at once.",
)
@click.option(
    "--dead-after",
    type=click.FloatRange(min=1),
    default=30.0,
    show_default=True,
    help="Seconds without a heartbeat after which a worker's runs are taken over.",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Where this worker keeps its workspaces, a cache of the store (default: "
    "$RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
def worker_command(
    concurrency: int,
    provider_limits: dict[str, int],
    executor_id: str | None,
    dead_after: float,
    home: Path | None,
    database_url: str | None,
) -> None:
    """Execute queued runs until stopped (SIGTERM: at once, the runs in progress handed back
    to the queue; Ctrl-C: finish them first, and a second signal hands them back).

    Logs each run it takes, resumes and finishes on stderr. A worker that dies (kill -9, a
    lost machine) has its runs resumed by another one after --dead-after seconds, from their
    last completed step: model calls already answered are not sent again.
    """
    from runlens.cli.common import exit_on_user_error
    from runlens.records.io import runs_home
    from runlens.store.db import open_store, store_url
    from runlens.workers.worker import Worker, WorkerOptions

    url = store_url(database_url, home)
    store = exit_on_user_error()(open_store)(url)
    options = WorkerOptions(
        store_url=url,
        home=runs_home(home).absolute(),
        concurrency=concurrency,
        executor_id=executor_id,
        provider_limits=provider_limits,
        dead_after=dead_after,
    )
    try:
        code = exit_on_user_error()(Worker(store, options).run)()
    finally:
        store.close()
    raise SystemExit(code)


@click.command("cancel")
@click.argument("run")
@click.option("--home", type=click.Path(path_type=Path), default=None)
@database_url_option
def cancel_command(run: str, home: Path | None, database_url: str | None) -> None:
    """Cancel RUN (an id, or a unique prefix or suffix of one): a queued run leaves the queue;
    a running one, on whichever machine, stops within about a second and ends `cancelled`.

    Exit code 1 when the run has ended already.
    """
    from runlens.cli.common import exit_on_user_error
    from runlens.workers.control import RunEnded

    try:
        summary = exit_on_user_error()(_cancel)(run, home, database_url)
    except RunEnded as ended:
        click.echo(str(ended), err=True)
        raise SystemExit(1) from None
    pending = "" if summary.is_terminal else " (cancel requested: it stops within a second)"
    click.echo(f"{summary.run_id} {summary.status}{pending}")


def _cancel(run: str, home: Path | None, database_url: str | None) -> Any:
    from runlens.store.db import open_store, store_url
    from runlens.workers.control import cancel_run

    url = store_url(database_url, home)
    with open_store(url) as store:
        return cancel_run(store, store.resolve_run(run), url)
