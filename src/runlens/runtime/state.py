"""The run state machine (SPEC section 2).

    created -> running -> validating -> completed | failed
    validating -> running        only for a repair round
    running -> failed            input error, provider error after retries, loop limits
    any non-terminal -> cancelled
    any non-terminal -> interrupted   the run's process died (found by `runtime.recovery`)
Terminal states never change.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    VALIDATING = "validating"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    #: The process running it died (kill -9, a crash, a power cut): set by whoever finds the
    #: run's lock abandoned (SPEC section 13.3), never by the run itself.
    INTERRUPTED = "interrupted"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset(
    {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}
)

_ALLOWED: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.CREATED: frozenset(
        {RunStatus.RUNNING, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}
    ),
    RunStatus.RUNNING: frozenset(
        {RunStatus.VALIDATING, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}
    ),
    RunStatus.VALIDATING: frozenset(
        {
            RunStatus.COMPLETED,
            RunStatus.FAILED,
            RunStatus.RUNNING,
            RunStatus.CANCELLED,
            RunStatus.INTERRUPTED,
        }
    ),
    RunStatus.COMPLETED: frozenset(),
    RunStatus.FAILED: frozenset(),
    RunStatus.CANCELLED: frozenset(),
    RunStatus.INTERRUPTED: frozenset(),
}


class InvalidTransition(RuntimeError):
    """A bug in the runtime: a transition the state machine does not allow."""


def check_transition(current: RunStatus, target: RunStatus) -> RunStatus:
    if target not in _ALLOWED[current]:
        raise InvalidTransition(f"run status cannot go from {current} to {target}")
    return target
