"""The run's event stream: append-only, one JSON object per line, `seq` from 1.

Every other record (metrics, trace, run.json's view of progress) is derived from this stream
by subscribers, so nothing is counted twice in different places. What may be published, and
each event's data, is the closed catalogue of `runlens.records.catalogue`: `publish` takes a
catalogue type (its data checked by mypy through the overloads below), `emit` what a tool
emits (checked at run time).

Writing is cheap on purpose: one encode and one unbuffered `write` per event. Nothing is held
back in a Python buffer, so once `publish` returns the line is in the operating system's
hands: a crash, `kill -9` or Ctrl-C afterwards loses nothing already published (a power cut
is the one thing it does not cover: that would need an fsync per event).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, overload

from runlens.records import catalogue as c
from runlens.records.catalogue import EventType, check_event_type, tool_event
from runlens.records.encoding import dumps_compact
from runlens.records.eventlog import read_event_log


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    ts: str
    run_id: str
    #: One of the catalogue's types (`runlens.records.catalogue`); `data` has its shape.
    type: str
    data: dict[str, Any]
    #: time.time() of the event, for derived records (not serialised; `ts` is its ISO form).
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "ts": self.ts,
            "run_id": self.run_id,
            "type": self.type,
            "data": self.data,
        }


Subscriber = Callable[[Event], None]

#: A run taken over by another worker (`runlens.workers`): published into the replay, kept
#: in place by every later one.
HANDOVER: Final = "run.resumed"


class EventLog:
    """Publishes events to `events.jsonl` and to in-process subscribers, in order."""

    def __init__(
        self,
        path: Path | None,
        run_id: str,
        *,
        subscribers: Sequence[Subscriber] = (),
        redact: Callable[[str], str] | None = None,
        replay: Sequence[Mapping[str, Any]] = (),
        on_diverged: Callable[[int], None] | None = None,
    ) -> None:
        """`replay`: the events a replayed run published the first time (a durable run resumed
        by another worker). While the run publishes the same types in the same order, each
        event is the recorded one (its `ts` and data as first published), so the stream ends
        as if the run had never stopped; at the first difference the rest is dropped and
        `on_diverged(seq)` is told. A recorded `run.resumed` (a handover) is published where
        it stands, and kept (renumbered) when the rest is dropped."""
        self.run_id = run_id
        self._seq = 0
        self._replay = list(replay)
        self._on_diverged = on_diverged
        self._subscribers = list(subscribers)
        self._redact = redact
        # Binary and unbuffered: each event is one append `write` of a whole line (see above).
        self._stream: io.FileIO | None = io.FileIO(path, "a") if path is not None else None
        self.events: list[Event] = []
        self._clock = _UtcClock()

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    @overload
    def publish(self, event_type: Literal["run.created"], data: c.RunCreated) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.started"], data: c.RunStarted) -> Event: ...
    @overload
    def publish(
        self, event_type: Literal["plan.step.updated"], data: c.PlanStepUpdated
    ) -> Event: ...
    @overload
    def publish(self, event_type: Literal["model.called"], data: c.ModelCalled) -> Event: ...
    @overload
    def publish(self, event_type: Literal["model.retried"], data: c.ModelRetried) -> Event: ...
    @overload
    def publish(self, event_type: Literal["model.failed"], data: c.ModelFailed) -> Event: ...
    @overload
    def publish(self, event_type: Literal["tool.called"], data: c.ToolCalled) -> Event: ...
    @overload
    def publish(self, event_type: Literal["tool.completed"], data: c.ToolCompleted) -> Event: ...
    @overload
    def publish(self, event_type: Literal["tool.failed"], data: c.ToolFailed) -> Event: ...
    @overload
    def publish(
        self, event_type: Literal["evidence.indexed"], data: c.EvidenceIndexed
    ) -> Event: ...
    @overload
    def publish(self, event_type: Literal["batch.completed"], data: c.BatchCompleted) -> Event: ...
    @overload
    def publish(self, event_type: Literal["batch.failed"], data: c.BatchFailed) -> Event: ...
    @overload
    def publish(self, event_type: Literal["hook.blocked"], data: c.HookBlocked) -> Event: ...
    @overload
    def publish(self, event_type: Literal["hook.failed"], data: c.HookFailed) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.warned"], data: c.RunWarned) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.validating"], data: c.RunValidating) -> Event: ...
    @overload
    def publish(
        self, event_type: Literal["validator.completed"], data: c.ValidatorCompleted
    ) -> Event: ...
    @overload
    def publish(
        self, event_type: Literal["artifact.validated", "artifact.rejected"], data: c.ArtifactJudged
    ) -> Event: ...
    @overload
    def publish(
        self, event_type: Literal["repair.requested"], data: c.RepairRequested
    ) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.completed"], data: c.RunCompleted) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.failed"], data: c.RunFailed) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.cancelled"], data: c.RunCancelled) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.interrupted"], data: c.RunInterrupted) -> Event: ...
    @overload
    def publish(self, event_type: Literal["run.resumed"], data: c.RunResumed) -> Event: ...
    @overload
    def publish(self, event_type: Literal["plugin.event"], data: c.PluginEvent) -> Event: ...

    def publish(self, event_type: str, data: Any) -> Event:
        """Append one event of the catalogue; `UnknownEventType` for any other type.

        `data` is checked by mypy against the type's shape (the overloads above), not at run
        time: this runs for every model and tool call. What tools publish goes through `emit`.
        """
        return self._append(check_event_type(event_type), data)

    def emit(self, name: str, data: Mapping[str, Any]) -> Event:
        """Publish what a tool emits (`ToolContext.emit`): a core event tools may publish,
        checked against its shape, or a plugin's own as `plugin.event` (see the catalogue)."""
        return self._append(*tool_event(name, data))

    def _append(self, event_type: EventType, data: dict[str, Any]) -> Event:
        if not self._replay:  # a run publishing afresh (every run but a replayed one)
            self._seq += 1
            now, timestamp = self._clock.now()
            fresh = Event(self._seq, timestamp, self.run_id, event_type, data, now)
            self._deliver(fresh)
            return fresh
        # A handover recorded where the replay stands now is part of the run's past: it
        # stays in place (nothing the run publishes itself would match it).
        while event_type != HANDOVER and self._recorded_type(self._seq + 1) == HANDOVER:
            self._seq += 1
            self._deliver(self._from_record(self._replay[self._seq - 1], self._seq))
        self._seq += 1
        event = self._replayed(event_type)
        if event is None:
            now, timestamp = self._clock.now()
            event = Event(self._seq, timestamp, self.run_id, event_type, data, now)
        self._deliver(event)
        return event

    def _deliver(self, event: Event) -> None:
        if self._stream is not None:
            line = dumps_compact(event.to_dict())
            if self._redact is not None:
                line = self._redact(line.decode("utf-8")).encode("utf-8")
            _write_all(self._stream, line + b"\n")
        self.events.append(event)
        for subscriber in self._subscribers:
            subscriber(event)

    def _recorded_type(self, seq: int) -> Any:
        return self._replay[seq - 1].get("type") if seq <= len(self._replay) else None

    def _replayed(self, event_type: str) -> Event | None:
        if self._seq > len(self._replay):
            return None
        recorded = self._replay[self._seq - 1]
        if recorded.get("seq") != self._seq or recorded.get("type") != event_type:
            # The handovers among what is dropped are kept, renumbered from here on.
            handovers = [r for r in self._replay[self._seq - 1 :] if r.get("type") == HANDOVER]
            self._replay = []
            if self._on_diverged is not None:
                self._on_diverged(self._seq)
            for record in handovers:
                self._deliver(self._from_record(record, self._seq))
                self._seq += 1
            return None
        return self._from_record(recorded, self._seq)

    def _from_record(self, recorded: Mapping[str, Any], seq: int) -> Event:
        """A recorded event as first published (its `ts` and data), at `seq`."""
        data = recorded.get("data")
        timestamp = str(recorded.get("ts") or "")
        try:
            at = datetime.fromisoformat(timestamp).timestamp()
        except ValueError:
            at = time.time()
        return Event(
            seq,
            timestamp,
            self.run_id,
            str(recorded.get("type")),
            dict(data) if isinstance(data, Mapping) else {},
            at,
        )

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


class _UtcClock:
    """The time now, as seconds and as ISO 8601 with microseconds (`...T07:15:00.123456+00:00`).

    The date and time up to the second are formatted once per second, not once per event:
    `datetime.isoformat` costs several times more than the rest of the timestamp.
    """

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def now(self) -> tuple[float, str]:
        nanos = time.time_ns()
        second, rest = divmod(nanos, 1_000_000_000)
        if second != self._second:
            self._prefix = datetime.fromtimestamp(second, UTC).isoformat(timespec="seconds")[:19]
            self._second = second
        return nanos / 1e9, f"{self._prefix}.{rest // 1000:06d}+00:00"


def _write_all(stream: io.FileIO, data: bytes) -> None:
    """Write all of `data`."""
    written = stream.write(data)
    while written < len(data):  # rare: a raw write may be partial (e.g. cut by a signal)
        data = data[written:]
        written = stream.write(data)


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Read a run's events back; a torn last line (a crash mid-write) or any other line that
    is not an event is skipped (`read_event_log` says which)."""
    yield from read_event_log(path)[0]
