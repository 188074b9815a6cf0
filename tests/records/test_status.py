"""The run state machine, and how the run store may move a run's status."""

from __future__ import annotations

import pytest

from runlens.records.status import (
    LIVE,
    STORE_STATUSES,
    TERMINAL,
    InvalidTransition,
    RunStatus,
    can_reach,
    check_stored,
    check_transition,
    is_terminal,
)

ALLOWED = [
    ("created", "running"),
    ("running", "validating"),
    ("validating", "completed"),
    ("validating", "failed"),
    ("validating", "running"),
    ("running", "failed"),
    ("created", "cancelled"),
    ("running", "cancelled"),
    ("validating", "cancelled"),
]


@pytest.mark.parametrize(("current", "target"), ALLOWED)
def test_allowed(current: str, target: str) -> None:
    assert check_transition(RunStatus(current), RunStatus(target)) == RunStatus(target)


@pytest.mark.parametrize("terminal", ["completed", "failed", "cancelled"])
@pytest.mark.parametrize("target", [s.value for s in RunStatus])
def test_terminal_states_never_change(terminal: str, target: str) -> None:
    with pytest.raises(InvalidTransition):
        check_transition(RunStatus(terminal), RunStatus(target))


@pytest.mark.parametrize(
    ("current", "target"),
    [("created", "validating"), ("created", "completed"), ("running", "completed")],
)
def test_skipping_validation_is_impossible(current: str, target: str) -> None:
    with pytest.raises(InvalidTransition):
        check_transition(RunStatus(current), RunStatus(target))


def test_one_terminal_set() -> None:
    assert {str(s) for s in TERMINAL} == {"completed", "failed", "cancelled", "interrupted"}
    assert all(is_terminal(str(s)) for s in TERMINAL)
    assert not any(is_terminal(s) for s in ("queued", "created", "running", "damaged", None))
    assert {"queued", "created", "running", "validating"} == LIVE
    assert set(STORE_STATUSES) == LIVE | TERMINAL | {"damaged"}


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("queued", "created"),
        ("queued", "cancelled"),
        ("created", "validating"),  # the store heard of `running` late
        ("created", "completed"),
        ("running", "running"),
        ("completed", "completed"),
        ("completed", "damaged"),
        ("damaged", "completed"),
    ],
)
def test_the_store_may_skip_states(current: str, target: str) -> None:
    assert can_reach(current, target)
    assert check_stored(current, target) == target


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("completed", "running"),
        ("failed", "queued"),
        ("interrupted", "completed"),
        ("running", "created"),
        ("running", "queued"),
        ("running", "unknown"),
    ],
)
def test_the_store_never_goes_back(current: str, target: str) -> None:
    assert not can_reach(current, target)
    with pytest.raises(InvalidTransition):
        check_stored(current, target)
