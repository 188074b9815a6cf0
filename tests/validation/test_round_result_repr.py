"""`validate_workspace` never formats its validators' results as text: `asyncio.run` (Python
3.11) formats a repr of its main task when it restores the SIGINT handler, and a result's
repr would list every quote location of the round (a second of a 100,000-row round)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from runlens.validation import ValidatorResult, validate_workspace
from runlens_feedback.contracts import CONTRACTS

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


def test_the_round_formats_no_result(
    feedback_workspace: FeedbackWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    formatted: list[str] = []

    def noted(result: ValidatorResult) -> str:
        formatted.append(result.validator)
        return "ValidatorResult(...)"

    monkeypatch.setattr(ValidatorResult, "__repr__", noted)
    report = validate_workspace(
        feedback_workspace.root, CONTRACTS, expected_index_sha256=feedback_workspace.index_sha256
    )
    assert report.passed, report.error_message
    assert formatted == []
