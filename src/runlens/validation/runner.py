"""The one validation runner: every Stop validator on a workspace, aggregated into one verdict.

    report = validate_workspace(workspace, plugin.contracts, expected_index_sha256=sha)
    report.passed, report.error_message, report.artifacts["artifacts/product_backlog.json"]

`runlens run` (through `HookManager.run_stop`) and `runlens validate` both run validators
through `run_validators`: each in a worker thread with its own fail-closed timeout. Every
validator runs: none is skipped because an earlier one blocked, so one verdict shows missing
files, bad enums and fabricated evidence at once (SPEC section 2).

Validator plugins
-----------------
A package adds validators through the `runlens.validators` entry point group. The entry point
names a factory that takes no arguments and returns an object with a `name` and a
`validate(context: ValidationContext) -> ValidatorResult` method (see
`runlens.validation.Validator`). `context.contracts` holds every contract of the run,
`context.workspace` the folder to read. In the plugin's `pyproject.toml`:

    [project.entry-points."runlens.validators"]
    backlog-metrics = "my_package.validators:BacklogMetricsValidator"

A finding is attributed to the artifact it names in `Finding.artifact` (use the contract name;
"" for a finding about the run as a whole). Its `code` may be any snake_case word: plugins add
their own codes beside the built-in ones (`runlens.validation.findings.BUILTIN_CODES`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final, Protocol

from pydantic import BaseModel, Field

from runlens._entry_points import group_entry_points
from runlens.contracts import ArtifactContract
from runlens.errors import ContractError, UserError
from runlens.idle_threads import IdleThreads
from runlens.secrets import redactor
from runlens.validation.base import (
    CitedSpan,
    IdCitation,
    QuoteLocation,
    ValidationContext,
    Validator,
    ValidatorResult,
)
from runlens.validation.citations import MarkdownCitationValidator
from runlens.validation.coverage import CoverageValidator
from runlens.validation.evidence import EvidenceCitationValidator
from runlens.validation.figure_rules import FigureRule
from runlens.validation.figures import FigureValidator
from runlens.validation.findings import ArtifactStatus, Finding
from runlens.validation.json_rules import JsonOutputValidator
from runlens.validation.markdown import MarkdownSectionValidator
from runlens.validation.required import RequiredOutputValidator
from runlens.validation.secrets import SecretValidator

VALIDATOR_GROUP = "runlens.validators"
#: Seconds one validator may take before it blocks with `hook_error` (fail closed).
DEFAULT_TIMEOUT = 30.0
#: Seconds a validator without a timeout of its own may take per MiB the round judges
#: (`ValidationContext.judged_bytes`) when that is longer than the default: a validator's
#: time grows with the input, and a fixed limit would fail a correct run of a large file on a
#: busy machine. Over ten times what the slowest built-in validator needs at 100,000 rows.
SECONDS_PER_MIB = 0.5

#: A validator and its own timeout (None: the runner's default).
TimedValidator = tuple[Validator, float | None]


class ValidationReport(BaseModel):
    """The aggregated verdict of every Stop validator on one workspace.

    `artifacts` maps each contract name to `missing` (no usable file), `rejected` (some finding
    names it) or `validated`. `error_message` joins the blocked validators' summary lines with
    `; ` and is None exactly when the report passed.
    """

    passed: bool
    findings: list[Finding]
    artifacts: dict[str, ArtifactStatus]
    error_message: str | None
    summaries: list[str] = Field(default_factory=list)
    quotes: list[QuoteLocation] = Field(default_factory=list)
    #: Evidence ids cited without a quote and verified (apart from `quotes`, which count
    #: the quotes traced).
    id_citations: list[IdCitation] = Field(default_factory=list)
    #: Where the Markdown citations that failed are written (their findings say why).
    failed_spans: list[CitedSpan] = Field(default_factory=list)
    blocked_validators: list[str] = Field(default_factory=list)


class JudgedPlugin(Protocol):
    """What the runner reads of a plugin (a `runlens.Plugin` is one): its contracts, its
    figure rules and the validators it declares itself."""

    @property
    def contracts(self) -> Sequence[ArtifactContract]: ...

    @property
    def figure_rules(self) -> Sequence[FigureRule]: ...

    @property
    def extra_validators(self) -> Sequence[Validator]: ...


def builtin_validators(contracts: Iterable[ArtifactContract]) -> list[Validator]:
    """The built-in validators, SPEC's four first, each given the contracts it applies to.

    Raises `ContractError` when a contract cannot be used (e.g. an invalid `json_schema`).
    """
    contracts = tuple(contracts)
    return [
        RequiredOutputValidator(contracts),
        JsonOutputValidator(contracts),
        MarkdownSectionValidator(contracts),
        EvidenceCitationValidator(contracts),
        MarkdownCitationValidator(contracts),
        CoverageValidator(contracts),
        SecretValidator(),
    ]


def load_validator_plugins() -> list[Validator]:
    """Instantiate every validator registered under the `runlens.validators` entry point group.

    Sorted by entry point name so the order of findings does not depend on install order.
    The entry points are read once per process (`runlens._entry_points`); the validators are
    made anew for each call.
    A factory that fails or returns something that is not a validator raises `ContractError`
    naming the entry point: a misconfigured plugin must not silently skip its checks.
    """
    validators: list[Validator] = []
    for entry in sorted(group_entry_points(VALIDATOR_GROUP), key=lambda e: e.name):
        try:
            validator = entry.load()()
        except Exception as error:
            raise ContractError(
                f"validator plugin {entry.name!r} ({entry.value}) could not be loaded: {error}"
            ) from error
        if not isinstance(validator, Validator):
            raise ContractError(
                f"validator plugin {entry.name!r} ({entry.value}) did not return a validator "
                "(an object with `name` and `validate(context)`)"
            )
        validators.append(validator)
    return validators


def plugin_validators(declared: Iterable[object]) -> list[Validator]:
    """Check the validators a plugin declares itself (`Plugin.extra_validators`)."""
    validators: list[Validator] = []
    for candidate in declared:
        if not isinstance(candidate, Validator):
            raise ContractError(f"{candidate!r} is not a validator (needs `name` and `validate`)")
        validators.append(candidate)
    return validators


def extra_validators(declared: Iterable[object], *, entry_points: bool = True) -> list[Validator]:
    """The Stop validators beyond the built-ins: a plugin's own, then installed ones.

    One list for `runlens run` and `runlens validate`, so both judge a workspace alike.
    """
    validators = plugin_validators(declared)
    if entry_points:
        validators.extend(load_validator_plugins())
    return validators


def stop_validators(plugin: JudgedPlugin, *, entry_points: bool = True) -> list[Validator]:
    """Every Stop validator a run of `plugin` is judged by, in order: the built-ins for its
    contracts, then the checks of its figure rules, then its own validators, then installed
    ones (`entry_points=False` leaves those out). One list for `runlens run` and
    `runlens validate`, so both judge alike."""
    validators = builtin_validators(plugin.contracts)
    if plugin.figure_rules:
        validators.append(FigureValidator(plugin.figure_rules))
    return [*validators, *extra_validators(plugin.extra_validators, entry_points=entry_points)]


def _status(
    context: ValidationContext, contract: ArtifactContract, named: set[str]
) -> ArtifactStatus:
    if context.artifact_file(contract.name) is None:
        return "missing"
    return "rejected" if contract.name in named else "validated"


def aggregate(
    results: Sequence[ValidatorResult],
    contracts: Iterable[ArtifactContract],
    workspace: Path | ValidationContext,
) -> ValidationReport:
    """Combine validator results into one report.

    `workspace` is the folder validated, or better the round's `ValidationContext`, whose
    file checks the validators have already made.

    An artifact's status comes only from the findings that name it, whichever validator
    produced them, so a cross-artifact evidence error rejects every artifact that cites the
    bad id and no other.
    """
    contracts = tuple(contracts)
    findings = [finding for result in results for finding in result.findings]
    named = {finding.artifact for finding in findings}
    blocked = [result for result in results if result.blocked]
    context = (
        workspace
        if isinstance(workspace, ValidationContext)
        else ValidationContext(Path(workspace), contracts)
    )
    summaries = [
        result.summary or f"{result.validator}: {len(result.findings)} findings"
        for result in blocked
    ]
    report = ValidationReport(
        passed=not blocked,
        findings=findings,
        artifacts={c.name: _status(context, c, named) for c in contracts},
        # Validators that share a cause (an untrusted index) say it once.
        error_message="; ".join(dict.fromkeys(summaries)) if summaries else None,
        summaries=summaries,
        quotes=[quote for result in results for quote in result.quotes],
        id_citations=[cited for result in results for cited in result.id_citations],
        failed_spans=[cited for result in results for cited in result.failed_spans],
        blocked_validators=[result.validator for result in blocked],
    )
    return _redacted(report, context.secrets)


def _redacted(report: ValidationReport, secrets: Sequence[str]) -> ValidationReport:
    """`report` with every known secret blanked out of its findings and messages: a finding
    may quote a deliverable that holds a key, and reports reach records and stdout."""
    redact = redactor(secrets)
    if redact is None:
        return report
    encoded = report.model_dump_json()
    cleaned = redact(encoded)
    return report if cleaned == encoded else ValidationReport.model_validate_json(cleaned)


def validate_workspace(
    workspace: Path,
    contracts: Iterable[ArtifactContract],
    *,
    expected_index_sha256: str | None = None,
    extra: Iterable[Validator] = (),
    plugin: JudgedPlugin | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    source: Path | None = None,
    index_file: Path | None = None,
    secrets: Sequence[str] = (),
) -> ValidationReport:
    """Run the built-in validators, then `extra` ones, on `workspace`, and aggregate.

    With `plugin`, its whole list of Stop validators (`stop_validators`) runs instead of the
    built-ins for `contracts`, before `extra`.

    `expected_index_sha256` is the Evidence Index hash recorded when the run wrote it; None
    skips that comparison (the index is judged against its source either way: `source`, or
    the workspace's `input/` copy). `index_file` replaces `runtime/evidence_index.json`;
    `secrets` are the provider keys no deliverable may contain. Not for use inside a running
    event loop (`runlens run` awaits `run_validators` itself).
    """
    contracts = tuple(contracts)
    context = ValidationContext(
        Path(workspace),
        contracts,
        expected_index_sha256,
        secrets=tuple(secrets),
        source=source,
        index_file=index_file,
    )
    base = stop_validators(plugin) if plugin is not None else builtin_validators(contracts)
    validators: list[TimedValidator] = [(v, None) for v in (*base, *extra)]
    timed: list[tuple[ValidatorResult, float]] = []

    async def judge() -> None:
        # The results are handed over beside the task, not as its result: at its end
        # `asyncio.run` formats a repr of its main task (Python 3.11, restoring the SIGINT
        # handler), and a result's repr lists every quote location of the round.
        timed.extend(await run_validators(validators, context, default_timeout=timeout))

    with _collector_paused():
        asyncio.run(judge())
        return aggregate([result for result, _ in timed], contracts, context)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for one validation round, then as it was.

    A round of a large run reads the Evidence Index, the source and the deliverables into
    memory and makes a record per row; each full collection in between walks all of them
    again (a tenth to a sixth of a round of 100,000 rows), and a round leaves almost no
    cycles behind: they are collected after it. Reference counting frees everything else as
    usual. Only for `validate_workspace`, which owns its process's round (`runlens run`
    judges inside a running event loop and leaves the collector alone)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def run_validators(
    validators: Sequence[TimedValidator],
    context: ValidationContext,
    *,
    default_timeout: float = DEFAULT_TIMEOUT,
) -> list[tuple[ValidatorResult, float]]:
    """Run every validator; return each result with its duration in seconds.

    Validators are synchronous and deterministic; they run one after another in a worker
    thread, so a slow one can be timed out without stalling the event loop, and a round costs
    one thread trip. Each keeps its own fail-closed timeout: one that overruns it gets a
    blocking `hook_error` result and is left behind in its thread (a thread cannot be
    stopped); the validators after it go on in a fresh thread. A validator that raises gets a
    `hook_error` result too, except for `UserError` (a misconfiguration), which propagates.
    """

    def limit(timeout: float | None) -> float:
        return timeout if timeout is not None else scaled

    scaled = scaled_timeout(default_timeout, context) if validators else default_timeout

    results: list[tuple[ValidatorResult, float]] = []
    pending = tuple(validators)
    while pending:
        batch = _ValidatorBatch(pending, context)
        hung = await _watch(batch, limit)
        finished = batch.results if hung is None else batch.results[:hung]
        results.extend((result, seconds) for result, seconds, _ in finished)
        if hung is None:
            break
        validator, timeout = pending[hung]
        results.append(
            (
                _error_result(validator.name, f"timed out after {limit(timeout):g}s"),
                batch.overrun(hung),
            )
        )
        pending = pending[hung + 1 :]
    return results


def scaled_timeout(default_timeout: float, context: ValidationContext) -> float:
    """The limit of a validator without a timeout of its own: `default_timeout`, or
    `SECONDS_PER_MIB` per MiB of what the round judges when that is longer."""
    return max(default_timeout, context.judged_bytes() / 2**20 * SECONDS_PER_MIB)


async def _watch(batch: _ValidatorBatch, limit: Callable[[float | None], float]) -> int | None:
    """Run `batch` in a worker thread; return the index of a validator that overran, or None.

    The event loop sleeps until the batch ends or the running validator's deadline passes,
    so a normal round costs one thread trip and no polling.
    """
    future = _in_daemon_thread(batch)
    try:
        while not future.done():
            index = len(batch.results)  # validators [0, index) are done; `index` is running
            if index == len(batch.validators):
                await future  # the thread is returning
                break
            deadline = batch.started_at(index) + limit(batch.validators[index][1])
            # `asyncio.wait` leaves the future running when it times out.
            await asyncio.wait((future,), timeout=max(deadline - time.perf_counter(), 0))
            if not future.done() and len(batch.results) == index:
                batch.abandon()  # no progress: `index` overran its limit
                return index
    except asyncio.CancelledError:
        batch.abandon()
        raise
    future.result()  # a bug in `run` itself (or a UserError) surfaces, not "all validated"
    return None


def _in_daemon_thread(batch: _ValidatorBatch) -> asyncio.Future[None]:
    """Run `batch` on a daemon thread; the future resolves when it returns.

    A daemon thread, not the loop's executor: a validator that hangs past its timeout is
    abandoned, and must not keep the process from exiting once the run has failed it. The
    thread is an idle one a finished round gave back to the process (`_IDLE`) when there is
    one: starting a thread costs more than a short run's whole round, and `Thread.start`
    holds the event loop until the new thread runs. A thread whose batch was abandoned is
    never given another.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    def target() -> tuple[bool, Callable[[], None]]:
        error: BaseException | None = None
        try:
            batch.run()
        except BaseException as raised:  # handed to the awaiting coroutine
            error = raised

        def announce() -> None:
            with contextlib.suppress(RuntimeError):  # the loop may be closed by now
                loop.call_soon_threadsafe(settle, error)

        return batch.release(), announce

    worker = _IDLE.take()
    if worker is None:
        _ValidatorThread(target)
    else:
        worker.jobs.put(target)
    return future


#: A validation round for a validator thread: it runs the batch and says whether the thread
#: may run another, and how to tell the waiting loop that the round is over.
_Round = Callable[[], tuple[bool, Callable[[], None]]]
#: A validator thread's name while it runs a batch (`runlens.cli` looks for one left running
#: at exit); an idle one waiting for the next round is named `_IDLE_NAME`.
_BUSY_NAME: Final = "runlens-validators"
_IDLE_NAME: Final = "runlens-idle-validation-thread"
#: How long an idle validator thread waits for the next round before it ends.
_LINGER_SECONDS: Final = 1.0


class _ValidatorThread:
    """A daemon thread running validation rounds one after another: the first one it is
    started with, then those handed to it while it waits in `_IDLE`.

    Each round runs in a context of its own (as on a new thread), and the thread is back
    among the idle ones before the loop hears that the round is over, so the next round
    finds it there. A round whose batch was abandoned ends the thread: the exception
    `abandon` hands to it may still be on its way, and must never reach another round.
    """

    def __init__(self, first: _Round) -> None:
        self.jobs: queue.SimpleQueue[_Round] = queue.SimpleQueue()
        self.jobs.put(first)
        self.thread = threading.Thread(target=self._serve, name=_BUSY_NAME, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        thread = self.thread
        with contextlib.suppress(BaseException):  # an abandoned round's exception, arriving late
            while True:
                try:
                    job = self.jobs.get(timeout=_LINGER_SECONDS)
                except queue.Empty:
                    if _IDLE.leave(self):
                        return
                    continue  # taken meanwhile: its round is on the way
                thread.name = _BUSY_NAME
                reusable, announce = contextvars.Context().run(job)
                if reusable:  # back among the idle before the loop hears the round is over
                    thread.name = _IDLE_NAME
                    _IDLE.give(self)
                announce()
                if not reusable:  # abandoned: never given another round
                    return


#: The process's validator threads waiting for the next round (one that ended is dropped).
_IDLE: IdleThreads[_ValidatorThread] = IdleThreads(lambda worker: worker.thread.is_alive())


class _Abandoned(BaseException):
    """Raised inside a validator thread whose results nobody waits for any more."""


class _ValidatorBatch:
    """Validators run one after another in one worker thread, watched by the event loop.

    Shared between the two threads: `results` (append-only, one entry per finished validator,
    appended by the worker) and `abandoned` (set by the loop when it stops waiting, so the
    worker does not go on running validators nobody will read).
    """

    def __init__(self, validators: Sequence[TimedValidator], context: ValidationContext) -> None:
        self.validators = tuple(validators)
        self.context = context
        #: (result, seconds it ran, perf_counter when it finished)
        self.results: list[tuple[ValidatorResult, float, float]] = []
        self.abandoned = False
        self.worker: threading.Thread | None = None
        #: Orders `abandon` and `release`: the exception `abandon` hands to the worker
        #: thread is only ever sent while the thread still runs this batch.
        self._guard = threading.Lock()
        # A validator's clock starts when the previous one finished, the first one's when the
        # batch is handed to the thread: waiting for the thread to start counts.
        self._submitted = time.perf_counter()

    def started_at(self, index: int) -> float:
        return self.results[index - 1][2] if index else self._submitted

    def overrun(self, index: int) -> float:
        """Seconds validator `index` has been running (or waiting for a thread) so far."""
        return time.perf_counter() - self.started_at(index)

    def abandon(self) -> None:
        """Stop waiting for the worker, and stop the worker itself at its next bytecode.

        A thread cannot be killed, but it can be handed an exception: the validator it is
        running ends as soon as its current C call returns, instead of holding the
        interpreter lock (and a core) for a verdict nobody will read. A validator stuck in
        one endless C call is beyond reach; the thread is a daemon, so it never blocks exit.
        """
        with self._guard:
            self.abandoned = True
            worker = self.worker
            if worker is not None and worker.is_alive() and worker.ident is not None:
                import ctypes

                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(worker.ident), ctypes.py_object(_Abandoned)
                )

    def release(self) -> bool:
        """In the worker thread, once the batch is over: whether the thread may run another
        batch (not when this one was abandoned: its exception may still be on its way)."""
        with self._guard:
            self.worker = None
            return not self.abandoned

    def run(self) -> None:
        """In the worker thread."""
        self.worker = threading.current_thread()
        for validator, _ in self.validators:
            if self.abandoned:
                return
            started = time.perf_counter()
            result = run_validator(validator, self.context)
            finished = time.perf_counter()
            self.results.append((result, finished - started, finished))


def run_validator(validator: Validator, context: ValidationContext) -> ValidatorResult:
    """Run one validator; a crash becomes a blocking `hook_error` result, not a crashed run."""
    name = str(getattr(validator, "name", type(validator).__name__))
    try:
        return validator.validate(context)
    except UserError:
        raise
    except Exception as error:
        return _error_result(name, f"failed: {type(error).__name__}: {error}")


def _error_result(validator_name: str, what: str) -> ValidatorResult:
    """A validator that cannot give a verdict blocks (fail closed)."""
    message = f"validator {validator_name} {what}"
    finding = Finding(validator=validator_name, artifact="", code="hook_error", message=message)
    return ValidatorResult(validator=validator_name, findings=(finding,), summary=message)
