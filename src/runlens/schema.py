"""JSON Schema checks that are fast when the document is valid and exact when it is not.

Almost every document RunLens checks is valid: tool arguments, and deliverables of a hundred
thousand items. jsonschema takes tens of microseconds per small object to say so;
fastjsonschema's compiled check takes about one. So a schema is compiled twice:
fastjsonschema accepts, and anything it rejects (or a schema it cannot compile) goes to
jsonschema, which has the final word, finds every error and words it, so the draft 2020-12
semantics and the messages stay jsonschema's.

fastjsonschema implements drafts 4 to 7. A schema that uses a keyword those drafts do not have
(`prefixItems`, `unevaluatedProperties`, `dependentRequired`, ...) would be accepted by it
without that keyword being checked, so such a schema is checked by jsonschema alone.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator, ValidationError

#: Keywords of draft 2020-12 (and 2019-09) that fastjsonschema would silently ignore.
_NEWER_KEYWORDS = frozenset(
    {
        "prefixItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "dependentRequired",
        "dependentSchemas",
        "minContains",
        "maxContains",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$anchor",
        "$vocabulary",
    }
)


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """One schema, compiled for both checkers. Never changes the document it checks."""

    validator: Draft202012Validator
    fast: Callable[[Any], Any] | None

    def surely_valid(self, instance: Any) -> bool:
        """True when the fast check accepts `instance` (then jsonschema would too)."""
        if self.fast is None:
            return False
        try:
            self.fast(instance)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    def errors(self, instance: Any) -> Iterator[ValidationError]:
        """Every error jsonschema finds; none, without asking it, when the fast check accepts."""
        if self.surely_valid(instance):
            return iter(())
        found: Iterator[ValidationError] = self.validator.iter_errors(instance)
        return found


def compiled(schema: Mapping[str, Any]) -> CompiledSchema:
    """The checker of `schema`, compiled once per process (runs and rounds reuse schemas).

    Raises `jsonschema.SchemaError` when `schema` is not a valid draft 2020-12 schema.
    """
    return _compiled(json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=512)
def _compiled(schema_json: str) -> CompiledSchema:
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    fast = None
    if not _uses_newer_keywords(schema):
        try:
            # use_default=False: fastjsonschema would otherwise fill defaults into the document.
            fast = fastjsonschema.compile(schema, use_default=False)
        except (fastjsonschema.JsonSchemaDefinitionException, ValueError, TypeError):
            fast = None  # a construct fastjsonschema does not support: jsonschema alone then
    return CompiledSchema(Draft202012Validator(schema), fast)


def _uses_newer_keywords(node: Any) -> bool:
    if isinstance(node, dict):
        return any(key in _NEWER_KEYWORDS for key in node) or any(
            _uses_newer_keywords(value) for value in node.values()
        )
    if isinstance(node, list):
        return any(_uses_newer_keywords(value) for value in node)
    return False
