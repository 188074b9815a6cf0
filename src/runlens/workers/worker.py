"""`runlens worker`: execute queued runs, and take over the runs of workers that died.

A worker is one DBOS executor with its own executor id (`--executor-id`, default
`<host>-<pid>-<4 hex digits>`). It listens to every provider queue of the store and takes at
most `--concurrency` runs of a queue at once; `--provider-limit openai=4` caps a provider's
runs across all workers (a DBOS queue concurrency, kept in the system database, so every
worker enforces the same cap).

Every worker writes a heartbeat into the run store (`workers` table). A worker whose
heartbeat is older than `--dead-after` seconds is dead: the first live worker to notice claims
it (one atomic update, so two never do) and has DBOS put its unfinished runs back on their
queues, where any worker takes them and resumes them after their last completed step
(`runlens.workers.workflow`). A worker restarted with the same `--executor-id` resumes its own
runs at once.

SIGTERM or Ctrl-C stops taking runs and lets the runs in progress finish; a second one stops
at once and hands them over (the heartbeat is cleared, so another worker takes them within
a heartbeat).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Final

from runlens.errors import UserError
from runlens.models.registry import known_providers
from runlens.store.db import RunStore
from runlens.workers import workflow
from runlens.workers.system import (
    POLLING_SECONDS,
    dbos_config,
    queue_name,
    system_database,
)

#: Seconds without a heartbeat after which a worker is taken for dead.
DEFAULT_DEAD_AFTER: Final = 30.0


@dataclass(frozen=True)
class WorkerOptions:
    store_url: str
    home: Path
    concurrency: int = 1
    executor_id: str | None = None
    provider_limits: dict[str, int] = field(default_factory=dict)
    dead_after: float = DEFAULT_DEAD_AFTER

    @property
    def heartbeat_seconds(self) -> float:
        return max(min(self.dead_after / 4, 5.0), 0.2)


def default_executor_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


class Worker:
    def __init__(self, store: RunStore, options: WorkerOptions) -> None:
        self.store = store
        self.options = options
        self.executor_id = options.executor_id or default_executor_id()
        #: Set by the first signal: take no more runs.
        self._stop = threading.Event()
        #: Set once the runs in progress are done: the heartbeat stops.
        self._stopped = threading.Event()
        #: Set once DBOS runs: from then on this worker takes over dead workers' runs.
        self._launched = threading.Event()
        self._signals = 0

    def log(self, message: str) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        sys.stderr.write(f"{now} worker {self.executor_id}: {message}\n")
        sys.stderr.flush()

    def run(self) -> int:
        """Work until stopped; the exit code."""
        from dbos import DBOS

        options = self.options
        workflow.bind(
            workflow.WorkerContext(
                store=self.store,
                home=options.home,
                executor_id=self.executor_id,
                log=self.log,
            )
        )
        self.store.register_worker(
            self.executor_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            concurrency=options.concurrency,
        )
        # Beating from now on: launching can take longer than --dead-after, and a worker
        # that is starting must not look dead to the others.
        heart = threading.Thread(target=self._heartbeats, name="runlens-heartbeat", daemon=True)
        heart.start()
        try:
            DBOS(config=dbos_config(options.store_url, self.executor_id))  # type: ignore[arg-type]
            # Launching recovers this executor's own unfinished runs (a restart, same id).
            DBOS.launch()
            queues = self._register_queues()
        except Exception as error:
            self._stopped.set()
            self.store.stop_worker(self.executor_id)
            _, schema = system_database(options.store_url)
            reason = " ".join(str(error).split())[:300] or type(error).__name__
            raise UserError(f"cannot start the run queue (schema {schema}): {reason}") from None
        self._load_plugins()
        self._launched.set()
        self.log(
            f"up on {socket.gethostname()} (pid {os.getpid()}): {options.concurrency} "
            f"run(s) at a time per queue, store {self.store.url}, workspaces in "
            f"{options.home}; queues: {', '.join(queues)}"
        )
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        self._stop.wait()
        active = sorted(workflow.active_runs())
        finishing = f"; finishing {', '.join(active)} (signal again to hand them over)"
        self.log(f"stopping: taking no more runs{finishing if active else ''}")
        DBOS.destroy(workflow_completion_timeout_sec=10**6)
        self._stopped.set()
        heart.join(timeout=10)
        self.store.stop_worker(self.executor_id)
        self.log("stopped")
        return 0

    def _load_plugins(self) -> None:
        """Import every installed plugin now rather than in the first run (seconds of
        imports a run would otherwise spend holding its queue slot)."""
        from runlens.plugins.loader import available_plugins, load_plugin

        for name in available_plugins():
            try:
                load_plugin(name)
            except Exception as error:  # its runs fail with the reason; the worker goes on
                self.log(f"plugin {name} cannot be loaded: {type(error).__name__}: {error}")

    def _register_queues(self) -> list[str]:
        from dbos import DBOS

        described = []
        for provider in sorted(set(known_providers()) - {"scripted"}):
            name = queue_name(provider)
            existing = DBOS.retrieve_queue(name)
            limit = self.options.provider_limits.get(provider)
            if limit is None and existing is not None:
                limit = existing.global_concurrency
            before = existing.worker_concurrency if existing is not None else None
            if before is not None and before != self.options.concurrency:
                self.log(
                    f"queue {name}: every worker now runs {self.options.concurrency} of its "
                    f"runs at once (was {before}; the setting is the queue's, shared)"
                )
            DBOS.register_queue(
                name,
                # DBOS wants a queue's per-worker share within its global limit.
                worker_concurrency=min(self.options.concurrency, limit or self.options.concurrency),
                global_concurrency=limit,
                polling_interval_sec=POLLING_SECONDS,
                on_conflict="always_update",
            )
            described.append(f"{name}" + (f" (at most {limit} at once)" if limit else ""))
        return described

    def _heartbeats(self) -> None:
        while not self._stopped.is_set():
            try:
                if not self.store.heartbeat(self.executor_id):
                    self._taken_for_dead()
                # Stopping: no more runs, not even a dead worker's.
                if self._launched.is_set() and not self._stop.is_set():
                    self._recover_dead_workers()
            except Exception as error:  # the store or the queue is down: say so, keep trying
                self.log(f"heartbeat failed: {type(error).__name__}: {error}")
            self._stopped.wait(self.options.heartbeat_seconds)

    def _taken_for_dead(self) -> None:
        """Another worker found this one dead (it stalled for longer than --dead-after) and
        its runs went back on the queue, to be resumed elsewhere: going on with them here
        would run them twice. Stop at once; a supervisor restarts the worker."""
        self.log(
            "taken for dead by another worker (no heartbeat for over "
            f"{self.options.dead_after:g}s): its runs were handed over; stopping now"
        )
        os._exit(3)

    def _recover_dead_workers(self) -> None:
        from dbos import DBOS

        for dead in self.store.claim_dead_workers(
            self.executor_id, older_than=self.options.dead_after
        ):
            # DBOS's own recovery: each unfinished workflow of `dead` goes back on its queue
            # (an atomic hand-over, so a run is never taken twice).
            handles = DBOS._recover_pending_workflows([dead])
            ids = ", ".join(handle.get_workflow_id() for handle in handles)
            self.log(
                f"worker {dead} stopped answering: {len(handles)} of its runs go back on "
                f"the queue{f' ({ids})' if ids else ''}"
            )

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._signals += 1
        if self._signals == 1:
            self._stop.set()
            return
        # Hand the runs over: a heartbeat from long ago makes this worker dead to the others.
        self.log(f"{signal.Signals(signum).name} again: handing runs in progress over")
        try:
            self.store.expire_worker(self.executor_id)
        finally:
            os._exit(1)
