"""The hooks settings file (`runlens run --hooks FILE`): reading it, and its schema.

    {"hooks": {
        "<event>": [{"matcher": "<regex>", "hooks": [
            {"type": "command", "command": "<shell command>", "timeout": <seconds>}]}]
    }}

`<event>` is one of `HookEvent` (RunStart, PreToolUse, PostToolUse, Stop, RunEnd). `matcher`
(optional; "", "*" or absent = every tool) is a regular expression the whole tool name must
match; it applies to PreToolUse and PostToolUse. `type` may be left out (it can only be
"command"). `timeout` is in seconds, more than 0 and at most `MAX_TIMEOUT` (an hour: the
default wall time of a whole run); `DEFAULT_TIMEOUT` when absent. Keys beside `hooks` at the
top level are ignored (other runtimes keep more settings in the same file); anywhere else an
unknown key is an error, so a typo such as `"timout"` cannot silently drop a limit.

A file that cannot be used raises `UserError` (CLI exit code 2) naming the file and, for each
problem, its JSON path: `hooks.json: hooks.Stop[0].hooks[0].timeout: must be a number of
seconds more than 0 and at most 3600, not "abc"`. A relative program in the first word of a
command (`./check.sh`, `hooks/check.sh`) must exist in the settings file's folder and be
executable; it is checked here so a typo fails at once rather than blocking every call.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from runlens.errors import UserError

#: Seconds a hook command may run when its entry gives no `timeout`.
DEFAULT_TIMEOUT = 60.0
#: The largest `timeout` a settings file may give, in seconds.
MAX_TIMEOUT = 3600.0
#: A settings file larger than this is refused before it is parsed.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Problems listed in one error message (the rest are counted).
_MAX_PROBLEMS = 20
_TIMEOUT_RULE = f"must be a number of seconds more than 0 and at most {MAX_TIMEOUT:g}"
_SHELL_SPECIAL = set("$`~*?[=")


class _Strict(BaseModel):
    # defer_build: the validators are made when a settings file is first read, not at the
    # start of every run (most have none).
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class CommandEntry(_Strict):
    """One command of a matcher group."""

    type: Literal["command"] = "command"
    command: str
    timeout: float = DEFAULT_TIMEOUT

    @field_validator("timeout", mode="plain")
    @classmethod
    def _seconds(cls, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{_TIMEOUT_RULE}, not {_describe(value)}")
        if not 0 < value <= MAX_TIMEOUT:  # NaN and infinities fail this too
            raise ValueError(f"{_TIMEOUT_RULE}, not {_describe(value)}")
        return float(value)

    @field_validator("command")
    @classmethod
    def _runnable(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        base_dir = (info.context or {}).get("base_dir")
        problem = _program_problem(value, base_dir) if isinstance(base_dir, Path) else None
        if problem:
            raise ValueError(problem)
        return value


class MatcherGroup(_Strict):
    """Commands that run for the tools `matcher` names."""

    matcher: str | None = None
    hooks: list[CommandEntry]

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value in (None, "", "*"):
            return value
        assert value is not None
        try:
            re.compile(value)
        except (re.error, OverflowError, RecursionError) as error:
            raise ValueError(f"is not a valid regular expression: {error}") from None
        return value


class HookTable(_Strict):
    """The `hooks` object: one list of matcher groups per event name (`HookEvent` values)."""

    RunStart: list[MatcherGroup] = Field(default_factory=list)
    PreToolUse: list[MatcherGroup] = Field(default_factory=list)
    PostToolUse: list[MatcherGroup] = Field(default_factory=list)
    Stop: list[MatcherGroup] = Field(default_factory=list)
    RunEnd: list[MatcherGroup] = Field(default_factory=list)


class HooksSettings(BaseModel):
    """A whole settings file. Keys other than `hooks` are other tools' business."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, defer_build=True)

    hooks: HookTable


def read_settings(path: Path) -> HooksSettings:
    """Read and check a settings file; raise `UserError` naming the file and every problem."""
    document = _read_json(path)
    base_dir = path.resolve().parent
    try:
        return HooksSettings.model_validate(document, context={"base_dir": base_dir})
    except ValidationError as error:
        raise UserError(_message(path, error)) from None


def _read_json(path: Path) -> Any:
    def fail(problem: str) -> UserError:
        return UserError(f"{path}: {problem}")

    try:
        if path.is_dir():
            raise fail("is a directory, not a hooks settings file")
        if not path.exists():
            raise fail("hooks settings file not found")
        if not path.is_file():
            raise fail("is not a regular file")
        with path.open("rb") as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    except PermissionError:
        raise fail("cannot be read (permission denied)") from None
    except OSError as error:
        raise fail(f"cannot be read: {error.strerror or error}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise fail(f"is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not a settings file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise fail(
            f"is not UTF-8 text: byte 0x{raw[error.start]:02x} at line {line} column {column}"
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_object, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise fail(
            f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    except _JsonProblem as error:
        raise fail(f"is not valid JSON: {error}") from None
    except RecursionError:
        raise fail("is not valid JSON: nested too deeply") from None


class _JsonProblem(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _JsonProblem(
                f"key {json.dumps(key, ensure_ascii=False)} appears twice in one object "
                "(only one would count; merge them)"
            )
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise _JsonProblem(f"{name} is not a JSON number")


def _program_problem(command: str, base_dir: Path) -> str | None:
    """Why the command's first word, a relative or absolute program path, cannot run."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None  # beyond what shlex parses (the shell may still run it): not ours to judge
    program = words[0] if words else ""
    if "/" not in program or _SHELL_SPECIAL & set(program):
        return None  # a name looked up on PATH, or something only the shell can expand
    resolved = base_dir / program
    shown = f"{program} (in {base_dir})" if not os.path.isabs(program) else program
    if not resolved.exists():
        return f"program {shown} does not exist"
    if resolved.is_dir():
        return f"program {shown} is a directory"
    if not os.access(resolved, os.X_OK):
        return f"program {shown} is not executable (chmod +x it, or run it as `sh {program}`)"
    return None


def _message(path: Path, error: ValidationError) -> str:
    problems = [f"{_json_path(e['loc'])}: {_explain(e)}" for e in error.errors()]
    shown = problems[:_MAX_PROBLEMS]
    if len(problems) > len(shown):
        shown.append(f"and {len(problems) - len(shown)} more")
    if len(problems) == 1:
        return f"{path}: {problems[0]}"
    return f"{path}: {len(problems)} problems: " + "; ".join(shown)


def _json_path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text or "top level"


def _explain(error: Any) -> str:
    kind: str = error["type"]
    loc: tuple[int | str, ...] = error["loc"]
    value = error.get("input")
    if kind == "value_error":
        return str(error["ctx"]["error"])
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        if len(loc) == 2:
            known = ", ".join(HookTable.model_fields)
            return f"unknown event (known events: {known})"
        model = CommandEntry if len(loc) > 4 else MatcherGroup
        return f"unknown key (allowed: {', '.join(model.model_fields)})"
    if kind in ("model_type", "dict_type"):
        what = "an object with a 'hooks' object" if not loc else "an object"
        return f"must be {what}, not {_describe(value)}"
    if kind == "list_type":
        return f"must be a list, not {_describe(value)}"
    if kind == "string_type":
        return f"must be a string, not {_describe(value)}"
    if kind == "literal_error":
        return f'must be "command", not {_describe(value)}'
    return str(error["msg"])


def _describe(value: Any) -> str:
    """`value` as a JSON reader would name it: `"abc"`, `true`, `-1`, an object, a list."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool | int | float | str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 40 else text[:37] + "..."
    return type(value).__name__
