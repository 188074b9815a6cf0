"""A run's status: the one vocabulary of the run, its records, the run store and the pages.

The run's own state machine (SPEC section 2):

    created -> running -> validating -> completed | failed
    validating -> running        only for a repair round
    running -> failed            input error, provider error after retries, loop limits
    any non-terminal -> cancelled
    any non-terminal -> interrupted   the run's process died (found by `runtime.recovery`)

Terminal states never change (`TERMINAL`, the one terminal set).

The run store adds two statuses no run record holds (`StoreStatus`): `queued`, a run
submitted to the workers that no worker has started yet (it comes before `created`), and
`damaged`, a workspace whose `runtime/run.json` cannot be read (the store's `problems` name
what is wrong with it). The store hears of a run's states late and may skip some
(`can_reach`), but never takes a run out of a terminal state.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal, get_args


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


#: The statuses a run never leaves. `"completed" in TERMINAL` holds too (a `StrEnum`).
TERMINAL: Final = frozenset(
    {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}
)

#: A run the store holds, submitted to the workers, that no worker has started yet.
QUEUED: Final = "queued"
#: A workspace whose run record cannot be read (never a status of the run itself).
DAMAGED: Final = "damaged"

#: A run's status in the run store.
StoreStatus = Literal[
    "queued",
    "created",
    "running",
    "validating",
    "completed",
    "failed",
    "cancelled",
    "interrupted",
    "damaged",
]
STORE_STATUSES: Final[tuple[str, ...]] = get_args(StoreStatus)
#: The statuses of a run not ended yet, `queued` included.
LIVE: Final = frozenset({QUEUED, *(status for status in RunStatus if status not in TERMINAL)})
#: The statuses of a run no process has started yet (ended by `end unstarted`).
UNSTARTED: Final = frozenset({QUEUED, RunStatus.CREATED})

_RUN_STATUSES: Final = frozenset(RunStatus)

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
    """A bug: a transition the state machine does not allow."""


def is_terminal(status: str | None) -> bool:
    """Whether `status` (any string the store or a record holds) is one a run never leaves."""
    return status in TERMINAL


def is_live(status: str | None) -> bool:
    """Whether `status` is one of a run not ended yet (`LIVE`)."""
    return status in LIVE


def check_transition(current: RunStatus, target: RunStatus) -> RunStatus:
    """`target`, when the run may go there from `current` in one step; else
    `InvalidTransition`."""
    if target not in _ALLOWED[current]:
        raise InvalidTransition(f"run status cannot go from {current} to {target}")
    return target


def can_reach(current: str, target: str) -> bool:
    """Whether the store may show a run at `current` next at `target`: the same status, or one
    the run reaches in one or more steps (`queued` comes before `created`). A `damaged` record
    may be repaired, and any record damaged; no other status leaves a terminal one."""
    if current == target or DAMAGED in (current, target):
        return True
    if current == QUEUED:
        return target in STORE_STATUSES
    if current not in _RUN_STATUSES or target not in STORE_STATUSES:
        return False
    if target == QUEUED:
        return False
    seen: set[RunStatus] = set()
    frontier = [RunStatus(current)]
    while frontier:
        status = frontier.pop()
        for following in _ALLOWED[status] - seen:
            seen.add(following)
            frontier.append(following)
    return target in seen


def check_stored(current: str, target: str) -> str:
    """`target`, when the store may move a run there from `current` (`can_reach`); else
    `InvalidTransition`."""
    if not can_reach(current, target):
        raise InvalidTransition(f"a stored run's status cannot go from {current} to {target}")
    return target
