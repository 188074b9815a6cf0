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


def _span_id(run_id: str, key: str) -> str:
    return hashlib.sha256(f"{run_id}/{key}".encode()).hexdigest()[:16]


class _SpanIds:
    """`_span_id` for one run: the hash of `{run_id}/` taken once, then copied per span."""

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
    """Spans for the run, each model call, tool call and validator, parent-linked.

    Every span but the root is a `CLIENT` child of the root; the loop below builds each one
    in place (this runs once per run, over every event)."""
    trace_id = hashlib.sha256(run_id.encode()).hexdigest()[:32]
    span_id = _SpanIds(run_id)
    root_id = span_id("run")
    spans: list[Span] = []
    open_tools: dict[str, Event] = {}
    start = events[0].at if events else 0.0
    end = events[-1].at if events else 0.0
    provider = model.split(":", 1)[0]
    chat = f"chat {model}"
    for event in events:
        kind = event.type
        if kind == "model.called":
            data = event.data
            began = event.at - float(data.get("duration_ms", 0)) / 1000
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
                "gen_ai.response.finish_reasons": [data.get("finish_reason") or "stop"],
            }
            turn = data.get("turn")
            if turn is not None:
                attributes["runlens.turn"] = turn
            purpose = data.get("purpose", "turn")
            if purpose is not None:
                attributes["runlens.purpose"] = purpose
            for key in ("input_tokens", "output_tokens"):
                value = data.get(key)
                if value is not None:
                    attributes[f"gen_ai.usage.{key}"] = value
            spans.append(
                {
                    "trace_id": trace_id,
                    "span_id": span_id(f"model/{event.seq}"),
                    "parent_span_id": root_id,
                    "name": chat,
                    "kind": "CLIENT",
                    "start_time_unix_nano": int(began * _NANOS),
                    "end_time_unix_nano": int(max(event.at, began) * _NANOS),
                    "attributes": attributes,
                    "status": {"code": "OK"},
                }
            )
        elif kind == "tool.called":
            open_tools[str(event.data.get("tool_call_id"))] = event
        elif kind == "tool.completed" or kind == "tool.failed":
            data = event.data
            call_id = str(data.get("tool_call_id"))
            opened = open_tools.pop(call_id, event)
            name = data.get("name")
            attributes = {"gen_ai.operation.name": "execute_tool"}
            if name is not None:
                attributes["gen_ai.tool.name"] = name
            attributes["gen_ai.tool.call.id"] = call_id
            error = data.get("error") if kind == "tool.failed" else None
            began = opened.at
            spans.append(
                {
                    "trace_id": trace_id,
                    "span_id": span_id(f"tool/{opened.seq}"),
                    "parent_span_id": root_id,
                    "name": f"execute_tool {name}",
                    "kind": "CLIENT",
                    "start_time_unix_nano": int(began * _NANOS),
                    "end_time_unix_nano": int(max(event.at, began) * _NANOS),
                    "attributes": attributes,
                    "status": {"code": "ERROR", "message": error} if error else {"code": "OK"},
                }
            )
        elif kind == "validator.completed":
            data = event.data
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
