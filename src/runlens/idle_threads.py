"""Idle threads a process keeps for the next piece of work of their kind.

Starting a thread costs more than a short run's tool call or validation round, and
`Thread.start` holds the event loop until the new thread runs: a run takes an idle thread a
finished one gave back instead (`runlens.tools.threads`, `runlens.validation.runner`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

#: A kind of idle thread.
_Idle = TypeVar("_Idle")


class IdleThreads(Generic[_Idle]):
    """The process's idle threads of one kind (tool threads, validator threads): a run takes
    one instead of starting a thread, and gives it back when it is done with it. A thread
    idle here for a while ends (`leave`, from the thread itself). Only threads whose work
    returned are given back: one whose work was abandoned is never given other work.
    `alive` (when given) says whether a thread taken is still running; one that is not is
    dropped. In a child process just forked the list starts empty: the threads were not
    copied (nor, held by one of them, the lock)."""

    def __init__(self, alive: Callable[[_Idle], bool] | None = None) -> None:
        self._alive = alive
        self.forget()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Idle] = []

    def take(self) -> _Idle | None:
        with self._lock:
            while self._idle:
                thread = self._idle.pop()
                if self._alive is None or self._alive(thread):
                    return thread
            return None

    def give(self, thread: _Idle) -> None:
        with self._lock:
            self._idle.append(thread)

    def leave(self, thread: _Idle) -> bool:
        """From `thread` itself, idle for a while: out (and to end) unless it was not there
        (a run holds it, or has just taken it and handed it work)."""
        with self._lock:
            if thread in self._idle:
                self._idle.remove(thread)
                return True
            return False
