"""A run's records read back whole, as plain objects: what `runlens show` prints of an ended
run without building the pydantic views of `runlens.records.readers` (or importing them).

Each class here declares the keys of its view in `runlens.records.readers`, in the same
order, with the same types and defaults. A record is read here only when it is *whole*:
every key its view declares has exactly the type declared (no value the lenient views would
convert, such as an integer where a number is declared, nor drop as damaged); the values are
then the ones the view would hold. A record that is not whole is None here, and its reader
takes the views' path, which names what is damaged.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Self, Union, get_args, get_origin, get_type_hints

_Check = Callable[[object], bool]


class Plain:
    """A record read whole: its declared keys as attributes (where a key is absent, None,
    or an empty list or map for a key declared as one), the keys it had (`model_fields_set`,
    as a view names them) and the JSON object itself (`raw`)."""

    raw: Mapping[str, Any]
    model_fields_set: set[str]

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.model_fields_set = set(raw)
        for name, declared in _fields(type(self)).items():
            value: Any
            if name not in raw:
                value = declared.empty() if declared.empty is not None else None
            elif declared.record is None or raw[name] is None:
                value = raw[name]
            elif type(raw[name]) is list:
                value = [declared.record(item) for item in raw[name]]
            else:
                value = declared.record(raw[name])
            setattr(self, name, value)

    @classmethod
    def whole(cls, raw: object) -> Self | None:
        """The record of `raw` (a JSON value) when it is whole; None when it is not."""
        if type(raw) is not dict or not _is_whole(cls, raw):
            return None
        return cls(raw)


class _Field(NamedTuple):
    """A declared key: the check of a whole value, the record class its value (or each item
    of its list) is read as, and the type of its empty default (None when it is None)."""

    check: _Check
    record: type[Plain] | None
    empty: type[list[Any]] | type[dict[str, Any]] | None


_FIELDS: dict[type[Plain], dict[str, _Field]] = {}


def _fields(cls: type[Plain]) -> dict[str, _Field]:
    """The keys `cls` declares, in order."""
    fields = _FIELDS.get(cls)
    if fields is None:
        hints = get_type_hints(cls)
        del hints["raw"], hints["model_fields_set"]
        fields = _FIELDS[cls] = {
            name: _Field(
                _check(hint),
                _record_of(hint),
                get_origin(hint) if get_origin(hint) in (list, dict) else None,
            )
            for name, hint in hints.items()
        }
    return fields


def _is_whole(cls: type[Plain], raw: dict[str, Any]) -> bool:
    fields = _fields(cls)
    return all(fields[key].check(value) for key, value in raw.items() if key in fields)


def _record_of(annotation: Any) -> type[Plain] | None:
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, Plain):
            return arg
    return None


def _check(annotation: Any) -> _Check:
    """Whether a value is exactly of `annotation` (as a strict pydantic validation that
    converts nothing would take it)."""
    if annotation is Any:
        return lambda value: True
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [_check(arg) for arg in get_args(annotation)]
        return lambda value: any(check(value) for check in options)
    if origin is list:
        (item,) = (_check(arg) for arg in get_args(annotation))
        return lambda value: type(value) is list and all(item(v) for v in value)
    if origin is dict:
        entry = _check(get_args(annotation)[1])
        return lambda value: (
            type(value) is dict and all(type(k) is str and entry(v) for k, v in value.items())
        )
    if isinstance(annotation, type) and issubclass(annotation, Plain):
        record = annotation
        return lambda value: type(value) is dict and _is_whole(record, value)
    exact: type = annotation
    return lambda value: type(value) is exact


# -- runtime/run.json (`RunRecordView`) -----------------------------------------------------


class PlainPlanStep(Plain):
    id: str | None
    title: str | None
    status: str | None
    success_criteria: list[str]
    reason: str | None


class PlainLoopLimits(Plain):
    max_turns: int | None
    max_tool_calls: int | None
    wall_time_seconds: float | None


class PlainMetrics(Plain):
    turns: int | None
    model_calls: int | None
    model_retries: int | None
    model_failures: int | None
    tool_calls: int | None
    tool_failures: int | None
    tool_calls_by_name: dict[str, int] | None
    input_tokens: int | None
    output_tokens: int | None
    validation_rounds: int | None
    repair_rounds: int | None
    hooks_blocked: int | None
    findings_by_code: dict[str, int] | None
    batches_completed: int | None
    batches_failed: int | None
    plugin_events: dict[str, int] | None
    phase_seconds: dict[str, float] | None


class PlainRunRecord(Plain):
    schema_version: int | None
    run_id: str | None
    plugin: str | None
    model: str | None
    status: str | None
    error_message: str | None
    warnings: list[str]
    input: str | None
    plan: list[PlainPlanStep]
    metrics: PlainMetrics | None
    created_at: str | None
    finished_at: str | None
    evidence_index_sha256: str | None
    input_format: dict[str, Any] | None
    repair_turns: int | None
    limits: PlainLoopLimits | None
    source_lock: dict[str, Any] | None
    submitted_by: str | None
    rerun_of: str | None
    review_findings: list[str]


# -- manifest.json (`ManifestView`) ---------------------------------------------------------


class PlainFinding(Plain):
    validator: str | None
    artifact: str | None
    code: str | None
    path: str | None
    message: str | None
    details: dict[str, Any]


class PlainManifestInput(Plain):
    name: str | None
    source_hash: str | None


class PlainManifestArtifact(Plain):
    name: str | None
    label: str | None
    description: str | None
    audience: str | None
    sensitivity: str | None
    required: bool | None
    size: int | None
    sha256: str | None
    status: str | None
    findings: list[PlainFinding]


class PlainManifest(Plain):
    schema_version: int | None
    run_id: str | None
    plugin: str | None
    model: str | None
    status: str | None
    error_message: str | None
    input: PlainManifestInput | None
    evidence_index_sha256: str | None
    artifacts: list[PlainManifestArtifact]
    findings: list[PlainFinding]


# -- runtime/events.jsonl (`EventView`) -----------------------------------------------------


class PlainEvent(Plain):
    seq: int | None
    ts: str | None
    run_id: str | None
    type: str | None
    data: dict[str, Any] | None
