"""RequiredOutputValidationHook: required artifacts must be regular files in the workspace."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runlens.contracts import ArtifactContract
from runlens.validation import ValidationReport, validate_workspace
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


def test_a_passing_workspace_has_no_findings(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report = validate(feedback_workspace)
    assert report.passed, report.error_message
    assert report.findings == []
    assert report.error_message is None
    # The three required deliverables; the optional chart, not drawn here, is only listed.
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }


def test_only_two_files_written_names_the_missing_one(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.remove(REPORT)
    report = validate(feedback_workspace)
    assert [(f.code, f.artifact) for f in report.findings] == [("missing_file", REPORT)]
    assert report.error_message == f"missing required files: {REPORT}"
    assert report.artifacts[REPORT] == "missing"
    assert report.artifacts[ANALYSIS] == report.artifacts[BACKLOG] == "validated"


def test_several_missing_files_are_listed_comma_separated(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.remove(REPORT)
    feedback_workspace.remove(BACKLOG)
    report = validate(feedback_workspace)
    assert report.error_message == f"missing required files: {BACKLOG}, {REPORT}"


def test_a_directory_is_not_a_deliverable(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.remove(REPORT)
    (feedback_workspace.root / REPORT).mkdir()
    report = validate(feedback_workspace)
    (finding,) = report.findings
    assert finding.code == "missing_file"
    assert "directory" in finding.message
    assert report.artifacts[REPORT] == "missing"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_out_of_the_workspace_is_not_a_deliverable(
    feedback_workspace: FeedbackWorkspace, tmp_path: Path, validate: Callable[..., ValidationReport]
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(feedback_workspace.report, encoding="utf-8")
    feedback_workspace.remove(REPORT)
    (feedback_workspace.root / REPORT).symlink_to(outside)
    report = validate(feedback_workspace)
    assert [f.code for f in report.findings] == ["missing_file"]
    assert "outside the workspace" in report.findings[0].message


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_inside_the_workspace_counts(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    real = feedback_workspace.write_text("artifacts/report_v2.md", feedback_workspace.report)
    feedback_workspace.remove(REPORT)
    (feedback_workspace.root / REPORT).symlink_to(real)
    assert validate(feedback_workspace).passed


def test_an_optional_missing_artifact_is_missing_but_not_a_finding(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    optional = ArtifactContract(name="artifacts/appendix.md", required=False)
    report = validate_workspace(feedback_workspace.root, [optional])
    assert report.passed
    assert report.artifacts == {"artifacts/appendix.md": "missing"}
