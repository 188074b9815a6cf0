"""A queued run as a DBOS workflow: resumable on any worker after its worker died.

The workflow (`runlens.run`, one per run, its id the run id) builds the run from its
`RunRequest` and executes it with a `DurableJournal`, which makes every model call, tool call
and validation round a DBOS step (`runlens.runtime.journal` says what each checkpoints).

A queued run's truth is the run store (`runlens.store.lifecycle`): its row, events and files.
The workspace of the worker executing it is a cache of the store. When a worker dies, DBOS
gives its workflows to another worker (`runlens.workers.worker`), which executes the workflow
again from the start:

1. the local workspace is a cache: it is wiped and the input is written again from the store;
2. the run is replayed: every step that completed returns its checkpoint (so no model call
   that was answered is sent again), tools run again on the same answers (they are
   deterministic, and rebuild the workspace file by file), and each event the run published
   before is published again as the one recorded (`EventLog` replay), so the event stream
   carries on without a gap or a duplicate;
3. from the first step that had not completed, the run goes on as new.

Side effects are idempotent, since steps run at least once: files are rewritten whole with
the same bytes, events are keyed by their `seq`, the store's rows are upserts, and the final
upload writes the workspace files before the terminal status (a run the store shows ended
always has its files there). Every write of the run's row goes through the store's named
transitions (`claim`, `publish`, `finish`, `drop_events_from`).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbos import DBOS
from dbos import error as dbos_error

from runlens.errors import RunLensError, UserError
from runlens.plugins import load_plugin
from runlens.records import catalogue as c
from runlens.records.io import utc_now
from runlens.records.status import RunStatus
from runlens.runtime.journal import Journal, JsonObject
from runlens.runtime.run import Run, RunResult
from runlens.start import SCRIPTED_IN_QUEUE, Durable, open_run
from runlens.store.db import EXPIRED, RunStore
from runlens.store.mirror import StoreMirror
from runlens.store.rows import Origin
from runlens.workers.request import RunRequest
from runlens.workers.system import WORKFLOW_NAME


class DurableJournal(Journal):
    """Every step a DBOS step. One step at a time per run: the order of a run's steps is then
    the same when it is replayed (concurrent analysis batches would otherwise reach their
    model calls in whatever order the provider answered)."""

    durable = True

    def __init__(self) -> None:
        self._order = asyncio.Lock()

    async def step(
        self, name: str, body: Callable[[], Awaitable[JsonObject]]
    ) -> tuple[JsonObject, bool]:
        ran = False

        async def run_body() -> JsonObject:
            nonlocal ran
            if _holding.is_set():
                # The worker is handing its runs back: this step runs on the next worker.
                await asyncio.Event().wait()
            ran = True
            return await body()

        async with self._order:
            try:
                value = await DBOS.run_step_async({"name": name}, run_body)
            except dbos_error.DBOSWorkflowCancelledError:
                # Cancelled in the queue as it was being taken: the run ends `cancelled`.
                raise asyncio.CancelledError("cancelled in the queue") from None
        return value, not ran


@dataclass
class WorkerContext:
    """What the workflow needs from the worker process that executes it."""

    store: RunStore
    home: Path
    executor_id: str
    log: Callable[[str], None]
    host: str = field(default_factory=socket.gethostname)
    #: Runs in progress on this worker, by run id (for a clean stop).
    active: dict[str, Run] = field(default_factory=dict)


_context: WorkerContext | None = None
#: Set when the worker hands its runs back: no step starts any more in this process.
_holding = threading.Event()


def bind(context: WorkerContext) -> None:
    """Give the workflow its worker (once per worker process, before DBOS launches)."""
    global _context
    _context = context


def hold() -> None:
    """Start no more steps in this process (the worker is handing its runs over)."""
    _holding.set()


def active_runs() -> list[str]:
    """The runs this worker is executing now."""
    return list(_context.active) if _context is not None else []


@DBOS.workflow(name=WORKFLOW_NAME)
def run_workflow(request: dict[str, Any]) -> dict[str, Any]:
    """Execute one queued run (a sync workflow: DBOS gives each its own thread, and the run
    its own event loop in it, so CPU-bound runs do not hold up each other's loops)."""
    if _context is None:
        raise RuntimeError("runlens.run executes only inside `runlens worker`")
    return execute(_context, request)


def execute(context: WorkerContext, raw_request: Mapping[str, Any]) -> dict[str, Any]:
    store = context.store
    try:
        request = RunRequest.from_json(dict(raw_request))
    except UserError as error:
        context.log(f"refused a queued run: {error}")
        return {"status": "failed", "error_message": str(error)}
    run_id = request.run_id
    row = store.get_run(run_id)
    if row is None:
        context.log(f"run {run_id}: not in the run store; skipped")
        return {"run_id": run_id, "status": "failed", "error_message": "not in the run store"}
    if row.is_terminal:
        return {"run_id": run_id, "status": row.status}
    replay = store.events(run_id)
    if row.cancel_requested:
        why = "while its worker was down" if replay else "before a worker started it"
        _end_unstarted(store, run_id, RunStatus.CANCELLED, f"cancelled {why}")
        context.log(f"run {run_id}: cancelled {why}")
        return {"run_id": run_id, "status": "cancelled"}
    replayed = len(replay)
    resumed = None
    if row.worker is not None and replay:
        # Taken over: the run's events say so, at the point where it carries on.
        resumed = _resumed(context, run_id, row.worker, replayed)
        replay = [*replay, resumed]
    if not store.claim(run_id, worker=context.executor_id, host=context.host, resumed=resumed):
        ended = store.get_run(run_id)
        return {"run_id": run_id, "status": ended.status if ended is not None else "failed"}
    context.log(
        f"{'resume' if replayed else 'take'} {run_id} ({request.plugin}, {request.model}, "
        f"{request.input_name}){f', replaying {replayed} events' if replayed else ''}"
    )
    try:
        run, mirror = _prepare(context, request, replay, row.origin)
    except Exception as error:  # a plugin or model this worker lacks, an unusable input
        message = str(error) if isinstance(error, RunLensError) else _internal(error)
        _end_unstarted(store, run_id, RunStatus.FAILED, message)
        context.log(f"run {run_id}: failed before it started: {message}")
        return {"run_id": run_id, "status": "failed", "error_message": message}
    context.active[run_id] = run
    try:
        result = run_to_end(run)
        status = result.status.value
        error_message = result.error_message
    finally:
        context.active.pop(run_id, None)
        mirror.finish()
    context.log(f"done {run_id}: {status}{f' ({error_message})' if error_message else ''}")
    return {"run_id": run_id, "status": status, "error_message": error_message}


def run_to_end(run: Run) -> RunResult:
    """Execute `run` on an event loop of its own (this workflow's thread) and return how it
    ended, however it was cancelled."""
    try:
        return asyncio.run(_execute(run))
    except asyncio.CancelledError:
        # A cancel delivered twice: a checkpoint raised it in synchronous work, then the
        # task's own cancellation arrived after the run had ended. The run is over alike.
        return run.result()


async def _execute(run: Run) -> RunResult:
    try:
        return await run.execute()
    except asyncio.CancelledError:
        return run.result()
    finally:
        # Shielded: a cancellation arriving now must not leave the model's client open.
        await asyncio.shield(run.model.aclose())


def _prepare(
    context: WorkerContext, request: RunRequest, replay: list[dict[str, Any]], origin: Origin
) -> tuple[Run, StoreMirror]:
    store, run_id = context.store, request.run_id
    plugin = load_plugin(request.plugin)
    workspace = context.home / run_id
    # The local workspace is a cache of the store: a replay rebuilds it from the input up.
    if workspace.is_symlink() or workspace.is_file():
        workspace.unlink()
    elif workspace.exists():
        shutil.rmtree(workspace)
    staging = context.home / ".queued-inputs" / run_id
    written = store.materialize(run_id, staging, paths=[request.input_path])
    if not written and not (staging / request.input_path).is_file():
        raise UserError(f"run {run_id}: its input {request.input_name} is not in the run store")
    durable = Durable(
        journal=DurableJournal(),
        replay_events=replay,
        on_replay_diverged=lambda seq: store.drop_events_from(run_id, seq),
        worker=context.executor_id,
        home=context.home,
    )
    try:
        return open_run(
            store,
            request.options,
            plugin,
            staging / request.input_path,
            workspace,
            run_id=run_id,
            origin=origin,
            refuse_scripted=SCRIPTED_IN_QUEUE,
            durable=durable,
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _end_unstarted(store: RunStore, run_id: str, status: RunStatus, message: str) -> None:
    """End a run this worker never got going: queued, or resumed after its worker died (its
    records then are the store's alone)."""
    store.finish(run_id, status, error_message=message, finished_at=utc_now())


def _internal(error: BaseException) -> str:
    return f"internal error on worker: {type(error).__name__}: {error}"


def _resumed(context: WorkerContext, run_id: str, previous: str, replayed: int) -> dict[str, Any]:
    """The `run.resumed` event of a run this worker takes over from `previous`, as the next
    event of its stream: replaying the run publishes it there (`EventLog`), and it stays in
    place when the run is resumed again."""
    rows = {row.executor_id: row for row in context.store.list_workers()}
    before = rows.get(previous)
    if previous == context.executor_id:
        reason = "its worker was restarted under the same id"
    elif before is not None and before.heartbeat_at == EXPIRED:
        reason = f"worker {previous} stopped and handed its runs back"
    elif before is not None and before.recovered_by is not None:
        reason = (
            f"worker {previous} stopped answering (last heartbeat {before.heartbeat_at}); "
            f"taken over by {before.recovered_by}"
        )
    else:
        reason = f"worker {previous} no longer runs it"
    data: c.RunResumed = {
        "worker": context.executor_id,
        "host": context.host,
        "previous_worker": previous,
        "previous_host": before.host if before is not None else None,
        "reason": reason,
        "workspace": str(context.home / run_id),
        "replayed_events": replayed,
    }
    return {
        "seq": replayed + 1,
        "ts": datetime.now(UTC).isoformat(timespec="microseconds"),
        "run_id": run_id,
        "type": "run.resumed",
        "data": dict(data),
    }
