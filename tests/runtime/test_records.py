"""Run records: events, run.json, metrics, trace and manifest, consistent with each other."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from runlens.validation import stop_validators
from runlens_feedback import plugin
from runlens_feedback.contracts import ANALYSIS

from .conftest import Documents, RunScript, turns_for


def test_events_are_ordered_and_complete(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    events = outcome.events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["run_id"] for e in events} == {outcome.record["run_id"]}
    types = outcome.types
    assert types[0] == "run.created"
    assert types.count("run.created") == types.count("run.started") == 1
    assert (
        types.index("run.started")
        < types.index("model.called")
        < types.index("tool.called")
        < types.index("evidence.indexed")
        < types.index("run.validating")
        < types.index("run.completed")
    )
    steps = [e["data"] for e in events if e["type"] == "plan.step.updated"]
    assert {"step_id": "load_feedback", "status": "running"} in steps
    assert {"step_id": "load_feedback", "status": "completed"} in steps


def test_metrics_agree_with_events(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    metrics = outcome.record["metrics"]
    types = outcome.types
    assert metrics["model_calls"] == types.count("model.called") == 3
    assert metrics["turns"] == 3
    assert metrics["tool_calls"] == types.count("tool.completed") + types.count("tool.failed")
    assert metrics["tool_calls_by_name"] == {"read_feedback_csv": 1, "write_file": 3}
    assert metrics["validation_rounds"] == 1
    assert metrics["phase_seconds"]["running"] >= 0
    assert "validating" in metrics["phase_seconds"]


def test_trace_spans_are_parent_linked(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    trace = json.loads((outcome.workspace / "runtime" / "trace.json").read_text())
    spans = trace["spans"]
    root = spans[0]
    assert root["parent_span_id"] is None
    assert root["name"] == "invoke_agent feedback-analysis"
    assert all(span["parent_span_id"] == root["span_id"] for span in spans[1:])
    names = [span["name"] for span in spans]
    assert names.count("execute_tool write_file") == 3
    assert sum(name.startswith("chat ") for name in names) == 3
    assert sum(name.startswith("validate ") for name in names) == len(stop_validators(plugin))
    chat = next(span for span in spans if span["name"].startswith("chat "))
    assert chat["attributes"]["gen_ai.operation.name"] == "chat"
    assert all(span["start_time_unix_nano"] <= span["end_time_unix_nano"] for span in spans)


def test_manifest_hashes_match_the_files(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    manifest = outcome.manifest
    assert manifest["status"] == "completed"
    assert manifest["input"]["name"] == "sample_feedback.csv"
    source = (outcome.workspace / "input" / "sample_feedback.csv").read_bytes()
    assert manifest["input"]["source_hash"] == hashlib.sha256(source).hexdigest()
    analysis = next(a for a in manifest["artifacts"] if a["name"] == ANALYSIS)
    data = (outcome.workspace / ANALYSIS).read_bytes()
    assert analysis["sha256"] == hashlib.sha256(data).hexdigest()
    assert analysis["size"] == len(data)
    assert analysis["label"] == "Feedback Analysis JSON"
    assert analysis["audience"] == "developer"


def test_run_record_and_index_hash(run_script: RunScript, good_documents: Documents) -> None:
    outcome = run_script(turns_for(*good_documents))
    record = outcome.record
    index = (outcome.workspace / "runtime" / "evidence_index.json").read_bytes()
    assert record["evidence_index_sha256"] == hashlib.sha256(index).hexdigest()
    assert record["plugin"] == "feedback-analysis"
    assert record["model"].startswith("scripted:")
    assert record["created_at"] <= record["finished_at"]
    assert [step["id"] for step in record["plan"]] == [
        "load_feedback",
        "analyze_feedback",
        "build_backlog",
        "write_report",
        "validate_deliverables",
    ]
    assert (outcome.workspace / "runtime" / "system_prompt.md").read_text().count(
        "## Risks And Unknowns"
    ) >= 1


def test_secrets_never_reach_records(
    run_script: RunScript, good_documents: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    analysis, backlog, report = good_documents
    report += f"\nkey: {secret}\n"
    outcome = run_script(turns_for(analysis, backlog, report))
    for path in outcome.workspace.rglob("*.json*"):
        assert secret not in path.read_text(encoding="utf-8"), path


def test_runs_and_show_commands(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from runlens.cli import cli

    outcome = run_script(turns_for(*good_documents))
    home = outcome.workspace.parent
    listed = CliRunner().invoke(cli, ["runs", "--home", str(home), "--json"])
    assert listed.exit_code == 0
    runs = json.loads(listed.stdout)
    assert outcome.record["run_id"] in [r["run_id"] for r in runs]
    shown = CliRunner().invoke(cli, ["show", str(outcome.workspace)])
    assert shown.exit_code == 0
    assert "completed" in shown.stdout and "run.completed" in shown.stdout
    assert "Load the feedback CSV" in shown.stdout
    missing = CliRunner().invoke(cli, ["show", "run_does_not_exist", "--home", str(home)])
    assert missing.exit_code == 2
