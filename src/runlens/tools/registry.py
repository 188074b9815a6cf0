"""Looking tools up and calling them safely on the model's behalf.

Everything a model can get wrong — an unknown tool, arguments that are not an object or fail the
tool's JSON Schema, a tool that raises — becomes a `ToolOutcome` with `is_error=True` that goes
back to the model. Only `InputError` (the run's input is unusable), `TaskError` (the task
cannot be done at all) and cancellation escape. Every call runs on a thread the run can
abandon (`runlens.tools.threads`), so a cancelled run never waits for a tool; the registry
keeps its tool threads for the next call, and `close()` (at the end of the run) gives them
to the process's pool, where they end unless the next run takes them soon.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from runlens.errors import InputError, TaskError, ToolError
from runlens.models.messages import ToolCall, ToolSpec
from runlens.schema import CompiledSchema, compiled
from runlens.tools.base import Tool, ToolContext
from runlens.tools.threads import ToolThreads


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    content: str
    is_error: bool
    error_kind: str | None = None  # unknown_tool | invalid_arguments | refused | tool_exception


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._checkers: dict[str, CompiledSchema] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
            self._checkers[tool.name] = compiled(tool.parameters)
        self.specs: tuple[ToolSpec, ...] = tuple(tool.spec for tool in self._tools.values())
        self._threads = ToolThreads()
        # A registry dropped without `close()` gives its idle threads back all the same.
        weakref.finalize(self, self._threads.close)

    def close(self) -> None:
        """Give the idle tool threads to the process's pool (the run is over; an idle
        thread there ends after a short linger). The registry still works after: each later
        call's thread goes back to the pool when the call is over."""
        self._threads.close()

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
        from jsonschema.exceptions import best_match  # loaded only for arguments found wrong

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
            # On a tool thread: a cancelled run never waits for the tool.
            result = await self._threads.call(call.name, tool.function, context, arguments)
        except (InputError, TaskError, KeyboardInterrupt):
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
