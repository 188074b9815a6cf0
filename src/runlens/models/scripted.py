"""Models whose every response is decided in advance: a script of turns, or a function.

`ScriptedModel` replays a file of assistant turns (SPEC section 9) and backs
`--model scripted:PATH` (`create`); `FunctionModel` lets a Python function decide every
response. A scripted turn's tool-call arguments are read as a provider's are
(`_tool_calls.tool_call`): arguments a model could not have sent usefully become an
`arguments_error`, as they would. Plugins' tests import them from `runlens.testing`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.errors import UserError
from runlens.models._tool_calls import tool_call
from runlens.models.base import Model
from runlens.models.messages import Message, ModelResponse, ToolCall, ToolSpec, Usage

if TYPE_CHECKING:
    from runlens.models.registry import ModelContext


def _tool_call(entry: dict[str, Any], turn: int, position: int) -> ToolCall:
    call_id = str(entry.get("id") or f"call_{turn}_{position}")
    return tool_call(call_id, entry.get("name", ""), entry.get("arguments", {}), turn, position)


def response_from_turn(turn: dict[str, Any], index: int) -> ModelResponse:
    """One scripted turn (`{"content": ..., "tool_calls": [...]}`) as a model response."""
    calls = tuple(
        _tool_call(entry, index, position)
        for position, entry in enumerate(turn.get("tool_calls") or [])
    )
    return ModelResponse(content=turn.get("content"), tool_calls=calls, model_name="scripted")


class ScriptedModel(Model):
    """Replays turns in order. After the last turn it repeats its last final answer."""

    def __init__(self, turns: Sequence[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.calls = 0
        self.requests: list[tuple[list[Message], list[ToolSpec]]] = []

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        self.requests.append((list(messages), list(tools)))
        index = self.calls
        self.calls += 1
        if index < len(self.turns):
            return response_from_turn(self.turns[index], index)
        finals = [turn for turn in self.turns if not turn.get("tool_calls")]
        last = finals[-1] if finals else {"content": "Done."}
        return response_from_turn(last, index)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"scripted model file not found: {path}") from None
        try:
            document = _parse(path, text)
        except ValueError as error:  # what `json` and `yaml` raise on a bad document
            raise UserError(f"scripted model file {path} cannot be parsed: {error}") from None
        turns = document.get("turns") if isinstance(document, dict) else None
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise UserError(f'scripted model file {path}: expected {{"turns": [...]}}')
        return cls(turns)


def _parse(path: Path, text: str) -> Any:
    """A model file's document: YAML for `.yaml`/`.yml` (yaml is loaded only then), else JSON.
    `ValueError` when it cannot be parsed."""
    if path.suffix not in (".yaml", ".yml"):
        return json.loads(text)
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None


def create(name: str, context: ModelContext) -> ScriptedModel:
    """The `scripted` provider: `--model scripted:PATH` replays the turns of PATH."""
    if not name:
        raise UserError("scripted model needs a file: --model scripted:PATH")
    return ScriptedModel.from_file(Path(name))


Responder = Callable[
    [Sequence[Message], Sequence[ToolSpec]],
    "ModelResponse | dict[str, Any] | Awaitable[ModelResponse | dict[str, Any]]",
]


class FunctionModel(Model):
    """A model whose every response a Python function decides (sync or async).

    The function may return a `ModelResponse` or a scripted-turn dict.
    """

    def __init__(self, function: Responder, *, usage: Usage | None = None) -> None:
        self.function = function
        self.usage = usage or Usage()
        self.spec = "function"
        self.calls = 0

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        result = self.function(messages, tools)
        if inspect.isawaitable(result):
            result = await result
        self.calls += 1
        if isinstance(result, dict):
            response = response_from_turn(result, self.calls)
            return ModelResponse(response.content, response.tool_calls, self.usage, "function")
        return result


__all__ = ["FunctionModel", "Responder", "ScriptedModel", "create", "response_from_turn"]
