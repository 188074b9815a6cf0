"""The run state machine."""

from __future__ import annotations

import pytest

from runlens.runtime.state import InvalidTransition, RunStatus, check_transition

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
