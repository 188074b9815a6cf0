"""runlens.validation: every validator runs, results aggregate into one attributed verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

import runlens.validation.runner as validation
from runlens.contracts import ArtifactContract
from runlens.errors import ContractError
from runlens.validation import (
    ValidationContext,
    ValidationReport,
    ValidatorResult,
    aggregate,
    builtin_validators,
    load_validator_plugins,
)
from runlens.validation.findings import Finding
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, CONTRACTS, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


APPENDIX = ArtifactContract(name="artifacts/appendix.md", required=True)


def test_builtin_validators_come_in_spec_order_with_their_own_contracts() -> None:
    validators = builtin_validators(CONTRACTS)
    names = [v.name for v in validators]
    assert names[:4] == [
        "RequiredOutputValidationHook",
        "JsonOutputValidationHook",
        "MarkdownSectionValidationHook",
        "EvidenceCitationValidationHook",
    ]
    assert {"CoverageValidationHook", "SecretValidationHook"} <= set(names[4:])
    applied = [[c.name for c in v.contracts] for v in validators[:4]]  # type: ignore[attr-defined]
    assert applied == [
        [ANALYSIS, BACKLOG, REPORT],
        [ANALYSIS, BACKLOG],
        [REPORT],
        [ANALYSIS, BACKLOG],
    ]


def test_every_failure_shows_up_in_one_verdict(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    analysis, backlog = feedback_workspace.analysis, feedback_workspace.backlog
    del analysis["failed_batches"]
    analysis["items"][0]["evidence_text"] = "每周导出报告需要等待很长时间，影响团队协作效率。"
    analysis["items"][1]["feedback_id"] = "fb_999"
    backlog["items"][0]["priority"] = "high"
    backlog["items"][0]["evidence_feedback_ids"] = ["fb_999"]
    feedback_workspace.report = feedback_workspace.report.replace("## Risks And Unknowns", "")
    report = validate(feedback_workspace.write(), contracts=(*CONTRACTS, APPENDIX))

    assert {f.code for f in report.findings} == {
        "missing_file",
        "missing_field",
        "invalid_enum",
        "missing_heading",
        "unknown_evidence_id",
        "evidence_text_mismatch",
        "rows_not_covered",  # fb_002's item now cites fb_999, so fb_002 is not analysed
    }
    for phrase in (
        "missing required files: artifacts/appendix.md",
        "missing field: failed_batches",
        'invalid priority: "high"',
        "missing headings: ## Risks And Unknowns",
        "missing evidence ids: fb_999",
        "text mismatch: ",
        "rows not covered: 1 in artifacts/feedback_analysis.json (fb_002)",
    ):
        assert report.error_message is not None
        assert phrase in report.error_message
    assert report.error_message == "; ".join(report.summaries)
    assert len(report.summaries) == len(report.blocked_validators) == 5
    assert report.artifacts == {
        ANALYSIS: "rejected",
        BACKLOG: "rejected",
        REPORT: "rejected",
        CHART: "missing",  # optional, not drawn: no finding names it
        "artifacts/appendix.md": "missing",
    }


def _result(name: str, *findings: Finding) -> ValidatorResult:
    return ValidatorResult(name, findings, f"{name} says no" if findings else None)


def _finding(artifact: str) -> Finding:
    return Finding(validator="X", artifact=artifact, code="hook_blocked", message="no")


def test_status_comes_from_the_findings_that_name_the_artifact(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    contracts = (*CONTRACTS, APPENDIX)
    results = [_result("A"), _result("B", _finding(BACKLOG), _finding(APPENDIX.name))]
    report = aggregate(results, contracts, feedback_workspace.root)
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
        APPENDIX.name: "missing",  # missing wins over rejected
    }
    assert report.error_message == "B says no"
    assert report.blocked_validators == ["B"]


def test_a_run_level_finding_fails_the_report_without_rejecting_artifacts(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    report = aggregate([_result("Run", _finding(""))], CONTRACTS, feedback_workspace.root)
    assert not report.passed
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }


@dataclass
class _Exploding:
    name: str = "Exploding"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        raise RuntimeError("boom")


def test_a_crashing_validator_blocks_and_the_others_still_run(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.remove(REPORT)
    report = validate(feedback_workspace, extra=[_Exploding()])
    assert [f.code for f in report.findings] == ["missing_file", "hook_error"]
    assert report.error_message is not None
    assert report.error_message.endswith("validator Exploding failed: RuntimeError: boom")


@dataclass
class _Entry:
    name: str
    target: object
    value: str = "tests:factory"

    def load(self) -> object:
        return self.target


def test_validator_plugins_come_from_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [_Entry("zeta", _Exploding), _Entry("alpha", lambda: _Exploding("Alpha"))]
    monkeypatch.setattr(validation, "group_entry_points", lambda group: entries)
    assert [v.name for v in load_validator_plugins()] == ["Alpha", "Exploding"]


def test_a_broken_validator_plugin_is_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "group_entry_points", lambda group: [_Entry("bad", lambda: 42)])
    with pytest.raises(ContractError, match=r"'bad'.*did not return a validator"):
        load_validator_plugins()
