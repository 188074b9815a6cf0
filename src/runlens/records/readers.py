"""A run's records read back as they are written: lenient, typed views of `runtime/run.json`,
`manifest.json` and the lines of `runtime/events.jsonl`.

The records are written by closed models (`RunRecord`, `Manifest`, the event catalogue of
`runlens.records.catalogue`); a reader meets whatever any version wrote, or a file a crash
or a hand damaged. Each view here declares the keys of its model, every one optional with
the default an older record implies (a missing list is empty, a missing value None), and
keeps the keys it does not know as they are. Reading never raises:

- a file that cannot be read as a JSON object, or a line of the event log that is not one,
  is a *problem* naming the file (and line), worded as `read_json_object` and
  `read_event_log` word it (what `runlens show` and the run store report);
- a key whose value has the wrong type is left at its default, and an item of a list or a
  map that is not right is dropped; each is *damaged*, named by file and key
  (`runtime/run.json: plan[2].title: ...`).

Adding a field to a record takes three places: the model that writes it, its view here, and
its plain twin in `runlens.records.plain` (what `runlens show` reads an ended run's whole
records as; a test holds the two alike).
Code that writes a view back (`encode`) writes the keys the file had (and those set since),
in the model's order.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Generic, Self, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from runlens.records.eventlog import read_event_log
from runlens.records.io import parse_json_object, read_json_object
from runlens.tools.workspace import Workspace

_DROP: Final = object()


class View(BaseModel):
    """A record as read back: every key optional, unknown keys kept (`model_extra`)."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # built on first read

    @classmethod
    def lenient(cls, raw: object, where: str = "") -> tuple[Self, list[str]]:
        """The view of `raw` (any JSON value), and what in it is damaged (`where` first)."""
        damaged: list[str] = []
        return _view(cls, raw, where, damaged), damaged

    def encode(self) -> dict[str, Any]:
        """The JSON object: the keys read (and set since), as read, in the model's order."""
        return self.model_dump(mode="json", exclude_unset=True)


V = TypeVar("V", bound=View)


def _view(cls: type[V], raw: object, where: str, damaged: list[str]) -> V:
    if not isinstance(raw, Mapping):
        damaged.append(f"{_at(where)}: a JSON {_json_type(raw)}, not an object")
        return cls()
    try:
        return cls.model_validate(raw, strict=True)  # the common case: nothing damaged
    except ValidationError:
        pass
    values: dict[str, Any] = {}
    for key, value in raw.items():
        declared = cls.model_fields.get(key)
        if declared is None:
            values[str(key)] = value
            continue
        kept = _salvage(declared.annotation, value, _join(where, str(key)), damaged)
        if kept is not _DROP:
            values[key] = kept
    try:
        return cls.model_validate(values, strict=True)
    except ValidationError as error:  # not expected: every value kept is valid
        damaged.append(f"{_at(where)}: {error.errors()[0]['msg']}")
        return cls()


def _salvage(annotation: Any, value: object, where: str, damaged: list[str]) -> Any:
    """`value` as `annotation` types it, the damaged parts of it dropped; `_DROP` for none."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(annotation) if arg is not type(None)]
        if value is None and len(options) < len(get_args(annotation)):
            return None
        if len(options) == 1:
            return _salvage(options[0], value, where, damaged)
    elif isinstance(annotation, type) and issubclass(annotation, View):
        if isinstance(value, Mapping):
            return _view(annotation, value, where, damaged)
    elif origin is list and isinstance(value, list):
        (item,) = get_args(annotation)
        items = (_salvage(item, v, f"{where}[{i}]", damaged) for i, v in enumerate(value))
        return [v for v in items if v is not _DROP]
    elif origin is dict and isinstance(value, dict):
        _, item = get_args(annotation)
        entries = ((k, _salvage(item, v, _join(where, str(k)), damaged)) for k, v in value.items())
        return {k: v for k, v in entries if v is not _DROP}
    try:
        return _adapter(annotation).validate_python(value, strict=True)
    except ValidationError:
        damaged.append(
            f"{where}: {_json_type(value)} {_short(value)} is not {_expected(annotation)}"
        )
        return _DROP


@cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where and not where.endswith(": ") else f"{where}{key}"


def _at(where: str) -> str:
    return where.removesuffix(": ")


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _expected(annotation: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}
    if annotation in names:
        return names[annotation]
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(_expected(arg) for arg in get_args(annotation))
    if annotation is type(None):
        return "null"
    if origin is list or annotation is list:
        return "an array"
    if origin is dict or annotation is dict or isinstance(annotation, type):
        return "an object"
    return str(annotation)


# -- runtime/run.json -----------------------------------------------------------------------


class PlanStepView(View):
    """`PlanStepRecord` as read back."""

    id: str | None = None
    title: str | None = None
    status: str | None = None
    success_criteria: list[str] = Field(default_factory=list)
    reason: str | None = None


class LoopLimitsView(View):
    """`LoopLimitsRecord` as read back."""

    max_turns: int | None = None
    max_tool_calls: int | None = None
    wall_time_seconds: float | None = None


class MetricsView(View):
    """`RunMetrics` as read back: a count an older record did not keep is None."""

    turns: int | None = None
    model_calls: int | None = None
    model_retries: int | None = None
    model_failures: int | None = None
    tool_calls: int | None = None
    tool_failures: int | None = None
    tool_calls_by_name: dict[str, int] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    validation_rounds: int | None = None
    repair_rounds: int | None = None
    hooks_blocked: int | None = None
    findings_by_code: dict[str, int] | None = None
    batches_completed: int | None = None
    batches_failed: int | None = None
    plugin_events: dict[str, int] | None = None
    phase_seconds: dict[str, float] | None = None


class RunRecordView(View):
    """`RunRecord` (`runtime/run.json`) as read back. `status` is kept as written (a
    `RunStatus` value, or what an older or damaged record says)."""

    schema_version: int | None = None
    run_id: str | None = None
    plugin: str | None = None
    model: str | None = None
    status: str | None = None
    error_message: str | None = None
    warnings: list[str] = Field(default_factory=list)
    input: str | None = None
    plan: list[PlanStepView] = Field(default_factory=list)
    metrics: MetricsView | None = None
    created_at: str | None = None
    finished_at: str | None = None
    evidence_index_sha256: str | None = None
    input_format: dict[str, Any] | None = None
    repair_turns: int | None = None
    limits: LoopLimitsView | None = None
    source_lock: dict[str, Any] | None = None
    submitted_by: str | None = None
    rerun_of: str | None = None
    review_findings: list[str] = Field(default_factory=list)

    @property
    def input_name(self) -> str:
        """The input file's name (`input` is `input/<name>`); "" when not recorded."""
        return Path(self.input or "").name


# -- manifest.json --------------------------------------------------------------------------


class FindingView(View):
    """A `Finding` as a manifest lists it, read back."""

    validator: str | None = None
    artifact: str | None = None
    code: str | None = None
    path: str | None = None
    message: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class ManifestInputView(View):
    name: str | None = None
    source_hash: str | None = None


class ManifestArtifactView(View):
    """`ManifestArtifact` as read back."""

    name: str | None = None
    label: str | None = None
    description: str | None = None
    audience: str | None = None
    sensitivity: str | None = None
    required: bool | None = None
    size: int | None = None
    sha256: str | None = None
    status: str | None = None
    findings: list[FindingView] = Field(default_factory=list)


class ManifestView(View):
    """`Manifest` (`manifest.json`) as read back; `findings` is empty in manifests written
    before it existed."""

    schema_version: int | None = None
    run_id: str | None = None
    plugin: str | None = None
    model: str | None = None
    status: str | None = None
    error_message: str | None = None
    input: ManifestInputView | None = None
    evidence_index_sha256: str | None = None
    artifacts: list[ManifestArtifactView] = Field(default_factory=list)
    findings: list[FindingView] = Field(default_factory=list)

    def all_findings(self) -> list[FindingView]:
        """Every finding: the run's own (`findings`), then each artifact's."""
        return [*self.findings, *(f for a in self.artifacts for f in a.findings)]


# -- runtime/events.jsonl -------------------------------------------------------------------


class EventView(View):
    """One line of the event log read back: `{seq, ts, run_id, type, data}`; `data` has the
    shape of its type's entry in the catalogue (None when the line has no object there)."""

    seq: int | None = None
    ts: str | None = None
    run_id: str | None = None
    type: str | None = None
    data: dict[str, Any] | None = None


# -- reading files --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordRead(Generic[V]):
    """One record file read: its view (None when the file is missing or not a JSON object),
    the problem that kept it from being read (`problems`, naming the file: empty for a file
    that does not exist), and its damaged keys."""

    view: V | None
    problems: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EventsRead:
    """The event log read: every line that is an event, one problem per line that is not
    (`read_event_log`), and the damaged keys of the events read."""

    events: list[EventView]
    problems: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)


def read_view(cls: type[V], path: Path, label: str) -> RecordRead[V]:
    """The JSON object of `path` (`label` names it in problems) as a `cls` view."""
    raw, problem = read_json_object(path, label)
    if raw is None:
        return RecordRead(None, [problem] if problem else [])
    view, damaged = cls.lenient(raw, f"{label}: ")
    return RecordRead(view, [], damaged)


def parse_view(cls: type[V], raw: bytes, label: str) -> RecordRead[V]:
    """A record file's bytes `raw` as a `cls` view, as `read_view` reads the file (for a
    record handed over as it was written, not read back)."""
    value, problem = parse_json_object(raw, label)
    if value is None:
        return RecordRead(None, [problem] if problem else [])
    view, damaged = cls.lenient(value, f"{label}: ")
    return RecordRead(view, [], damaged)


def read_run_record(path: Path) -> RecordRead[RunRecordView]:
    """`runtime/run.json` at `path`."""
    return read_view(RunRecordView, path, Workspace.RUN_RECORD)


def read_manifest(path: Path) -> RecordRead[ManifestView]:
    """`manifest.json` at `path`."""
    return read_view(ManifestView, path, Workspace.MANIFEST)


def read_events(path: Path) -> EventsRead:
    """`runtime/events.jsonl` at `path`."""
    raw, problems = read_event_log(path)
    events, damaged = event_views(raw, f"{Workspace.EVENTS}: ")
    return EventsRead(events, problems, damaged)


def event_views(
    raw: Iterable[Mapping[str, Any]], where: str = "events: "
) -> tuple[list[EventView], list[str]]:
    """Events as dicts (read back, or from a subscriber) as views, and their damaged keys
    (`where`, then `seq N: key`; `#N` counts the events given when `seq` is damaged)."""
    events: list[EventView] = []
    damaged: list[str] = []
    for number, event in enumerate(raw, start=1):
        seq = event.get("seq")
        label = f"{where}seq {seq if isinstance(seq, int) else f'#{number}'}: "
        view, problems = EventView.lenient(event, label)
        events.append(view)
        damaged.extend(problems)
    return events, damaged
