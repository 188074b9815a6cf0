"""Tool calls as a model sends them -> `ToolCall`, for every provider and the scripted model.

`tool_call` never raises, whatever the id, name and arguments are: arguments that cannot be
used become an `arguments_error` the loop shows to the model. `parse_arguments` is the one
place that decides what usable arguments are: a JSON object (or a dict already decoded), no
lone UTF-16 surrogate, no `NaN`/`Infinity`, nesting at most `MAX_ARGUMENT_DEPTH` levels.

`clean_response` is the last step of a provider's answer: no lone surrogate is left in any of
its text, and the response says so in `notes` when one was replaced.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from runlens._text import SURROGATE, clean_text, escape_surrogates
from runlens.models import _body
from runlens.models.messages import ModelResponse, ToolCall

#: Tool-call arguments nested deeper than this are refused (a tool error for the model).
MAX_ARGUMENT_DEPTH = 64
#: Tool names longer than this are cut (no real tool has one; the call is an unknown tool).
_MAX_TOOL_NAME_CHARS = 256
#: Paths in an argument problem are cut to this many characters.
_MAX_PATH_CHARS = 80


def tool_call(
    call_id: Any, name: Any, raw_arguments: Any, conversation_length: int, index: int
) -> ToolCall:
    """A ToolCall from the wire's id, name and arguments, whatever their types.

    Never raises: a missing id gets `generated_call_id`, bad arguments an `arguments_error`.
    """
    arguments, raw_text, error = parse_arguments(raw_arguments)
    # Not str() of just anything: a name sent as a deeply nested array would overflow repr.
    name_text = name if isinstance(name, str) else str(name) if isinstance(name, int) else ""
    if len(name_text) > _MAX_TOOL_NAME_CHARS:
        name_text = name_text[: _MAX_TOOL_NAME_CHARS - 3] + "..."
    return ToolCall(
        tool_call_id=(
            call_id
            if isinstance(call_id, str) and call_id
            else generated_call_id(conversation_length, index)
        ),
        name=name_text,
        arguments=arguments,
        raw_arguments=raw_text,
        arguments_error=error,
    )


def generated_call_id(conversation_length: int, index: int) -> str:
    """A deterministic tool call id for servers that send none (unique in one conversation)."""
    return f"call_rl_{conversation_length}_{index}"


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str, str | None]:
    """Tool-call arguments as sent by a model -> (object or None, raw text, error or None).

    Never raises: arguments that are not a JSON object come back as None with a reason the
    loop can show to the model. None or an empty string means "no arguments" (`{}`); an
    object double-encoded as a JSON string is decoded once more, as some local servers send
    that. Text that is not valid Unicode (a lone surrogate), `NaN`/`Infinity` and nesting
    deeper than `MAX_ARGUMENT_DEPTH` are errors too. The raw text shows a lone surrogate as
    its `\\uXXXX` escape, so it stays printable and means what was sent.
    """
    if isinstance(raw, dict):
        problem = argument_problem(raw)
        text = _dumps_for_display(raw, problem)
        return (None, text, problem) if problem else (raw, text, None)
    if raw is None:
        return {}, "", None
    if not isinstance(raw, str):
        problem = argument_problem(raw)
        text = _dumps_for_display(raw, problem)
        return None, text, problem or f"arguments must be a JSON object, got {_body.json_type(raw)}"
    text = escape_surrogates(raw)
    if not raw.strip():
        return {}, text, None
    try:
        value = _body.loads(raw, strict_numbers=True)
    except RecursionError:
        return None, text, f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    except ValueError as exc:
        return None, text, f"arguments are not valid JSON: {exc}"
    if isinstance(value, str):
        value = _decode_nested_object(value)
    if not isinstance(value, dict):
        return None, text, f"arguments must be a JSON object, got {_body.json_type(value)}"
    problem = argument_problem(value)
    return (None, text, problem) if problem else (value, text, None)


def _decode_nested_object(text: str) -> Any:
    try:
        value = _body.loads(text, strict_numbers=True)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, dict) else text


def argument_problem(value: Any) -> str | None:
    """Why decoded arguments cannot be used as they are, or None.

    Walks the value without recursion (the depth is what is being checked).
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
        if isinstance(item, str):
            problem = _surrogate_problem(item, path)
            if problem:
                return problem
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"arguments hold {item!r} at {path or 'the top level'}, which JSON does not allow"
            )
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                name = str(key)
                problem = _surrogate_problem(name, f"a key of {path or 'the arguments'}")
                if problem:
                    return problem
                stack.append((child, _child_path(path, f".{name}" if path else name), depth + 1))
        elif isinstance(item, list):
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], _child_path(path, f"[{index}]"), depth + 1))
    return None


def _child_path(path: str, step: str) -> str:
    # Bounded: long keys nested deep would otherwise build paths of megabytes per item.
    if len(path) >= _MAX_PATH_CHARS:
        return path
    joined = path + step
    return joined if len(joined) <= _MAX_PATH_CHARS else joined[: _MAX_PATH_CHARS - 3] + "..."


def _surrogate_problem(text: str, where: str) -> str | None:
    found = SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"arguments are not valid Unicode text: lone surrogate \\u{ord(found.group()):04x} "
        f"in {where or 'the arguments'}; send the text as valid UTF-8, e.g. the character "
        "itself or a complete surrogate pair"
    )


def _dumps_for_display(value: Any, problem: str | None) -> str:
    try:
        return escape_surrogates(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return f"({problem or 'arguments that cannot be shown'})"


def clean_response(response: ModelResponse) -> ModelResponse:
    """`response` with no lone surrogate left in any text, saying so in `notes`.

    Providers parse arguments with `parse_arguments`, which already refuses surrogates; any
    left in a call's arguments (a parser that did not) make that call an arguments error.
    """
    replaced = 0

    def clean(text: str) -> str:
        nonlocal replaced
        fixed, count = clean_text(text)
        replaced += count
        return fixed

    calls = tuple(_clean_call(call, clean) for call in response.tool_calls)
    content = clean(response.content) if response.content is not None else None
    finish = clean(response.finish_reason) if response.finish_reason is not None else None
    model_name = clean(response.model_name)
    if not replaced and calls == response.tool_calls:
        return response
    notes = response.notes
    if replaced:
        plural = "s" if replaced != 1 else ""
        notes = (
            *notes,
            f"{replaced} lone UTF-16 surrogate{plural} in the model's text (not valid "
            "Unicode) replaced with U+FFFD",
        )
    return dataclasses.replace(
        response,
        content=content,
        tool_calls=calls,
        finish_reason=finish,
        model_name=model_name,
        notes=notes,
    )


def _clean_call(call: ToolCall, clean: Callable[[str], str]) -> ToolCall:
    problem = argument_problem(call.arguments) if call.arguments is not None else None
    fixed = ToolCall(
        tool_call_id=clean(call.tool_call_id),
        name=clean(call.name),
        arguments=None if problem else call.arguments,
        raw_arguments=escape_surrogates(call.raw_arguments),
        arguments_error=clean(problem or call.arguments_error or "") or None,
    )
    return call if fixed == call else fixed
