"""`runlens worker`: execute queued runs, and take over the runs of workers that died.

A worker is one DBOS executor with its own executor id (`--executor-id`, default
`<host>-<pid>-<4 hex digits>`). One live worker per id: a second one started under the id of
a live worker is refused (it would resume the first one's runs while they run). A worker
restarted under its id once the previous process is gone (the same host and that pid no
longer running, or no heartbeat for `--dead-after` seconds) resumes its own runs at once.

It listens to every provider queue of the store and takes at most `--concurrency` runs of a
queue at once. DBOS keeps that number per queue, shared by every worker, so all the live
workers of a store run the same `--concurrency`: a worker started with another one is refused,
naming the live workers. The queues are set before DBOS starts taking runs, so a worker
started with runs waiting takes its share, not the whole queue. `--provider-limit openai=4`
caps a provider's runs across all workers (a DBOS queue concurrency, in the system database).

Every worker writes a heartbeat into the run store (`workers` table). A worker whose
heartbeat is older than `--dead-after` seconds is dead: the first live worker to notice claims
it (one atomic update, so two never do) and puts its unfinished runs back on their queues,
where any worker takes them and resumes them after their last completed step
(`runlens.workers.workflow`; the run's events then say who took it over, from whom and why:
`run.resumed`).

SIGTERM stops the worker at once (well within 2 s): no new step starts, its runs in progress
go back on their queues, and it exits; another worker resumes them after their last completed
step. Ctrl-C (SIGINT) stops taking runs and lets the runs in progress finish; a second signal
hands them back at once, as SIGTERM does.
"""

from __future__ import annotations

import contextlib
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

from runlens.errors import UserError, one_line
from runlens.models.registry import known_providers
from runlens.store.db import EXPIRED, RunStore
from runlens.store.rows import WorkerRow
from runlens.workers import workflow
from runlens.workers.handover import requeue_runs_of
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
        self._claim_executor_id()
        try:
            self._check_concurrency()
        except UserError:
            self.store.stop_worker(self.executor_id)
            raise
        # Beating from now on: launching can take longer than --dead-after, and a worker
        # that is starting must not look dead to the others.
        heart = threading.Thread(target=self._heartbeats, name="runlens-heartbeat", daemon=True)
        heart.start()
        self._load_plugins()
        try:
            # Before DBOS launches: its queue threads take runs from their first poll on, as
            # many as the queue's worker_concurrency allows then (none set: all of them).
            queues = self._register_queues()
            DBOS(config=dbos_config(options.store_url, self.executor_id))  # type: ignore[arg-type]
            # Launching recovers this executor's own unfinished runs (a restart, same id).
            DBOS.launch()
        except Exception as error:
            self._stopped.set()
            self.store.stop_worker(self.executor_id)
            _, schema = system_database(options.store_url)
            reason = one_line(error, 300)
            raise UserError(f"cannot start the run queue (schema {schema}): {reason}") from None
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        self._launched.set()
        self.log(
            f"up on {socket.gethostname()} (pid {os.getpid()}): {options.concurrency} "
            f"run(s) at a time per queue, store {self.store.url}, workspaces in "
            f"{options.home}; queues: {', '.join(queues)}"
        )
        self._stop.wait()
        active = sorted(workflow.active_runs())
        finishing = f"; finishing {', '.join(active)} (signal again to hand them back)"
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

    def _claim_executor_id(self) -> None:
        """Register this worker under its id, unless a live worker holds the id: two
        executors of one id would each take the other's runs for its own."""
        host, pid = socket.gethostname(), os.getpid()
        previous = self._worker_row(self.executor_id)
        # The same id on this machine, its process gone (killed, crashed): no need to wait
        # for its heartbeat to age.
        gone = (
            previous.pid
            if previous is not None
            and previous.host == host
            and (previous.pid == pid or not _process_exists(previous.pid))
            else None
        )
        if self.store.register_worker(
            self.executor_id,
            host=host,
            pid=pid,
            concurrency=self.options.concurrency,
            unless_alive_within=self.options.dead_after,
            replacing_pid=gone,
        ):
            return
        holder = self._worker_row(self.executor_id)
        where = f"pid {holder.pid} on {holder.host}, " if holder is not None else ""
        beat = f"last heartbeat {holder.heartbeat_at}; " if holder is not None else ""
        raise UserError(
            f"--executor-id {self.executor_id} is in use by a live worker ({where}{beat}"
            f"store {self.store.url}): give this worker another id, or stop that one first "
            f"(one killed without stopping counts as gone {self.options.dead_after:g}s after "
            "its last heartbeat)"
        )

    def _worker_row(self, executor_id: str) -> WorkerRow | None:
        rows = self.store.list_workers()
        return next((row for row in rows if row.executor_id == executor_id), None)

    def _check_concurrency(self) -> None:
        """Every live worker of the store runs the same --concurrency: DBOS keeps one
        worker_concurrency per queue, which every worker reads (a mixed fleet would run the
        last one's value everywhere, more runs than some workers were started for)."""
        others = [
            row
            for row in self.store.live_workers(within=self.options.dead_after)
            if row.executor_id != self.executor_id and row.concurrency != self.options.concurrency
        ]
        if others:
            named = ", ".join(
                f"{row.executor_id} on {row.host}: {row.concurrency}" for row in others[:5]
            )
            raise UserError(
                f"--concurrency {self.options.concurrency}: the live workers of this store run "
                f"another ({named}); every worker of a store runs the same --concurrency "
                "(a setting of the queue they share): start this one with theirs, or stop "
                "them first"
            )

    def _register_queues(self) -> list[str]:
        """Set each provider queue's limits (this worker's --concurrency, the provider's cap)
        in the system database, before DBOS launches and starts taking runs."""
        from runlens.workers.submit import open_client

        client = open_client(self.options.store_url)
        described = []
        try:
            for provider in sorted(set(known_providers()) - {"scripted"}):
                name = queue_name(provider)
                existing = client.retrieve_queue(name)
                limit = self.options.provider_limits.get(provider)
                if limit is None and existing is not None:
                    limit = existing.global_concurrency
                client.register_queue(
                    name,
                    # DBOS wants a queue's per-worker share within its global limit.
                    worker_concurrency=min(
                        self.options.concurrency, limit or self.options.concurrency
                    ),
                    global_concurrency=limit,
                    polling_interval_sec=POLLING_SECONDS,
                    on_conflict="always_update",
                )
                described.append(f"{name}" + (f" (at most {limit} at once)" if limit else ""))
        finally:
            client.destroy()
        return described

    def _heartbeats(self) -> None:
        while not self._stopped.is_set():
            try:
                if not self.store.heartbeat(self.executor_id, pid=os.getpid()):
                    self._taken_for_dead()
                # Stopping: no more runs, not even a dead worker's.
                if self._launched.is_set() and not self._stop.is_set():
                    self._recover_dead_workers()
            except Exception as error:  # the store or the queue is down: say so, keep trying
                self.log(f"heartbeat failed: {type(error).__name__}: {error}")
            self._stopped.wait(self.options.heartbeat_seconds)

    def _taken_for_dead(self) -> None:
        """Another worker found this one dead (it stalled for longer than --dead-after), or
        another process registered under its id once it looked gone, and its runs went back
        on the queue, to be resumed elsewhere: going on with them here would run them twice.
        Stop at once; a supervisor restarts the worker."""
        self.log(
            "taken for dead by another worker (no heartbeat for over "
            f"{self.options.dead_after:g}s), or replaced by a worker started under its id: "
            "its runs were handed over; stopping now"
        )
        os._exit(3)

    def _recover_dead_workers(self) -> None:
        for dead in self.store.claim_dead_workers(
            self.executor_id, older_than=self.options.dead_after
        ):
            row = self._worker_row(dead)
            handed_back = row is not None and row.heartbeat_at == EXPIRED
            moved = requeue_runs_of([dead])
            unfinished = [run_id for run_id in moved if not self._has_ended(run_id)]
            why = (
                "left without finishing its runs"
                if handed_back
                else f"stopped answering (last heartbeat {row.heartbeat_at if row else '?'})"
            )
            if not unfinished:
                self.log(f"worker {dead} {why}: none of its runs was left in progress")
                continue
            self.log(
                f"worker {dead} {why}: {len(unfinished)} of its runs go back on the queue "
                f"({', '.join(unfinished)})"
            )

    def _has_ended(self, run_id: str) -> bool:
        row = self.store.get_run(run_id)
        return row is not None and row.is_terminal

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._signals += 1
        if signum == signal.SIGINT and self._signals == 1:
            self._stop.set()
            return
        self._hand_over(signal.Signals(signum).name)

    def _hand_over(self, signal_name: str) -> None:
        """Stop now: no new step of a run starts here, the runs in progress go back on their
        queues for any worker to resume, and the process exits. The heartbeat is expired
        first, so that should anything below fail, the other workers take this one's runs
        over at their next heartbeat instead of after --dead-after."""
        workflow.hold()
        code = 0
        try:
            self.store.expire_worker(self.executor_id)
            moved = requeue_runs_of([self.executor_id])
            listed = f" ({', '.join(moved)})" if moved else ""
            self.log(
                f"{signal_name}: {len(moved)} run(s) handed back to the queue{listed}; stopped"
            )
        except Exception as error:
            code = 1
            self.log(
                f"{signal_name}: could not hand the runs back ({type(error).__name__}: {error}); "
                "the other workers take them over at their next heartbeat; stopped"
            )
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(code)


def _process_exists(pid: int) -> bool:
    """Whether a process `pid` runs on this machine (signal 0 checks without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
