"""JsonOutputValidationHook: parse, required fields, enums, full JSON Schema."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from runlens.contracts import ArtifactContract, JsonRules
from runlens.errors import ContractError
from runlens.validation import (
    JsonOutputValidator,
    ValidationContext,
    ValidationReport,
    validate_workspace,
)
from runlens.validation.json_rules import format_error_path, missing_locations
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


def codes(report: ValidationReport) -> list[tuple[str, str, str]]:
    return [(f.code, f.artifact, f.path) for f in report.findings]


def test_unparsable_json_reports_line_and_column(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.write_text(ANALYSIS, '{\n  "items": [\n    {"feedback_id": "fb_001",,}\n')
    report = validate(feedback_workspace)
    (finding,) = [f for f in report.findings if f.artifact == ANALYSIS]
    assert finding.code == "invalid_json"
    assert finding.details == {"line": 3, "column": 30}
    assert report.error_message is not None
    assert report.error_message.startswith(f"invalid json: {ANALYSIS} line 3 column 30 (")
    assert report.artifacts[ANALYSIS] == "rejected"


def test_non_utf8_json_is_invalid_json_not_a_crash(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    (feedback_workspace.root / ANALYSIS).write_bytes(b'{"items": "\xff"}')
    report = validate(feedback_workspace)
    assert ("invalid_json", ANALYSIS, "") in codes(report)
    assert report.error_message is not None
    assert "not UTF-8" in report.error_message


def test_nan_is_not_json(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.write_text(BACKLOG, '{"items": NaN}')
    report = validate(feedback_workspace)
    assert ("invalid_json", BACKLOG, "") in codes(report)
    assert report.error_message is not None
    assert "NaN is not valid JSON" in report.error_message


def test_a_json_file_with_a_bom_is_read(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    path = feedback_workspace.root / BACKLOG
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert validate(feedback_workspace).passed


def test_parses_but_lacks_a_required_field(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    del feedback_workspace.analysis["failed_batches"]
    report = validate(feedback_workspace.write())
    # jsonschema also requires it: reported once, as missing_field.
    assert codes(report) == [("missing_field", ANALYSIS, "failed_batches")]
    assert report.error_message == f"missing field: failed_batches in {ANALYSIS}"


def test_dotted_required_fields_name_the_concrete_item() -> None:
    document = {"items": [{"feedback_id": "a"}, {}, {"feedback_id": "c"}], "meta": "text"}
    assert list(missing_locations(document, ("items", "feedback_id"))) == ["items[1].feedback_id"]
    # A string cannot hold a field: meta.version is missing, not silently skipped.
    assert list(missing_locations(document, ("meta", "version"))) == ["meta.version"]
    assert list(missing_locations({"items": []}, ("items", "feedback_id"))) == []
    # A field that is present asks nothing of its value, whatever it holds.
    odd: list[Any] = [[], [[{}]], "", None, {"x": 1}] * 3
    assert list(missing_locations({"items": odd}, ("items",))) == []
    assert list(missing_locations(odd, ())) == []
    assert list(missing_locations({"items": {}}, ("items", "a"))) == ["items.a"]


def test_a_top_level_list_lacks_every_required_field(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.write_text(BACKLOG, "[]")
    report = validate(feedback_workspace)
    (finding,) = [f for f in report.findings if f.code == "missing_field"]
    assert finding.path == "items"
    assert "not a JSON object" in finding.message


def test_priority_high_is_an_invalid_priority(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"][0]["priority"] = "high"
    report = validate(feedback_workspace.write())
    assert codes(report) == [("invalid_enum", BACKLOG, "items[0].priority")]
    assert report.findings[0].details == {"value": "high", "allowed": ["P0", "P1", "P2", "P3"]}
    assert report.error_message == (
        f'invalid priority: "high" at {BACKLOG} items[0].priority (allowed: P0, P1, P2, P3)'
    )
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
    }


def test_enum_summary_names_the_field_and_groups_values(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    items = feedback_workspace.analysis["items"]
    items[1]["sentiment"] = "angry"
    items[2]["sentiment"] = None
    report = validate(feedback_workspace.write())
    assert [f.path for f in report.findings] == ["items[1].sentiment", "items[2].sentiment"]
    assert report.error_message == (
        f'invalid sentiment: "angry" at {ANALYSIS} items[1].sentiment, '
        f"null at {ANALYSIS} items[2].sentiment (allowed: positive, neutral, negative, mixed)"
    )


def test_schema_violation_paths_are_concrete(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"][1]["acceptance_criteria"] = []
    del feedback_workspace.backlog["items"][0]["metric"]
    report = validate(feedback_workspace.write())
    assert sorted(codes(report)) == [
        ("schema_violation", BACKLOG, "items[0].metric"),
        ("schema_violation", BACKLOG, "items[1].acceptance_criteria"),
    ]
    assert report.error_message is not None
    assert report.error_message.startswith("schema violation: ")
    assert f"{BACKLOG} items[1].acceptance_criteria: [] should be non-empty" in (
        report.error_message
    )


def test_format_error_path() -> None:
    assert format_error_path(["items", 2, "acceptance_criteria"]) == "items[2].acceptance_criteria"
    assert format_error_path([]) == ""
    assert format_error_path([0, "a"]) == "[0].a"


def test_the_summary_caps_long_listings(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"] = [
        {**feedback_workspace.backlog["items"][0], "priority": f"urgent{n}"} for n in range(8)
    ]
    report = validate(feedback_workspace.write())
    assert len(report.findings) == 8
    assert report.error_message is not None
    assert "and 3 more (allowed: P0, P1, P2, P3)" in report.error_message
    assert "urgent5" not in report.error_message


def test_a_broken_schema_is_a_contract_error() -> None:
    contract = ArtifactContract(name="a.json", json_schema={"type": "not-a-type"})
    with pytest.raises(ContractError, match=r"a\.json"):
        JsonOutputValidator([contract])


def test_missing_artifacts_are_left_to_the_required_validator(tmp_path: Path) -> None:
    contract = ArtifactContract(name="a.json", schema=JsonRules(required_fields=("x",)))
    result = JsonOutputValidator([contract]).validate(ValidationContext(tmp_path, (contract,)))
    assert not result.blocked
    assert result.summary is None


def test_lightweight_rules_work_without_a_json_schema(tmp_path: Path) -> None:
    contract = ArtifactContract(
        name="out/a.json",
        schema=JsonRules(required_fields=("meta.version",), enum_fields={"level": ("a", "b")}),
    )
    (tmp_path / "out").mkdir()
    (tmp_path / "out/a.json").write_text('{"meta": {}, "level": "c"}', encoding="utf-8")
    report = validate_workspace(tmp_path, [contract])
    assert [(f.code, f.path) for f in report.findings] == [
        ("missing_field", "meta.version"),
        ("invalid_enum", "level"),
    ]
