"""The closed event catalogue: what the core may publish, what tools may emit, and how a
plugin's own events are carried, counted and shown without the core knowing them."""

from __future__ import annotations

import io
import json
import re
import typing
from pathlib import Path
from typing import Any, get_args

import pytest
from rich.console import Console

from runlens.cli.progress import RunProgress
from runlens.plugins import PlanStep, SuccessCriterion
from runlens.records import events as events_module
from runlens.records.catalogue import (
    EVENT_DATA,
    EVENT_TYPES,
    TOOL_EVENT_TYPES,
    UnknownEventType,
    check_event_data,
    tool_event,
)
from runlens.records.events import Event, EventLog, read_events
from runlens.records.metrics import MetricsCollector

BATCH = {"batch": 1, "batches": 2, "offset": 0, "rows": 40, "items": 40, "no_text": 0}


def _log(tmp_path: Path, *subscribers: Any) -> EventLog:
    return EventLog(tmp_path / "events.jsonl", "run_x", subscribers=subscribers)


def test_publishing_a_type_outside_the_catalogue_raises_and_writes_nothing(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.publish("run.validating", {"round": 1})
    with pytest.raises(
        UnknownEventType, match=re.escape("'batch.started' is not an event of the catalogue")
    ):
        log.publish("batch.started", {"batch": 1})  # type: ignore[call-overload]
    log.publish("run.completed", {"round": 1})
    log.close()
    written = list(read_events(tmp_path / "events.jsonl"))
    assert [(e["seq"], e["type"]) for e in written] == [(1, "run.validating"), (2, "run.completed")]


def test_every_catalogue_type_has_one_typed_publish_overload() -> None:
    """The overloads mypy checks call sites with cover the catalogue exactly, each with the
    type's own data shape."""
    covered: dict[str, Any] = {}
    for overload in typing.get_overloads(EventLog.publish):
        hints = typing.get_type_hints(overload, vars(events_module))
        for event_type in get_args(hints["event_type"]):
            assert event_type not in covered, f"{event_type} has two overloads"
            covered[event_type] = hints["data"]
    assert covered == dict(EVENT_DATA)
    assert set(covered) == EVENT_TYPES


def test_tools_may_emit_batch_events_checked_against_their_shape() -> None:
    assert {"batch.completed", "batch.failed"} == TOOL_EVENT_TYPES
    assert tool_event("batch.completed", BATCH) == ("batch.completed", BATCH)
    failed = {**BATCH, "reason": "the model returned 3 of 40 items", "unanalysed": 37}
    assert tool_event("batch.failed", failed) == ("batch.failed", failed)
    with pytest.raises(ValueError, match=re.escape("batch.completed data does not fit its shape")):
        tool_event("batch.completed", {**BATCH, "feedback_ids": []})  # an extra key
    with pytest.raises(ValueError, match=re.escape("batch.failed data does not fit its shape")):
        tool_event("batch.failed", BATCH)  # no reason, no unanalysed


@pytest.mark.parametrize("name", ["run.completed", "artifact.validated", "plugin.event"])
def test_tools_cannot_emit_the_runs_own_events(name: str) -> None:
    with pytest.raises(ValueError, match="published by the runtime itself"):
        tool_event(name, {})


def test_any_other_name_is_a_plugin_event_carried_generically(tmp_path: Path) -> None:
    metrics = MetricsCollector()
    log = _log(tmp_path, metrics)
    log.emit("ticket.triaged", {"ticket": "T-7", "queue": "billing"})
    log.emit("ticket.triaged", {"ticket": "T-8", "queue": "login"})
    log.emit("batch.completed", BATCH)
    log.close()
    written = list(read_events(tmp_path / "events.jsonl"))
    assert [e["type"] for e in written] == ["plugin.event", "plugin.event", "batch.completed"]
    assert written[0]["data"] == {
        "name": "ticket.triaged",
        "data": {"ticket": "T-7", "queue": "billing"},
    }
    counted = metrics.as_dict()
    assert counted["plugin_events"] == {"ticket.triaged": 2}
    assert counted["batches_completed"] == 1
    with pytest.raises(ValueError, match="non-empty string"):
        log.emit(" ", {})


def test_event_data_is_checked_by_the_published_shape() -> None:
    with pytest.raises(ValueError, match=re.escape("run.warned data does not fit")):
        check_event_data("run.warned", {"message": 3})
    with pytest.raises(UnknownEventType):
        check_event_data("run.paused", {})


def _event(seq: int, event_type: str, data: dict[str, Any]) -> Event:
    return Event(seq, "2026-12-01T10:00:00.000000+00:00", "run_x", event_type, data)


def test_progress_shows_plugin_events_by_name_with_their_fields() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    steps = (PlanStep("triage", "Triage", (SuccessCriterion("stop_passed"),)),)
    progress = RunProgress(console, steps)
    progress(_event(1, "plugin.event", {"name": "ticket.triaged", "data": {"ticket": "T-7"}}))
    progress(
        _event(2, "plugin.event", {"name": "ticket.triaged", "data": {"ticket": "T-8", "x": []}})
    )
    progress(_event(3, "plugin.event", {"name": "queue.drained", "data": {}}))
    assert out.getvalue().splitlines() == [
        "  ticket.triaged: ticket=T-7",
        "  ticket.triaged: ticket=T-8",
        "  queue.drained",
    ]
    assert progress.plugin_events == {"ticket.triaged": 2, "queue.drained": 1}
    assert "ticket.triaged 2 · queue.drained 1" in _footer(progress)


def _footer(progress: RunProgress) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(progress._render())
    return buffer.getvalue()


def test_the_events_line_shape_is_unchanged() -> None:
    """SPEC section 11: `{seq, ts, run_id, type, data}`, nothing else on the line."""
    line = _event(1, "run.warned", {"message": "m"}).to_dict()
    assert list(line) == ["seq", "ts", "run_id", "type", "data"]
    assert json.loads(json.dumps(line))["data"] == {"message": "m"}
