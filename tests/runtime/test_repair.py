"""Repair rounds: findings go back to the model, validation runs again, rounds are capped."""

from __future__ import annotations

import json
from pathlib import Path

from runlens_feedback.contracts import BACKLOG

from .conftest import Documents, RunScript, turns_for, write_call


def test_repair_round_fixes_the_backlog(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, report = good_documents
    broken = json.loads(json.dumps(backlog))
    broken["items"][0]["priority"] = "high"
    turns = [
        *turns_for(analysis, broken, report),
        {"tool_calls": [write_call(BACKLOG, backlog)]},
        {"content": "Fixed the priority."},
    ]
    outcome = run_script(turns, "--repair-turns", "1")
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"
    types = outcome.types
    assert types.count("run.validating") == 2
    assert types.count("repair.requested") == 1
    first_round = types.index("repair.requested")
    assert "hook.blocked" in types[:first_round]
    assert "artifact.rejected" in types[:first_round]
    assert "run.failed" not in types
    assert outcome.record["metrics"]["repair_rounds"] == 1
    assert set(outcome.plan.values()) == {"completed"}


def test_repair_message_names_path_and_allowed_values(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    analysis, backlog, report = good_documents
    backlog["items"][0]["priority"] = "high"
    outcome = run_script(turns_for(analysis, backlog, report), "--repair-turns", "2")
    assert outcome.exit_code == 1
    assert outcome.record["error_message"].endswith("repair rounds exhausted (2 of 2 used)")
    assert outcome.types.count("run.validating") == 3
    assert outcome.types.count("repair.requested") == 2
    assert outcome.types[-1] == "run.failed"


def test_repair_message_content() -> None:
    from runlens.runtime.repair import repair_message
    from runlens.validation import ValidationReport
    from runlens.validation.findings import Finding
    from runlens_feedback.contracts import CONTRACTS

    finding = Finding(
        validator="JsonOutputValidationHook",
        artifact=BACKLOG,
        code="invalid_enum",
        path="items[0].priority",
        message='invalid priority "high"',
        details={"value": "high", "allowed": ["P0", "P1", "P2", "P3"]},
    )
    report = ValidationReport(
        passed=False,
        findings=[finding],
        artifacts={BACKLOG: "rejected"},
        error_message='invalid priority "high"',
        summaries=[],
    )
    text = repair_message(report, CONTRACTS, remaining=0)
    assert "items[0].priority" in text
    assert "Allowed: P0, P1, P2, P3" in text
    assert BACKLOG in text
    assert "Repair rounds left after this one: 0" in text
