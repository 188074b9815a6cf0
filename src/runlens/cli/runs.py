"""`runlens runs` and `runlens reindex`: past runs from the run store, and workspaces read
(back) into the store (`runlens show`, one run's story, is `runlens.cli.show`).

The store (`runlens.store`) answers the listing and the lookup; workspaces under the runs
home it does not hold yet are indexed on the way, so runs made before the store existed, or
while it could not be reached, are listed all the same.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import click
from rich.markup import escape

from runlens.cli.common import UsageFailure, json_text, one_line, terminal_safe
from runlens.cli.run import database_url_option

if TYPE_CHECKING:
    from runlens.store.clashes import WorkspaceClash
    from runlens.store.db import RunStore
    from runlens.store.listing import IndexReport, ListedRun
    from runlens.store.rows import RunSummary


def markup_safe(value: object) -> str:
    """Recorded text (a model's, a file's) for rich markup: inert markup, no control codes."""
    return escape(terminal_safe(str(value)))


STATUS_STYLE = {
    "queued": "blue",
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "interrupted": "magenta",
}
#: A run's review state (SPEC section 17), shown beside its status.
REVIEW_STYLE = {
    "unreviewed": "dim",
    "approved": "green",
    "changes-requested": "yellow",
    "rejected": "red",
}


def review_markup(state: str) -> str:
    """The review state as rich markup, as every command shows it beside a status."""
    return f"[{REVIEW_STYLE.get(state, 'cyan')}]{markup_safe(state)}[/]"


@click.command("runs")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder (default: $RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
@click.option(
    "--status", default=None, help="Only runs in this status (queued, completed, failed, ...)."
)
@click.option("--plugin", default=None, help="Only runs of this plugin.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def runs_command(
    home: Path | None,
    database_url: str | None,
    status: str | None,
    plugin: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List past runs from the run store, newest first.

    Workspaces under the runs home the store does not know yet are indexed on the way. A run
    whose process died (kill -9, a crash) is shown, and recorded, as `interrupted`; a run a
    worker holds is not (another worker resumes it). Runs submitted to the workers and not
    started yet are `queued`.
    """

    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    from runlens.records.io import runs_home
    from runlens.store.listing import duration

    with run_store(database_url, home, read_first=True) as store:
        report = catch_up(store, home)
        summaries = _listed(store, status=status, plugin=plugin, limit=limit)
    for clash in report.clashes:  # on stderr: the JSON on stdout stays one document
        _print_clash(Console(stderr=as_json), clash)
    if as_json:
        click.echo(json_text([_summary(run) for run in summaries]))
        return
    console = Console()
    if not summaries:
        console.print(f"No runs in {markup_safe(runs_home(home))}", highlight=False)
        return
    # Ids never wrap nor shrink: they are what `runlens show` takes (or a unique prefix or
    # suffix of one). A run that recorded warnings has `⚠ N` beside its status (the warnings
    # follow the table). At 80 columns the input and the plugin and model give way first
    # (`_flexible_widths`): every other column keeps its width.
    rows = [
        (
            terminal_safe(run.run_id),
            terminal_safe(run.status),
            _warnings_mark(run),
            run.review_state,
            _short_time(run.created_at),
            duration(run),
            str(run.finding_count),
            run.input_name or "",
            f"{run.plugin} · {run.model}",
        )
        for run in summaries
    ]
    ids, statuses, marks, reviews, created, took, findings, inputs, whats = zip(*rows, strict=True)
    shown_statuses = [
        f"{status} {mark}" if mark else status for status, mark in zip(statuses, marks, strict=True)
    ]
    fixed = [
        (name, max(map(cell_len, texts)))
        for name, texts in (
            ("run", ids),
            ("status", shown_statuses),
            ("review", reviews),
            ("created", created),
            ("took", took),
            ("findings", findings),
        )
    ]
    flexible = _flexible_widths(
        console.width
        - sum(max(width, len(name)) for name, width in fixed)
        - _GAP * (len(fixed) - 1),
        [("input", list(inputs)), ("plugin · model", list(whats))],
    )
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, width in fixed:
        justify: Literal["left", "right"] = "right" if name in ("took", "findings") else "left"
        table.add_column(name, justify=justify, no_wrap=True, min_width=width)
    for name, width in flexible:
        table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=width)
    for run_id, run_status, warned, review, created_at, took_for, found, input_name, what in rows:
        mark = f" [yellow]{warned}[/]" if warned else ""
        cells = [
            escape(run_id),
            f"[{STATUS_STYLE.get(run_status, 'cyan')}]{escape(run_status)}[/]{mark}",
            review_markup(review),
            markup_safe(created_at),
            took_for,
            found,
            markup_safe(input_name),
            markup_safe(what),
        ]
        table.add_row(*cells[: len(fixed) + len(flexible)])
    console.print(table)
    for run in summaries:
        for warning in run.warnings:
            flat = " ".join(warning.split())
            console.print(
                f"[yellow]warning[/] {markup_safe(run.run_id)}: {markup_safe(flat)}",
                highlight=False,
            )
    for run in summaries:
        for problem in run.problems:
            console.print(
                f"[red]damaged[/] {markup_safe(Path(run.workspace).name)}: {markup_safe(problem)}",
                highlight=False,
            )


@contextlib.contextmanager
def run_store(
    database_url: str | None, home: Path | None, *, read_first: bool = False
) -> Iterator[RunStore]:
    """The run store of `--database-url`, else of the environment, else of the runs home; a
    usage error (exit 2) naming the URL when it cannot be opened.

    `read_first` (a command that mostly reads: `runs`, `show`): a SQLite store at its head is
    read through `sqlite3` until a write needs the store itself (`ReadFirstStore`, which
    stands in for the `RunStore`: what it does not answer itself it asks the store)."""
    from runlens.cli.common import usage_errors
    from runlens.store.location import store_url

    url = store_url(database_url, home)
    with usage_errors():
        if read_first:
            from runlens.store.reader import open_read_first

            store = cast("RunStore", open_read_first(url))
        else:
            from runlens.store.db import open_store

            store = open_store(url)
    try:
        yield store
    finally:
        store.close()


def catch_up(store: RunStore, home: Path | None) -> IndexReport:
    """Index the home's workspaces the store does not hold in their current state, and
    re-read the live runs of this machine (one whose process died is settled). Nothing is
    read but the store's rows and a stat per workspace when that would write nothing."""
    from runlens.cli.common import usage_errors
    from runlens.records.io import runs_home
    from runlens.store.listing import IndexReport
    from runlens.store.reader import ReadFirstStore

    folder = runs_home(home)
    if isinstance(store, ReadFirstStore):
        if store.in_step_with(folder):
            return IndexReport()
        with usage_errors():
            store = store.full
    from runlens.store.sync import index_home, refresh_live

    report = index_home(store, folder, on_pending=functools.partial(_say_indexing, _INDEXING))
    refresh_live(store)
    return report


#: From how many workspaces to index a command says so first: each takes a few milliseconds,
#: so a home of runs the store has never seen (runs made before it existed, a home copied
#: from another machine) takes seconds, once.
SAY_INDEXING_FROM = 20


#: What `runlens runs`, `show` and `review` say first, and `runlens reindex` (which reads
#: every workspace again).
_INDEXING = (
    "Indexing {count:,} runs the run store does not hold yet (once: later calls read the store)..."
)
_READING = "Reading {count:,} runs into the run store..."


def _say_indexing(message: str, count: int) -> None:
    """On stderr (a command's JSON on stdout stays one document): what the wait is for."""
    if count >= SAY_INDEXING_FROM:
        click.echo(message.format(count=count), err=True)


def _listed(
    store: RunStore, *, status: str | None, plugin: str | None, limit: int
) -> Sequence[ListedRun | RunSummary]:
    """The first `limit` runs of the listing, newest first."""
    from runlens.store.reader import ReadFirstStore

    if isinstance(store, ReadFirstStore):
        return store.listed_runs(status=status, plugin=plugin, limit=limit)
    return store.list_runs(status=status, plugin=plugin, limit=limit)[0]


def _print_clash(console: Any, clash: WorkspaceClash) -> None:
    console.print(
        f"[red]clash[/] {markup_safe(clash.workspace)} names run {markup_safe(clash.run_id)}, "
        f"which the run store knows at {markup_safe(clash.known)}: not indexed (a copy never "
        "takes a run over)",
        highlight=False,
        soft_wrap=True,
    )


#: The cells between two columns of the runs table (its padding on either side).
_GAP = 2
#: The narrowest a column that gives way is shown at; with less room it is left out.
_NARROWEST = 8


def _flexible_widths(room: int, columns: list[tuple[str, list[str]]]) -> list[tuple[str, int]]:
    """The columns that give way (each a name and its texts), with the most cells each is
    shown at, so that the table fits in `room` cells after the fixed columns (each column
    after one more gap): the narrower one whole when the wider one keeps at least half of
    the room, else each its share; the last ones are left out where there is not room for
    `_NARROWEST` cells each."""
    from rich.cells import cell_len

    wanted = [max(cell_len(name), *map(cell_len, texts)) for name, texts in columns]
    while columns and room - _GAP * len(columns) < _NARROWEST * len(columns):
        columns, wanted = columns[:-1], wanted[:-1]
    room -= _GAP * len(columns)
    # The widest give way first: every column is cut to one width, the largest that fits.
    cap, left = room, room
    for taken, width in enumerate(sorted(wanted)):
        sharing = len(wanted) - taken
        if width * sharing > left:
            cap = left // sharing
            break
        left -= width
    return [(name, min(width, cap)) for (name, _), width in zip(columns, wanted, strict=True)]


def _warnings_mark(run: ListedRun | RunSummary) -> str:
    """`⚠ 2` for a run that recorded warnings (listed under the table), else nothing."""
    return f"⚠ {len(run.warnings)}" if run.warnings else ""


def _short_time(value: Any) -> str:
    text = str(value or "")
    return f"{text[5:10]} {text[11:16]}" if len(text) >= 16 else text


def _summary(run: ListedRun | RunSummary) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "run_id": run.run_id,
        "status": run.status,
        "review_state": run.review_state,
        "plugin": run.plugin,
        "model": run.model,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "input_name": run.input_name,
        "error_message": run.error_message,
        "warnings": run.warnings,
        "workspace": run.workspace,
        "worker": run.worker,
        "submitted_by": run.submitted_by,
        "rerun_of": run.rerun_of,
    }
    if run.problems:
        summary["problems"] = run.problems
    if run.clashes:
        summary["clashes"] = run.clashes
    return summary


@click.command("reindex")
@click.argument("workspaces", nargs=-1, type=click.Path(path_type=Path), metavar="[WORKSPACE]...")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="Runs folder to index (default: $RUNLENS_HOME or ./runlens-runs).",
)
@database_url_option
def reindex_command(
    workspaces: tuple[Path, ...], home: Path | None, database_url: str | None
) -> None:
    """Re-read workspaces into the run store: every run under the runs home, or the
    WORKSPACE folders given.

    For runs made before the store existed, or while it could not be reached; the
    workspaces are the record of truth and are only read (a run whose process died is
    settled as `interrupted`, as `runlens runs` does).
    """
    from rich.console import Console

    from runlens.errors import UserError
    from runlens.records.io import runs_home
    from runlens.store.clashes import WorkspaceClash, note_clashes
    from runlens.store.listing import IndexReport
    from runlens.store.sync import index_home, not_indexed, sync_workspace

    console = Console()
    with run_store(database_url, home) as store:
        if workspaces:
            report = IndexReport()
            known = store.sync_states()
            for workspace in workspaces:
                try:
                    run_id = sync_workspace(store, workspace)
                except WorkspaceClash as found:
                    report.clashes.append(found)
                    continue
                except Exception as error:  # named; the other workspaces are read all the same
                    report.damaged.append((workspace, not_indexed(error)))
                    continue
                if run_id is None:
                    raise UsageFailure(
                        one_line(UserError(f"{workspace} is not a run workspace (no run.json)"))
                    )
                (report.updated if run_id in known else report.added).append(run_id)
                detail = store.get_run(run_id)
                for problem in detail.problems if detail is not None else ():
                    report.damaged.append((workspace, problem))
            note_clashes(store, report.clashes)
            where = f"{len(workspaces)} workspace(s)"
        else:
            report = index_home(
                store,
                runs_home(home),
                force=True,
                on_pending=functools.partial(_say_indexing, _READING),
            )
            where = str(runs_home(home))
        console.print(
            f"Indexed {where} into {markup_safe(store.url)}: {len(report.added)} added, "
            f"{len(report.updated)} updated, {report.unchanged} unchanged"
            f"{f', {len(report.clashes)} clash(es)' if report.clashes else ''}",
            highlight=False,
            soft_wrap=True,  # one line, however long the paths: scripts read it
        )
    for workspace, problem in report.damaged:
        console.print(
            f"[red]damaged[/] {markup_safe(workspace.name)}: {markup_safe(problem)}",
            highlight=False,
        )
    for clash in report.clashes:
        _print_clash(console, clash)
