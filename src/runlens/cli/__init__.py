"""The `runlens` command: thin wrappers that parse, call the library and print.

Subcommands live in their own modules and are imported only when invoked, so
`runlens --help` stays fast.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

import click

# command name -> (module, attribute, one-line help)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("runlens.cli.run", "run_command", "Run a plugin on an input and validate the result."),
    "validate": (
        "runlens.cli.validate",
        "validate_command",
        "Run the Stop validators on an existing workspace.",
    ),
    "runs": ("runlens.cli.runs", "runs_command", "List past runs."),
    "show": ("runlens.cli.show", "show_command", "Show one run: status, plan, findings, events."),
    "reindex": (
        "runlens.cli.runs",
        "reindex_command",
        "Re-read workspaces into the run store.",
    ),
    "plugins": (
        "runlens.cli.plugin_kit",
        "plugins_command",
        "List the installed plugins with their deliverables.",
    ),
    "new-plugin": (
        "runlens.cli.plugin_kit",
        "new_plugin_command",
        "Write a working plugin package from the template.",
    ),
    "check-plugin": (
        "runlens.cli.plugin_kit",
        "check_plugin_command",
        "Run the conformance suite on an installed plugin.",
    ),
    "submit": (
        "runlens.cli.workers",
        "submit_command",
        "Queue runs for the workers (one per input).",
    ),
    "rerun": (
        "runlens.cli.rerun",
        "rerun_command",
        "Run a run's input again, its review's findings given to the model to address.",
    ),
    "worker": ("runlens.cli.workers", "worker_command", "Execute queued runs until stopped."),
    "cancel": ("runlens.cli.workers", "cancel_command", "Cancel a queued or running run."),
    "keys": (
        "runlens.cli.verdict",
        "keys_command",
        "Make and show the keys that sign run verdicts.",
    ),
    "verify": (
        "runlens.cli.verdict",
        "verify_command",
        "Re-check a run's signed verdict: signature, hashes, index, validators.",
    ),
    "reviewers": (
        "runlens.cli.review",
        "reviewers_command",
        "Add and list the people who review runs.",
    ),
    "review": (
        "runlens.cli.review",
        "review_command",
        "Approve, request changes to or reject a run (signed, bound to its files).",
    ),
    "mark": (
        "runlens.cli.review",
        "mark_command",
        "Mark one citation of a run correct, wrong or unsure (signed).",
    ),
    "reviews": (
        "runlens.cli.review",
        "reviews_command",
        "Show a run's review: state, decisions, marks.",
    ),
    "marks": (
        "runlens.cli.review",
        "marks_command",
        "Export the marks of runs (CSV or JSON lines), one row per claim and reviewer.",
    ),
    "ui": ("runlens.cli.ui", "ui_command", "Serve the pages and the HTTP API over the run store."),
    "verify-source": (
        "runlens.cli.source",
        "verify_source_command",
        "Is a file the data a run read: identical, same rows, or rows changed.",
    ),
    "drift": (
        "runlens.cli.source",
        "drift_command",
        "Which claims of a run a newer data file makes stale.",
    ),
    "export": (
        "runlens.cli.export",
        "export_command",
        "Write a run as one HTML file that checks itself (runlens verify FILE too).",
    ),
    "export-trace": (
        "runlens.cli.export",
        "export_trace_command",
        "Send a run's trace to an OpenTelemetry collector (OTLP/HTTP).",
    ),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            return None
        command: click.Command = getattr(module, attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, _, help_text) in _COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="runlens")
def cli() -> None:
    """RunLens: agent runs that complete only when their deliverables hold up."""


#: Whether the command running is the process's own (`main`: the `runlens` script, `python -m
#: runlens`) rather than one invoked inside a longer-lived process (an application, a test's
#: `CliRunner`): only then may a command tune the process for its one use (`runlens run`).
owns_process = False


def main(argv: list[str] | None = None) -> Any:
    """Console entry point. Usage errors exit 2 (click's convention, matching SPEC section 10)."""
    global owns_process
    owns_process = True
    try:
        return cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="runlens")
    except SystemExit as done:
        _exit_past_abandoned_validators(done.code)
        raise


def _exit_past_abandoned_validators(code: int | str | None) -> None:
    """Exit at once when a validator thread was left running (a run cancelled, or a validator
    timed out, mid-validation). Every record is written by now; waiting for the interpreter's
    teardown would only wait for that thread to let go of the GIL and free the run's memory,
    which on a large input takes longer than the run took to stop."""
    import threading

    if not any(
        thread.daemon and thread.is_alive() and thread.name.startswith("runlens-validators")
        for thread in threading.enumerate()
    ):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))
