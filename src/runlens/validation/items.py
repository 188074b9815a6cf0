"""The items a model submits, checked as their deliverable will be: one declaration, one check.

A row-by-row deliverable (`{"items": [...], ...}`) is declared once, by its contract: the
fields of an item in `json_schema`, their closed value sets in `JsonRules.enum_fields`
(`items.sentiment`), the row each item cites and its quote in `evidence_fields` and
`evidence_quotes`. From that declaration come

- `submit_tool_spec(contract)`: the tool a batch's model calls to hand in its items, whose
  parameters are the contract's item schema with the enums written in;
- `item_problems(contract, items, index)`: what is wrong with each submitted item, found by
  the validators' own code (`check_json` of `JsonOutputValidationHook`, `check_citations` of
  `EvidenceCitationValidationHook`), so an item is accepted exactly when the deliverable
  holding it would pass those checks, and each problem reads like the finding it would be.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from runlens.contracts import ArtifactContract, JsonRules
from runlens.contracts.paths import split
from runlens.errors import ContractError
from runlens.evidence import EvidenceIndex
from runlens.models.messages import ToolSpec
from runlens.schema import compiled
from runlens.validation.base import Collector
from runlens.validation.evidence import check_citations
from runlens.validation.json_rules import check_json

#: The name of the submit tool unless a plugin names it.
SUBMIT_TOOL = "submit_items"


def item_schema(contract: ArtifactContract, field: str = "items") -> dict[str, Any]:
    """The JSON Schema of one element of the contract's `field` list (a copy).

    ContractError when the contract's `json_schema` declares no `field` list of objects.
    """
    schema = contract.json_schema or {}
    properties = schema.get("properties")
    array = properties.get(field) if isinstance(properties, dict) else None
    element = array.get("items") if isinstance(array, dict) else None
    if not isinstance(element, dict):
        raise ContractError(
            f"the json_schema of {contract.name} declares no list {field!r} whose items are "
            f"described by a schema: add properties.{field}.items"
        )
    return copy.deepcopy(element)


def submit_tool_spec(
    contract: ArtifactContract,
    *,
    items: str = "items",
    name: str = SUBMIT_TOOL,
    description: str | None = None,
) -> ToolSpec:
    """The tool a model calls to submit items of `contract`'s `items` list: `{items: [...]}`.

    Each item is the contract's item schema (`item_schema`), with the allowed values of the
    contract's `enum_fields` on that list (`items.<field>`) added as `enum`, so the model sees
    every closed value set it will be held to.
    """
    element = item_schema(contract, items)
    fields = element.setdefault("properties", {})
    for path, allowed in _enums(contract, items).items():
        key = split(path)[1]
        described = fields.get(key)
        fields[key] = {**(described if isinstance(described, dict) else {}), "enum": list(allowed)}
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {items: {"type": "array", "items": element}},
        "required": [items],
    }
    definitions = (contract.json_schema or {}).get("$defs")
    if definitions is not None:  # the item schema may refer to them
        parameters["$defs"] = copy.deepcopy(definitions)
    return ToolSpec(
        name,
        description or f"Submit the items of {contract.display_name}: one per row asked for.",
        parameters,
    )


def item_fields(spec: ToolSpec, items: str = "items") -> tuple[str, ...] | None:
    """The item fields a submit tool declares (None when its items declare no properties)."""
    listed = spec.parameters.get("properties", {}).get(items, {})
    element = listed.get("items") if isinstance(listed, dict) else None
    fields = element.get("properties") if isinstance(element, dict) else None
    return tuple(fields) if isinstance(fields, dict) else None


def item_problems(
    contract: ArtifactContract,
    items: Sequence[Any],
    index: EvidenceIndex,
    *,
    field: str = "items",
) -> list[list[str]]:
    """The problems of each of `items` (in order) as elements of `contract`'s `field` list.

    The checks are the deliverable's own, restricted to that list: its enums, its item
    schema, and its evidence ids and quotes against `index`. Each problem is the message of
    the finding the validators would report, e.g. `items[2].sentiment is "angry"; allowed:
    positive, neutral, negative, mixed` or `items[0].evidence_text is not a verbatim fragment
    of fb_001`.
    """
    document = {field: list(items)}
    collector = Collector("items")
    check_json(
        collector,
        contract.name,
        document,
        JsonRules(enum_fields=_enums(contract, field)),
        compiled(_list_schema(contract, field)),
    )
    check_citations(collector, index, _citations_on(contract, field), document)
    problems: list[list[str]] = [[] for _ in items]
    at = re.compile(rf"{re.escape(field)}\[(\d+)\]")
    for finding in collector.findings:
        found = at.match(finding.path)
        owners = [int(found.group(1))] if found else range(len(items))
        for position in owners:
            problems[position].append(finding.message)
    return problems


def _enums(contract: ArtifactContract, field: str) -> dict[str, tuple[str, ...]]:
    """The contract's enum fields on the elements of its `field` list (`items.<key>`)."""
    rules = contract.rules
    if rules is None:
        return {}
    return {
        path: allowed
        for path, allowed in rules.enum_fields.items()
        if len(split(path)) == 2 and split(path)[0] == field
    }


def _list_schema(contract: ArtifactContract, field: str) -> dict[str, Any]:
    """A document holding only the `field` list, each element held to the item schema."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {field: {"type": "array", "items": item_schema(contract, field)}},
    }
    definitions = (contract.json_schema or {}).get("$defs")
    if definitions is not None:
        schema["$defs"] = definitions
    return schema


def _citations_on(contract: ArtifactContract, field: str) -> ArtifactContract:
    """The contract with only the evidence ids and quotes inside its `field` list."""

    def inside(path: str) -> bool:
        return split(path)[:1] == (field,)

    return contract.model_copy(
        update={
            "evidence_fields": tuple(p for p in contract.evidence_fields if inside(p)),
            "evidence_quotes": tuple(
                q for q in contract.evidence_quotes if inside(q.text) and inside(q.id)
            ),
        }
    )
