"""Contract JSON Schemas: the fast check never accepts what jsonschema rejects, and never
changes the document it checks."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from runlens.schema import compiled
from runlens_feedback.contracts import CONTRACTS

SCHEMAS = [c.json_schema for c in CONTRACTS if c.json_schema is not None]

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3)
fields = st.sampled_from(
    [
        "feedback_id",
        "sentiment",
        "severity",
        "pain_point",
        "evidence_text",
        "reason",
        "title",
        "priority",
        "evidence_feedback_ids",
        "acceptance_criteria",
        "metric",
    ]
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=2) | st.dictionaries(fields, children, max_size=6),
    max_leaves=8,
)
items = st.lists(st.dictionaries(fields, values, max_size=11), max_size=3)
documents = st.fixed_dictionaries(
    {}, optional={"items": items, "failed_batches": items, "extra": values}
)


@settings(max_examples=400, deadline=None)
@given(schema=st.sampled_from(SCHEMAS), document=documents)
def test_the_fast_check_agrees_with_jsonschema(schema: dict[str, Any], document: Any) -> None:
    before = copy.deepcopy(document)
    checker = compiled(schema)
    assert checker.fast is not None, "the contract schemas take the fast path"
    expected = sorted(e.message for e in Draft202012Validator(schema).iter_errors(document))
    assert sorted(e.message for e in checker.errors(document)) == expected
    assert document == before


def test_a_newer_keyword_is_checked_by_jsonschema_alone() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "string"}]}
    checker = compiled(schema)
    assert checker.fast is None
    assert [e.validator for e in checker.errors([1])] == ["type"]


def test_defaults_are_not_filled_into_the_document() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "default": 3}}}
    document: dict[str, Any] = {}
    assert list(compiled(schema).errors(document)) == []
    assert document == {}
