"""`runlens run PLUGIN INPUT`: run a plugin, show progress, print the verdict."""

from __future__ import annotations

import dataclasses
import json
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import click

if TYPE_CHECKING:
    from rich.console import Console

    from runlens.cli.progress import RunProgress
    from runlens.runtime.run import Run, RunResult
    from runlens.start import RunOptions
    from runlens.store.db import RunStore
    from runlens.store.mirror import StoreMirror

EXIT_COMPLETED, EXIT_FAILED = 0, 1


def _check_encoding(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from runlens.errors import UserError
    from runlens.evidence import check_encoding_name

    try:
        return check_encoding_name(value)
    except UserError as error:
        raise click.BadParameter(str(error)) from None


#: `--encoding NAME` (runlens run, runlens validate): the input CSV's encoding, not detected.
encoding_option = click.option(
    "--encoding",
    metavar="NAME",
    default=None,
    callback=_check_encoding,
    help=(
        "Encoding of the CSV (run: INPUT; validate: --source), e.g. utf-8, gb18030, cp1252, "
        "latin-1, utf-16-le, instead of detecting it."
    ),
)


def _check_name(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A column or sheet name as given, surrounding whitespace removed (as in headers)."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("must not be empty")
    # Header names lose their surrounding whitespace; sheet names are matched exactly.
    return value if param.name == "sheet" else value.strip()


#: `--id-column`, `--text-column`, `--sheet` (runlens run; runlens validate with --source).
id_column_option = click.option(
    "--id-column",
    metavar="NAME",
    default=None,
    callback=_check_name,
    help=(
        "Column holding each row's id (default: the plugin's; when the file has "
        "no such column, ids are derived: row-1, row-2, ...)."
    ),
)
text_column_option = click.option(
    "--text-column",
    metavar="NAME",
    default=None,
    callback=_check_name,
    help="Column holding the text to analyse (default: the plugin's, text).",
)
sheet_option = click.option(
    "--sheet",
    metavar="NAME",
    default=None,
    callback=_check_name,
    help="Sheet of an .xlsx workbook to read (default: the first worksheet).",
)
#: `--source-ref URI` (runlens run, runlens submit): recorded in the run's source lock.
source_ref_option = click.option(
    "--source-ref",
    metavar="URI",
    default=None,
    help="Where the input comes from (a URL, a dataset version ...): recorded in the run's "
    "source lock beside its git or DVC reference.",
)


def _check_submitter(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from runlens.review.entries import ReviewError, check_reviewer_name

    try:
        return check_reviewer_name(value)
    except ReviewError as error:
        raise click.BadParameter(str(error)) from None


#: `--as NAME` (runlens run, runlens submit, runlens rerun): who starts the run.
submitter_option = click.option(
    "--as",
    "submitted_by",
    metavar="NAME",
    default=None,
    callback=_check_submitter,
    help="Who starts the run, recorded as its submitter: a plugin's review policy may forbid "
    "them to approve it (default: $RUNLENS_USER, else your login name).",
)


#: `--database-url URL` (run, runs, show, reindex): the run store, instead of the default.
database_url_option = click.option(
    "--database-url",
    metavar="URL",
    default=None,
    help=(
        "The run store: sqlite:///PATH or postgresql://USER@HOST/DB (default: "
        "$RUNLENS_DATABASE_URL, else runlens.db in the runs home)."
    ),
)

#: What a run id given with --run-id may be: it names the workspace folder.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


def limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--repair-turns`, `--max-turns`, `--max-tool-calls`, `--wall-time` (runlens run and
    runlens submit)."""
    for option in reversed(
        (
            click.option(
                "--repair-turns",
                type=click.IntRange(min=0),
                default=0,
                show_default=True,
                help="Rounds in which validation findings go back to the model to fix.",
            ),
            click.option(
                "--max-turns",
                type=click.IntRange(min=1),
                default=None,
                help="Model turns (default: 60).",
            ),
            click.option(
                "--max-tool-calls",
                type=click.IntRange(min=1),
                default=None,
                help="Tool calls in the whole run (default: 400).",
            ),
            click.option(
                "--wall-time",
                type=click.FloatRange(min=1),
                default=None,
                help="Seconds before the run is stopped (default: 3600).",
            ),
        )
    ):
        command = option(command)
    return command


@click.command("run")
@click.argument("plugin_name", metavar="PLUGIN")
@click.argument("input_file", metavar="INPUT", type=click.Path(path_type=Path))
@click.option(
    "--model",
    "model_spec",
    default=None,
    help=(
        "offline, scripted:PATH, openai:MODEL or anthropic:MODEL (default: offline, when the "
        "plugin has an offline model)."
    ),
)
@click.option(
    "--workspace",
    type=click.Path(path_type=Path),
    default=None,
    help="Run folder (default: $RUNLENS_HOME or ./runlens-runs, then the run id).",
)
@limit_options
@click.option(
    "--hooks",
    "hooks_file",
    type=click.Path(path_type=Path),
    default=None,
    help="JSON file of command hooks (PreToolUse, PostToolUse, Stop, ...).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for machines.")
@encoding_option
@id_column_option
@text_column_option
@sheet_option
@source_ref_option
@submitter_option
@database_url_option
@click.option("--run-id", default=None, hidden=True, help="The run's id (runlens ui gives it).")
@click.option(
    "--rerun-of",
    default=None,
    hidden=True,
    help="The run this one re-runs with its review (runlens ui gives it).",
)
@click.option(
    "--review-finding",
    "review_findings",
    multiple=True,
    hidden=True,
    help="A finding of that review for the model to address (repeatable; runlens ui).",
)
@click.option(
    "--origin",
    type=click.Choice(["cli", "ui", "api"]),
    default="cli",
    hidden=True,
    help="Who started the run, for the run store.",
)
def run_command(as_json: bool, **options: Any) -> None:
    """Run PLUGIN on INPUT and validate every deliverable before calling it completed.

    The run is recorded in the run store as it goes (SQLite in the runs home, or
    --database-url); a cancel asked for there (runlens ui, the API) ends it `cancelled`.

    Exit code 0 when the run completed, 1 when it failed or was cancelled, 2 for a usage error.
    """
    from runlens.cli.common import exit_on_user_error

    run, mirror = _opened(exit_on_user_error()(_prepare), options, drawn=not as_json)
    try:
        code = execute_run(run, as_json)
    finally:
        mirror.finish()
        mirror.store.close()
    raise SystemExit(code)


def _opened(
    prepare: Callable[..., tuple[Run, StoreMirror]], options: dict[str, Any], *, drawn: bool
) -> tuple[Run, StoreMirror]:
    """`prepare(**options)` with the cyclic garbage collector paused, then out of its way.

    Opening a run imports most of the runtime, the plugin and its validators: hundreds of
    modules whose classes, functions and schemas live as long as the process and are almost
    all in reference cycles. Each collection while they load walks them all again, so the
    collector waits until the run is open (reference counting frees everything else as
    usual); the progress display (`drawn`) is loaded with them. When the command is the
    process's own (`runlens.cli.main`), the process ends with the run: what it holds by then
    is frozen (`gc.freeze`), so the collections during the run and the interpreter's at exit
    skip it instead of walking it once more each.
    """
    import gc

    from runlens import cli

    collecting = gc.isenabled()
    gc.disable()
    try:
        opened = prepare(**options)
        if drawn:
            import runlens.cli.progress  # noqa: F401  (rich, for `execute_run`)
    finally:
        if collecting:
            gc.enable()
    if cli.owns_process:
        gc.freeze()
    return opened


def run_options(
    plugin_name: str,
    model_spec: str | None,
    repair_turns: int,
    max_turns: int | None,
    max_tool_calls: int | None,
    wall_time: float | None,
    encoding: str | None,
    id_column: str | None,
    text_column: str | None,
    sheet: str | None,
    source_ref: str | None = None,
    submitted_by: str | None = None,
    rerun_of: str | None = None,
    review_findings: tuple[str, ...] = (),
) -> RunOptions:
    """The run the arguments of `runlens run` (and `runlens submit`) ask for (`submitted_by`
    as given: the entry fills in `default_submitter()`)."""
    from runlens.start import RunOptions

    return RunOptions(
        plugin=plugin_name,
        model=model_spec or "offline",
        repair_turns=repair_turns,
        max_turns=max_turns,
        max_tool_calls=max_tool_calls,
        wall_time=wall_time,
        encoding=encoding,
        id_column=id_column,
        text_column=text_column,
        sheet=sheet,
        source_ref=source_ref,
        submitted_by=submitted_by,
        rerun_of=rerun_of,
        review_findings=tuple(review_findings),
    )


def _prepare(
    input_file: Path,
    workspace: Path | None,
    hooks_file: Path | None,
    database_url: str | None,
    run_id: str | None,
    origin: Literal["cli", "ui", "api"],
    **arguments: Any,
) -> tuple[Run, StoreMirror]:
    from runlens.errors import UserError
    from runlens.evidence import require_regular_file
    from runlens.hooks.command import load_hooks_file
    from runlens.plugins import load_plugin
    from runlens.records.io import new_run_id, runs_home
    from runlens.start import check_model, default_submitter, open_run
    from runlens.store.location import store_url
    from runlens.store.write_first import open_write_first

    options = run_options(**arguments)
    if options.submitted_by is None and origin == "cli":
        # A run the UI starts names its submitter, if any: never the server's login name.
        options = dataclasses.replace(options, submitted_by=default_submitter())
    if options.rerun_of is not None and not RUN_ID.fullmatch(options.rerun_of):
        raise UserError(f"--rerun-of {options.rerun_of!r}: not a run id")
    plugin = load_plugin(options.plugin)
    require_regular_file(input_file, "input file")
    check_model(options.model, plugin)
    hooks = tuple(load_hooks_file(hooks_file)) if hooks_file else ()
    if run_id is not None and not RUN_ID.fullmatch(run_id):
        raise UserError(f"--run-id {run_id!r}: letters, digits, '_', '.' and '-' only")
    run_id = run_id or new_run_id()
    # Opened before the workspace is claimed: a store that cannot be used is a usage error.
    # A SQLite store at its head is written through `sqlite3` (`WriteFirstStore`, which
    # stands in for the `RunStore`: what it does not do itself it asks the store).
    store = cast("RunStore", open_write_first(store_url(database_url)))
    try:
        return open_run(
            store,
            options,
            plugin,
            input_file,
            workspace or runs_home() / run_id,
            run_id=run_id,
            origin=origin,
            command_hooks=hooks,
        )
    except BaseException:
        store.close()
        raise


def execute_run(run: Run, as_json: bool) -> int:
    """Execute the opened run, drawing its progress (none with `as_json`), print its verdict
    (one JSON object with `as_json`); the exit code: 0 completed, 1 otherwise."""
    import asyncio

    # With --json nothing is drawn: rich and the progress display are not loaded.
    console: Console | None = None
    progress: RunProgress | None = None
    if not as_json:
        from rich.console import Console

        from runlens.cli.progress import RunProgress

        console = Console(stderr=True)
        progress = RunProgress(console, run.plugin.plan)
        run.events.subscribe(progress)
        console.print(
            f"[bold]RunLens[/] {run.plugin.name} · model {run.model.spec} · run {run.run_id}",
            highlight=False,
        )

    async def go() -> RunResult:
        _cancel_on_signals(run)
        try:
            return await run.execute()
        finally:
            await run.model.aclose()

    try:
        if progress is None:
            result = asyncio.run(go())
        else:
            with progress:
                result = asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        if console is None:
            # Plain text: importing rich now, beside a tool still spinning on its thread,
            # would delay the exit the cancellation promises.
            click.echo(f"\nRun cancelled. Records kept in {run.workspace.root}", err=True)
        else:
            console.print(f"\n[yellow]Run cancelled.[/] Records kept in {run.workspace.root}")
        if as_json:
            click.echo(_redacted(run, json.dumps(run.result().to_json(), ensure_ascii=False)))
        return EXIT_FAILED
    if as_json:
        click.echo(_redacted(run, json.dumps(result.to_json(), ensure_ascii=False, indent=2)))
    else:
        _print_verdict(result, run)
    return EXIT_COMPLETED if result.status == "completed" else EXIT_FAILED


def _cancel_on_signals(run: Run) -> None:
    """SIGTERM and Ctrl-C cancel the run within a second, whatever phase it is in.

    Plain signal handlers, not the event loop's: they run between two bytecodes even while
    synchronous work (a large CSV, an offline batch) holds the loop, and `Run.cancel` both
    flags the run (its long loops check the flag) and cancels its task. Installed for SIGINT
    too when the parent started us with SIGINT ignored. A second signal stops at once.
    """
    names = {signal.SIGTERM: "SIGTERM", signal.SIGINT: "Ctrl-C (SIGINT)"}

    def handle(signum: int, _frame: object) -> None:
        if run.cancel_scope.cancelled:
            raise KeyboardInterrupt
        run.cancel(f"cancelled by {names.get(signal.Signals(signum), str(signum))}")

    for signum in names:
        signal.signal(signum, handle)


def _redacted(run: Run, text: str) -> str:
    """`text` with the run's known secrets blanked out, for stdout."""
    from runlens.secrets import redactor

    redact = redactor(run.settings.secrets)
    return text if redact is None else redact(text)


def _print_verdict(result: RunResult, run: Run) -> None:
    from rich.console import Console

    from runlens.cli.render import render_run_verdict

    console = Console()
    render_run_verdict(console, result, run.plugin)
    if run.plugin.describe_result is not None and result.status == "completed":
        summary = run.plugin.describe_result(result.workspace)
        if summary:
            console.print(summary)
    console.print(f"Workspace: [bold]{result.workspace}[/]", highlight=False)
    keyid = _verdict_key(result.workspace)
    if keyid is not None:
        from rich.markup import escape

        console.print(
            f"Verdict signed by key {escape(keyid[:16])}… (runtime/verdict.dsse.json); "
            f"anyone can re-check it: runlens verify {result.run_id}",
            highlight=False,
        )


def _verdict_key(workspace: Path) -> str | None:
    """The key id that signed the workspace's verdict, when the run wrote one."""
    from runlens.tools.workspace import Workspace

    try:
        envelope = json.loads((workspace / Workspace.VERDICT).read_bytes())
        keyid = envelope["signatures"][0]["keyid"]
    except (OSError, ValueError, LookupError, TypeError):
        return None
    return keyid if isinstance(keyid, str) else None
