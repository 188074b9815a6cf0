"""The conformance suite catches each kind of broken plugin, and says what is wrong."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from runlens import ArtifactContract, Conformance, PlanStep, Plugin, SuccessCriterion, Tool
from runlens.kit.conformance import CHECKS, ConformanceReport, check_installed_plugin
from runlens.kit.declaration import schema_has_path
from runlens.kit.record_checks import RunOutcome, outcome_problems
from runlens.testing import check_plugin

RUNS = ("passing_run", "fabricating_run", "records")


def failed(report: ConformanceReport) -> dict[str, tuple[str, ...]]:
    return {result.check: result.details for result in report.checks if result.status != "passed"}


def with_contract(plugin: Plugin, name: str, **changes: Any) -> Plugin:
    contracts = tuple(
        contract.model_copy(update=changes) if contract.name == name else contract
        for contract in plugin.contracts
    )
    return dataclasses.replace(plugin, contracts=contracts)


def test_the_generated_plugin_passes_in_process(triage_plugin: Plugin, tmp_path: Path) -> None:
    report = check_plugin(triage_plugin, workspace=tmp_path)

    assert report.passed, report.describe()
    assert [result.check for result in report.checks] == list(CHECKS)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fabricating", "passing"]


def test_an_invalid_json_schema_fails_and_no_run_is_made(
    triage_plugin: Plugin, tmp_path: Path
) -> None:
    broken = with_contract(triage_plugin, "artifacts/triage.json", json_schema={"type": "nonsense"})

    report = check_plugin(broken, workspace=tmp_path)

    problems = failed(report)
    assert problems["json_schema"][0].startswith("artifacts/triage.json: invalid JSON Schema")
    assert all(report.result(check).status == "skipped" for check in RUNS)
    assert list(tmp_path.iterdir()) == []


def test_an_evidence_path_the_schema_does_not_declare_fails(triage_plugin: Plugin) -> None:
    broken = with_contract(triage_plugin, "artifacts/triage.json", evidence_fields=("items.id",))

    assert failed(check_plugin(broken))["evidence_paths"] == (
        "artifacts/triage.json: evidence field 'items.id' is not a property its JSON Schema "
        "declares",
    )


def test_a_plan_criterion_naming_an_undeclared_artifact_fails(triage_plugin: Plugin) -> None:
    step = PlanStep(
        "chart", "Draw the chart", (SuccessCriterion("artifact_validated", "artifacts/c.svg"),)
    )
    broken = dataclasses.replace(triage_plugin, plan=(*triage_plugin.plan, step))

    (problem,) = failed(check_plugin(broken))["plan"]
    assert problem.startswith("step 'chart': criterion names 'artifacts/c.svg', which is not")


def test_a_plan_step_naming_a_missing_tool_and_a_clashing_tool_fail(
    triage_plugin: Plugin,
) -> None:
    clash = Tool("write_file", "mine", {"type": "object"}, lambda context: None)
    step = PlanStep("load", "Load", (SuccessCriterion("evidence_index_built"),), ("read_all",))
    broken = dataclasses.replace(
        triage_plugin, plan=(step, *triage_plugin.plan[1:]), tools=lambda context: (clash,)
    )

    assert failed(check_plugin(broken))["tools"] == (
        "tool 'write_file': is a file tool of the runtime",
        "step 'load': names tool 'read_all', which does not exist",
    )


def test_a_contract_outside_artifacts_and_misplaced_rules_fail(triage_plugin: Plugin) -> None:
    report_md = ArtifactContract(
        name="report.md", required_headings=("Summary",), evidence_fields=("items.id",)
    )
    broken = dataclasses.replace(triage_plugin, contracts=(*triage_plugin.contracts, report_md))

    assert failed(check_plugin(broken))["contracts"] == (
        "report.md: must be under artifacts/, the only folder a run may write",
        "report.md: evidence_fields needs a .json artifact",
        "report.md: required heading 'Summary' is not a Markdown heading ('# Title')",
    )


def test_a_plugin_without_samples_fails_the_samples_check(triage_plugin: Plugin) -> None:
    report = check_plugin(dataclasses.replace(triage_plugin, conformance=None))

    assert failed(report)["samples"][0].startswith("no conformance samples declared")
    assert not report.passed


def test_a_fabricating_script_that_does_not_fabricate_fails(triage_plugin: Plugin) -> None:
    samples = triage_plugin.conformance
    assert samples is not None
    honest = dataclasses.replace(samples, fabricating_model=samples.passing_model)

    problems = failed(check_plugin(dataclasses.replace(triage_plugin, conformance=honest)))

    assert problems == {
        "fabricating_run": ("the run ended completed; a fabricating model's run must fail",)
    }


def test_an_expected_code_the_fabrication_does_not_cause_fails(triage_plugin: Plugin) -> None:
    samples = triage_plugin.conformance
    assert samples is not None
    expecting = dataclasses.replace(samples, expected_codes=("rows_not_covered",))

    problems = failed(check_plugin(dataclasses.replace(triage_plugin, conformance=expecting)))

    (problem,) = problems["fabricating_run"]
    assert problem.startswith("expected finding rows_not_covered was not reported (found: ")
    assert "unknown_evidence_id" in problem


def test_a_passing_script_that_fails_validation_fails(
    triage_plugin: Plugin, tmp_path: Path
) -> None:
    samples = triage_plugin.conformance
    assert samples is not None
    swapped = Conformance(samples.fixture, samples.fabricating_model, samples.fabricating_model)

    problems = failed(check_plugin(dataclasses.replace(triage_plugin, conformance=swapped)))

    assert problems["passing_run"][0].startswith("the run ended failed: ")
    assert "unknown_evidence_id" in problems["passing_run"][1]


def outcome_of(workspace: Path) -> RunOutcome:
    record = json.loads((workspace / "runtime/run.json").read_text(encoding="utf-8"))
    manifest = json.loads((workspace / "manifest.json").read_text(encoding="utf-8"))
    return RunOutcome(
        workspace=workspace,
        run_id=record["run_id"],
        status=record["status"],
        error_message=record["error_message"],
        artifacts={entry["name"]: entry["status"] for entry in manifest["artifacts"]},
        finding_codes=(),
    )


def test_the_records_check_finds_missing_and_inconsistent_records(
    triage_plugin: Plugin, tmp_path: Path
) -> None:
    assert check_plugin(triage_plugin, workspace=tmp_path).passed
    passing = tmp_path / "passing"
    outcome = outcome_of(passing)
    assert list(outcome_problems(triage_plugin, outcome)) == []

    (passing / "artifacts/summary.md").write_text("# changed after the run\n", encoding="utf-8")
    events = (passing / "runtime/events.jsonl").read_text(encoding="utf-8").splitlines()
    (passing / "runtime/events.jsonl").write_text("\n".join(events[:-1]) + "\n", "utf-8")
    assert list(outcome_problems(triage_plugin, outcome)) == [
        f"the last event is {json.loads(events[-2])['type']!r}, but the run ended completed",
        "manifest.json's sha256 of artifacts/summary.md is not the file's",
    ]

    (passing / "runtime/trace.json").unlink()
    assert list(outcome_problems(triage_plugin, outcome)) == ["missing trace.json"]


@pytest.mark.parametrize(
    ("path", "declared"),
    [
        (("items", "ticket_id"), True),
        (("items", "missing"), False),
        (("items",), True),
        (("meta", "owner"), True),
        (("meta", "team"), True),
        (("meta", "other"), False),
    ],
)
def test_schema_paths_follow_arrays_refs_and_combinators(
    path: tuple[str, ...], declared: bool
) -> None:
    schema = {
        "$defs": {"ticket": {"type": "object", "properties": {"ticket_id": {"type": "string"}}}},
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/ticket"}},
            "meta": {
                "allOf": [
                    {"properties": {"owner": {"type": "string"}}},
                    {"anyOf": [{"properties": {"team": {"type": "string"}}}]},
                ]
            },
        },
    }

    assert schema_has_path(schema, path) is declared


def test_the_first_plugin_passes_too(tmp_path: Path) -> None:
    report = check_installed_plugin("feedback-analysis", workspace=tmp_path)

    assert report.passed, report.describe()
    fabricated = json.loads((tmp_path / "fabricating/manifest.json").read_text(encoding="utf-8"))
    assert fabricated["status"] == "failed"


def test_a_correction_naming_an_undeclared_artifact_fails(triage_plugin: Plugin) -> None:
    from runlens import Correction, ReviewPolicy
    from runlens.kit.declaration import review_declaration_problems
    from runlens.plugins import load_plugin

    theme = Correction("theme", "Another theme", artifacts=("artifacts/nowhere.json",))
    broken = dataclasses.replace(triage_plugin, corrections=(theme, theme))

    assert failed(check_plugin(broken))["review"] == (
        "correction 'theme': names 'artifacts/nowhere.json', which is not a declared artifact "
        f"({', '.join(sorted(c.name for c in triage_plugin.contracts))})",
        "correction 'theme': declared twice",
        "correction 'theme': names 'artifacts/nowhere.json', which is not a declared artifact "
        f"({', '.join(sorted(c.name for c in triage_plugin.contracts))})",
    )
    policy = dataclasses.replace(triage_plugin, review_policy=ReviewPolicy(approvals=2))
    assert review_declaration_problems(policy) == []
    assert review_declaration_problems(load_plugin("feedback-analysis")) == []
