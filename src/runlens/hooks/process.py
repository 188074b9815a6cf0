"""Hook commands as process groups: bounded output, hard deadlines, nothing left behind.

Every hook command starts in a session (and process group) of its own. However it ends, the
whole group is killed with SIGKILL before the command is reaped: on a timeout, when the run is
cancelled or its validation round ends while the command runs, and also after a normal exit
(a background child the hook started, `sleep 300 &`, does not outlive it). The group leader
is killed while it is still an unreaped zombie, so its pid, which is the group id, cannot have
been reused by then. `atexit` kills whatever is still running when the interpreter exits.

A process that leaves the group (`setsid`, a daemonising double fork) is found all the same:
every command gets a token of its own in its environment (`TOKEN_VARIABLE`), which its
children inherit whatever session they move to, and the same sweep kills every process of
this user, started since the command, whose environment holds it (`psutil`). Only a child
that also empties its own environment (`env -i`) escapes that.

At most `OUTPUT_LIMIT` bytes of stdout and of stderr are kept in memory; the rest is read and
discarded, so a chatty hook never blocks on a full pipe, and the kept text says how much was
cut ("… [truncated, 5242880 bytes in all]"). The payload is written to stdin without blocking
either: a hook that does not read it, or exits first, is not an error.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import secrets
import selectors
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Bytes of stdout and of stderr kept per hook command (the rest is read and discarded).
OUTPUT_LIMIT = 64 * 1024
#: Seconds the pipes may stay open after the command exited (a background child holding
#: them) before its process group is killed and the verdict taken.
EXIT_DRAIN_SECONDS = 0.5
#: Where `os.pidfd_open` is missing (not Linux), how often the command's exit is polled.
_POLL_SECONDS = 0.02
#: The environment variable holding a hook command's own token (`_sweep`).
TOKEN_VARIABLE = "RUNLENS_HOOK_TOKEN"
_CHUNK = 64 * 1024


class CapturedOutput:
    """The first `limit` bytes of a stream, and how many bytes it had in all."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.head = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.total += len(chunk)

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head)

    def text(self) -> str:
        """The kept bytes as text (stripped), marked when the stream was longer."""
        if not self.truncated:
            return self.head.decode("utf-8", errors="replace").strip()
        # A cut may fall inside a UTF-8 sequence: leave the incomplete tail out.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        kept = decoder.decode(bytes(self.head), final=False).strip()
        return f"{kept}… [truncated, {self.total} bytes in all]"


@dataclass(frozen=True, slots=True)
class Completed:
    """How a hook command ended. `returncode` is None when RunLens killed it."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    #: Killed because the run or its validation round ended while it ran.
    stopped: bool = False


class HookProcess:
    """One hook command, running through the shell in a process group of its own."""

    def __init__(self, command: str, *, cwd: Path, env: Mapping[str, str] | None) -> None:
        self.command = command
        self._lock = threading.Lock()
        self._reaped = False
        self._stopped = False
        self._token = secrets.token_hex(16)
        self._started = time.time()
        self._popen = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            cwd=cwd,
            env={**(os.environ if env is None else env), TOKEN_VARIABLE: self._token},
            start_new_session=True,  # its own process group, so the group can be killed
        )

    @property
    def pid(self) -> int:
        """The shell's pid, which is also the id of the command's process group."""
        return self._popen.pid

    def kill(self) -> None:
        """Kill the whole process group now (from any thread; a no-op once it is reaped)."""
        with self._lock:
            if self._reaped:
                return
            self._stopped = True
            _kill_group(self.pid)
        _sweep(self._token, self._started)

    def communicate(self, stdin: bytes, timeout: float) -> Completed:
        """Feed `stdin`, collect bounded output, wait at most `timeout` seconds; then kill
        the process group and reap the command, whatever happened."""
        stdout, stderr = CapturedOutput(), CapturedOutput()
        try:
            timed_out = not self._pump(stdin, time.monotonic() + timeout, stdout, stderr)
        finally:
            self._reap()
        with self._lock:
            stopped = self._stopped
        returncode = None if timed_out or stopped else self._popen.returncode
        return Completed(returncode, stdout.text(), stderr.text(), timed_out, stopped)

    def _pump(
        self, stdin: bytes, deadline: float, stdout: CapturedOutput, stderr: CapturedOutput
    ) -> bool:
        """Move bytes until the command exits (True) or the deadline passes (False)."""
        popen = self._popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        sinks = {popen.stdout.fileno(): stdout, popen.stderr.fileno(): stderr}
        stdin_fd = popen.stdin.fileno()
        pending = memoryview(stdin)
        pidfd = _pidfd_open(self.pid)
        with selectors.DefaultSelector() as selector:
            for fd in sinks:
                selector.register(fd, selectors.EVENT_READ)
            if pending:
                os.set_blocking(stdin_fd, False)
                selector.register(stdin_fd, selectors.EVENT_WRITE)
            else:
                popen.stdin.close()
            if pidfd is not None:
                selector.register(pidfd, selectors.EVENT_READ)
            exited_at: float | None = None
            try:
                while True:
                    now = time.monotonic()
                    if exited_at is None and self._exited():
                        exited_at = now
                        for done in (pidfd, stdin_fd):
                            if done is not None and done in selector.get_map():
                                selector.unregister(done)
                    if exited_at is not None:
                        drain_until = exited_at + EXIT_DRAIN_SECONDS
                        if not selector.get_map() or now >= drain_until:
                            return True
                        wait = drain_until - now
                    elif now >= deadline:
                        return False
                    else:
                        wait = deadline - now if pidfd is not None else _POLL_SECONDS
                        wait = min(wait, deadline - now)
                    for key, _ in selector.select(max(wait, 0.0)):
                        fd = key.fd
                        if fd == pidfd:
                            continue  # the command exited: seen at the top of the loop
                        if fd == stdin_fd:
                            pending = self._feed(selector, pending)
                            continue
                        chunk = os.read(fd, _CHUNK)
                        if chunk:
                            sinks[fd].add(chunk)
                        else:
                            selector.unregister(fd)
            finally:
                if pidfd is not None:
                    os.close(pidfd)

    def _feed(self, selector: selectors.BaseSelector, pending: memoryview) -> memoryview:
        """Write what the pipe takes now; close stdin when all is written or the hook left."""
        stdin = self._popen.stdin
        assert stdin is not None
        try:
            written = os.write(stdin.fileno(), pending[:_CHUNK])
        except BlockingIOError:
            return pending
        except OSError:  # EPIPE: the hook exited or closed stdin without reading it all
            written = len(pending)
        pending = pending[written:]
        if not pending:
            selector.unregister(stdin.fileno())
            with contextlib.suppress(OSError):
                stdin.close()
        return pending

    def _exited(self) -> bool:
        """True once the shell has exited; it is left unreaped (a zombie holds the group id)."""
        try:
            status = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return status is not None

    def _reap(self) -> None:
        with self._lock:
            if not self._reaped:
                _kill_group(self.pid)  # the leader is alive or a zombie: the id is still ours
                self._popen.wait()
                self._reaped = True
        _sweep(self._token, self._started)
        for stream in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        RUNNING.discard(self)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _sweep(token: str, since: float) -> None:
    """SIGKILL every process of this user started since `since` whose environment holds
    `token`: what left the command's process group (`setsid`). A few rounds, for a process
    that forked while the last one ran."""
    import psutil  # only a command hook that ran needs it, not every run that loads hooks

    uid = os.getuid()
    for _ in range(3):
        found = []
        for process in psutil.process_iter(["uids", "create_time"]):
            try:
                info = process.info
                if info["uids"] is None or info["uids"].real != uid:
                    continue
                if (info["create_time"] or 0) < since - 1 or process.pid == os.getpid():
                    continue
                if process.environ().get(TOKEN_VARIABLE) == token:
                    found.append(process)
            except (psutil.Error, OSError):
                continue  # gone, or not ours to read
        if not found:
            return
        for process in found:
            with contextlib.suppress(psutil.Error, OSError):
                process.kill()


def _pidfd_open(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux), or None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


class Stopped(Exception):
    """The owner of a hook command was closed: it must not start any more commands."""


class RunningHooks:
    """Every hook command running in this interpreter, each with the owner it runs for.

    An owner is any object that stands for a span of work (a validation round's
    `ValidationContext`): `close(owner)` kills the commands running for it and makes
    `start(..., owner=owner)` raise `Stopped` from then on, so a worker thread that was
    abandoned mid-round cannot start the next command after the round is over.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[HookProcess, int | None] = {}
        self._closed: weakref.WeakValueDictionary[int, object] = weakref.WeakValueDictionary()

    def start(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        owner: object | None = None,
    ) -> HookProcess:
        key = None if owner is None else id(owner)
        with self._lock:  # so `close` cannot slip in between the check and the start
            if key is not None and self._closed.get(key) is owner:
                raise Stopped(command)
            process = HookProcess(command, cwd=cwd, env=env)
            self._running[process] = key
        return process

    def close(self, owner: object) -> None:
        """Kill what runs for `owner`; refuse to start anything more for it."""
        key = id(owner)
        with self._lock:
            self._closed[key] = owner
            victims = [process for process, k in self._running.items() if k == key]
        for process in victims:
            process.kill()

    def discard(self, process: HookProcess) -> None:
        with self._lock:
            self._running.pop(process, None)

    def kill_all(self) -> None:
        with self._lock:
            victims = list(self._running)
        for process in victims:
            process.kill()

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)


RUNNING = RunningHooks()
atexit.register(RUNNING.kill_all)
