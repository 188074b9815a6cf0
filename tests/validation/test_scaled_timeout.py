"""A validator's default limit grows with what the round judges: a correct run of a large
file is not failed because a fixed limit was too short for it on a busy machine."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from runlens.contracts import ArtifactContract
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.runner import SECONDS_PER_MIB, run_validators, scaled_timeout

MIB = 2**20


def _sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk (the limit reads sizes, not contents)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


class _Slow:
    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def validate(self, context: ValidationContext) -> ValidatorResult:
        time.sleep(self.seconds)
        return ValidatorResult(self.name, (), None)


def _contract(name: str) -> ArtifactContract:
    return ArtifactContract(name=name)


def test_a_small_round_keeps_the_default_limit(tmp_path: Path) -> None:
    _sparse(tmp_path / "input" / "feedback.csv", 1000)
    context = ValidationContext(workspace=tmp_path, contracts=())
    assert scaled_timeout(30.0, context) == 30.0


def test_the_limit_counts_the_input_the_index_and_the_artifacts(tmp_path: Path) -> None:
    _sparse(tmp_path / "input" / "feedback.csv", 100 * MIB)
    _sparse(tmp_path / "runtime" / "evidence_index.json", 60 * MIB)
    _sparse(tmp_path / "artifacts" / "report.md", 40 * MIB)
    _sparse(tmp_path / "artifacts" / "not_a_deliverable.bin", 500 * MIB)
    (tmp_path / "input" / "a_directory").mkdir()
    context = ValidationContext(workspace=tmp_path, contracts=(_contract("artifacts/report.md"),))
    assert context.judged_bytes() == 200 * MIB
    assert scaled_timeout(30.0, context) == 200 * SECONDS_PER_MIB


def test_an_outside_source_replaces_the_input_folder(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    _sparse(workspace / "input" / "feedback.csv", 100 * MIB)
    source = _sparse(tmp_path / "elsewhere.csv", 300 * MIB)
    context = ValidationContext(workspace=workspace, contracts=(), source=source)
    assert context.judged_bytes() == 300 * MIB


def test_a_large_round_gives_a_slow_validator_the_longer_limit(tmp_path: Path) -> None:
    # 4 MiB judged: a default of 0.2 s grows to 2 s, so a validator taking 0.6 s passes.
    _sparse(tmp_path / "input" / "feedback.csv", 4 * MIB)
    context = ValidationContext(workspace=tmp_path, contracts=())
    ((result, _),) = asyncio.run(run_validators([(_Slow(0.6), None)], context, default_timeout=0.2))
    assert not result.blocked, result.summary


def test_a_validator_still_fails_closed_past_the_scaled_limit(tmp_path: Path) -> None:
    _sparse(tmp_path / "input" / "feedback.csv", 2 * MIB)  # 0.2 s grows to 1 s
    context = ValidationContext(workspace=tmp_path, contracts=())
    ((result, _),) = asyncio.run(run_validators([(_Slow(3.0), None)], context, default_timeout=0.2))
    assert result.blocked and "timed out after 1s" in (result.summary or "")


def test_a_validators_own_timeout_is_not_scaled(tmp_path: Path) -> None:
    _sparse(tmp_path / "input" / "feedback.csv", 100 * MIB)
    context = ValidationContext(workspace=tmp_path, contracts=())
    ((result, _),) = asyncio.run(run_validators([(_Slow(3.0), 0.3)], context))
    assert result.blocked and "timed out after 0.3s" in (result.summary or "")
