"""One way to start a run: the options it is asked with, the one check of its model, and the
one function that opens it with its store mirror.

A run starts from one of three entries, and each turns what it was given into `RunOptions`:

- `runlens run PLUGIN INPUT` (`runlens.cli.run`), from its arguments;
- the upload form of `runlens ui` (`runlens.ui.launcher`), which starts the run as a child
  `runlens run` process with the arguments `RunOptions.run_arguments` gives (the child keeps a
  CPU-bound analysis off the web server, and a crash away from it);
- the queue: `runlens submit` writes a `RunRequest` (`runlens.workers.request`) holding the
  options, and the worker that takes it opens the run (`runlens.workers.workflow`).

Each entry checks the model with `check_model` before anything is recorded, and the two that
execute a run in their own process (`runlens run`, a worker) open it with `open_run`, which
checks the model again where the run executes and builds it there (API keys are the
executing process's own).

A run re-run with its review (`runlens rerun RUN --with-review`, the run page's button) is
planned by `rerun_settings`: the same plugin, input and options as the run had, and the
review's findings for the model to address (SPEC 17).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from runlens.errors import UserError, one_line
from runlens.runtime.settings import RunSettings

if TYPE_CHECKING:
    from runlens.hooks.command import CommandHook
    from runlens.models.base import Model
    from runlens.plugins.base import Plugin
    from runlens.records.readers import RunRecordView
    from runlens.runtime.journal import Journal
    from runlens.runtime.run import Run
    from runlens.store.db import RunStore
    from runlens.store.mirror import StoreMirror
    from runlens.store.rows import Origin, RunSummary

#: Why a server refuses `scripted:PATH`: the path names a file on the server.
SCRIPTED_ON_SERVER: Final = (
    "it names a file on the server (choose offline, openai:MODEL, anthropic:MODEL, ...)"
)
#: Why the queue refuses `scripted:PATH`: a worker elsewhere cannot read the file.
SCRIPTED_IN_QUEUE: Final = (
    "scripted:PATH names a file on this machine, which a worker elsewhere cannot read: use "
    "`runlens run` for scripted models"
)
#: Providers whose models are built without a key, a URL or a name to check beforehand.
_LOCAL_PROVIDERS: Final = frozenset({"offline", "scripted"})


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a run is asked to be, however it is started: plugin, model spec and options
    (the input, the run id and the workspace are the entry's to give)."""

    plugin: str
    model: str = "offline"
    repair_turns: int = 0
    max_turns: int | None = None
    max_tool_calls: int | None = None
    wall_time: float | None = None
    encoding: str | None = None
    id_column: str | None = None
    text_column: str | None = None
    sheet: str | None = None
    #: Where the input comes from (`--source-ref URI`), recorded in the source lock.
    source_ref: str | None = None
    #: Who starts the run (`--as NAME`): run.json's `submitted_by` (SPEC 17).
    submitted_by: str | None = None
    #: The run this one re-runs with its review (`runlens rerun RUN --with-review`).
    rerun_of: str | None = None
    #: The findings of that review the model is given to address (`rerun_settings`).
    review_findings: tuple[str, ...] = ()

    def settings(self, command_hooks: tuple[CommandHook, ...] = ()) -> RunSettings:
        """The run's settings in this process (its secrets and retry delay from its env)."""
        return RunSettings.from_options(
            repair_turns=self.repair_turns,
            max_turns=self.max_turns,
            max_tool_calls=self.max_tool_calls,
            wall_time=self.wall_time,
            encoding=self.encoding,
            id_column=self.id_column,
            text_column=self.text_column,
            sheet=self.sheet,
            source_ref=self.source_ref,
            submitted_by=self.submitted_by,
            rerun_of=self.rerun_of,
            review_findings=self.review_findings,
            command_hooks=command_hooks,
        )

    def run_arguments(self) -> list[str]:
        """The `runlens run` options these become (the plugin and the input not included),
        each one `--flag=value` token so a value that starts with a dash is never read as
        another option."""
        args = [f"--model={self.model}", f"--repair-turns={self.repair_turns}"]
        for flag, value in (
            ("--max-turns", self.max_turns),
            ("--max-tool-calls", self.max_tool_calls),
            ("--wall-time", self.wall_time),
            ("--id-column", self.id_column),
            ("--text-column", self.text_column),
            ("--encoding", self.encoding),
            ("--sheet", self.sheet),
            ("--source-ref", self.source_ref),
            ("--as", self.submitted_by),
            ("--rerun-of", self.rerun_of),
        ):
            if value is not None:
                args.append(f"{flag}={value}")
        args.extend(f"--review-finding={finding}" for finding in self.review_findings)
        return args

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: The names of `RunOptions`' fields, as a queued run's JSON holds them.
OPTION_FIELDS: Final = frozenset(field.name for field in dataclasses.fields(RunOptions))


def check_model(
    spec: str | None, plugin: Plugin, *, refuse_scripted: str | None = None, build: bool = False
) -> str:
    """The model spec a run of `plugin` uses (`offline` when none is given), checked the same
    way wherever a run starts; `UserError` naming what is wrong.

    `refuse_scripted`: why `scripted:PATH` is refused here (a server, the queue), None where it
    is accepted. `build`: also build the model as the run's process will (then close it), so a
    missing API key or a bad base URL is refused now rather than at the run's first model call;
    only where the check runs in the environment the run will have.
    """
    from runlens.models.registry import known_providers

    spec = (spec or "offline").strip()
    provider, _, name = (part.strip() for part in spec.partition(":"))
    if provider == "scripted" and refuse_scripted is not None:
        raise UserError(f"model {spec!r} is refused: {refuse_scripted}")
    providers = known_providers()
    if provider not in providers:
        raise UserError(
            f"model {spec!r}: unknown provider {provider!r} (available: {', '.join(providers)})"
        )
    if provider == "offline":
        if plugin.offline_model is None:
            raise UserError(_no_offline_model(plugin, scripted=refuse_scripted is None))
        return spec
    if not name:
        what = "PATH" if provider == "scripted" else "NAME"
        raise UserError(f"model {spec!r} names no model: write {provider}:{what}")
    if build and provider not in _LOCAL_PROVIDERS:
        model = open_model(spec, plugin)
        asyncio.run(model.aclose())  # callers check outside any event loop
    return spec


def open_model(spec: str, plugin: Plugin) -> Model:
    """Build the model `spec` names for a run of `plugin`; `UserError` naming the spec when it
    cannot be used here (a missing API key, a bad base URL)."""
    from runlens.models.registry import ModelContext, resolve_model

    try:
        return resolve_model(spec, ModelContext(plugin=plugin))
    except UserError as error:
        raise UserError(f"model {spec!r} cannot be used here: {error}") from None
    except Exception as error:
        reason = one_line(error, 300)
        raise UserError(f"model {spec!r} cannot be used here: {reason}") from None


def _no_offline_model(plugin: Plugin, *, scripted: bool) -> str:
    """The models a plugin without an offline model can run with, named."""
    choices = ["openai:MODEL", "anthropic:MODEL", *_other_providers()]
    if scripted:
        choices.append("scripted:PATH")
    message = (
        f"plugin {plugin.name} has no offline model: run it with --model "
        f"{', '.join(choices[:-1])} or {choices[-1]}"
    )
    if scripted and plugin.conformance is not None:
        message += f" (its passing script: scripted:{plugin.conformance.passing_model})"
    return message


def _other_providers() -> list[str]:
    """Model providers other packages register (`runlens.models` entry points)."""
    from runlens._entry_points import group_entry_points
    from runlens.models.registry import GROUP

    builtin = {"offline", "scripted", "openai", "anthropic"}
    names = sorted({ep.name for ep in group_entry_points(GROUP)} - builtin)
    return [f"{name}:MODEL" for name in names]


@dataclass(frozen=True)
class Durable:
    """What a run of the workers adds: its steps checkpointed (`journal`), the events it
    published before its worker stopped (`replay_events`), what to do when a replay publishes
    something else (`on_replay_diverged`), and the worker that holds it (its files go to the
    store)."""

    journal: Journal
    replay_events: Sequence[Mapping[str, Any]]
    on_replay_diverged: Callable[[int], None]
    worker: str
    #: The worker's runs home: its `keys/default.pem` signs the run's verdict (unless the
    #: worker's `RUNLENS_SIGNING_KEY` names another key).
    home: Path | None = None


def open_run(
    store: RunStore,
    options: RunOptions,
    plugin: Plugin,
    input_path: Path,
    workspace: Path,
    *,
    run_id: str,
    origin: Origin,
    refuse_scripted: str | None = None,
    command_hooks: tuple[CommandHook, ...] = (),
    durable: Durable | None = None,
) -> tuple[Run, StoreMirror]:
    """Open the run `options` name on `input_path` in `workspace`, mirrored into `store`
    (started: a cancel asked for there cancels the run). `UserError` before the workspace is
    claimed when the model cannot be used here. The caller executes the run, then calls
    `mirror.finish()`; the store stays the caller's to close."""
    from runlens.runtime.run import Run
    from runlens.secrets import redactor
    from runlens.store.mirror import StoreMirror

    spec = check_model(options.model, plugin, refuse_scripted=refuse_scripted)
    model = open_model(spec, plugin)
    settings = options.settings(command_hooks)
    if durable is not None and durable.home is not None:
        settings = dataclasses.replace(settings, keys_home=durable.home)
    runs: list[Run] = []
    mirror = StoreMirror(
        store,
        run_id,
        workspace,
        on_cancel=lambda reason: runs[0].cancel(reason) if runs else None,
        origin=origin,
        redact=redactor(settings.secrets),
        upload_files=durable is not None,
        worker=durable.worker if durable is not None else None,
    )
    run = Run(
        plugin=plugin,
        input_path=input_path,
        model=model,
        workspace=workspace,
        settings=settings,
        run_id=run_id,
        subscribers=[mirror],
        journal=durable.journal if durable is not None else None,
        replay_events=durable.replay_events if durable is not None else (),
        on_replay_diverged=durable.on_replay_diverged if durable is not None else None,
    )
    runs.append(run)
    return run, mirror.start()


def default_submitter() -> str | None:
    """Who starts a run when `--as` does not say: `$RUNLENS_USER`, else the login name; None
    when neither is known or the login name cannot name a reviewer. `UserError` when
    `$RUNLENS_USER` cannot (it is set on purpose: it is said, not ignored)."""
    import getpass
    import os

    from runlens.review.entries import ReviewError, check_reviewer_name

    named = os.environ.get("RUNLENS_USER")
    if named:
        try:
            return check_reviewer_name(named)
        except ReviewError as error:
            raise UserError(f"$RUNLENS_USER: {error}") from None
    try:
        return check_reviewer_name(getpass.getuser())
    except (OSError, KeyError, ReviewError):  # no login name here, or not one a name can be
        return None


# -- re-running a run with its review -----------------------------------------------------

#: The most findings a rerun gives its model, and their most characters in all: a review
#: of thousands of marks would not fit the model's context (nor `runlens run`'s arguments,
#: how the UI starts a rerun). The newest are kept; the first line says how many were not.
MAX_RERUN_FINDINGS: Final = 200
MAX_RERUN_FINDINGS_CHARS: Final = 100_000
#: Where a run's files the store holds are written on this machine (as the UI caches them).
STORE_CACHE: Final = ".store-cache"


@dataclass(frozen=True, slots=True)
class RerunPlan:
    """A run of the same input as run `rerun_of`, with its options, whose model is given the
    findings of that run's review to address. Start it as any run: `open_run(store,
    plan.options, plugin, plan.input_path, ...)` (`runlens rerun`), or `runlens run` with
    `plan.options.run_arguments()` (the UI's child process)."""

    rerun_of: str
    #: Same plugin and options as the run; the model given or the run's; `submitted_by`,
    #: `rerun_of` and `review_findings` set.
    options: RunOptions
    #: The run's input (its workspace's `input/`, or the store's copy of it).
    input_path: Path

    @property
    def plugin(self) -> str:
        return self.options.plugin

    @property
    def model(self) -> str:
        return self.options.model

    @property
    def findings(self) -> tuple[str, ...]:
        return self.options.review_findings

    def settings(self, command_hooks: tuple[CommandHook, ...] = ()) -> RunSettings:
        return self.options.settings(command_hooks)


def rerun_settings(
    store: RunStore,
    run_id: str,
    *,
    home: Path | None,
    model: str | None = None,
    submitted_by: str | None = None,
) -> RerunPlan:
    """Plan a rerun of run `run_id` (its exact id) with its review: same plugin, same input
    file, same options (encoding, columns, sheet, limits, source ref: from its `run.json`),
    `model` or the run's, started by `submitted_by`; the model is given the review's findings
    (`runlens.review.findings.findings_for_rerun`). `home`: the runs home (reviewer keys, and
    where a run's files the store holds are written when its workspace is not here).

    `UserError` naming why when the run is unknown, its input cannot be found here, or its
    review asks for nothing (no valid request-changes or reject, no wrong or unsure mark).
    The model is not checked: the caller does, as where it starts any run (`check_model`)."""
    from runlens.review.findings import findings_for_rerun
    from runlens.review.record import run_reviews

    run = store.get_run(run_id)
    if run is None:
        raise UserError(f"no run {run_id} in the run store ({store.url})")
    entries, summary = run_reviews(store, run_id, home=home)
    findings = findings_for_rerun(entries, summary, run_id)
    if not findings:
        raise UserError(
            f"run {run_id} has nothing to re-run with: its review (state {summary.state}) "
            "holds no request-changes or reject note and no wrong or unsure mark on its "
            "current files (runlens reviews " + run_id + ")"
        )
    record, input_path = _run_input(store, run, home)
    options = _options_of(record, run)
    return RerunPlan(
        rerun_of=run_id,
        options=dataclasses.replace(
            options,
            model=model or options.model,
            submitted_by=submitted_by,
            rerun_of=run_id,
            review_findings=_bounded(findings),
        ),
        input_path=input_path,
    )


def _run_input(store: RunStore, run: RunSummary, home: Path | None) -> tuple[RunRecordView, Path]:
    """The run's record and its input file: from its workspace when it is on this machine,
    else from the store's copies (written under `<home>/.store-cache/<run_id>/`)."""
    from runlens.records.io import runs_home
    from runlens.records.readers import read_run_record
    from runlens.store.files import check_file_path
    from runlens.store.sync import local_workspace
    from runlens.tools.workspace import Workspace

    name = run.input_name or ""
    if not name or name != Path(name).name or name in (".", ".."):
        raise UserError(f"run {run.run_id} records no input file name: it cannot be re-run")
    relative = f"input/{name}"
    root = local_workspace(store, run)
    if root is None:
        try:
            check_file_path(run.run_id)
            root = runs_home(home).absolute() / STORE_CACHE / run.run_id
            store.materialize(run.run_id, root, paths=[Workspace.RUN_RECORD, relative])
        except (ValueError, OSError) as error:
            reason = f"run {run.run_id}: its files cannot be written here: {error}"
            raise UserError(reason) from None
    record = read_run_record(root / Workspace.RUN_RECORD).view
    path = root / relative
    if record is None or not path.is_file() or path.is_symlink():
        raise UserError(
            f"run {run.run_id}: its input ({relative}) and run record are neither in a "
            f"workspace on this machine nor in the run store: it cannot be re-run here"
        )
    return record, path


def _options_of(record: RunRecordView, run: RunSummary) -> RunOptions:
    """The options the run was started with, as far as its `run.json` tells them: the input's
    reading (an encoding the user named, the id, text column and sheet read), the limits that
    were not the defaults, the repair rounds and the `--source-ref` URI."""
    from runlens.runtime.loop import LoopLimits

    read = record.input_format or {}
    defaults, limits = LoopLimits(), record.limits
    ref = (record.source_lock or {}).get("ref")
    uri = ref.get("uri") if isinstance(ref, dict) else None

    def text(key: str) -> str | None:
        value = read.get(key)
        return value if isinstance(value, str) and value else None

    def limit(value: float | None, default: float) -> float | None:
        return value if value is not None and value != default else None

    max_turns = limit(limits.max_turns, defaults.max_turns) if limits else None
    max_tool_calls = limit(limits.max_tool_calls, defaults.max_tool_calls) if limits else None
    return RunOptions(
        plugin=record.plugin or run.plugin,
        model=record.model or run.model,
        repair_turns=record.repair_turns or 0,
        max_turns=int(max_turns) if max_turns is not None else None,
        max_tool_calls=int(max_tool_calls) if max_tool_calls is not None else None,
        wall_time=limit(limits.wall_time_seconds, defaults.wall_time_seconds) if limits else None,
        # A detected encoding is detected again from the same bytes; a named one is named.
        encoding=text("encoding") if read.get("encoding_method") == "given" else None,
        id_column=text("id_column") if read.get("id_rule", "column") == "column" else None,
        text_column=text("text_column"),
        sheet=text("sheet"),
        source_ref=uri if isinstance(uri, str) and uri else None,
    )


def _bounded(findings: tuple[str, ...]) -> tuple[str, ...]:
    """The newest findings that fit `MAX_RERUN_FINDINGS` and `MAX_RERUN_FINDINGS_CHARS`,
    after a line saying how many older ones were left out."""
    kept: list[str] = []
    size = 0
    for finding in reversed(findings):
        if len(kept) == MAX_RERUN_FINDINGS or size + len(finding) > MAX_RERUN_FINDINGS_CHARS:
            break
        kept.append(finding)
        size += len(finding)
    left_out = len(findings) - len(kept)
    if left_out:
        kept.append(
            f"({left_out} older findings of the review are left out here; "
            "`runlens reviews` lists them all)"
        )
    return tuple(reversed(kept))


__all__ = [
    "MAX_RERUN_FINDINGS",
    "MAX_RERUN_FINDINGS_CHARS",
    "OPTION_FIELDS",
    "SCRIPTED_IN_QUEUE",
    "SCRIPTED_ON_SERVER",
    "Durable",
    "RerunPlan",
    "RunOptions",
    "check_model",
    "default_submitter",
    "open_model",
    "open_run",
    "rerun_settings",
]
