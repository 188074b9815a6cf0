"""The closed catalogue of events the core publishes, with each event's `data` (SPEC section 11).

Every line of `runtime/events.jsonl` is `{seq, ts, run_id, type, data}`; `type` is one of
`EVENT_TYPES` and `data` has the shape of the event's entry in `EVENT_DATA`. The catalogue is
versioned as a whole: `run.created`, the first event of every run, carries
`schema_version` (`EVENTS_SCHEMA_VERSION`). A change that readers could trip on (a field
removed, renamed or retyped, a new required field) bumps it; readers accept older versions.

The data shapes are TypedDicts: the publishing code is checked by mypy against them, and
`EventLog.publish` costs no validation at run time (it runs for every model and tool call).
Publishing a type outside the catalogue raises `UnknownEventType`. What tools publish
(`ToolContext.emit`) is checked at run time by `tool_event`:

- `batch.completed` / `batch.failed`, published by the batch engine (`runlens.batching`),
  are core events, validated against their data shape;
- any other core type is refused: a tool cannot forge the run's lifecycle;
- any other name is a plugin's own event, published generically as `plugin.event` with
  `{"name": name, "data": {...}}`, and counted per name in metrics (`plugin_events`).

`docs/schemas/events.schema.json` is generated from this module (`runlens.records.schemas`).
"""

from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, get_args

from pydantic import TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from runlens.records.base import RECORD_CONFIG

#: The version of the event catalogue, carried by `run.created` (`data.schema_version`).
EVENTS_SCHEMA_VERSION: Final = 1


StepStatus = Literal["pending", "running", "completed", "failed"]


@with_config(RECORD_CONFIG)
class RunCreated(TypedDict):
    schema_version: Literal[1]
    plugin: str
    model: str
    input: str
    """The input file's name (its copy is under `input/`)."""
    workspace: str
    submitted_by: NotRequired[str]
    """Who started the run (run.json's `submitted_by`), when known."""
    rerun_of: NotRequired[str]
    """The run this one re-runs with its review (run.json's `rerun_of`)."""


@with_config(RECORD_CONFIG)
class RunStarted(TypedDict):
    tools: list[str]
    repair_turns: int


@with_config(RECORD_CONFIG)
class PlanStepUpdated(TypedDict):
    step_id: str
    status: StepStatus
    reason: NotRequired[str]
    """Why, when it is not self-evident (a failure's cause)."""


@with_config(RECORD_CONFIG)
class ModelCalled(TypedDict):
    turn: int | None
    """The conversation turn; None for calls a tool makes (`purpose` says which)."""
    purpose: str
    """`turn` for the loop's calls; what a tool names otherwise (e.g. `batch`)."""
    duration_ms: float
    input_tokens: int | None
    output_tokens: int | None
    finish_reason: str | None
    tool_calls: list[str]
    content: str | None
    """The answer's text, cut to a preview."""
    notes: NotRequired[list[str]]
    """What the provider repaired in the server's answer (e.g. lone surrogates)."""


@with_config(RECORD_CONFIG)
class ModelRetried(TypedDict):
    attempt: int
    delay_seconds: float
    error: str
    status_code: int | None
    purpose: str


@with_config(RECORD_CONFIG)
class ModelFailed(TypedDict):
    error: str
    purpose: str


@with_config(RECORD_CONFIG)
class ToolCalled(TypedDict):
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    """The arguments, long strings cut to a preview (`{"_raw": ...}` when not JSON)."""


@with_config(RECORD_CONFIG)
class ToolCompleted(TypedDict):
    tool_call_id: str
    name: str
    duration_ms: float
    result: str | None
    """The result, cut to a preview; `result_chars` is its whole length."""
    result_chars: int


@with_config(RECORD_CONFIG)
class ToolFailed(TypedDict):
    tool_call_id: str
    name: str
    duration_ms: float
    error: str
    error_kind: str | None
    """unknown_tool | invalid_arguments | refused | tool_exception | blocked"""


@with_config(RECORD_CONFIG)
class EvidenceIndexed(TypedDict):
    path: str
    """Workspace-relative path of the index (`runtime/evidence_index.json`)."""
    sha256: str
    input_format: dict[str, Any] | None
    """How the input was read (encoding, delimiter, columns, id rule, sheet)."""
    source_lock: NotRequired[dict[str, Any] | None]
    """The input's source lock (SPEC section 16), as run.json records it."""


@with_config(RECORD_CONFIG)
class BatchCompleted(TypedDict):
    """One batch of rows analysed by the batch engine (`runlens.batching`)."""

    batch: int
    """1-based number of the batch, of `batches`."""
    batches: int
    offset: int
    """Row offset of the batch's first row."""
    rows: int
    items: int
    """Items the model returned that passed the item checks."""
    no_text: int
    """Rows without text (nothing to analyse)."""


@with_config(RECORD_CONFIG)
class BatchFailed(BatchCompleted):
    """A batch whose rows (some or all) could not be analysed; they go to `failed_batches`."""

    reason: str
    unanalysed: int


@with_config(RECORD_CONFIG)
class HookBlocked(TypedDict):
    """A blocking hook vetoed: a `PreToolUse` hook a tool call, or the Stop validators."""

    event: str
    """`PreToolUse` or `Stop`."""
    hooks_blocked: int
    reason: str | None
    round: NotRequired[int]
    """Stop: the validation round, the validators that blocked, the number of findings."""
    hooks: NotRequired[list[str]]
    finding_count: NotRequired[int]
    hook: NotRequired[str]
    """PreToolUse: the hook and the tool call it blocked."""
    tool_name: NotRequired[str]
    tool_call_id: NotRequired[str]


@with_config(RECORD_CONFIG)
class HookFailed(TypedDict):
    event: str
    """`RunStart`, `PostToolUse` or `RunEnd`: the hook events whose errors do not block."""
    hook: str
    error: str


@with_config(RECORD_CONFIG)
class RunWarned(TypedDict):
    message: str


@with_config(RECORD_CONFIG)
class RunValidating(TypedDict):
    round: int


@with_config(RECORD_CONFIG)
class ValidatorCompleted(TypedDict):
    validator: str
    round: int
    blocked: bool
    summary: str | None
    finding_codes: list[str]
    duration_ms: float


@with_config(RECORD_CONFIG)
class ArtifactJudged(TypedDict):
    """`artifact.validated` or `artifact.rejected`."""

    artifact: str
    """The contract name (`artifacts/...`)."""
    status: Literal["validated", "rejected", "missing"]
    round: int
    finding_codes: list[str]


@with_config(RECORD_CONFIG)
class RepairRequested(TypedDict):
    round: int
    remaining: int
    finding_codes: list[str]


@with_config(RECORD_CONFIG)
class RunCompleted(TypedDict):
    round: int


@with_config(RECORD_CONFIG)
class RunFailed(TypedDict):
    error_message: str
    phase: Literal["running", "validating"]
    round: NotRequired[int]


@with_config(RECORD_CONFIG)
class RunCancelled(TypedDict):
    reason: str


@with_config(RECORD_CONFIG)
class RunInterrupted(TypedDict):
    """Appended by the reader that found the run's process gone (`runtime.recovery`)."""

    error_message: str


@with_config(RECORD_CONFIG)
class RunResumed(TypedDict):
    """A queued run taken over by another worker (its own died, stopped or was restarted),
    published by the worker that takes it, where the run carries on: after the events it
    replays (`runlens.workers.workflow`). Every later replay keeps it in place."""

    worker: str
    """The executor id of the worker that resumes the run."""
    host: str
    previous_worker: str
    """The executor id of the worker that held the run before."""
    previous_host: str | None
    reason: str
    """Why the run changed workers (the previous one stopped answering, handed its runs back
    as it stopped, or was restarted under its id)."""
    workspace: str
    """The run's workspace on the new worker (`run.created` names the first one's)."""
    replayed_events: int
    """How many of the run's events came before this one, replayed as first recorded."""


@with_config(RECORD_CONFIG)
class PluginEvent(TypedDict):
    """An event of a plugin's own, published through `ToolContext.emit(name, data)`."""

    name: str
    data: dict[str, Any]


EventType = Literal[
    "run.created",
    "run.started",
    "plan.step.updated",
    "model.called",
    "model.retried",
    "model.failed",
    "tool.called",
    "tool.completed",
    "tool.failed",
    "evidence.indexed",
    "batch.completed",
    "batch.failed",
    "hook.blocked",
    "hook.failed",
    "run.warned",
    "run.validating",
    "validator.completed",
    "artifact.validated",
    "artifact.rejected",
    "repair.requested",
    "run.completed",
    "run.failed",
    "run.cancelled",
    "run.interrupted",
    "run.resumed",
    "plugin.event",
]

#: Each event type's `data` shape.
EVENT_DATA: Final[Mapping[EventType, type[Any]]] = {
    "run.created": RunCreated,
    "run.started": RunStarted,
    "plan.step.updated": PlanStepUpdated,
    "model.called": ModelCalled,
    "model.retried": ModelRetried,
    "model.failed": ModelFailed,
    "tool.called": ToolCalled,
    "tool.completed": ToolCompleted,
    "tool.failed": ToolFailed,
    "evidence.indexed": EvidenceIndexed,
    "batch.completed": BatchCompleted,
    "batch.failed": BatchFailed,
    "hook.blocked": HookBlocked,
    "hook.failed": HookFailed,
    "run.warned": RunWarned,
    "run.validating": RunValidating,
    "validator.completed": ValidatorCompleted,
    "artifact.validated": ArtifactJudged,
    "artifact.rejected": ArtifactJudged,
    "repair.requested": RepairRequested,
    "run.completed": RunCompleted,
    "run.failed": RunFailed,
    "run.cancelled": RunCancelled,
    "run.interrupted": RunInterrupted,
    "run.resumed": RunResumed,
    "plugin.event": PluginEvent,
}

EVENT_TYPES: Final[frozenset[str]] = frozenset(get_args(EventType))
PLUGIN_EVENT: Final = "plugin.event"
#: Core events a tool may publish through `ToolContext.emit` (the batch engine's).
TOOL_EVENT_TYPES: Final[frozenset[str]] = frozenset({"batch.completed", "batch.failed"})

_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


class UnknownEventType(ValueError):
    """A bug in the publishing code: an event type the catalogue does not list."""


def check_event_type(event_type: str) -> EventType:
    if event_type not in EVENT_TYPES:
        raise UnknownEventType(
            f"{event_type!r} is not an event of the catalogue (runlens.records.catalogue); "
            "a tool publishes its own events with ToolContext.emit"
        )
    return event_type  # type: ignore[return-value]  # checked just above


def data_adapter(event_type: str) -> TypeAdapter[Any]:
    """A pydantic adapter for the `data` of `event_type` (validation, JSON Schema)."""
    adapter = _ADAPTERS.get(event_type)
    if adapter is None:
        adapter = _ADAPTERS[event_type] = TypeAdapter(EVENT_DATA[check_event_type(event_type)])
    return adapter


def check_event_data(event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` checked against the shape of `event_type`; `ValueError` naming what is wrong."""
    try:
        checked: dict[str, Any] = data_adapter(event_type).validate_python(dict(data))
    except ValidationError as error:
        raise ValueError(f"{event_type} data does not fit its shape: {error}") from None
    return checked


def tool_event(name: str, data: Mapping[str, Any]) -> tuple[EventType, dict[str, Any]]:
    """The event a tool's `ToolContext.emit(name, data)` publishes: `(type, data)`.

    A core event tools may publish (`TOOL_EVENT_TYPES`) is checked against its shape; another
    core type raises `ValueError`; any other name becomes `plugin.event` `{name, data}`.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an event name must be a non-empty string, got {name!r}")
    if name in TOOL_EVENT_TYPES:
        return check_event_type(name), check_event_data(name, data)
    if name in EVENT_TYPES:
        raise ValueError(f"{name!r} is published by the runtime itself; a tool cannot emit it")
    return PLUGIN_EVENT, {"name": name, "data": dict(data)}
