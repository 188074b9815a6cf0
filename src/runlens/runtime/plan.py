"""Plan steps whose status moves with the run and settles at validation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from runlens.plugins.base import PlanStep
from runlens.records.catalogue import PlanStepUpdated, StepStatus
from runlens.records.run_record import PlanStepRecord

#: Publishes `plan.step.updated` (`EventLog.publish`).
PublishStep = Callable[[Literal["plan.step.updated"], PlanStepUpdated], object]


class PlanTracker:
    """Keeps each step's status; every change is published as `plan.step.updated`."""

    def __init__(self, steps: Sequence[PlanStep], publish: PublishStep) -> None:
        self.steps = tuple(steps)
        self.status: dict[str, StepStatus] = {step.step_id: "pending" for step in steps}
        #: Why a step has its status, when it is not self-evident (a failure's cause).
        self.reasons: dict[str, str] = {}
        #: Steps whose work was asked for while an earlier step had not started yet.
        self._waiting: set[str] = set()
        self._publish = publish
        # Built once, as `on_tool` runs on every tool call: the artifacts each step delivers.
        self._artifacts: dict[str, frozenset[str | None]] = {
            step.step_id: frozenset(
                c.artifact for c in step.success_criteria if c.kind == "artifact_validated"
            )
            for step in self.steps
        }

    def set(self, step_id: str, status: StepStatus, reason: str | None = None) -> None:
        if self.status.get(step_id) == status:
            return
        self.status[step_id] = status
        data: PlanStepUpdated = {"step_id": step_id, "status": status}
        if reason:
            data["reason"] = self.reasons[step_id] = reason
        else:
            self.reasons.pop(step_id, None)
        self._publish("plan.step.updated", data)

    def on_tool(self, tool_name: str, path: str | None = None) -> None:
        """A tool call starts the step that owns the tool, or the artifact it writes.

        Steps start in plan order: a step whose earlier steps have not all started waits
        (e.g. the analysis, called before the input was read, starts once the index is built).
        """
        for step in self.steps:
            if self.status[step.step_id] != "pending":
                continue
            owns_path = path is not None and path in self._artifacts[step.step_id]
            if owns_path or tool_name in step.tools:
                self._waiting.add(step.step_id)
        self._start_waiting()

    def on_evidence_index(self) -> None:
        for step in self.steps:
            if all(c.kind == "evidence_index_built" for c in step.success_criteria):
                self.set(step.step_id, "completed")
        self._start_waiting()

    def _start_waiting(self) -> None:
        for step in self.steps:
            if step.step_id in self._waiting:
                self._waiting.discard(step.step_id)
                if self.status[step.step_id] == "pending":
                    self.set(step.step_id, "running")
            elif self.status[step.step_id] == "pending":
                return  # later steps wait for this one to start

    def settle(
        self,
        *,
        index_built: bool,
        artifacts: Mapping[str, str],
        stop_passed: bool,
        final: bool = True,
    ) -> None:
        """Give every step its verdict from the validation results.

        With `final=False` (a repair round follows) only failures are published, so the model
        and the events see which steps still need work.
        """
        for step in self.steps:
            failed = [
                c.describe()
                for c in step.success_criteria
                if not _holds(c.kind, c.artifact, index_built, artifacts, stop_passed)
            ]
            if failed:
                self.set(step.step_id, "failed", "not met: " + ", ".join(failed))
            elif final:
                self.set(step.step_id, "completed")

    def fail_open_steps(self, reason: str) -> None:
        """On a failure before validation: the steps that were under way failed."""
        for step in self.steps:
            if self.status[step.step_id] == "running":
                self.set(step.step_id, "failed", reason)

    def as_records(self) -> list[PlanStepRecord]:
        return [
            PlanStepRecord(
                id=step.step_id,
                title=step.title,
                status=self.status[step.step_id],
                success_criteria=[c.describe() for c in step.success_criteria],
                reason=self.reasons.get(step.step_id),
            )
            for step in self.steps
        ]


def _holds(
    kind: str,
    artifact: str | None,
    index_built: bool,
    artifacts: Mapping[str, str],
    stop_passed: bool,
) -> bool:
    if kind == "evidence_index_built":
        return index_built
    if kind == "artifact_validated":
        return artifacts.get(artifact or "") == "validated"
    return stop_passed
