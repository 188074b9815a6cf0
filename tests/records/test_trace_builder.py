"""The trace builder against the one it replaced, kept here as it was: the same spans for
any event stream (every span kind, fields missing or None, failures, unmatched calls)."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runlens.records.events import Event
from runlens.records.trace import build_trace

_NANOS = 1_000_000_000


def _span_id(run_id: str, key: str) -> str:
    return hashlib.sha256(f"{run_id}/{key}".encode()).hexdigest()[:16]


def _nanos(seconds: float) -> int:
    return int(seconds * _NANOS)


def _reference_spans(
    run_id: str, events: list[Event], *, plugin: str, model: str, status: str
) -> list[dict[str, Any]]:
    """The spans of the builder before span ids were hashed from a per-run prefix (verbatim
    but for types)."""
    trace_id = hashlib.sha256(run_id.encode()).hexdigest()[:32]
    root_id = _span_id(run_id, "run")
    spans: list[dict[str, Any]] = []
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
                    _span_id(run_id, f"model/{event.seq}"),
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
                    _span_id(run_id, f"tool/{opened.seq}"),
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
                    _span_id(run_id, f"validator/{event.seq}"),
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
    return [root, *spans]


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
) -> dict[str, Any]:
    status = {"code": "ERROR", "message": error} if error else {"code": "OK"}
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


_TYPES = (
    "model.called",
    "tool.called",
    "tool.completed",
    "tool.failed",
    "validator.completed",
    "run.started",
)
_MAYBE = st.none() | st.text(max_size=6)
_DATA = st.fixed_dictionaries(
    {},
    optional={
        "duration_ms": st.floats(0, 5000, allow_nan=False) | st.integers(0, 5000),
        "finish_reason": _MAYBE,
        "turn": st.none() | st.integers(0, 9),
        "purpose": _MAYBE,
        "input_tokens": st.none() | st.integers(0, 10**6),
        "output_tokens": st.none() | st.integers(0, 10**6),
        "tool_call_id": st.none() | st.sampled_from(["c0", "c1", "c2"]),
        "name": _MAYBE,
        "error": _MAYBE,
        "validator": _MAYBE,
        "finding_codes": st.lists(st.text(max_size=3), max_size=3),
        "round": st.none() | st.integers(1, 3),
        "blocked": st.booleans(),
        "summary": _MAYBE,
    },
)


@st.composite
def _events(draw: st.DrawFn) -> list[Event]:
    kinds = draw(st.lists(st.sampled_from(_TYPES), max_size=30))
    moment = draw(st.floats(1.7e9, 1.8e9, allow_nan=False))
    events = []
    for seq, kind in enumerate(kinds, start=1):
        moment += draw(st.floats(0, 2, allow_nan=False))
        events.append(Event(seq, "ts", "run_x", kind, draw(_DATA), moment))
    return events


@settings(max_examples=100, deadline=None)
@given(
    events=_events(),
    model=st.sampled_from(["scripted:x.json", "openai:gpt", "plain"]),
    status=st.sampled_from(["completed", "failed", "cancelled"]),
)
def test_the_spans_are_the_replaced_builders(events: list[Event], model: str, status: str) -> None:
    run_id = "run_20261206T090000Z_abc123"
    trace = build_trace(run_id, events, plugin="p", model=model, status=status)
    expected = _reference_spans(run_id, events, plugin="p", model=model, status=status)
    # Equal as values and in key order (the order in which trace.json writes them).
    assert trace.spans == expected
    assert [list(span) for span in trace.spans] == [list(span) for span in expected]
    assert [list(span["attributes"]) for span in trace.spans] == [
        list(span["attributes"]) for span in expected
    ]
