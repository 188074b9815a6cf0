"""The run's event stream: append-only, one JSON object per line, `seq` from 1.

Every other record (metrics, trace, run.json's view of progress) is derived from this stream
by subscribers, so nothing is counted twice in different places. Writing is cheap on purpose:
one `json.dumps` and one buffered write per event, flushed so a crash or Ctrl-C leaves every
published event on disk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

EventType = str  # `noun.past_verb`, e.g. "tool.completed"; the known set is in KNOWN_EVENT_TYPES

KNOWN_EVENT_TYPES = frozenset(
    {
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
        "run.validating",
        "validator.completed",
        "artifact.validated",
        "artifact.rejected",
        "repair.requested",
        "run.completed",
        "run.failed",
        "run.cancelled",
    }
)


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    ts: str
    run_id: str
    type: EventType
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


class EventLog:
    """Publishes events to `events.jsonl` and to in-process subscribers, in order."""

    def __init__(
        self,
        path: Path | None,
        run_id: str,
        *,
        subscribers: Sequence[Subscriber] = (),
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.run_id = run_id
        self._seq = 0
        self._subscribers = list(subscribers)
        self._redact = redact
        self._stream: IO[str] | None = (
            path.open("a", encoding="utf-8") if path is not None else None
        )
        self.events: list[Event] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def publish(self, event_type: EventType, data: dict[str, Any] | None = None) -> Event:
        self._seq += 1
        now = time.time()
        event = Event(
            self._seq,
            datetime.fromtimestamp(now, UTC).isoformat(timespec="microseconds"),
            self.run_id,
            event_type,
            data or {},
            now,
        )
        if self._stream is not None:
            line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
            if self._redact is not None:
                line = self._redact(line)
            self._stream.write(line + "\n")
            self._stream.flush()
        self.events.append(event)
        for subscriber in self._subscribers:
            subscriber(event)
        return event

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Read a run's events back; a torn last line (a crash mid-write) is skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
