"""Keeping the run store in step with a live run, and hearing from it when to stop.

`StoreMirror` subscribes to a run's event log. Publishing an event costs the run one append
to a bounded queue: a background thread takes what has gathered every `flush_seconds` (so
the store is at most that far behind, give or take the other mirrors' writes), redacts and
encodes it there, and writes it in one transaction with the run's status, plan and warnings
folded from the events (`live_record`); every `poll_seconds` it asks the store whether
someone wants the run to stop (`RunStore.request_cancel`, from the UI or the API); if so it
calls `on_cancel` once. The mirrors of one store in a process share that thread (`_Writer`):
a hundred concurrent runs are one writer, not a hundred contending for the store's lock, and
the batches due at one tick are one transaction, not a hundred commits.

The store is a convenience, never a condition of the run: when a write fails the mirror
says so once on stderr and tries again with the next batch; the workspace holds every
record, and `finish()` (or `runlens reindex`, `runlens runs`) brings the store up to date
from it. The run itself never waits on the store: writes happen on the mirrors' thread, and
every write of the mirror, `finish()`'s too, waits at most `lock_seconds` for a lock another
process holds (a SQLite store another writer has locked), then fails and is said so. Only a
worker's final sync (`upload_files`), which hands the run back, waits as long as the store.
A store so far behind that `queue_size` events wait for it (or for a write that keeps
failing) stops being written while the run lasts: the run never waits, and `finish()` reads
the rest from the workspace.

Terminal states are not mirrored from events: `finish()` writes them with the run's final
records, so the store never shows a run ended without its artifacts. It writes what the
store does not hold yet, once, in one transaction (`finish_streamed`): the events not yet
written, the run's fields from its final `run.json`, its artifacts, findings and citations,
then its end state; the events it has streamed are not read back, nor the record files the
run's end handed it as it wrote them (`records_written`), nor the run record the live
batches fold the run's status onto (`record_started`). A run whose workspace does
not record its end, a mirror that fell behind, and a worker's mirror (`worker`,
`upload_files`, which names the worker in the run's first write and puts every workspace file
in the store first) sync the workspace instead (`sync_workspace`).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from runlens.errors import one_line
from runlens.records.events import Event
from runlens.records.io import WrittenRecords
from runlens.records.readers import (
    EventView,
    RunRecordView,
    event_views,
    parse_view,
    read_run_record,
)
from runlens.records.run_record import live_record
from runlens.records.status import RunStatus
from runlens.store.sync import finish_streamed, sync_workspace
from runlens.store.writes import Published
from runlens.tools.workspace import Workspace

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.rows import Origin

#: How long a write of the mirror waits for a lock another process holds on the store.
LOCK_SECONDS = 1.0
#: How many events wait for the store at most (queued, or in a write that failed) before
#: the mirror stops writing the run live and leaves the rest to `finish()`.
QUEUE_SIZE = 50_000
#: The event type whose events order a run's findings (`runlens.store.sync._report_order`).
_REPORT_ORDER = "validator.completed"
#: The event types a batch is read for: the run's first fields (`run.created`), what
#: `live_record` folds into its status, plan, warnings and Evidence Index, and the order of
#: its findings. The others are written as they are, never parsed.
_FOLDED = frozenset(
    {
        "run.created",
        "run.started",
        "run.validating",
        "repair.requested",
        "plan.step.updated",
        "run.warned",
        "evidence.indexed",
        _REPORT_ORDER,
    }
)
#: The event types asked for when a run's findings need ordering.
_REPORT_TYPES = frozenset({_REPORT_ORDER})
#: What `on_cancel` is given as the reason the run ends `cancelled`.
CANCEL_REASON = "cancelled on request from the run store (runlens ui or the API)"


class StoreMirror:
    """An `EventLog` subscriber that writes a live run's events and state to the store."""

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        workspace: Path,
        on_cancel: Callable[[str], None],
        *,
        origin: Origin = "cli",
        worker: str | None = None,
        upload_files: bool = False,
        redact: Callable[[str], str] | None = None,
        flush_seconds: float = 0.2,
        poll_seconds: float = 0.5,
        lock_seconds: float = LOCK_SECONDS,
        queue_size: int = QUEUE_SIZE,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.workspace = Workspace(workspace)
        self.on_cancel = on_cancel
        self.origin = origin
        #: The executor id of the worker running the run (written with the first upsert).
        self.worker = worker
        #: Whether `finish()` puts the workspace's files in the store (a worker's run).
        self.upload_files = upload_files
        self._redact = redact
        self._flush_seconds = flush_seconds
        self._poll_seconds = poll_seconds
        self._lock_seconds = lock_seconds
        self._warn = warn or _warn_on_stderr
        self._queue_size = queue_size
        #: Events published and not yet taken by the thread (appends and pops are atomic).
        self._queue: deque[Event] = deque()
        #: Events taken, not yet in the store (a write failed, or not yet tried): the events
        #: themselves, or, when the mirror redacts them, redacted as dicts.
        self._unwritten: list[Any] = []
        #: Whether an event found the queue full: the rest of the run comes from its workspace.
        self._behind = False
        #: The run's `validator.completed` events (the order of its findings), as written.
        self._report_events: list[EventView] = []
        self._lock = threading.Lock()
        self._started = False
        self._stopping = False
        self._due_flush = self._due_poll = 0.0
        self._created = False
        #: The run's live fields as last written (a batch that changes none writes none).
        self._live: dict[str, Any] = {}
        self._record: RunRecordView | None = None
        #: `runtime/run.json` as the run wrote it when it started running (`record_started`).
        self._started_record: bytes | None = None
        self._cancelled = False
        self._warned = False
        #: The record files the run's end wrote, as the runtime handed them (`finish`
        #: takes them instead of reading the workspace again).
        self._written: WrittenRecords | None = None
        #: Whether every write so far reached the store.
        self.healthy = True

    def __call__(self, event: Event) -> None:
        """The subscriber: queue the event (the thread encodes and writes it)."""
        if self._behind:
            return
        if len(self._queue) >= self._queue_size:
            self._behind = True
            return
        self._queue.append(event)

    def record_started(self, raw: bytes) -> None:
        """Take `runtime/run.json` as the run wrote it when it started running: the record
        the live fields are folded onto (`_prepare`), not read back from the workspace."""
        self._started_record = raw

    def records_written(self, records: WrittenRecords) -> None:
        """Take the record files the run's end wrote, as written (the runtime hands them to
        a subscriber of its events that has this method, `Run._finalize`)."""
        self._written = records

    def start(self) -> StoreMirror:
        """Start writing and polling, on the thread the store's mirrors share in this
        process (`_Writer`, a daemon thread: it never keeps the process up)."""
        if not self._started:
            self._started = True
            now = time.monotonic()
            self._due_flush = self._due_poll = now + self._flush_seconds
            _Writer.add(self)
        return self

    def finish(self) -> None:
        """After the run: stop the thread, then write what the store does not hold yet
        once (`finish_streamed`: the events not yet written, the final records, artifacts,
        findings and citations, the end state). A run whose workspace does not record its
        end, a mirror that fell behind and a worker's mirror sync the workspace instead
        (with `upload_files`, its files first)."""
        self._stopping = True
        _Writer.remove(self)
        with self._lock:  # a write of the shared thread under way ends first
            try:
                if self._finish_streamed():
                    return
            except Exception as error:  # a broken store never fails the run: say so, go on
                self._failed(error)
                return
            self._flush_locked()
            try:
                sync_workspace(
                    self.store,
                    self.workspace.root,
                    origin=self.origin,
                    upload_files=self.upload_files,
                    lock_seconds=None if self.upload_files else self._lock_seconds,
                )
            except Exception as error:  # a broken store never fails the run: say so, go on
                self._failed(error)

    def _finish_streamed(self) -> bool:
        """Write the end of a run every event of which is written or waiting here; False
        when that is not the case or the workspace does not record the run ended."""
        if self.upload_files or self._behind:
            return False
        self._take()
        if self._behind:
            return False
        unwritten = self._unwritten

        def report_events() -> list[EventView]:
            """Read only for a run with findings to order (most runs have none or one)."""
            taken = event_views(_of_types(unwritten, _REPORT_TYPES))[0]
            return [*self._report_events, *taken]

        done = finish_streamed(
            self.store,
            self.workspace,
            self.run_id,
            unwritten=self._unwritten,
            report_events=report_events,
            origin=self.origin,
            lock_seconds=self._lock_seconds,
            written=self._written,
            new=not self._created,
        )
        if done:
            self._unwritten = []
            self.healthy = True
        return done

    # -- the shared thread -----------------------------------------------------------------

    def _flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        self._take()
        if self._behind or not self._unwritten:
            return
        try:
            self._write(self._unwritten)
        except Exception as error:  # kept for the next try (writes are idempotent by seq)
            self._failed(error)
        else:
            self._unwritten = []
            self.healthy = True

    def _take(self) -> None:
        """Move the queued events to `_unwritten`, redacted as the store keeps them (a
        mirror that redacts nothing keeps the events as they are: the store's rows are
        encoded from them); past `queue_size` waiting, stop writing the run live (`finish`
        reads the rest from the workspace)."""
        taken: list[Event] = []
        while True:
            try:
                taken.append(self._queue.popleft())
            except IndexError:
                break
        if self._behind or len(self._unwritten) + len(taken) > self._queue_size:
            self._behind = True
            self._queue.clear()
            self._unwritten = []
            return
        redact = self._redact
        if redact is None:
            self._unwritten.extend(taken)
            return
        for event in taken:
            data = event.to_dict()
            text = json.dumps(data, ensure_ascii=False)
            redacted = redact(text)
            if redacted != text:  # a secret was blanked out: the data as redacted
                data = json.loads(redacted)
            self._unwritten.append(data)

    def _write(self, batch: list[Any]) -> None:
        """Write one batch in one transaction: its events, the run's fields they change and
        (the first time) the run itself all reach the store, or none does and the batch is
        tried again whole."""
        published, written = self._prepare(batch)
        self.store.publish(
            self.run_id,
            published.events,
            first=published.first,
            live=published.live,
            lock_seconds=self._lock_seconds,
        )
        written()

    def _prepare(self, batch: list[Any]) -> tuple[Published, Callable[[], None]]:
        """What writing `batch` publishes (the run's row the first time, the fields its
        events change), and what the mirror then holds as written, to apply once the
        batch is in the store."""
        events, _ = event_views(_of_types(batch, _FOLDED))
        if self._created and not events:  # nothing in the batch changes the run's fields
            return Published(self.run_id, batch), lambda: None
        if self._record is None:
            started = self._started_record
            self._record = (
                read_run_record(self.workspace.run_record).view
                if started is None
                else parse_view(RunRecordView, started, Workspace.RUN_RECORD).view
            )
        folded = live_record(self._record, events) if self._record is not None else None
        fields: dict[str, Any] = {}
        if folded is not None:
            fields = {
                "status": folded.status or "running",
                "plan": [step.encode() for step in folded.plan],
                "warnings": folded.warnings,
                "evidence_index_sha256": folded.evidence_index_sha256,
            }
            if fields["status"] not in (RunStatus.RUNNING, RunStatus.VALIDATING):
                fields.pop("status")  # terminal states come with the final records
        unchanged = self._created and fields == self._live
        published = Published(
            self.run_id,
            batch,
            first=None if self._created else self._create(events),
            live=None if unchanged else fields,
        )

        def written() -> None:
            self._created = True
            self._live = fields
            self._record = folded if folded is not None else self._record
            self._report_events.extend(e for e in events if e.type == _REPORT_ORDER)

        return published, written

    def _create(self, events: list[EventView]) -> dict[str, Any]:
        created = next((e for e in events if e.type == "run.created"), None)
        data = (created.data if created is not None else None) or {}
        fields: dict[str, Any] = {
            "workspace": str(self.workspace.root),
            "origin": self.origin,
            "host": self.store.host,
            "status": RunStatus.CREATED.value,
        }
        if self.worker is not None:
            fields["worker"] = self.worker
        for key, column in (
            ("plugin", "plugin"),
            ("model", "model"),
            ("input", "input_name"),
            # Who started it and what it re-runs (SPEC 17): the rerun links from its start.
            ("submitted_by", "submitted_by"),
            ("rerun_of", "rerun_of"),
        ):
            if isinstance(data.get(key), str):
                fields[column] = data[key]
        if created is not None and created.ts is not None:
            fields["created_at"] = created.ts
        return fields

    def _failed(self, error: BaseException) -> None:
        self.healthy = False
        if self._warned:
            return
        self._warned = True
        reason = one_line(error, 300)
        self._warn(
            f"Warning: the run store {self.store.url} failed ({type(error).__name__}: "
            f"{reason}); the run goes on and its workspace keeps every record "
            "(`runlens reindex` brings the store up to date)."
        )


#: How many mirrors' batches one transaction of the mirrors' thread writes at most: a
#: `finish()` on the run's event loop waits for the write of its mirror under way, and a
#: group's transaction takes longer the more mirrors it holds.
_GROUP_SIZE = 8
#: How long the mirrors' thread waits for another mirror once the last one has finished.
_IDLE_SECONDS = 2.0


class _Writer:
    """The thread that writes and polls for every started mirror of one store in this
    process (a worker's runs, the runs of a test or a benchmark): one thread however many
    runs, the batches due at one tick written in one transaction (`_flush_together`), never
    two at once from here (on SQLite, the mirrors of a process do not contend for its write
    lock). It ends when no mirror has been left for `_IDLE_SECONDS`, and starts again with
    the next. A run's thread wakes it only when its mirror has something due before the
    thread's next wake-up (never when a mirror leaves): a short run costs the run's thread
    no wake-up of another thread."""

    _lock: ClassVar = threading.Lock()
    #: The writer of each store (by `id`) that has started mirrors.
    _writers: ClassVar[dict[int, _Writer]] = {}

    def __init__(self, key: int) -> None:
        self.key = key
        self.mirrors: list[StoreMirror] = []
        self.wake = threading.Event()
        #: Whether the thread found no mirror last time it looked (it ends if none came).
        self.idle = False
        #: When the thread wakes next at the latest (-inf while it works out when): a mirror
        #: added with something due before then wakes it, one added later need not.
        self.deadline = -math.inf

    @classmethod
    def add(cls, mirror: StoreMirror) -> None:
        with cls._lock:
            writer = cls._writers.get(id(mirror.store))
            if writer is None:
                writer = cls._writers[id(mirror.store)] = _Writer(id(mirror.store))
                threading.Thread(target=writer._loop, name="runlens-store", daemon=True).start()
            writer.mirrors.append(mirror)
            if min(mirror._due_flush, mirror._due_poll) < writer.deadline:
                writer.wake.set()

    @classmethod
    def remove(cls, mirror: StoreMirror) -> None:
        with cls._lock:
            writer = cls._writers.get(id(mirror.store))
            if writer is not None and mirror in writer.mirrors:
                # The thread need not wake for it: it leaves the mirror out when it does.
                writer.mirrors.remove(mirror)

    def _loop(self) -> None:
        while True:
            with self._lock:
                mirrors = list(self.mirrors)
                if not mirrors and self.idle:
                    del self._writers[self.key]
                    return
                self.idle = not mirrors
                self.wake.clear()
                self.deadline = -math.inf  # a mirror added meanwhile wakes the thread
            if not mirrors:  # the next run, one after the other, finds the thread up
                self._sleep(time.monotonic() + _IDLE_SECONDS)
                continue
            now = time.monotonic()
            live = [mirror for mirror in mirrors if not mirror._stopping]
            # What falls due within half an interval is done now: the mirrors' ticks align,
            # and one transaction (one query) serves them all.
            _flush_together([m for m in live if now + m._flush_seconds / 2 >= m._due_flush])
            _poll_together([m for m in live if now + m._poll_seconds / 2 >= m._due_poll])
            due = min((min(m._due_flush, m._due_poll) for m in live), default=now + 1.0)
            self._sleep(due)

    def _sleep(self, until: float) -> None:
        """Wait until `until`, or until a mirror is added with something due before then."""
        with self._lock:
            self.deadline = until
        self.wake.wait(max(until - time.monotonic(), 0.0))


def _flush_together(mirrors: list[StoreMirror]) -> None:
    """Write the batches of `mirrors` (of one store), `_GROUP_SIZE` mirrors at a time, each
    group in one transaction with its events in one statement (`RunStore.publish_many`): a
    tick of a hundred live runs is a few commits, not a hundred, and a run's `finish`, which
    waits for a write of its mirror under way, waits for one group at most."""
    for start in range(0, len(mirrors), _GROUP_SIZE):
        _flush_group(mirrors[start : start + _GROUP_SIZE])


def _flush_group(mirrors: list[StoreMirror]) -> None:
    """The batches of `mirrors` in one transaction. When it fails, each batch is tried
    again in a transaction of its own (`_flush_locked`), as alone, so a failure is its
    mirror's alone and said by it. A mirror finishing meanwhile (its lock held by `finish`)
    is left out."""
    held = [mirror for mirror in mirrors if mirror._lock.acquire(blocking=False)]
    try:
        waiting: list[StoreMirror] = []
        prepared: list[tuple[Published, Callable[[], None]]] = []
        for mirror in held:
            try:
                mirror._take()
                if not mirror._behind and mirror._unwritten:
                    prepared.append(mirror._prepare(mirror._unwritten))
                    waiting.append(mirror)
            except Exception as error:  # a redactor or a run record that failed: said
                mirror._failed(error)
        if waiting:
            store = waiting[0].store
            lock_seconds = min(mirror._lock_seconds for mirror in waiting)
            try:
                store.publish_many([batch for batch, _ in prepared], lock_seconds=lock_seconds)
            except Exception as error:  # several: tried again below, each alone, where the
                if len(waiting) == 1:  # failure is said by the mirror whose batch failed
                    waiting[0]._failed(error)
                    waiting = []
            else:
                for mirror, (_, written) in zip(waiting, prepared, strict=True):
                    written()
                    mirror._unwritten = []
                    mirror.healthy = True
                waiting = []
        for mirror in waiting:
            try:
                mirror._flush_locked()
            except Exception as error:  # as above
                mirror._failed(error)
    finally:
        for mirror in held:
            mirror._lock.release()
            mirror._due_flush = time.monotonic() + mirror._flush_seconds


def _poll_together(mirrors: list[StoreMirror]) -> None:
    """Ask the store, in one query, which of the runs of `mirrors` someone wants stopped;
    call `on_cancel` once for each."""
    asking = [mirror for mirror in mirrors if not mirror._cancelled]
    if asking:
        try:
            requested = asking[0].store.cancels_requested([m.run_id for m in asking])
        except Exception as error:
            for mirror in asking:
                mirror._failed(error)
            requested = set()
        for mirror in asking:
            if mirror.run_id in requested and not mirror._stopping:
                mirror._cancelled = True
                try:
                    mirror.on_cancel(CANCEL_REASON)
                except Exception as error:  # an `on_cancel` that raised: said, not fatal
                    mirror._failed(error)
    for mirror in mirrors:
        mirror._due_poll = time.monotonic() + mirror._poll_seconds


def _of_types(batch: list[Any], types: frozenset[str]) -> Iterator[Mapping[str, Any]]:
    """The events of `batch` (`Event`s, or dicts as redacted) of one of `types`, as
    dicts."""
    for event in batch:
        if isinstance(event, Event):
            if event.type in types:
                yield event.to_dict()
        elif event.get("type") in types:
            yield event


def _warn_on_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
