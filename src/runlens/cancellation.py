"""Cancelling a run promptly, even while synchronous work holds the event loop.

`asyncio` delivers a cancellation at the next `await` that suspends. A phase that computes
for seconds without suspending (reading a 200,000-row CSV, an offline model analysing a batch)
would not see it until it ends. So a run has a `CancelScope`: `cancel()` may be called from a
signal handler or another thread, sets a flag at once and cancels the run's task; long loops
call `checkpoint()` every few thousand steps, which raises `asyncio.CancelledError` once the
flag is set. The scope is found through a context variable, so library code (the CSV reader,
a plugin's analyst) needs no extra argument, and code outside a run pays one lookup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class CancelScope:
    """The cancellation state of one run."""

    def __init__(self) -> None:
        # A plain flag (set once, read anywhere): a `threading.Event` costs microseconds to
        # make, and every tool call makes a scope.
        self._cancelled = False
        self.reason: str | None = None
        self._task: asyncio.Task[object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def bind(self, task: asyncio.Task[object], loop: asyncio.AbstractEventLoop) -> None:
        """The task `cancel()` cancels (the one running the run)."""
        self._task, self._loop = task, loop

    def cancel(self, reason: str) -> None:
        """Ask the run to stop. Safe from a signal handler and from any thread."""
        if self._cancelled:
            return
        self.reason = reason
        self._cancelled = True
        task, loop = self._task, self._loop
        if task is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    def checkpoint(self) -> None:
        """Raise `asyncio.CancelledError` if the run was asked to stop."""
        if self._cancelled:
            raise asyncio.CancelledError(self.reason)


_CURRENT: ContextVar[CancelScope | None] = ContextVar("runlens_cancel_scope", default=None)


@contextmanager
def active(scope: CancelScope) -> Iterator[CancelScope]:
    """Make `scope` the one `checkpoint()` consults, in this context and tasks started in it."""
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)


def current() -> CancelScope | None:
    """The scope `checkpoint()` consults here, if any (a tool call's thread chains its own
    to it)."""
    return _CURRENT.get()


def checkpoint() -> None:
    """Raise `asyncio.CancelledError` if the current run was asked to stop; else nothing."""
    scope = _CURRENT.get()
    if scope is not None:
        scope.checkpoint()
