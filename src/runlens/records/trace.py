"""The run's trace: OpenTelemetry-shaped spans derived from the event stream.

Span and attribute names follow the OpenTelemetry GenAI semantic conventions where they exist
(`invoke_agent`, `chat`, `execute_tool`, `gen_ai.*`); validators get `validate {name}` spans.
The trace is built once, at the end of the run, from the events already in memory, and
written to `runtime/trace.json`.
"""

import hashlib
from typing import Any, Final, Literal, NotRequired, Self

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from runlens.records.base import Record
from runlens.records.events import Event

TRACE_SCHEMA_VERSION: Final = 1
#: Without `json_schema_serialization_defaults_required`: on a TypedDict holding another it
#: marks the inner one's `NotRequired` keys required (pydantic 2.14).
_SPAN_CONFIG: Final = ConfigDict(extra="forbid", use_attribute_docstrings=True)
_NANOS = 1_000_000_000

#: An OpenTelemetry attribute value (None values are left out).
AttributeValue = str | bool | int | float | list[str]


@with_config(_SPAN_CONFIG)
class SpanStatus(TypedDict):
    code: Literal["OK", "ERROR"]
    message: NotRequired[str]
    """What went wrong, for `ERROR`."""


@with_config(_SPAN_CONFIG)
class Span(TypedDict):
    """One span, shaped like OpenTelemetry's (ids in hex, times in Unix nanoseconds)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    """None for the run's root span; every other span's parent is the root."""
    name: str
    kind: Literal["INTERNAL", "CLIENT"]
    start_time_unix_nano: int
    end_time_unix_nano: int
    attributes: dict[str, AttributeValue]
    status: SpanStatus


class Trace(Record):
    """What `runtime/trace.json` holds: the run's spans, the root first.

    Spans are TypedDicts rather than models: a run has one per model and tool call, and they
    are built, not parsed, so the builder is checked by mypy and costs no validation.
    """

    schema_version: Literal[1] = TRACE_SCHEMA_VERSION
    trace_id: str
    resource: dict[str, str]
    spans: list[Span]

    @classmethod
    def of(cls, trace_id: str, resource: dict[str, str], spans: list[Span]) -> Self:
        """A trace from spans the builder made (not validated again)."""
        return cls.model_construct(trace_id=trace_id, resource=resource, spans=spans)

    def encode(self) -> dict[str, Any]:
        """The JSON object to write (spans are already plain dicts)."""
        return dict(self)


class _SpanIds:
    """A run's span ids: the first 16 hex digits of the SHA-256 of `{run_id}/{key}`, the
    hash of `{run_id}/` taken once and copied per span."""

    __slots__ = ("_prefix",)

    def __init__(self, run_id: str) -> None:
        self._prefix = hashlib.sha256(f"{run_id}/".encode())

    def __call__(self, key: str) -> str:
        digest = self._prefix.copy()
        digest.update(key.encode())
        return digest.hexdigest()[:16]


def _nanos(seconds: float) -> int:
    return int(seconds * _NANOS)


def build_trace(run_id: str, events: list[Event], *, plugin: str, model: str, status: str) -> Trace:
    """Spans for the run, each model call, tool call and validator, parent-linked."""
    trace_id = hashlib.sha256(run_id.encode()).hexdigest()[:32]
    span_id = _SpanIds(run_id)
    root_id = span_id("run")
    spans: list[Span] = []
    open_tools: dict[str, Event] = {}
    start = events[0].at if events else 0.0
    end = events[-1].at if events else 0.0
    provider = model.split(":", 1)[0]
    for event in events:
        data = event.data
        if event.type == "model.called":
            began = event.at - float(data.get("duration_ms", 0)) / 1000
            attributes = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
                "gen_ai.response.finish_reasons": [data.get("finish_reason") or "stop"],
                "runlens.turn": data.get("turn"),
                "runlens.purpose": data.get("purpose", "turn"),
            }
            for key in ("input_tokens", "output_tokens"):
                if data.get(key) is not None:
                    attributes[f"gen_ai.usage.{key}"] = data[key]
            spans.append(
                _span(
                    trace_id,
                    span_id(f"model/{event.seq}"),
                    root_id,
                    f"chat {model}",
                    began,
                    event.at,
                    attributes,
                )
            )
        elif event.type == "tool.called":
            open_tools[str(data.get("tool_call_id"))] = event
        elif event.type in ("tool.completed", "tool.failed"):
            call_id = str(data.get("tool_call_id"))
            opened = open_tools.pop(call_id, event)
            spans.append(
                _span(
                    trace_id,
                    span_id(f"tool/{opened.seq}"),
                    root_id,
                    f"execute_tool {data.get('name')}",
                    opened.at,
                    event.at,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": data.get("name"),
                        "gen_ai.tool.call.id": call_id,
                    },
                    error=data.get("error") if event.type == "tool.failed" else None,
                )
            )
        elif event.type == "validator.completed":
            began = event.at - float(data.get("duration_ms", 0)) / 1000
            spans.append(
                _span(
                    trace_id,
                    span_id(f"validator/{event.seq}"),
                    root_id,
                    f"validate {data.get('validator')}",
                    began,
                    event.at,
                    {
                        "runlens.validator": data.get("validator"),
                        "runlens.findings": len(data.get("finding_codes", ())),
                        "runlens.validation_round": data.get("round"),
                    },
                    error=data.get("summary") if data.get("blocked") else None,
                )
            )
    root = _span(
        trace_id,
        root_id,
        None,
        f"invoke_agent {plugin}",
        start,
        end,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": plugin,
            "gen_ai.request.model": model,
            "runlens.run_id": run_id,
            "runlens.status": status,
        },
        error=None if status == "completed" else status,
    )
    return Trace.of(trace_id, {"service.name": "runlens"}, [root, *spans])


def _span(
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    name: str,
    start: float,
    end: float,
    attributes: dict[str, Any],
    *,
    error: str | None = None,
) -> Span:
    status: SpanStatus = {"code": "ERROR", "message": error} if error else {"code": "OK"}
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent_span_id,
        "name": name,
        "kind": "INTERNAL" if parent_span_id is None else "CLIENT",
        "start_time_unix_nano": _nanos(start),
        "end_time_unix_nano": _nanos(max(end, start)),
        "attributes": {k: v for k, v in attributes.items() if v is not None},
        "status": status,
    }
