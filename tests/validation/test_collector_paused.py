"""`validate_workspace` pauses the cyclic garbage collector for its round and leaves it as
it found it: enabled or, when its caller disabled it, disabled."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

import pytest

from runlens.validation import ValidationContext, ValidatorResult, validate_workspace
from runlens_feedback.contracts import CONTRACTS

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


class _Probe:
    """A validator that records whether the collector runs while validators do."""

    name = "CollectorProbe"

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def validate(self, context: ValidationContext) -> ValidatorResult:
        self.seen.append(gc.isenabled())
        return ValidatorResult(self.name, (), None)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_for_the_round_and_left_as_it_was(
    feedback_workspace: FeedbackWorkspace, enabled: bool
) -> None:
    probe = _Probe()
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        report = validate_workspace(
            feedback_workspace.root,
            CONTRACTS,
            expected_index_sha256=feedback_workspace.index_sha256,
            extra=[probe],
        )
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert report.passed, report.error_message
    assert probe.seen == [False]
    assert after is enabled
