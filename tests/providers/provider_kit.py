"""Shared pieces of the provider tests: the providers under test and a sample conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fault_server import AnthropicWire, FaultServer, OpenAIWire

from runlens.models.anthropic import AnthropicModel
from runlens.models.base import Model
from runlens.models.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from runlens.models.openai import OpenAIModel

TEST_KEY = "sk-test-FAULTSERVER-0123456789abcdef"


@dataclass(frozen=True)
class ProviderKit:
    """One provider under test: its wire format and how to build a model for a server."""

    name: str
    wire: Any  # OpenAIWire or AnthropicWire (classes of static builders)
    model_class: type[OpenAIModel] | type[AnthropicModel]

    def model(
        self, server: FaultServer, *, api_key: str | None = TEST_KEY, timeout: float = 2.0
    ) -> Model:
        base_url = self.wire.base_url(server)
        return self.model_class("test-model", base_url=base_url, api_key=api_key, timeout=timeout)


KITS = {
    "openai": ProviderKit("openai", OpenAIWire, OpenAIModel),
    "anthropic": ProviderKit("anthropic", AnthropicWire, AnthropicModel),
}


READ_CSV = ToolSpec(
    name="read_feedback_csv",
    description="Read a page of the feedback CSV.",
    parameters={
        "type": "object",
        "properties": {"offset": {"type": "integer"}, "limit": {"type": "integer"}},
    },
)
WRITE_FILE = ToolSpec(
    name="write_file",
    description="Write a file under artifacts/.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
)
TOOLS = (READ_CSV, WRITE_FILE)


def conversation() -> list[Message]:
    """A conversation mid-run: system prompt, task, a tool call, its result, a failed call."""
    return [
        SystemMessage("You analyse customer feedback."),
        UserMessage("Analyse input/sample_feedback.csv."),
        AssistantMessage(
            content="Reading the file first.",
            tool_calls=(ToolCall("call_a", "read_feedback_csv", {"offset": 0}, '{"offset": 0}'),),
        ),
        ToolResultMessage("call_a", "read_feedback_csv", '{"total_rows": 2}'),
        AssistantMessage(
            tool_calls=(
                ToolCall("call_b", "write_file", {"path": "../x", "content": "hi"}),
                ToolCall("call_c", "write_file", None, "{oops", "arguments are not valid JSON"),
            )
        ),
        ToolResultMessage("call_b", "write_file", "path escapes the workspace", is_error=True),
        ToolResultMessage("call_c", "write_file", "arguments are not valid JSON", is_error=True),
    ]
