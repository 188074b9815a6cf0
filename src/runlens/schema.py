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

jsonschema itself (tens of milliseconds to import) is loaded only when it has something to
say: a document the fast check rejects, a schema the fast check cannot take, or a schema that
`_surely_a_schema` cannot vouch for, which jsonschema's metaschema check then judges (and
words the error of) as before.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import fastjsonschema

if TYPE_CHECKING:
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


class CompiledSchema:
    """One schema, compiled for both checkers. Never changes the document it checks.

    jsonschema's validator is made the first time it is asked for."""

    __slots__ = ("_validator", "fast", "schema")

    def __init__(self, schema: Any, fast: Callable[[Any], Any] | None) -> None:
        self.schema = schema
        self.fast = fast
        self._validator: Draft202012Validator | None = None

    @property
    def validator(self) -> Draft202012Validator:
        if self._validator is None:
            from jsonschema import Draft202012Validator

            self._validator = Draft202012Validator(self.schema)
        return self._validator

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
    if not _surely_a_schema(schema):
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(schema)
    fast = None
    if not _uses_newer_keywords(schema):
        try:
            # use_default=False: fastjsonschema would otherwise fill defaults into the document.
            fast = fastjsonschema.compile(schema, use_default=False)
        except (fastjsonschema.JsonSchemaDefinitionException, ValueError, TypeError):
            fast = None  # a construct fastjsonschema does not support: jsonschema alone then
    return CompiledSchema(schema, fast)


def _uses_newer_keywords(node: Any) -> bool:
    if isinstance(node, dict):
        return any(key in _NEWER_KEYWORDS for key in node) or any(
            _uses_newer_keywords(value) for value in node.values()
        )
    if isinstance(node, list):
        return any(_uses_newer_keywords(value) for value in node)
    return False


#: The draft 2020-12 metaschema's own URI, the one `$schema` value vouched for.
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(name, str) and name in _SIMPLE_TYPES for name in value)
        and len(set(value)) == len(value)
    )


def _is_regex(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except Exception:  # re.error, or what a pathological pattern raises: jsonschema judges it
        return False
    return True


def _is_schema_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(map(_surely_a_schema, value))


def _is_schema_map(value: Any) -> bool:
    return isinstance(value, dict) and all(map(_surely_a_schema, value.values()))


#: Keywords whose values `_surely_a_schema` checks at least as strictly as the draft 2020-12
#: metaschema does (with its format checks: a `pattern` must compile); any other keyword
#: leaves the verdict to jsonschema.
_KEYWORDS: dict[str, Callable[[Any], bool]] = {
    "$schema": lambda value: value == _DRAFT_2020_12,
    "$comment": lambda value: isinstance(value, str),
    "title": lambda value: isinstance(value, str),
    "description": lambda value: isinstance(value, str),
    "default": lambda value: True,
    "examples": lambda value: isinstance(value, list),
    "deprecated": lambda value: isinstance(value, bool),
    "readOnly": lambda value: isinstance(value, bool),
    "writeOnly": lambda value: isinstance(value, bool),
    "format": lambda value: isinstance(value, str),
    "type": _is_type,
    "enum": lambda value: isinstance(value, list),
    "const": lambda value: True,
    "multipleOf": lambda value: _is_number(value) and value > 0,
    "maximum": _is_number,
    "exclusiveMaximum": _is_number,
    "minimum": _is_number,
    "exclusiveMinimum": _is_number,
    "maxLength": _is_count,
    "minLength": _is_count,
    "pattern": _is_regex,
    "maxItems": _is_count,
    "minItems": _is_count,
    "uniqueItems": lambda value: isinstance(value, bool),
    "maxProperties": _is_count,
    "minProperties": _is_count,
    "required": lambda value: (
        isinstance(value, list)
        and all(isinstance(name, str) for name in value)
        and len(set(value)) == len(value)
    ),
    "items": lambda value: _surely_a_schema(value),
    "contains": lambda value: _surely_a_schema(value),
    "additionalProperties": lambda value: _surely_a_schema(value),
    "propertyNames": lambda value: _surely_a_schema(value),
    "not": lambda value: _surely_a_schema(value),
    "if": lambda value: _surely_a_schema(value),
    "then": lambda value: _surely_a_schema(value),
    "else": lambda value: _surely_a_schema(value),
    "properties": _is_schema_map,
    "allOf": _is_schema_list,
    "anyOf": _is_schema_list,
    "oneOf": _is_schema_list,
}


def _surely_a_schema(node: Any) -> bool:
    """True when `node` is surely a valid draft 2020-12 schema (jsonschema's `check_schema`
    would pass it). False means only "not sure": jsonschema is then asked."""
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        check = _KEYWORDS.get(key)
        if check is None or not check(value):
            return False
    return True
