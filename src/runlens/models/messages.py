"""The neutral message format every provider translates to and from.

In-memory state, so frozen dataclasses with slots: they are built on every turn of the loop
and must stay cheap. Each provider translates them to its own wire format (`openai`,
`anthropic`); scripted model files are read by `runlens.models.scripted`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the model sent it.

    `arguments` is the parsed JSON object; when the model sent arguments that are not a JSON
    object, `arguments` is None and `arguments_error` says why (the loop returns that to the
    model as a tool error). `raw_arguments` keeps the text as received.
    """

    tool_call_id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    arguments_error: str | None = None


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: str
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: its name, purpose and JSON Schema for arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One model answer: text, tool calls, or both. No tool calls means a final answer.

    `notes` says what the provider had to change in what the server sent to make it usable
    (e.g. invalid Unicode replaced with U+FFFD); empty when it came through as sent.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model_name: str = ""
    finish_reason: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def is_final(self) -> bool:
        return not self.tool_calls

    def to_message(self) -> AssistantMessage:
        return AssistantMessage(content=self.content, tool_calls=self.tool_calls)
