"""`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint with tool calling.

OpenAI itself, vLLM, Ollama (`/v1`), llama.cpp's server and compatible hosted models all
speak this format. The environment is read only in `create`; `OpenAIModel` takes explicit
arguments, so tests and the runtime can build one without touching `os.environ`.

Environment (`RUNLENS_*` wins over the OpenAI SDK's names, so RunLens can point at a local
server without disturbing other tools):

    RUNLENS_OPENAI_BASE_URL / OPENAI_BASE_URL   default https://api.openai.com/v1
    RUNLENS_OPENAI_API_KEY  / OPENAI_API_KEY    optional for local servers
    RUNLENS_MODEL_TIMEOUT                       seconds per request, default 120
    RUNLENS_MAX_TOKENS                          sent as `max_tokens` only when set
    RUNLENS_MODEL_MAX_RESPONSE_BYTES            cap on a response body, default 16 MiB
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from runlens.models import _body, _tool_calls, _wire_errors
from runlens.models._chat import HttpChatModel
from runlens.models.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from runlens.models.registry import ModelContext

PROVIDER = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Prefix that marks a failed tool call in a `tool` message (the format has no error flag).
TOOL_ERROR_PREFIX = "ERROR: "


class OpenAIModel(HttpChatModel):
    """A model behind an OpenAI-compatible `POST {base_url}/chat/completions`."""

    provider_name = PROVIDER
    endpoint_path = "/chat/completions"
    default_base_url = DEFAULT_BASE_URL
    default_max_tokens = None  # sent only when set: local servers pick their own limit
    base_url_env = ("RUNLENS_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    api_key_env = ("RUNLENS_OPENAI_API_KEY", "OPENAI_API_KEY")
    example_model = "gpt-4o-mini"
    missing_key_message = (
        "openai: OPENAI_API_KEY is not set (needed for api.openai.com; for a local server "
        "set OPENAI_BASE_URL, e.g. http://localhost:11434/v1)"
    )

    def request_body(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> dict[str, Any]:
        """The Chat Completions request for this conversation."""
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [message_to_wire(message) for message in messages],
        }
        if tools:
            body["tools"] = [tool_to_wire(tool) for tool in tools]
            body["tool_choice"] = "auto"
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _provider_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _parse_response(
        self, payload: Mapping[str, Any], conversation_length: int, where: str
    ) -> ModelResponse:
        return parse_response(payload, conversation_length, where, self.model_name)


def create(
    name: str, context: ModelContext | None = None, *, env: Mapping[str, str] | None = None
) -> OpenAIModel:
    """The `openai:NAME` factory: settings from the environment (see the module docstring)."""
    return OpenAIModel.from_env(name, os.environ if env is None else env)


# --- neutral -> wire ---


def message_to_wire(message: Message) -> dict[str, Any]:
    """One neutral message as a Chat Completions message."""
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        return _assistant_to_wire(message)
    return {
        "role": "tool",
        "tool_call_id": message.tool_call_id,
        "content": _tool_result_text(message),
    }


def _assistant_to_wire(message: AssistantMessage) -> dict[str, Any]:
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content or ""}
    return {
        "role": "assistant",
        # An empty string, not null: llama.cpp's server rejects null here and its chat
        # templates fail on a missing key, while every other endpoint accepts "".
        "content": message.content or "",
        "tool_calls": [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in message.tool_calls
        ],
    }


def _arguments_text(call: ToolCall) -> str:
    # Arguments that did not parse are replayed as {}: some servers (llama.cpp templates)
    # reject invalid JSON in the history, and the tool error result already explains it.
    return json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)


def _tool_result_text(message: ToolResultMessage) -> str:
    if not message.is_error or message.content.startswith(TOOL_ERROR_PREFIX.strip()):
        return message.content
    return TOOL_ERROR_PREFIX + message.content


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    """One tool as a Chat Completions `function` tool."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


# --- wire -> neutral ---


def parse_response(
    payload: Mapping[str, Any], conversation_length: int, where: str, model_name: str
) -> ModelResponse:
    """A Chat Completions response as a ModelResponse. Never fails on bad tool arguments."""
    choices = payload.get("choices")
    if not isinstance(choices, list):
        raise _wire_errors.malformed_response(PROVIDER, where, "no `choices` list", payload)
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    tool_calls = _parse_tool_calls(message.get("tool_calls"), conversation_length)
    content = _content_text(message.get("content"))
    return ModelResponse(
        content=content if content is not None or tool_calls else "",
        tool_calls=tool_calls,
        usage=_parse_usage(payload.get("usage")),
        model_name=_body.optional_str(payload.get("model")) or model_name,
        finish_reason=_body.optional_str(choice.get("finish_reason")),
    )


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some compatible servers send
        texts = [part.get("text", "") for part in content if isinstance(part, dict)]
        return "".join(text for text in texts if isinstance(text, str))
    return None


def _parse_tool_calls(raw_calls: Any, conversation_length: int) -> tuple[ToolCall, ...]:
    if not isinstance(raw_calls, list):
        return ()
    return tuple(
        _parse_tool_call(raw, conversation_length, index) for index, raw in enumerate(raw_calls)
    )


def _parse_tool_call(raw: Any, conversation_length: int, index: int) -> ToolCall:
    raw = raw if isinstance(raw, dict) else {}
    function = raw.get("function")
    function = function if isinstance(function, dict) else {}
    return _tool_calls.tool_call(
        raw.get("id"), function.get("name"), function.get("arguments"), conversation_length, index
    )


def _parse_usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        input_tokens=_body.optional_int(usage.get("prompt_tokens")),
        output_tokens=_body.optional_int(usage.get("completion_tokens")),
    )
