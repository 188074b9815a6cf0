"""`run.resumed` in a replayed event stream: published where the run carries on, kept in
place by every later replay, and kept (renumbered) when a replay diverges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runlens.records.events import Event, EventLog, read_events


def _event(seq: int, event_type: str, **data: Any) -> dict[str, Any]:
    return {
        "seq": seq,
        "ts": f"2026-12-03T08:00:{seq:02d}.000000+00:00",
        "type": event_type,
        "data": data,
    }


def _log(tmp_path: Path, replay: list[dict[str, Any]], diverged: list[int]) -> EventLog:
    return EventLog(tmp_path / "events.jsonl", "run-1", replay=replay, on_diverged=diverged.append)


def _publish(log: EventLog, event_type: str, data: dict[str, Any]) -> Event:
    """Publish any catalogue type with any data (the overloads check real publishers)."""
    publish: Any = log.publish
    event: Event = publish(event_type, data)
    return event


def _types(tmp_path: Path) -> list[tuple[int, str]]:
    return [(event["seq"], event["type"]) for event in read_events(tmp_path / "events.jsonl")]


def test_a_handover_is_published_where_the_replay_ends(tmp_path: Path) -> None:
    diverged: list[int] = []
    replay = [
        _event(1, "run.created"),
        _event(2, "run.started"),
        _event(3, "run.resumed", worker="w2", previous_worker="w1"),
    ]
    log = _log(tmp_path, replay, diverged)
    _publish(log, "run.created", {})
    _publish(log, "run.started", {"tools": [], "repair_turns": 0})
    called = _publish(log, "model.called", {})
    log.close()
    assert _types(tmp_path) == [
        (1, "run.created"),
        (2, "run.started"),
        (3, "run.resumed"),
        (4, "model.called"),
    ]
    assert called.seq == 4 and diverged == []
    [resumed] = [event for event in log.events if event.type == "run.resumed"]
    assert resumed.data == {"worker": "w2", "previous_worker": "w1"}
    assert resumed.ts == replay[2]["ts"]  # as first recorded


def test_a_second_handover_keeps_the_first_in_place(tmp_path: Path) -> None:
    diverged: list[int] = []
    replay = [
        _event(1, "run.created"),
        _event(2, "run.resumed", worker="w2"),
        _event(3, "model.called"),
        _event(4, "run.resumed", worker="w3"),
    ]
    log = _log(tmp_path, replay, diverged)
    _publish(log, "run.created", {})
    _publish(log, "model.called", {})
    _publish(log, "run.completed", {})
    log.close()
    assert _types(tmp_path) == [
        (1, "run.created"),
        (2, "run.resumed"),
        (3, "model.called"),
        (4, "run.resumed"),
        (5, "run.completed"),
    ]
    assert diverged == []
    assert [e.data.get("worker") for e in log.events if e.type == "run.resumed"] == ["w2", "w3"]


def test_a_diverging_replay_keeps_its_handovers(tmp_path: Path) -> None:
    diverged: list[int] = []
    replay = [
        _event(1, "run.created"),
        _event(2, "model.called"),
        _event(3, "tool.called"),
        _event(4, "run.resumed", worker="w2"),
    ]
    log = _log(tmp_path, replay, diverged)
    _publish(log, "run.created", {})
    _publish(log, "model.called", {})
    _publish(log, "run.failed", {})  # not the tool call recorded at 3
    _publish(log, "run.completed", {})
    log.close()
    assert diverged == [3]
    assert _types(tmp_path) == [
        (1, "run.created"),
        (2, "model.called"),
        (3, "run.resumed"),
        (4, "run.failed"),
        (5, "run.completed"),
    ]
