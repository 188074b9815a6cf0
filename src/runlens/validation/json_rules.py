"""JsonOutputValidationHook: parses as JSON, then the contract's lightweight rules and schema.

Order of checks inside one artifact: parse (nothing else runs on a file that does not parse),
`required_fields`, `enum_fields`, then the full `json_schema` (accepted by fastjsonschema,
explained by jsonschema: `runlens.schema`). A schema error at a location the
lightweight rules already reported is dropped, so one bad value gives one finding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from runlens.contracts import ArtifactContract, JsonRules, walk
from runlens.contracts.paths import found_values, split
from runlens.errors import ContractError
from runlens.schema import CompiledSchema, compiled
from runlens.validation.base import (
    Collector,
    ContractValidator,
    Problem,
    ValidationContext,
    ValidatorResult,
    join_path,
    shorten,
    show_value,
)

if TYPE_CHECKING:
    from jsonschema import ValidationError

_MESSAGE_LIMIT = 200


class JsonOutputValidator(ContractValidator):
    """Checks JSON artifacts: invalid_json, missing_field, invalid_enum, schema_violation."""

    name = "JsonOutputValidationHook"

    def __init__(self, contracts: Iterable[ArtifactContract]) -> None:
        super().__init__(contracts)
        # Compile each schema once; a broken schema is the plugin author's mistake, found early.
        self._schemas = {c.name: _compile(c) for c in self.contracts if c.json_schema is not None}

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        # Evidence paths only mean something in a JSON document, so an artifact that declares
        # them is parsed here too: an unreadable one must be reported by someone.
        return (
            contract.kind == "json"
            or contract.rules is not None
            or contract.json_schema is not None
            or bool(contract.evidence_fields or contract.evidence_quotes)
        )

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        for contract in self.contracts:
            if context.artifact_file(contract.name) is None:
                continue  # a missing artifact is RequiredOutputValidationHook's finding
            try:
                document = context.parse_json(contract.name)
            except (ValueError, OSError) as error:
                _report_unparsable(collector, contract.name, error)
                continue
            self._check(collector, contract, document)
        return collector.result()

    def _check(self, collector: Collector, contract: ArtifactContract, document: Any) -> None:
        check_json(
            collector, contract.name, document, contract.rules, self._schemas.get(contract.name)
        )


def check_json(
    collector: Collector,
    artifact: str,
    document: Any,
    rules: JsonRules | None,
    schema: CompiledSchema | None,
) -> None:
    """The checks of one parsed document: `rules` (required fields, enums), then `schema`.

    The validator's checks, also run on the items a batch submits (`runlens.validation.items`)
    so an item is accepted exactly when its deliverable would be.
    """
    if rules is not None:
        _check_required(collector, artifact, document, rules.required_fields)
        for enum_path, allowed in rules.enum_fields.items():
            _check_enum(collector, artifact, document, enum_path, allowed)
    if schema is not None:
        reported = {f.path for f in collector.findings if f.artifact == artifact}
        _check_schema(collector, artifact, document, schema, reported)


def _compile(contract: ArtifactContract) -> CompiledSchema:
    try:
        return compiled(contract.json_schema or {})
    except Exception as error:
        # jsonschema is loaded by then: only its metaschema check raises SchemaError.
        from jsonschema import SchemaError

        if not isinstance(error, SchemaError):
            raise
        raise ContractError(
            f"the json_schema of {contract.name} is not a valid JSON Schema: {error.message}"
        ) from error


def _report_unparsable(collector: Collector, artifact: str, error: Exception) -> None:
    if isinstance(error, json.JSONDecodeError):
        where = f"line {error.lineno} column {error.colno}"
        reason = error.msg
        details: dict[str, Any] = {"line": error.lineno, "column": error.colno}
    elif isinstance(error, UnicodeDecodeError):
        where = f"byte {error.start}"
        reason = "not UTF-8 text"
        details = {"byte_offset": error.start}
    else:
        where, reason, details = "", str(error), {}
    at = f" {where}" if where else ""
    collector.add(
        artifact,
        "invalid_json",
        f"{artifact} is not valid JSON: {reason}" + (f" at{at}" if at else ""),
        Problem("invalid json", f"{artifact}{at} ({reason})"),
        details=details,
    )


def missing_locations(node: Any, keys: tuple[str, ...], location: str = "") -> Iterator[str]:
    """Concrete locations where a dotted path's field is absent.

    Lists on the way are walked element by element (an empty list asks nothing). A value of
    the wrong shape on the way (a string where an object was needed) cannot hold the field,
    so the field counts as missing there.
    """
    if not keys:
        return  # nothing is asked of `node`, nor of the elements of a list it is
    if isinstance(node, list):
        for index, element in enumerate(node):
            yield from missing_locations(element, keys, f"{location}[{index}]")
        return
    if not isinstance(node, dict):
        yield join_path(location, ".".join(keys))
        return
    head, rest = keys[0], keys[1:]
    if head not in node:
        yield join_path(location, ".".join(keys))
        return
    yield from missing_locations(node[head], rest, join_path(location, head))


def _check_required(
    collector: Collector, artifact: str, document: Any, fields: Iterable[str]
) -> None:
    # Required fields are fields of the document object itself: a top-level list is not an
    # object with those fields, even if its elements happen to have them.
    root_is_object = isinstance(document, dict)
    for field_path in fields:
        locations = (
            missing_locations(document, split(field_path)) if root_is_object else [field_path]
        )
        for location in locations:
            why = "" if root_is_object else " (the document is not a JSON object)"
            collector.add(
                artifact,
                "missing_field",
                f"{artifact} has no field {location}{why}",
                Problem("missing field", location, f"in {artifact}"),
                path=location,
                details={"field": field_path},
            )


def _check_enum(
    collector: Collector, artifact: str, document: Any, enum_path: str, allowed: tuple[str, ...]
) -> None:
    if all(value in allowed for value in found_values(document, enum_path)):
        return  # the usual case, told without a location per value
    field_name = split(enum_path)[-1] if split(enum_path) else enum_path
    allowed_text = ", ".join(allowed)
    for match in walk(document, enum_path):
        if not match.found or match.value in allowed:
            continue
        shown = show_value(match.value)
        collector.add(
            artifact,
            "invalid_enum",
            f"{match.location} is {shown}; allowed: {allowed_text}",
            Problem(
                f"invalid {field_name}",
                f"{shown} at {artifact} {match.location}",
                f"(allowed: {allowed_text})",
            ),
            path=match.location,
            details={"value": match.value, "allowed": list(allowed)},
        )


def format_error_path(parts: Iterable[Any]) -> str:
    """`deque(['items', 2, 'acceptance_criteria'])` -> `items[2].acceptance_criteria`."""
    location = ""
    for part in parts:
        location = f"{location}[{part}]" if isinstance(part, int) else join_path(location, part)
    return location


def _error_location(error: ValidationError) -> str:
    location = format_error_path(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        # jsonschema reports a missing property at its parent object; point at the property
        # itself, which is also where `required_fields` reports it.
        for name in error.validator_value:
            if name not in error.instance and error.message.startswith(f"{name!r} "):
                return join_path(location, name)
    return location


def _check_schema(
    collector: Collector,
    artifact: str,
    document: Any,
    schema: CompiledSchema,
    already_reported: set[str],
) -> None:
    for error in schema.errors(document):
        location = _error_location(error)
        if location in already_reported:
            continue
        where = location or "(document)"
        collector.add(
            artifact,
            "schema_violation",
            f"{where}: {shorten(error.message, _MESSAGE_LIMIT)}",
            Problem("schema violation", f"{artifact} {where}: {shorten(error.message, 80)}"),
            path=location,
            details={"keyword": str(error.validator), "schema_path": list(error.schema_path)},
        )
