"""The workspace lock: one run per workspace, and a way to tell that a run's process is gone.

A run claims its workspace before it writes anything, by creating `runtime/lock.json`
exclusively (`O_CREAT | O_EXCL`: of several processes racing for one workspace exactly one
succeeds). The lock records who holds it (run id, pid, host, the process's start time and the
run's start) and is held for the run's life; while the process lives, a heartbeat touches the
file's mtime every `HEARTBEAT_SECONDS`. The run removes the lock after its final record.

One heartbeat thread per process beats for every lock the process holds: starting and joining
a thread per run cost more than the rest of a short run's fixed work, and a process running
many runs (a worker, a benchmark) needs one thread, not one per run.

A lock whose holder is gone is how an `interrupted` run is recognised:

- on the same host, the holder is gone when its pid no longer exists, or now belongs to a
  process that started at another time (the pid was reused);
- on another host (a shared folder), when the heartbeat is older than `STALE_SECONDS`.

A paused process (SIGSTOP) on this host is alive; one on another host that stops beating for
`STALE_SECONDS` is taken for dead.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.errors import UserError
from runlens.records.io import utc_now
from runlens.tools.workspace import Workspace

HEARTBEAT_SECONDS = 2.0
#: A lock held from another host whose heartbeat is older than this belongs to a dead run.
STALE_SECONDS = 30.0


@dataclass(frozen=True)
class LockHolder:
    """What a lock file says about the process holding it (fields may be missing if damaged)."""

    run_id: str | None
    pid: int | None
    host: str | None
    process_start: int | None
    started_at: str | None
    #: Seconds since the epoch of the last heartbeat (the lock file's mtime).
    heartbeat: float

    def describe(self) -> str:
        who = f"pid {self.pid}" if self.pid is not None else "an unknown process"
        if self.host:
            who += f" on {self.host}"
        return who


class WorkspaceLock:
    """A claimed workspace. `claim` it, then `release` once the run's last record is written."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def claim(cls, workspace: Workspace, run_id: str) -> WorkspaceLock:
        """Claim `workspace` for `run_id`, or raise `UserError` when it holds a run already.

        A workspace holds one run for good: a finished run's records stay, so a second run
        there is refused too (a usage error, exit code 2).
        """
        path = lock_path(workspace)
        holder = {
            "run_id": run_id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "process_start": _own_start_time(),
            "started_at": utc_now(),
            "heartbeat_seconds": HEARTBEAT_SECONDS,
        }
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            try:
                handle = os.open(path, flags, 0o644)
            except FileNotFoundError:  # `runtime/` is made here when the run has not made it
                path.parent.mkdir(parents=True, exist_ok=True)
                handle = os.open(path, flags, 0o644)
        except FileExistsError:
            raise UserError(_held_message(workspace, read_holder(path))) from None
        try:
            os.write(handle, json.dumps(holder).encode("utf-8") + b"\n")
        finally:
            os.close(handle)
        lock = cls(path)
        if workspace.run_record.exists():
            lock.release()
            raise UserError(
                f"workspace already holds a run: {workspace.root} "
                f"(see `runlens show {workspace.root}`; give each run its own --workspace)"
            )
        _HEARTBEAT.add(path)
        return lock

    def release(self) -> None:
        """Stop beating for the lock and remove it (idempotent)."""
        _HEARTBEAT.discard(self.path)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class _Heartbeat:
    """The process's heartbeat thread: touches every held lock each `HEARTBEAT_SECONDS`.

    Started on the first claim, a daemon that then waits for locks; a forked child starts its
    own when it claims one (threads do not survive a fork).
    """

    def __init__(self) -> None:
        self._paths: set[Path] = set()
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        #: The interval the thread is waiting out (None before its first wait).
        self._interval: float | None = None

    def add(self, path: Path) -> None:
        with self._guard:
            self._paths.add(path)
            if self._thread is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._interval = None
                self._thread = threading.Thread(
                    target=self._beat, name="runlens-heartbeat", daemon=True
                )
                self._thread.start()
                return
            changed = self._interval != HEARTBEAT_SECONDS
        # A new lock was touched as it was made: the thread's next beat, within an interval,
        # is soon enough, so waking it (a thread switch per run) is only for a changed one.
        if changed:
            self._wake.set()

    def discard(self, path: Path) -> None:
        with self._guard:
            self._paths.discard(path)

    def _beat(self) -> None:
        while True:
            interval = self._interval = HEARTBEAT_SECONDS
            self._wake.wait(interval)
            self._wake.clear()
            with self._guard:
                paths = list(self._paths)
            for path in paths:
                try:
                    os.utime(path)
                except FileNotFoundError:
                    # Taken over by a reader that found this run dead: beat no more for it.
                    self.discard(path)
                except OSError:
                    continue


_HEARTBEAT = _Heartbeat()


def lock_path(workspace: Workspace) -> Path:
    return workspace.lock


def read_holder(path: Path) -> LockHolder | None:
    """The lock's holder, or None when there is no lock. A damaged lock gives what it can."""
    try:
        stat = path.stat()
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return LockHolder(None, None, None, None, None, 0.0)
    try:
        data: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        data = {}
    if not isinstance(data, dict):
        data = {}

    def integer(key: str) -> int | None:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    return LockHolder(
        run_id=text("run_id"),
        pid=integer("pid"),
        host=text("host"),
        process_start=integer("process_start"),
        started_at=text("started_at"),
        heartbeat=stat.st_mtime,
    )


def holder_is_alive(holder: LockHolder, *, now: float | None = None) -> bool:
    """Whether the process that holds a lock is still there (see the module docstring)."""
    if holder.host == socket.gethostname() and holder.pid is not None:
        if not _pid_exists(holder.pid):
            return False
        started = process_start_time(holder.pid)
        return holder.process_start is None or started is None or started == holder.process_start
    age = (time.time() if now is None else now) - holder.heartbeat
    return age <= STALE_SECONDS


def process_start_time(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux); None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of proc(5), counted from field 3
    except (IndexError, ValueError):
        return None


#: This process's pid and start time, read once per process (a forked child reads its own).
_OWN_START: tuple[int, int | None] | None = None


def _own_start_time() -> int | None:
    """`process_start_time` of this process: it never changes while the pid stays the same,
    and reading `/proc` costs more than the rest of a claim."""
    global _OWN_START
    pid = os.getpid()
    if _OWN_START is None or _OWN_START[0] != pid:
        _OWN_START = (pid, process_start_time(pid))
    return _OWN_START[1]


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _held_message(workspace: Workspace, holder: LockHolder | None) -> str:
    message = f"workspace already holds a run: {workspace.root}"
    if holder is None:
        return message
    details = [f"run {holder.run_id}" if holder.run_id else None]
    if holder_is_alive(holder):
        details.append(f"in progress, {holder.describe()}")
        if holder.started_at:
            details.append(f"since {holder.started_at[:19]}")
    else:
        details.append(f"its process ({holder.describe()}) is gone")
    shown = ", ".join(d for d in details if d)
    return f"{message} ({shown}); give each run its own --workspace"
