"""One run of a plugin on one input with one model: from `created` to a terminal state.

The flow is one-way: input tool -> Evidence Index -> AgentLoop -> final answer -> Stop
validators -> status, events, manifest. Every record is derived from the event stream, and
every record is written whatever the outcome (SPEC sections 2, 7 and 11).

Record writes are kept to what crash safety needs: `runtime/run.json` is written when the run
starts running and when it ends; what changes in between (status, plan, metrics, warnings,
the Evidence Index hash) is in `events.jsonl`, which readers fold in (`live_record`) and
`runtime.recovery` replays for a run whose process died. The end writes the signed verdict
(a run that was judged: `runlens.verdict`), the trace, the manifest and the final run record,
in that order (a reader sees a terminal `run.json` only once the others exist).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runlens import cancellation
from runlens.atomic import write_atomic
from runlens.cancellation import CancelScope
from runlens.errors import InputError, ProviderError, TaskError, UserError
from runlens.evidence import EvidenceIndex, read_input_format, require_regular_file
from runlens.hooks.command import register_command_hooks
from runlens.hooks.manager import HookEvent, HookManager
from runlens.models.base import Model
from runlens.models.messages import Message, SystemMessage, UserMessage
from runlens.plugins.base import Plugin
from runlens.records.catalogue import EVENTS_SCHEMA_VERSION, RunCreated
from runlens.records.citations import CITATIONS_SCHEMA_VERSION
from runlens.records.events import EventLog, Subscriber
from runlens.records.io import new_run_id, utc_now
from runlens.records.metrics import MetricsCollector
from runlens.records.status import RunStatus, check_transition
from runlens.runtime.journal import Journal
from runlens.runtime.lock import WorkspaceLock
from runlens.runtime.loop import AgentLoop, FinalAnswer, LimitReached
from runlens.runtime.plan import PlanTracker
from runlens.runtime.prompt import build_system_prompt, review_findings_message
from runlens.runtime.repair import repair_message
from runlens.runtime.result import RunResult
from runlens.runtime.run_records import RunRecords
from runlens.runtime.settings import RunSettings
from runlens.secrets import redactor
from runlens.sourcelock import build_source_lock
from runlens.tools.base import ToolContext
from runlens.tools.files import FILE_TOOLS
from runlens.tools.registry import ToolRegistry
from runlens.tools.workspace import Workspace
from runlens.validation import ValidationContext, ValidationReport, aggregate, stop_validators


class Run(RunRecords):
    """Owns one run's state and records. Use `execute()` once."""

    #: How the input was read (`EvidenceIndex.input_format`), once the index is written.
    input_format: dict[str, Any] | None = None
    #: Which data the run read (`runlens.sourcelock`), once the index is written.
    source_lock: dict[str, Any] | None = None

    def __init__(
        self,
        *,
        plugin: Plugin,
        input_path: Path,
        model: Model,
        workspace: Path,
        settings: RunSettings | None = None,
        run_id: str | None = None,
        subscribers: Sequence[Subscriber] = (),
        journal: Journal | None = None,
        replay_events: Sequence[Mapping[str, Any]] = (),
        on_replay_diverged: Callable[[int], None] | None = None,
    ) -> None:
        """`journal`, `replay_events` and `on_replay_diverged`: for a durable run
        (`runlens.workers`), where its steps are checkpointed and the events it published
        before its worker stopped (`EventLog`)."""
        require_regular_file(input_path, "input file")
        self.journal = journal or Journal()
        self._replay_events = replay_events
        self._on_replay_diverged = on_replay_diverged
        self.plugin = plugin
        self.model = model
        self.settings = settings or RunSettings()
        self.run_id = run_id or new_run_id()
        self.source = input_path
        self.workspace = Workspace(workspace)
        # Its folders first (every run racing for the workspace makes them alike, none
        # writes into them), then the claim, before anything is written: of several runs
        # racing for one workspace, one gets it and the others stop here with a usage error.
        self.workspace.create()
        self.lock = WorkspaceLock.claim(self.workspace, self.run_id)
        self.cancel_scope = CancelScope()
        try:
            self._start(plugin, input_path, model, subscribers)
        except BaseException:
            self.lock.release()
            raise

    def _start(
        self, plugin: Plugin, input_path: Path, model: Model, subscribers: Sequence[Subscriber]
    ) -> None:
        self.status = RunStatus.CREATED
        self.error_message: str | None = None
        self.warnings: list[str] = []
        self.created_at = utc_now()
        self.finished_at: str | None = None
        self.index_sha256: str | None = None
        self.report: ValidationReport | None = None
        self.validators_ran = []
        self.verdict_current = False
        self.metrics = MetricsCollector()
        self._redact_secrets = redactor(self.settings.secrets)
        # A subscriber that keeps the run's final records (a store mirror) is handed them.
        self.records_taken = [
            take for s in subscribers if (take := getattr(s, "records_written", None)) is not None
        ]
        # And the run record it starts from, as written (`_transition`).
        self.records_started = [
            take for s in subscribers if (take := getattr(s, "record_started", None)) is not None
        ]
        self.events = EventLog(
            self.workspace.events,
            self.run_id,
            subscribers=[self.metrics, *subscribers],
            redact=self._redact_secrets,
            replay=self._replay_events,
            on_diverged=self._on_replay_diverged,
        )
        self.plan = PlanTracker(plugin.plan, self.events.publish)
        self.hooks = HookManager(default_timeout=self.settings.hook_timeout)
        self.input_path = self.workspace.copy_input(input_path)
        self._input_relative = self.workspace.relative(self.input_path)
        created = self.events.publish("run.created", self._created_data(input_path))
        # The run was created when that event was first published (a replayed run: then).
        self.created_at = _milliseconds(created.ts) or self.created_at
        # runtime/run.json is first written when the run starts running (`_transition`).

    def _created_data(self, input_path: Path) -> RunCreated:
        """`run.created`'s data: who started the run and what it re-runs only when known
        (a run's event stream is otherwise what it was before review by people)."""
        data = RunCreated(
            schema_version=EVENTS_SCHEMA_VERSION,
            plugin=self.plugin.name,
            model=self.model.spec,
            input=input_path.name,
            workspace=str(self.workspace.root),
        )
        if self.settings.submitted_by is not None:
            data["submitted_by"] = self.settings.submitted_by
        if self.settings.rerun_of is not None:
            data["rerun_of"] = self.settings.rerun_of
        return data

    # -- public -----------------------------------------------------------------------------

    def cancel(self, reason: str = "cancelled by the user") -> None:
        """Stop the run as soon as it can (within a second, in every phase); it ends
        `cancelled`. Safe from a signal handler or another thread."""
        self.cancel_scope.cancel(reason)

    async def execute(self) -> RunResult:
        task = asyncio.current_task()
        assert task is not None, "Run.execute runs inside a task"
        self.cancel_scope.bind(task, asyncio.get_running_loop())
        try:
            with cancellation.active(self.cancel_scope):
                await self._execute()
        except asyncio.CancelledError:
            self._finish_cancelled(self.cancel_scope.reason or "cancelled by the user")
            raise
        except InputError as error:
            self.plan.set(self.plugin.plan[0].step_id, "failed", str(error))
            self._fail_early(f"input error: {error}")
        except ProviderError as error:
            self._fail_early(f"model provider error: {error}")
        except TaskError as error:
            self._fail_early(str(error))
        except UserError as error:  # e.g. a plugin declaring a validator that is not one
            self._fail_early(f"configuration error: {error}")
        except Exception as error:
            self._fail_early(f"internal error: {type(error).__name__}: {error}")
            self._finalize()
            raise
        await self._run_end()
        self._finalize()
        return self.result()

    async def _run_end(self) -> None:
        payload = {
            **self._hook_payload(),
            "status": self.status.value,
            "error_message": self.error_message,
        }
        for outcome in await self.hooks.dispatch(HookEvent.RUN_END, payload):
            if outcome.error:
                self.events.publish(
                    "hook.failed", {"event": "RunEnd", "hook": outcome.hook, "error": outcome.error}
                )

    def result(self) -> RunResult:
        report = self.report
        return RunResult(
            run_id=self.run_id,
            status=self.status,
            error_message=self.error_message,
            workspace=self.workspace.root,
            artifacts=self._artifact_statuses(),
            findings=tuple(report.findings) if report else (),
            metrics=self.metrics.as_dict(),
            quotes=tuple(report.quotes) if report else (),
            warnings=tuple(self.warnings),
            model=self.model.spec,
        )

    # -- the run ----------------------------------------------------------------------------

    async def _execute(self) -> None:
        context = ToolContext(
            run_id=self.run_id,
            workspace=self.workspace,
            input_path=self.input_path,
            model=self.model,
            input_encoding=self.settings.input_encoding,
            input_id_column=self.settings.input_id_column,
            input_text_column=self.settings.input_text_column,
            input_sheet=self.settings.input_sheet,
            on_evidence_index=self._on_evidence_index,
            emit=self._emit,
            warn=self._warn,
        )
        registry = ToolRegistry([*self.plugin.build_tools(context), *FILE_TOOLS])
        try:
            await self._execute_with(context, registry)
        finally:
            registry.close()  # its tool threads go to the pool (they end unless a run takes them)
            # The loop holds the context and the context the loop's `call_model`: a cycle
            # that kept the whole run (its events, messages, records) alive until the next
            # garbage collection. Model calls are for the run's duration: once its loop is
            # over, the context lets go of it, and the run is freed as soon as it ends.
            context.call_model = None

    async def _execute_with(self, context: ToolContext, registry: ToolRegistry) -> None:
        self._register_hooks()
        loop = AgentLoop(
            model=self.model,
            tools=registry,
            hooks=self.hooks,
            context=context,
            events=self.events,
            plan=self.plan,
            limits=self.settings.limits,
            retry=self.settings.retry,
            journal=self.journal,
        )
        context.call_model = loop.call_model
        messages = self._opening_messages()
        self._transition(RunStatus.RUNNING)
        self.events.publish(
            "run.started",
            {"tools": list(registry.names), "repair_turns": self.settings.repair_turns},
        )
        for started in await self.hooks.dispatch(HookEvent.RUN_START, self._hook_payload()):
            if started.error:
                self.events.publish(
                    "hook.failed",
                    {"event": "RunStart", "hook": started.hook, "error": started.error},
                )
        for validation_round in range(1, self.settings.repair_turns + 2):
            outcome = await loop.run_within_wall_time(messages)
            report = await self._validate(validation_round)
            if isinstance(outcome, LimitReached):
                # The model never finished; what it delivered so far is still validated, so
                # the records say which deliverables exist and hold up.
                self._fail_validation(report, validation_round, cause=outcome.reason)
                return
            assert isinstance(outcome, FinalAnswer)
            if report.passed:
                self._complete(report, validation_round)
                return
            if validation_round > self.settings.repair_turns:
                self._fail_validation(report, validation_round)
                return
            self._request_repair(report, validation_round, messages)

    def _opening_messages(self) -> list[Message]:
        system_prompt = build_system_prompt(self.plugin)
        write_atomic(self.workspace.system_prompt, system_prompt.encode("utf-8"))
        task = (
            f"{self.plugin.task_prompt}\n\nThe input file is "
            f"{self._input_relative}. Start by calling "
            f"{self.plugin.input_tool}."
        )
        if self.settings.review_findings:
            task += "\n\n" + review_findings_message(
                self.settings.review_findings, self.settings.rerun_of
            )
        return [SystemMessage(system_prompt), UserMessage(task)]

    def _register_hooks(self) -> None:
        validators = stop_validators(self.plugin, entry_points=self.settings.validator_plugins)
        for validator in validators:
            self.hooks.register_validator(validator)
        register_command_hooks(
            self.hooks,
            self.settings.command_hooks,
            run_info={"session_id": self.run_id, "run_id": self.run_id, "plugin": self.plugin.name},
            workspace=self.workspace.root,
        )

    async def _validate(self, validation_round: int) -> ValidationReport:
        self._transition(RunStatus.VALIDATING)
        self.events.publish("run.validating", {"round": validation_round})
        context = ValidationContext(
            workspace=self.workspace.root,
            contracts=self.plugin.contracts,
            expected_index_sha256=self.index_sha256,
            secrets=self.settings.secrets,
            source=self.input_path,
            # This process built the index from `input/` and holds the hash it wrote.
            index_built_in_process=True,
        )
        results = await self.hooks.run_stop(context)
        for result, seconds in results:
            self.events.publish(
                "validator.completed",
                {
                    "validator": result.validator,
                    "round": validation_round,
                    "blocked": result.blocked,
                    "summary": result.summary,
                    "finding_codes": [finding.code for finding in result.findings],
                    "duration_ms": round(seconds * 1000, 3),
                },
            )
        report = aggregate([result for result, _ in results], self.plugin.contracts, context)
        self.report = report
        self.verdict_current = True
        self.validators_ran = [result.validator for result, _ in results]
        if self.journal.durable:
            await self.journal.check(
                f"validation.{validation_round}",
                {
                    "passed": report.passed,
                    "artifacts": dict(report.artifacts),
                    "finding_codes": [finding.code for finding in report.findings],
                },
            )
        return report

    def _settle_plan(self, report: ValidationReport, *, final: bool, finished: bool = True) -> None:
        """Settle the plan; `finished=False` (a loop limit) means Stop cannot count as passed."""
        index_codes = {"evidence_index_missing", "evidence_index_tampered"}
        index_ok = self.index_sha256 is not None and not any(
            finding.code in index_codes for finding in report.findings
        )
        self.plan.settle(
            index_built=index_ok,
            artifacts=report.artifacts,
            stop_passed=report.passed and finished,
            final=final,
        )

    def _complete(self, report: ValidationReport, validation_round: int) -> None:
        self._transition(RunStatus.COMPLETED)
        self._settle_plan(report, final=True)
        self._publish_artifacts(report, validation_round)
        self.events.publish("run.completed", {"round": validation_round})

    def _fail_validation(
        self, report: ValidationReport, validation_round: int, *, cause: str | None = None
    ) -> None:
        """SPEC section 7, in this order. `cause` is a loop limit that ended the run first."""
        message = "; ".join(m for m in (cause, report.error_message) if m) or "validation failed"
        if self.settings.repair_turns and cause is None:
            used = validation_round - 1
            message += f"; repair rounds exhausted ({used} of {self.settings.repair_turns} used)"
        self._transition(RunStatus.FAILED, message)
        self._settle_plan(report, final=True, finished=cause is None)
        if not report.passed:
            self._publish_blocked(report, validation_round)
        self._publish_artifacts(report, validation_round)
        self.events.publish(
            "run.failed",
            {
                "error_message": message,
                "phase": "running" if cause else "validating",
                "round": validation_round,
            },
        )

    def _request_repair(
        self, report: ValidationReport, validation_round: int, messages: list[Message]
    ) -> None:
        self._settle_plan(report, final=False)
        self.verdict_current = False  # the model goes on changing what was judged
        self._publish_blocked(report, validation_round)
        self._publish_artifacts(report, validation_round)
        remaining = self.settings.repair_turns - validation_round
        self.events.publish(
            "repair.requested",
            {
                "round": validation_round,
                "remaining": remaining,
                "finding_codes": [finding.code for finding in report.findings],
            },
        )
        messages.append(UserMessage(repair_message(report, self.plugin.contracts, remaining)))
        self._transition(RunStatus.RUNNING)

    def _fail_early(self, message: str) -> None:
        """Failure before validation: input error, provider error, loop limit, crash."""
        if self.status.is_terminal:
            return
        self._transition(RunStatus.FAILED, message)
        self.plan.fail_open_steps(message)
        self.events.publish("run.failed", {"error_message": message, "phase": "running"})

    def _finish_cancelled(self, reason: str) -> None:
        if not self.status.is_terminal:
            self._transition(RunStatus.CANCELLED, reason)
            self.plan.fail_open_steps(reason)
            self.events.publish("run.cancelled", {"reason": reason})
        self._finalize()

    # -- records ----------------------------------------------------------------------------

    def _transition(self, target: RunStatus, error_message: str | None = None) -> None:
        first_start = self.status is RunStatus.CREATED and target is RunStatus.RUNNING
        self.status = check_transition(self.status, target)
        if error_message is not None:
            self.error_message = error_message
        if target.is_terminal:
            self.finished_at = utc_now()  # `_finalize` writes the final record
        elif first_start:
            # The one write before the end: it makes the workspace a run that `runlens runs`
            # lists and a reader can settle if the process dies. Later changes of status are
            # events (`run.validating`, `repair.requested`), folded in by readers.
            written = self._write_run_record()
            for take in self.records_started:
                take(written)

    def _emit(self, name: str, data: Mapping[str, Any]) -> None:
        """For tools: publish a batch event, or a plugin's own (`EventLog.emit`)."""
        self.events.emit(name, data)

    def _warn(self, message: str) -> None:
        """For tools: a warning shown with the verdict and kept in run.json (once each)."""
        if message in self.warnings:
            return
        self.warnings.append(message)
        self.events.publish("run.warned", {"message": message})

    def _on_evidence_index(self, path: Path, index: EvidenceIndex) -> None:
        self.index_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        self.input_format = read_input_format(path)
        # From the index as built (its row hashes), the references from the file the user
        # named: the workspace's copy lies in no work tree of theirs.
        self.source_lock = build_source_lock(
            self.source, index, source_ref=self.settings.source_ref
        )
        self.events.publish(
            "evidence.indexed",
            {
                "path": self.workspace.relative(path),
                "sha256": self.index_sha256,
                "input_format": self.input_format,
                "source_lock": self.source_lock,
            },
        )
        self.plan.on_evidence_index()

    def _hook_payload(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "plugin": self.plugin.name,
            "workspace": str(self.workspace.root),
        }


def _milliseconds(timestamp: str) -> str | None:
    """An event's time as run.json writes times (`...T07:15:00.123+00:00`)."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


async def run_plugin(
    plugin: Plugin,
    input_path: Path,
    model: Model,
    *,
    workspace: Path,
    settings: RunSettings | None = None,
    subscribers: Sequence[Subscriber] = (),
    run_id: str | None = None,
) -> RunResult:
    """Run `plugin` on `input_path` with `model` in `workspace` and return its result."""
    run = Run(
        plugin=plugin,
        input_path=input_path,
        model=model,
        workspace=workspace,
        settings=settings,
        run_id=run_id,
        subscribers=subscribers,
    )
    try:
        return await run.execute()
    finally:
        await model.aclose()


__all__ = ["CITATIONS_SCHEMA_VERSION", "Run", "RunResult", "RunSettings", "run_plugin"]
