"""Contract JSON Schemas: the fast check never accepts what jsonschema rejects, and never
changes the document it checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, SchemaError

from runlens.schema import _KEYWORDS, _surely_a_schema, compiled
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


# Schemas built from the keywords `_surely_a_schema` knows (and some it does not), with values
# on both sides of what the metaschema allows.
_BORDERLINE: list[Any] = [
    None,
    True,
    False,
    -1,
    0,
    1,
    2,
    1.0,
    0.5,
    -0.5,
    float("nan"),
    float("inf"),
    10**30,
    "",
    "x",
    "string",
    "integer",
    "strng",
    "(",
    "a+",
    "\\S",
    "[a-",
    "(?P<n>x)",
    "x{2,1}",
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema#",
    [],
    ["a"],
    ["a", "a"],
    ["string"],
    ["string", "string"],
    ["string", "null"],
    [1],
    [{}],
    [True],
    {},
    {"a": {}},
    {"a": 1},
    {"a": True},
]
_borderline = st.sampled_from(_BORDERLINE)
_keywords = st.sampled_from(
    [*_KEYWORDS, "$ref", "$defs", "patternProperties", "prefixItems", "dependentRequired", "x"]
)


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    value = (
        _borderline
        | children
        | st.lists(children, max_size=2)
        | st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2)
    )
    return st.dictionaries(_keywords, value, max_size=3)


hostile_schemas = st.recursive(st.booleans() | _schemas(_borderline), _schemas, max_leaves=6)


@settings(max_examples=500, deadline=None)
@given(schema=hostile_schemas)
def test_a_schema_vouched_for_is_one_jsonschema_accepts(schema: Any) -> None:
    if _surely_a_schema(schema):
        Draft202012Validator.check_schema(schema)  # raises SchemaError if it were not


def test_each_keyword_with_each_borderline_value() -> None:
    vouched = 0
    for keyword in _KEYWORDS:
        for value in _BORDERLINE:
            for schema in ({keyword: value}, {"items": {keyword: value}}):
                if _surely_a_schema(schema):
                    vouched += 1
                    Draft202012Validator.check_schema(schema)
    assert vouched > len(_KEYWORDS)  # the check vouches for many, not none


def test_every_schema_of_the_contracts_is_vouched_for() -> None:
    # So they are compiled without loading jsonschema (a run's tools: test_command_imports).
    assert all(_surely_a_schema(schema) for schema in SCHEMAS)


def test_a_schema_not_vouched_for_gets_jsonschema_s_error() -> None:
    for bad in (
        {"type": "strng"},
        {"required": ["a", "a"]},
        {"pattern": "("},
        {"minLength": -1},
        {"multipleOf": 0},
    ):
        assert not _surely_a_schema(bad)
        with pytest.raises(SchemaError) as raised:
            compiled(bad)
        with pytest.raises(SchemaError) as expected:
            Draft202012Validator.check_schema(bad)
        assert raised.value.message == expected.value.message
