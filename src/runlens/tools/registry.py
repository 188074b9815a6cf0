"""Looking tools up and calling them safely on the model's behalf.

Everything a model can get wrong — an unknown tool, arguments that are not an object or fail the
tool's JSON Schema, a tool that raises — becomes a `ToolOutcome` with `is_error=True` that goes
back to the model. Only `InputError` (the run's input is unusable) and cancellation escape.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from runlens.errors import InputError, ToolError
from runlens.models.messages import ToolCall, ToolSpec
from runlens.tools.base import Tool, ToolContext


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    content: str
    is_error: bool
    error_kind: str | None = None  # unknown_tool | invalid_arguments | refused | tool_exception


@dataclass(frozen=True, slots=True)
class _ArgumentChecker:
    """A tool's compiled argument schema, with a fast path for the common flat schemas."""

    validator: Draft202012Validator
    #: For a flat object schema (see `_flat_schema`): property name -> its checks; else None.
    flat: dict[str, _PropertyCheck] | None
    required: tuple[str, ...]
    closed: bool  # additionalProperties: false

    def surely_valid(self, arguments: dict[str, Any]) -> bool:
        """True only when the arguments certainly satisfy the schema.

        Almost every call a model makes is valid, and jsonschema takes 20-40 µs to say so for
        even a two-property schema; these checks take about 1 µs. False means "not sure": the
        caller asks jsonschema, which also words every error, so messages do not change.
        """
        flat = self.flat
        if flat is None:
            return False
        if any(name not in arguments for name in self.required):
            return False
        for name, value in arguments.items():
            check = flat.get(name)
            if check is None:
                if self.closed:
                    return False
            elif not check.accepts(value):
                return False
        return True


@dataclass(frozen=True, slots=True)
class _PropertyCheck:
    kind: str
    min_length: int = 0
    max_length: int | None = None
    enum: frozenset[str] | None = None

    def accepts(self, value: Any) -> bool:
        if self.kind != "string":
            return _PRIMITIVE_TYPES[self.kind](value)
        if not isinstance(value, str) or len(value) < self.min_length:
            return False
        if self.max_length is not None and len(value) > self.max_length:
            return False
        return self.enum is None or value in self.enum


# Exact Python types only: a bool is not an integer, and a float that happens to be whole (which
# JSON Schema calls an integer) is left to jsonschema.
_PRIMITIVE_TYPES: dict[str, Callable[[Any], bool]] = {
    "integer": lambda value: type(value) is int,
    "number": lambda value: type(value) in (int, float),
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
}
_ANNOTATIONS = {"description", "title", "default", "examples", "$comment"}
_OBJECT_KEYWORDS = {"type", "properties", "required", "additionalProperties", *_ANNOTATIONS}
_STRING_KEYWORDS = {"type", "minLength", "maxLength", "enum", *_ANNOTATIONS}


def _flat_schema(schema: dict[str, Any]) -> dict[str, _PropertyCheck] | None:
    """Checks for `{"type": "object", "properties": {name: {"type": <primitive>}, ...}}`.

    Only keywords whose meaning is plain are allowed (`required`, `additionalProperties` as a
    boolean, `minLength` / `maxLength` / string `enum` on strings, annotations); any other
    schema returns None and always goes to jsonschema.
    """
    properties = schema.get("properties", {})
    if (
        schema.get("type") != "object"
        or not set(schema) <= _OBJECT_KEYWORDS
        or not isinstance(properties, dict)
        or not isinstance(schema.get("additionalProperties", True), bool)
    ):
        return None
    checks = {name: _property_check(prop) for name, prop in properties.items()}
    flat = {name: check for name, check in checks.items() if check is not None}
    return flat if len(flat) == len(checks) else None


def _property_check(schema: Any) -> _PropertyCheck | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if not isinstance(kind, str):  # absent, or a list of types
        return None
    if kind in _PRIMITIVE_TYPES and set(schema) <= {"type", *_ANNOTATIONS}:
        return _PropertyCheck(kind)
    if kind != "string" or not set(schema) <= _STRING_KEYWORDS:
        return None
    min_length, max_length = schema.get("minLength", 0), schema.get("maxLength")
    enum = schema.get("enum")
    if type(min_length) is not int or (max_length is not None and type(max_length) is not int):
        return None
    if enum is not None and not (isinstance(enum, list) and all(isinstance(v, str) for v in enum)):
        return None
    return _PropertyCheck(
        "string", min_length, max_length, None if enum is None else frozenset(enum)
    )


@functools.lru_cache(maxsize=512)
def _compiled(schema_json: str) -> _ArgumentChecker:
    """Check a tool's schema once per process and keep the checker: runs reuse tools."""
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    required = schema.get("required", [])
    return _ArgumentChecker(
        Draft202012Validator(schema),
        _flat_schema(schema) if isinstance(required, list) else None,
        tuple(required),
        schema.get("additionalProperties", True) is False,
    )


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._checkers: dict[str, _ArgumentChecker] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
            self._checkers[tool.name] = _compiled(json.dumps(tool.parameters, sort_keys=True))
        self.specs: tuple[ToolSpec, ...] = tuple(tool.spec for tool in self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def check_call(self, call: ToolCall) -> ToolOutcome | None:
        """Return an error outcome when the call cannot run as sent, else None."""
        if call.name not in self._tools:
            known = ", ".join(self._tools)
            return ToolOutcome(
                f"unknown tool {call.name!r}; available tools: {known}", True, "unknown_tool"
            )
        if call.arguments is None:
            reason = call.arguments_error or "arguments are not a JSON object"
            return ToolOutcome(
                f"invalid arguments for {call.name}: {reason}", True, "invalid_arguments"
            )
        checker = self._checkers[call.name]
        if checker.surely_valid(call.arguments):
            return None
        error = best_match(checker.validator.iter_errors(call.arguments))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "arguments"
            return ToolOutcome(
                f"invalid arguments for {call.name} at {where}: {error.message}",
                True,
                "invalid_arguments",
            )
        return None

    async def invoke(self, context: ToolContext, call: ToolCall) -> ToolOutcome:
        """Check the call, then run it."""
        problem = self.check_call(call)
        return problem if problem is not None else await self.run_checked(context, call)

    async def run_checked(self, context: ToolContext, call: ToolCall) -> ToolOutcome:
        """Run a call that `check_call` accepted."""
        tool = self._tools[call.name]
        arguments = call.arguments or {}
        try:
            result = tool.function(context, **arguments)
            if inspect.isawaitable(result):
                result = await result
        except (InputError, KeyboardInterrupt):
            raise
        except ToolError as error:
            return ToolOutcome(str(error), True, "refused")
        except Exception as error:  # a tool bug must not crash the run; the model is told
            return ToolOutcome(
                f"{call.name} failed: {type(error).__name__}: {error}", True, "tool_exception"
            )
        return ToolOutcome(_as_text(result), False)


#: Reused for every tool result: `json.dumps` with options builds a new encoder per call.
_RESULT_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return _RESULT_ENCODER.encode(result)
