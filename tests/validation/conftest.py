"""Fixtures for the validator tests: run the Feedback Analysis contracts on a workspace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from runlens.validation import ValidationReport, validate_workspace
from runlens_feedback.contracts import CONTRACTS


@pytest.fixture
def validate() -> Callable[..., ValidationReport]:
    """`validate(ws)` runs every built-in validator with the hash the run recorded."""

    def run(ws: Any, **overrides: Any) -> ValidationReport:
        options: dict[str, Any] = {"expected_index_sha256": ws.index_sha256, **overrides}
        contracts = options.pop("contracts", CONTRACTS)
        return validate_workspace(ws.root, contracts, **options)

    return run
