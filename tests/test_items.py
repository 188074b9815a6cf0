"""Submitted items are checked by the validators' own code: same verdicts, same messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runlens import (
    ArtifactContract,
    ContractError,
    EvidenceQuote,
    JsonRules,
    ValidationContext,
    item_problems,
    submit_tool_spec,
)
from runlens.evidence import build_evidence_index
from runlens.validation import EvidenceCitationValidator, JsonOutputValidator

ORDERS = "artifacts/orders.json"
CONTRACT = ArtifactContract(
    name=ORDERS,
    label="Order review",
    schema=JsonRules(required_fields=("items",), enum_fields={"items.status": ("ok", "late")}),
    json_schema={
        "type": "object",
        "$defs": {"text": {"type": "string", "minLength": 1}},
        "properties": {
            "items": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["order", "status", "why"],
                    "properties": {
                        "order": {"$ref": "#/$defs/text"},
                        "status": {"type": "string"},
                        "why": {"type": "string"},
                        "score": {"type": "number"},
                    },
                },
            }
        },
    },
    evidence_fields=("items.order",),
    evidence_quotes=(EvidenceQuote(text="items.why", id="items.order"),),
)
ITEMS: list[Any] = [
    {"order": "o1", "status": "ok", "why": "arrived on Monday"},
    {"order": "o2", "status": "lost", "why": "still waiting"},
    {"order": "o3", "status": "late", "why": "never ordered this"},
    {"order": "o1", "status": "late", "why": "arr"},
    {"order": "o2", "status": "ok", "why": "still waiting", "score": "high"},
    {"order": "o9", "status": "ok", "why": "anything"},
    {"status": "ok", "why": "   "},
    "not an object",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "input").mkdir()
    source = tmp_path / "input" / "orders.csv"
    source.write_text(
        "order,text\no1,It arrived on Monday as promised\no2,I am still waiting for it\n"
        "o3,Two weeks late and the box was crushed\n",
        encoding="utf-8",
    )
    index = build_evidence_index(source, id_column="order", text_column="text")
    index.write(tmp_path / "runtime" / "evidence_index.json")
    return tmp_path


def test_problems_are_the_findings_the_deliverable_would_get(workspace: Path) -> None:
    index = build_evidence_index(
        workspace / "input" / "orders.csv", id_column="order", text_column="text"
    )
    problems = item_problems(CONTRACT, ITEMS, index)
    assert problems[0] == []
    assert problems[1] == ['items[1].status is "lost"; allowed: ok, late']
    assert problems[2] == ["items[2].why is not a verbatim fragment of o3"]
    assert problems[3] == [
        "items[3].why ends inside a word of o1: quote whole words, e.g. “arrived”"
    ]
    assert problems[4] == ["items[4].score: 'high' is not of type 'number'"]
    assert problems[5] == ['items[5].order cites "o9", but no row of orders.csv has that id']
    assert problems[6] == ["items[6].order: 'order' is a required property"]
    assert problems[7] == ["items[7]: 'not an object' is not of type 'object'"]

    # The same items written as the deliverable: the validators report exactly these.
    (workspace / "artifacts").mkdir()
    (workspace / ORDERS).write_text(json.dumps({"items": ITEMS}), encoding="utf-8")
    context = ValidationContext(workspace, (CONTRACT,))
    findings = [
        finding.message
        for validator in (JsonOutputValidator([CONTRACT]), EvidenceCitationValidator([CONTRACT]))
        for finding in validator.validate(context).findings
    ]
    assert sorted(findings) == sorted(problem for item in problems for problem in item)


def test_the_submit_tool_carries_the_item_schema_enums_and_definitions() -> None:
    spec = submit_tool_spec(CONTRACT)
    assert spec.name == "submit_items" and "Order review" in spec.description
    listed = spec.parameters["properties"]["items"]
    assert "minItems" not in listed  # a batch submits its own rows, however few
    assert listed["items"]["properties"]["status"] == {"type": "string", "enum": ["ok", "late"]}
    assert spec.parameters["$defs"] == {"text": {"type": "string", "minLength": 1}}


def test_a_contract_without_an_item_list_cannot_make_a_submit_tool() -> None:
    with pytest.raises(ContractError, match="declares no list 'rows'"):
        submit_tool_spec(CONTRACT, items="rows")
