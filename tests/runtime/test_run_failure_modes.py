"""The article's failure modes, end to end through `runlens run` with a scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

from .conftest import Documents, RunScript, turns_for

FAILURE_ORDER = ["hook.blocked", "artifact.rejected", "run.failed"]


def _assert_failure_order(types: list[str]) -> None:
    blocked = types.index("hook.blocked")
    first_rejected = types.index("artifact.rejected")
    failed = types.index("run.failed")
    assert blocked < first_rejected < failed
    assert failed == len(types) - 1, "run.failed is the last event"


def test_passing_run_completes(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"
    assert outcome.json["error_message"] is None
    # The script draws no chart: the optional chart is listed as missing, without a finding.
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }
    assert outcome.json["findings"] == []
    assert set(outcome.plan.values()) == {"completed"}
    assert outcome.types[-1] == "run.completed"
    assert "hook.blocked" not in outcome.types
    entries = outcome.manifest["artifacts"]
    assert [(a["name"], a["status"], a["required"]) for a in entries] == [
        (ANALYSIS, "validated", True),
        (BACKLOG, "validated", True),
        (REPORT, "validated", True),
        (CHART, "missing", False),
    ]
    assert (entries[3]["size"], entries[3]["sha256"], entries[3]["findings"]) == (None, None, [])
    # Neither validated nor rejected: no artifact event for a chart that was not drawn.
    judged = [e["data"]["artifact"] for e in outcome.events if e["type"].startswith("artifact.")]
    assert judged == [ANALYSIS, BACKLOG, REPORT]
    assert outcome.record["evidence_index_sha256"]


def test_missing_report(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, _ = good_documents
    outcome = run_script(turns_for(analysis, backlog, None))
    assert outcome.exit_code == 1
    assert outcome.record["status"] == "failed"
    assert outcome.record["error_message"].startswith(
        "missing required files: artifacts/insight_report.md"
    )
    _assert_failure_order(outcome.types)
    assert outcome.plan["write_report"] == "failed"
    assert outcome.plan["validate_deliverables"] == "failed"
    assert outcome.plan["analyze_feedback"] == "completed"
    statuses = {a["name"]: a["status"] for a in outcome.manifest["artifacts"]}
    assert statuses == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "missing",
        CHART: "missing",
    }
    assert (outcome.workspace / ANALYSIS).is_file(), "files of a failed run stay"


def test_bad_priority(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, report = good_documents
    backlog["items"][0]["priority"] = "high"
    outcome = run_script(turns_for(analysis, backlog, report))
    assert outcome.exit_code == 1
    assert "invalid priority" in outcome.record["error_message"]
    assert outcome.json["artifacts"][BACKLOG] == "rejected"
    assert outcome.json["artifacts"][ANALYSIS] == "validated"
    finding = next(f for f in outcome.json["findings"] if f["code"] == "invalid_enum")
    assert finding["path"] == "items[0].priority"
    assert outcome.plan["build_backlog"] == "failed"
    assert outcome.plan["write_report"] == "completed"
    _assert_failure_order(outcome.types)


def test_missing_risks_heading(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, report = good_documents
    report = report.replace("## Risks And Unknowns", "## Next Steps")
    outcome = run_script(turns_for(analysis, backlog, report))
    assert outcome.exit_code == 1
    assert "## Risks And Unknowns" in outcome.record["error_message"]
    assert outcome.json["artifacts"][REPORT] == "rejected"
    assert outcome.plan["write_report"] == "failed"
    _assert_failure_order(outcome.types)


def test_fabricated_id_in_both_artifacts(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, report = good_documents
    analysis["items"][0]["feedback_id"] = "fb_999"
    backlog["items"][0]["evidence_feedback_ids"] = ["fb_999"]
    outcome = run_script(turns_for(analysis, backlog, report))
    assert outcome.exit_code == 1
    assert "missing evidence ids: fb_999" in outcome.record["error_message"]
    assert outcome.json["artifacts"][ANALYSIS] == "rejected"
    assert outcome.json["artifacts"][BACKLOG] == "rejected"
    assert outcome.json["artifacts"][REPORT] == "validated"
    rejected = [e["data"]["artifact"] for e in outcome.events if e["type"] == "artifact.rejected"]
    assert sorted(rejected) == sorted([ANALYSIS, BACKLOG])
    _assert_failure_order(outcome.types)


def test_paraphrased_evidence(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, report = good_documents
    analysis["items"][0]["evidence_text"] = "每周导出报告需要等待很长时间，影响团队协作效率。"
    outcome = run_script(turns_for(analysis, backlog, report))
    assert outcome.exit_code == 1
    assert "text mismatch" in outcome.record["error_message"]
    finding = next(f for f in outcome.json["findings"] if f["code"] == "evidence_text_mismatch")
    assert (finding["artifact"], finding["path"]) == (ANALYSIS, "items[0].evidence_text")
    assert outcome.json["artifacts"][BACKLOG] == "validated"
    _assert_failure_order(outcome.types)


def test_all_failures_at_once(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, _ = good_documents
    analysis["items"][0]["evidence_text"] = "每周导出报告需要等待很长时间"
    backlog["items"][0]["priority"] = "urgent"
    backlog["items"][1]["evidence_feedback_ids"] = ["fb_999"]
    outcome = run_script(turns_for(analysis, backlog, None))
    message = outcome.record["error_message"]
    for phrase in (
        "missing required files",
        "invalid priority",
        "missing evidence ids: fb_999",
        "text mismatch",
    ):
        assert phrase in message
    codes = {f["code"] for f in outcome.json["findings"]}
    assert {
        "missing_file",
        "invalid_enum",
        "unknown_evidence_id",
        "evidence_text_mismatch",
    } <= codes
    assert outcome.record["metrics"]["findings_by_code"]["missing_file"] == 1
    assert outcome.record["metrics"]["hooks_blocked"] == 3


@pytest.mark.parametrize("turns", [[{"content": "All done, trust me."}]])
def test_model_that_claims_done_without_working(
    run_script: RunScript, turns: list[dict[str, Any]]
) -> None:
    outcome = run_script(turns)
    assert outcome.exit_code == 1
    assert outcome.record["status"] == "failed"
    assert "missing required files" in outcome.record["error_message"]
    # The input tool never ran, so no index: the plan says so.
    assert outcome.plan["load_feedback"] == "failed"
