"""`runlens reviewers`, `review`, `mark`, `reviews` and `marks`: review by people (SPEC
section 17) from the terminal.

A reviewer is made once (`runlens reviewers add NAME`: an Ed25519 key in the home's
`reviewers/` folder and a UI token, both printed once; the store keeps the public key and
the token's SHA-256). Every decision and mark is signed with the reviewer's key and recorded
by `runlens.review.record`.

Exit codes: 0 done; 1 a decision the plugin's review policy refuses; 2 a usage error (no such
run, reviewer, deliverable or claim; a run not judged yet). Everything a reviewer or a model
wrote is printed inert: rich markup escaped, control characters shown as escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from runlens.cli.common import UsageFailure, echo_json, exit_on_user_error, usage_errors
from runlens.cli.run import database_url_option
from runlens.cli.runs import catch_up, markup_safe, run_store

if TYPE_CHECKING:
    from runlens.review.entries import ReviewEntry
    from runlens.review.record import RecordedReview
    from runlens.review.state import ReviewSummary
    from runlens.store.db import RunStore

HOME_HELP = "Runs home (default: $RUNLENS_HOME or ./runlens-runs); its reviewers/ holds the keys."
#: The exit code of a decision the plugin's review policy refuses.
REFUSED_EXIT_CODE = 1

home_option = click.option("--home", type=click.Path(path_type=Path), default=None, help=HOME_HELP)
as_option = click.option(
    "--as",
    "reviewer",
    metavar="NAME",
    default=None,
    help="The reviewer (default: the only reviewer whose key this home holds).",
)


@contextmanager
def _store(database_url: str | None, home: Path | None) -> Iterator[RunStore]:
    """The run store, brought in step with the runs home (runs not indexed yet are)."""
    with run_store(database_url, home) as store:
        with usage_errors():
            catch_up(store, home)
        yield store


def _resolve(store: RunStore, run: str) -> str:
    with usage_errors():
        return store.resolve_run(run)


def _reviewer(given: str | None, home: Path | None) -> str:
    """`--as`, else the only reviewer with a key in this home; a usage error otherwise."""
    if given is not None:
        return given
    from runlens.review.reviewers import local_reviewers

    names = local_reviewers(home)
    if len(names) == 1:
        return names[0]
    if not names:
        raise UsageFailure("no reviewer key in this home: add one (runlens reviewers add NAME)")
    raise UsageFailure(f"several reviewers here ({', '.join(names)}): say which with --as NAME")


# -- runlens reviewers ------------------------------------------------------------------------


@click.group("reviewers")
def reviewers_command() -> None:
    """Add and list the people who review runs (their keys sign every decision and mark)."""


@reviewers_command.command("add")
@click.argument("name")
@home_option
@database_url_option
@exit_on_user_error()
def reviewers_add_command(name: str, home: Path | None, database_url: str | None) -> None:
    """Add reviewer NAME: an Ed25519 key pair under the home's reviewers/ and a UI token.
    The token is printed once: the store keeps only its SHA-256."""
    from runlens.errors import UserError
    from runlens.review.entries import check_reviewer_name
    from runlens.review.reviewers import (
        new_reviewer_key,
        new_token,
        reviewer_private_path,
        reviewer_public_path,
        token_digest,
    )
    from runlens.verdict.keys import public_pem

    check_reviewer_name(name)
    with run_store(database_url, home) as store:
        if store.get_reviewer(name) is not None:
            raise UserError(f"reviewer {name} exists already in the run store {store.url}")
        key = new_reviewer_key(name, home)
        token = new_token()
        try:
            store.add_reviewer(name, key.keyid, public_pem(key.public_key), token_digest(token))
        except ValueError as error:
            for path in (reviewer_private_path(name, home), reviewer_public_path(name, home)):
                path.unlink(missing_ok=True)
            raise UserError(str(error)) from None
    click.echo(f"reviewer:    {name}")
    click.echo(f"key id:      {key.keyid}")
    click.echo(f"private key: {reviewer_private_path(name, home)} (mode 0600: keep it secret)")
    click.echo(f"public key:  {reviewer_public_path(name, home)}")
    click.echo(f"UI token:    {token}")
    click.echo("The token is shown this once: sign in at /reviews with it (stored hashed).")


@reviewers_command.command("list")
@home_option
@database_url_option
@click.option("--json", "as_json", is_flag=True)
@exit_on_user_error()
def reviewers_list_command(home: Path | None, database_url: str | None, as_json: bool) -> None:
    """List the reviewers the run store knows, and whether this home holds their key."""
    from runlens.review.reviewers import local_reviewers

    with run_store(database_url, home) as store:
        rows = store.list_reviewers()
    here = set(local_reviewers(home))
    listed = [
        {
            "name": row.name,
            "keyid": row.keyid,
            "created_at": row.created_at,
            "key_here": row.name in here,
        }
        for row in rows
    ]
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if not listed:
        click.echo("No reviewers (add one: runlens reviewers add NAME)")
    for entry in listed:
        mark = "key here" if entry["key_here"] else "no key here"
        click.echo(f"{entry['name']}  {str(entry['keyid'])[:16]}…  {entry['created_at']}  {mark}")


# -- runlens review / mark --------------------------------------------------------------------


@click.command("review")
@click.argument("run")
@click.option("--artifact", metavar="NAME", default=None, help="Judge one deliverable only.")
@click.option("--approve", "decision", flag_value="approve", help="Approve it.")
@click.option(
    "--request-changes", "decision", flag_value="request-changes", help="Ask for changes."
)
@click.option("--reject", "decision", flag_value="reject", help="Reject it.")
@click.option("--note", required=True, help="What the decision says (kept and signed as written).")
@as_option
@home_option
@database_url_option
def review_command(
    run: str,
    artifact: str | None,
    decision: str | None,
    note: str,
    reviewer: str | None,
    home: Path | None,
    database_url: str | None,
) -> None:
    """Decide on RUN (or on one of its deliverables): --approve, --request-changes or
    --reject, with a note; signed with the reviewer's key and bound to the files' hashes.

    Exit 1 when the plugin's review policy refuses the decision (the submitter approving
    their own run, say); 2 for a usage error."""
    from runlens.review.record import record_decision

    if decision is None:
        raise UsageFailure("say the decision: --approve, --request-changes or --reject")
    name = _reviewer(reviewer, home)
    with _store(database_url, home) as store, _refusals():
        run_id = _resolve(store, run)
        recorded = record_decision(
            store,
            run_id,
            reviewer=name,
            decision=decision,
            note=note,
            artifact=artifact,
            home=home,
        )
    _print_recorded(recorded)


@click.command("mark")
@click.argument("run")
@click.option("--artifact", metavar="NAME", required=True, help="The deliverable cited in.")
@click.option("--location", metavar="LOC", required=True, help="The claim: `line N` or `items[3]`.")
@click.option("--row-id", metavar="ID", required=True, help="The source row it cites.")
@click.option("--correct", "mark", flag_value="correct", help="The citation is right.")
@click.option("--wrong", "mark", flag_value="wrong", help="The citation is wrong.")
@click.option("--unsure", "mark", flag_value="unsure", help="Cannot tell.")
@click.option("--note", required=True, help="Why (kept and signed as written).")
@click.option(
    "--correction",
    "corrections",
    multiple=True,
    metavar="NAME=VALUE",
    help="A correction the plugin declares (repeatable), e.g. theme=Performance.",
)
@as_option
@home_option
@database_url_option
def mark_command(
    run: str,
    artifact: str,
    location: str,
    row_id: str,
    mark: str | None,
    note: str,
    corrections: tuple[str, ...],
    reviewer: str | None,
    home: Path | None,
    database_url: str | None,
) -> None:
    """Mark one citation of RUN --correct, --wrong or --unsure, with a note (and a
    correction the plugin declares); signed and bound to the deliverable's hash."""
    from runlens.review.record import record_mark

    if mark is None:
        raise UsageFailure("say the mark: --correct, --wrong or --unsure")
    correction: dict[str, str] = {}
    for given in corrections:
        key, sep, value = given.partition("=")
        if not sep or not key.strip():
            raise UsageFailure(f"--correction {given!r}: write NAME=VALUE")
        correction[key.strip()] = value
    name = _reviewer(reviewer, home)
    with _store(database_url, home) as store, _refusals():
        run_id = _resolve(store, run)
        recorded = record_mark(
            store,
            run_id,
            reviewer=name,
            mark=mark,
            note=note,
            artifact=artifact,
            location=location,
            row_id=row_id,
            correction=correction or None,
            home=home,
        )
    _print_recorded(recorded)


@contextmanager
def _refusals() -> Iterator[None]:
    """A policy refusal exits 1 with its reason; other user errors exit 2."""
    from runlens.errors import UserError, one_line
    from runlens.review.state import ReviewRefused

    try:
        yield
    except ReviewRefused as refused:
        click.echo(f"Refused: {one_line(refused)}", err=True)
        raise click.exceptions.Exit(REFUSED_EXIT_CODE) from None
    except UserError as error:
        raise UsageFailure(one_line(error)) from error


def _print_recorded(recorded: RecordedReview) -> None:
    from rich.console import Console

    entry = recorded.entry
    console = Console(highlight=False, soft_wrap=True)
    what = entry.decision if entry.kind == "decision" else f"marked {entry.mark}"
    console.print(
        f"[bold]{markup_safe(entry.reviewer)}[/] {markup_safe(what)} {_target(entry)} "
        f"(line {entry.seq} of the run's reviews, signed by key {entry.keyid[:16]}…)"
    )
    console.print(f"review state: {_state_text(recorded.summary)}")
    if recorded.warning:
        console.print(f"[yellow]warning[/] {markup_safe(recorded.warning)}")


def _target(entry: ReviewEntry) -> str:
    if entry.kind == "mark":
        return markup_safe(f"{entry.artifact} {entry.location} (row {entry.row_id})")
    return markup_safe(entry.artifact or f"run {entry.run_id}")


def _state_text(summary: ReviewSummary) -> str:
    style = {
        "approved": "green",
        "rejected": "red",
        "changes-requested": "yellow",
    }.get(summary.state, "cyan")
    return (
        f"[{style}]{markup_safe(summary.state)}[/] "
        f"({summary.approvals} of {summary.required} approval(s))"
    )


# -- runlens reviews / marks ------------------------------------------------------------------


@click.command("reviews")
@click.argument("run")
@home_option
@database_url_option
@click.option("--json", "as_json", is_flag=True, help="Print the run's reviews as JSON.")
def reviews_command(run: str, home: Path | None, database_url: str | None, as_json: bool) -> None:
    """Show RUN's review: its state, every decision (void ones: a file changed since) and
    every mark, oldest first."""
    from runlens.review.record import reviews_document, run_reviews

    with _store(database_url, home) as store, usage_errors():
        run_id = _resolve(store, run)
        entries, summary = run_reviews(store, run_id, home)
        detail = store.get_run(run_id)
    assert detail is not None, "a run just resolved"
    if as_json:
        echo_json(reviews_document(run_id, entries, summary, detail.reruns, detail.rerun_of))
        return
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]{markup_safe(run_id)}[/]  review: {_state_text(summary)}")
    if detail.rerun_of:
        console.print(f"re-runs {markup_safe(detail.rerun_of)}")
    for rerun in detail.reruns:
        console.print(f"re-run by {markup_safe(rerun)}")
    if not entries:
        console.print("No reviews yet.")
        return
    valid = _valid_digests(summary)
    for entry in entries:
        state = "" if entry.digest in valid else " [red]VOID[/] [dim](a file changed since)[/]"
        if entry.kind == "mark" and entry.digest not in valid:
            state = " [dim](superseded or void)[/]"
        what = entry.decision if entry.kind == "decision" else f"mark {entry.mark}"
        console.print(
            f"{entry.seq:>3} {markup_safe(entry.created_at[:19])} "
            f"[bold]{markup_safe(entry.reviewer)}[/] {markup_safe(str(what))} "
            f"{_target(entry)}{state}"
        )
        if entry.correction:
            fixes = ", ".join(f"{k} = {v}" for k, v in entry.correction.items())
            console.print(f"      correction: {markup_safe(fixes)}")
        for line in entry.note.splitlines() or [""]:
            console.print(f"      {markup_safe(line)}")


def _valid_digests(summary: ReviewSummary) -> set[str]:
    return {e.digest for e in summary.decisions} | {e.digest for e in summary.marks}


@click.command("marks")
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
@click.option(
    "--format",
    "kind",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
    help="CSV (one header row) or JSON lines.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write to FILE (default: stdout).",
)
@home_option
@database_url_option
def marks_command(
    runs: tuple[str, ...],
    kind: str,
    output: Path | None,
    home: Path | None,
    database_url: str | None,
) -> None:
    """Export every current mark of the RUNs, one row per claim and reviewer."""
    from runlens.review.record import marks_table

    with _store(database_url, home) as store, usage_errors():
        run_ids = [_resolve(store, run) for run in runs]
        rows = marks_table(store, run_ids, home)
    from runlens.review.record import marks_text

    text = marks_text(rows, kind)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageFailure(f"cannot write {output}: {error.strerror or error}") from None
    click.echo(f"{len(rows)} mark(s) written to {output}", err=True)
