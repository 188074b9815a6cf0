"""Atomic file writes: readers see the old file or the new one, never a part of either.

Every record RunLens writes (run.json, the manifest, the trace, the Evidence Index, the
model's artifacts) goes through here: the bytes go to a temporary file in the same folder,
which is then renamed over the target.

A thread whose writes may be revoked (a tool call the run can abandon, `runlens.tools.threads`)
writes through a `WriteGate`: once the gate is closed, its renames are refused, so a file it
was still producing never lands after the run's verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

#: The temporary file is created exclusively (never follows or reuses an existing name) and
#: private (0600 unless asked otherwise) until the rename publishes it.
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
for _flag in ("O_CLOEXEC", "O_NOFOLLOW", "O_BINARY"):  # where the platform has them
    _TEMP_FLAGS |= getattr(os, _flag, 0)


class WriteRefused(asyncio.CancelledError):
    """A write by a tool call the run has abandoned. A cancellation: tools do not catch it."""


class WriteGate:
    """Revocable permission to publish files, for the writes of one thread (`writes_through`).

    `close()` waits for a rename under way, so once it returns no write of the gate's
    thread can land any more."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True

    @contextlib.contextmanager
    def held(self, path: Path) -> Iterator[None]:
        """Hold the gate open while a file is published; WriteRefused once closed."""
        with self._lock:
            if self._closed:
                raise WriteRefused(f"write of {path} refused: the run stopped waiting for it")
            yield


_GATE: ContextVar[WriteGate | None] = ContextVar("runlens_write_gate", default=None)


@contextlib.contextmanager
def writes_through(gate: WriteGate) -> Iterator[WriteGate]:
    """Every atomic write in this context (and threads and tasks started from it) is
    published through `gate`."""
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


class AtomicFile:
    """The write side of `atomic_output`: `write` appends bytes to the temporary file."""

    def __init__(self, handle: int) -> None:
        self._handle = handle

    def fileno(self) -> int:
        """The temporary file's descriptor (e.g. to start writing a large file back early)."""
        return self._handle

    def write(self, data: bytes) -> None:
        """`os.write` until every byte is written (a write may be partial, e.g. on a signal)."""
        view = memoryview(data)
        while view:
            view = view[os.write(self._handle, view) :]


@contextlib.contextmanager
def atomic_output(path: Path, *, mode: int = 0o600, durable: bool = False) -> Iterator[AtomicFile]:
    """Write `path` atomically through the yielded `AtomicFile`.

    Kept to four syscalls for small records (open, write, close, rename): the temporary name
    comes from 48 random bits rather than `tempfile.mkstemp`, and the parent folder is created
    only when the open finds it missing. `durable=True` also fsyncs the file and its folder,
    for records that must survive a power cut (the Evidence Index).
    """
    # From the path's text: `path.parent` would be a new `Path` whose text is built again.
    folder, name = os.path.split(os.fspath(path))
    temp_name = os.path.join(folder or ".", f".{name}.{secrets.token_hex(6)}.tmp")
    try:
        handle = os.open(temp_name, _TEMP_FLAGS, mode)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(temp_name, _TEMP_FLAGS, mode)
    try:
        try:
            if mode != 0o600:
                os.fchmod(handle, mode)  # exactly `mode`, whatever the umask
            yield AtomicFile(handle)
            if durable:
                os.fsync(handle)
        finally:
            os.close(handle)
        gate = _GATE.get()
        if gate is None:
            os.replace(temp_name, path)
        else:
            with gate.held(path):
                os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_directory(path.parent)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Write `data` to `path` atomically."""
    with atomic_output(path, mode=mode) as out:
        out.write(data)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable. Not every platform can open a directory: best effort."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(handle)
    finally:
        os.close(handle)
