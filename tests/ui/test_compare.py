"""What changed between two runs: items matched by identity, sections, findings by code."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runlens.errors import UserError
from runlens.store.rows import ArtifactRow, RunDetail
from runlens.ui.compare import (
    compare_json,
    compare_list,
    compare_markdown,
    compare_runs,
    contract_id_fields,
    finding_counts,
    identity_field,
    sections,
)


def test_items_matched_by_title_are_added_removed_and_changed() -> None:
    before: list[dict[str, Any]] = [
        {"title": "Export", "priority": "P1", "ids": ["r1"]},
        {"title": "Invented", "priority": "P2"},
        {"title": "Same", "priority": "P3"},
    ]
    after: list[dict[str, Any]] = [
        {"title": "Export", "priority": "P0", "ids": ["r1"], "metric": "p95"},
        {"title": "Login", "priority": "P1"},
        {"title": "Same", "priority": "P3"},
    ]
    diff = compare_list("items", before, after)
    assert diff.identity == "title"
    kinds = {(c.kind, c.key) for c in diff.changes}
    assert kinds == {("changed", "Export"), ("added", "Login"), ("removed", "Invented")}
    assert diff.unchanged == 1
    changed = next(c for c in diff.changes if c.kind == "changed")
    fields = {f.name: f for f in changed.fields}
    assert (fields["priority"].before, fields["priority"].after) == ("P1", "P0")
    assert not fields["metric"].had_before and fields["metric"].after == "p95"
    assert "ids" not in fields


def test_identity_prefers_id_then_key_name_title() -> None:
    items = [{"id": "a", "name": "x"}, {"id": "b", "name": "y"}]
    assert identity_field(items, items) == "id"
    assert identity_field([{"name": "x"}], [{"name": "y"}]) == "name"


def test_identity_needs_unique_strings_in_both_runs() -> None:
    duplicated = [{"title": "same"}, {"title": "same"}]
    assert identity_field(duplicated, duplicated) is None
    numbers = [{"id": 1}, {"id": 2}]
    assert identity_field(numbers, numbers) is None


def test_contract_evidence_field_identifies_items_without_an_identity_field() -> None:
    before = [{"row_id": "r1", "label": "slow"}, {"row_id": "r2", "label": "ok"}]
    after = [{"row_id": "r2", "label": "ok"}, {"row_id": "r1", "label": "fast"}]
    diff = compare_list("items", before, after, ["row_id"])
    assert diff.identity == "row_id"
    assert [(c.kind, c.key) for c in diff.changes] == [("changed", "r1")]


def test_items_without_identity_are_matched_by_position() -> None:
    diff = compare_list("items", [{"v": 1}, {"v": 2}], [{"v": 1}, {"v": 3}, {"v": 4}])
    assert diff.identity is None
    assert [(c.kind, c.key) for c in diff.changes] == [("changed", "#1"), ("added", "#2")]


def test_json_documents_scalars_and_lists() -> None:
    before = {"version": 1, "items": [{"id": "a", "n": 1}], "meta": {"x": 1}, "empty": []}
    after = {"version": 2, "items": [{"id": "a", "n": 2}], "meta": {"x": 1}, "empty": [], "new": 1}
    diff = compare_json(before, after, ["items.row_id"])
    assert {f.name: (f.before, f.after) for f in diff.fields} == {
        "version": (1, 2),
        "new": (None, 1),
    }
    assert [d.path for d in diff.lists] == ["items"]
    assert not diff.same
    assert compare_json(before, before).same


def test_a_document_that_is_a_list() -> None:
    diff = compare_json([{"row_id": "r1", "x": 1}], [{"row_id": "r1", "x": 2}], ["row_id"])
    assert diff.lists[0].identity == "row_id"
    assert diff.lists[0].changes[0].kind == "changed"


REPORT_A = """# Report

Intro.

## Summary

Exports are slow.

## Evidence

> “slow” — r1

## Evidence

Second evidence section.
"""

REPORT_B = """# Report

Intro.

## Summary

Exports are slow and logins fail.

## Actions

Fix it.

## Evidence

> “slow” — r1
"""


def test_markdown_sections() -> None:
    found = dict(sections(REPORT_A))
    assert list(found) == ["# Report", "## Summary", "## Evidence", "## Evidence (2)"]
    assert found["## Summary"][-2] == "Exports are slow."


def test_markdown_sections_added_removed_changed() -> None:
    diff = compare_markdown(REPORT_A, REPORT_B)
    kinds = {(s.kind, s.heading) for s in diff.sections}
    assert kinds == {
        ("changed", "## Summary"),
        ("added", "## Actions"),
        ("removed", "## Evidence (2)"),
    }
    changed = next(s for s in diff.sections if s.kind == "changed")
    assert changed.diff == ("- Exports are slow.", "+ Exports are slow and logins fail.")
    assert diff.unchanged == 2


def test_finding_counts() -> None:
    counts = finding_counts({"a": 2, "b": 1}, {"b": 3, "c": 1})
    assert [(c.code, c.a, c.b, c.delta) for c in counts] == [
        ("a", 2, 0, -2),
        ("b", 1, 3, 2),
        ("c", 0, 1, 1),
    ]


def artifact(name: str, status: str = "validated") -> ArtifactRow:
    return ArtifactRow(
        name=name,
        label=name.rsplit("/", 1)[-1],
        audience="user",
        sensitivity="internal",
        required=True,
        status=status,
    )


def run(run_id: str, plugin: str, artifacts: list[ArtifactRow], **fields: Any) -> RunDetail:
    return RunDetail(
        run_id=run_id,
        plugin=plugin,
        model="offline",
        status="completed",
        workspace=f"/tmp/{run_id}",
        updated_at="2026-01-01T00:00:00+00:00",
        artifacts=artifacts,
        **fields,
    )


def test_runs_of_different_plugins_are_refused() -> None:
    with pytest.raises(UserError, match="different plugins"):
        compare_runs(run("a", "p1", []), run("b", "p2", []), read=lambda r, n: None)


def test_compare_runs_per_artifact() -> None:
    files = {
        ("a", "out/data.json"): json.dumps({"items": [{"id": "x", "v": 1}]}).encode(),
        ("b", "out/data.json"): json.dumps({"items": [{"id": "x", "v": 2}]}).encode(),
        ("a", "out/report.md"): REPORT_A.encode(),
        ("b", "out/report.md"): REPORT_B.encode(),
        ("a", "out/chart.svg"): b"<svg/>",
        ("b", "out/chart.svg"): b"<svg/>",
        ("b", "out/new.json"): b"{}",
    }
    names = ["out/data.json", "out/report.md", "out/chart.svg"]
    a = run("a", "p", [artifact(n) for n in names], findings_by_code={"bad": 2})
    b = run("b", "p", [artifact(n) for n in [*names, "out/new.json"]])
    comparison = compare_runs(a, b, read=lambda r, n: files.get((r.run_id, n)))
    by_name = {item.name: item for item in comparison.artifacts}
    assert list(by_name) == [*names, "out/new.json"]
    data = by_name["out/data.json"].json
    assert data is not None and data.lists[0].changes[0].key == "x"
    report = by_name["out/report.md"].markdown
    assert report is not None and report.sections
    assert by_name["out/chart.svg"].note == "same bytes"
    assert by_name["out/new.json"].row_a is None
    assert by_name["out/new.json"].note == "no file in a"
    assert [(c.code, c.delta) for c in comparison.findings] == [("bad", -2)]


def test_unreadable_json_is_a_note() -> None:
    a = run("a", "p", [artifact("x.json")])
    b = run("b", "p", [artifact("x.json")])
    comparison = compare_runs(a, b, read=lambda r, n: b"{not json")
    assert comparison.artifacts[0].note == "not valid JSON in one of the runs"


def test_contract_id_fields_come_from_the_installed_plugin() -> None:
    fields = contract_id_fields("feedback-analysis")
    assert fields["artifacts/feedback_analysis.json"] == ("items.feedback_id",)
    assert fields["artifacts/product_backlog.json"] == ("items.evidence_feedback_ids",)
    assert contract_id_fields("no-such-plugin") == {}
