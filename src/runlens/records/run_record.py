"""`runtime/run.json`: the run's status, plan, metrics and timestamps (SPEC section 11).

The run writes it twice: when it starts running and when it ends (with the trace and the
manifest). Between the two, what changes (status, plan steps, metrics, warnings, the Evidence
Index hash) is in the event stream, and `live_record` folds those events into the record:
`runlens runs`/`show` do so for a live run, `runtime.recovery` for a run whose process died.

Readers accept what older versions wrote: they read `run.json` through its lenient view
(`runlens.records.readers.RunRecordView`: the keys of `RunRecord`, each optional); `RunRecord`
is what this version writes, and the published JSON Schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import Field

from runlens.records.base import Record
from runlens.records.catalogue import StepStatus
from runlens.records.metrics import RunMetrics
from runlens.records.readers import EventView, RunRecordView
from runlens.records.status import RunStatus

RUN_SCHEMA_VERSION: Final = 1


class PlanStepRecord(Record):
    """One plan step: `{id, title, status, success_criteria}`, and why when it failed."""

    id: str
    title: str
    status: StepStatus
    success_criteria: list[str]
    reason: str | None = None


class LoopLimitsRecord(Record):
    max_turns: int
    max_tool_calls: int
    wall_time_seconds: float


class RunRecord(Record):
    """What `runtime/run.json` holds."""

    schema_version: Literal[1] = RUN_SCHEMA_VERSION
    run_id: str
    plugin: str
    model: str
    """The model spec (`offline`, `scripted:turns.json`, `openai:gpt-4o`, ...)."""
    status: RunStatus
    error_message: str | None
    warnings: list[str]
    """What the user must know even of a completed run (rows not analysed, derived ids)."""
    input: str
    """Workspace-relative path of the input's copy (`input/<name>`)."""
    plan: list[PlanStepRecord]
    metrics: RunMetrics
    created_at: str
    finished_at: str | None
    evidence_index_sha256: str | None
    input_format: dict[str, Any] | None
    """How the input was read (encoding, confidence, delimiter, columns), once indexed."""
    repair_turns: int
    limits: LoopLimitsRecord
    source_lock: dict[str, Any] | None = None
    """Which data the run read (SPEC section 16: `runlens.sourcelock.lock`), once indexed:
    `bytes_sha256`, `rows_digest`, `rows`, `columns`, `format`, `encoding`, `ref`."""
    submitted_by: str | None = None
    """Who started the run (`runlens run --as NAME`, else `$RUNLENS_USER` or the login name);
    a plugin's review policy may forbid them to approve it (SPEC section 17)."""
    rerun_of: str | None = None
    """The run this one re-runs with its review (`runlens rerun RUN --with-review`)."""
    review_findings: list[str] = Field(default_factory=list)
    """What people's review of `rerun_of` asked to change, as the model was given them with
    the task (`runlens.review.findings`); empty for a run that re-runs no review."""


#: Events after which a live run is in this status (`run.json` says `running` meanwhile).
_LIVE_STATUS = {
    "run.started": RunStatus.RUNNING.value,
    "run.validating": RunStatus.VALIDATING.value,
    "repair.requested": RunStatus.RUNNING.value,
}


def live_record(record: RunRecordView, events: Iterable[EventView]) -> RunRecordView:
    """`record` (a non-terminal `run.json`) brought up to date from the run's events: status,
    plan steps, warnings and the Evidence Index. Metrics are replayed separately (they need
    every event's time). Damaged events are skipped, never raised on."""
    latest: dict[str, tuple[str, str | None]] = {}
    update: dict[str, Any] = {}
    warnings = list(record.warnings)
    for event in events:
        data = event.data
        if data is None:
            continue
        kind = event.type
        if kind == "plan.step.updated":
            reason = data.get("reason")
            latest[str(data.get("step_id"))] = (
                str(data.get("status")),
                reason if isinstance(reason, str) else None,
            )
        elif kind is not None and kind in _LIVE_STATUS:
            update["status"] = _LIVE_STATUS[kind]
        elif kind == "run.warned" and isinstance(data.get("message"), str):
            if data["message"] not in warnings:
                warnings.append(data["message"])
        elif kind == "evidence.indexed":
            sha256, input_format = data.get("sha256"), data.get("input_format")
            update["evidence_index_sha256"] = sha256 if isinstance(sha256, str) else None
            update["input_format"] = input_format if isinstance(input_format, dict) else None
            source_lock = data.get("source_lock")
            if isinstance(source_lock, dict):
                update["source_lock"] = source_lock
    update["warnings"] = warnings
    update["plan"] = [
        step.model_copy(update=dict(zip(("status", "reason"), latest[str(step.id)], strict=True)))
        if str(step.id) in latest
        else step
        for step in record.plan
    ]
    return record.model_copy(update=update)
