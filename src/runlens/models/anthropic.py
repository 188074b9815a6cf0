"""`anthropic:MODEL`: the Anthropic Messages API with tool use.

The environment is read only in `create`, with the names the official SDK uses (a
`RUNLENS_` variant of each wins, to point RunLens elsewhere without disturbing other tools):

    RUNLENS_ANTHROPIC_BASE_URL / ANTHROPIC_BASE_URL   default https://api.anthropic.com
    RUNLENS_ANTHROPIC_API_KEY  / ANTHROPIC_API_KEY    required for api.anthropic.com
    RUNLENS_MODEL_TIMEOUT                             seconds per request, default 120
    RUNLENS_MAX_TOKENS                                `max_tokens`, default 4096
    RUNLENS_MODEL_MAX_RESPONSE_BYTES                  cap on a response body, default 16 MiB

The Messages API wants what Chat Completions does not: system prompts in a `system` field,
tool results as `tool_result` blocks inside a user message, strictly alternating roles, and
no empty text blocks. `messages_to_wire` takes care of all four.
"""

from __future__ import annotations

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

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096

Block = dict[str, Any]


class AnthropicModel(HttpChatModel):
    """A model behind the Anthropic Messages API, `POST {base_url}/v1/messages`."""

    provider_name = PROVIDER
    endpoint_path = "/v1/messages"
    default_base_url = DEFAULT_BASE_URL
    default_max_tokens = DEFAULT_MAX_TOKENS  # the API requires `max_tokens`
    base_url_env = ("RUNLENS_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL")
    api_key_env = ("RUNLENS_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    example_model = "claude-sonnet-4-5"
    missing_key_message = "anthropic: ANTHROPIC_API_KEY is not set"

    def request_body(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> dict[str, Any]:
        """The Messages API request for this conversation."""
        body: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": self.max_tokens,
            "messages": messages_to_wire(messages),
        }
        system = system_prompt(messages)
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [tool_to_wire(tool) for tool in tools]
            body["tool_choice"] = {"type": "auto"}
        return body

    def _provider_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _parse_response(
        self, payload: Mapping[str, Any], conversation_length: int, where: str
    ) -> ModelResponse:
        return parse_response(payload, conversation_length, where, self.model_name)


def create(
    name: str, context: ModelContext | None = None, *, env: Mapping[str, str] | None = None
) -> AnthropicModel:
    """The `anthropic:NAME` factory: settings from the environment (see the module docstring)."""
    return AnthropicModel.from_env(name, os.environ if env is None else env)


# --- neutral -> wire ---


def system_prompt(messages: Sequence[Message]) -> str:
    """Every system message, in order, joined by a blank line."""
    return "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage) and m.content)


def messages_to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The non-system messages as alternating `user` / `assistant` turns of content blocks.

    Consecutive turns of one role are merged (tool results and a following user message
    become one user turn, tool results first as the API requires); turns left without any
    block (an empty final answer in the history) are dropped.
    """
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] = _tool_results_first([*turns[-1]["content"], *blocks])
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> tuple[str, list[Block]]:
    if isinstance(message, SystemMessage):
        return "system", []
    if isinstance(message, UserMessage):
        return "user", _text_blocks(message.content)
    if isinstance(message, AssistantMessage):
        uses = [_tool_use_block(call) for call in message.tool_calls]
        return "assistant", [*_text_blocks(message.content), *uses]
    return "user", [_tool_result_block(message)]


def _text_blocks(text: str | None) -> list[Block]:
    # The API rejects empty and whitespace-only text blocks.
    return [{"type": "text", "text": text}] if text and text.strip() else []


def _tool_use_block(call: ToolCall) -> Block:
    # Arguments that did not parse are replayed as {}: `input` must be an object, and the
    # tool error result already tells the model what was wrong.
    arguments = call.arguments if call.arguments is not None else {}
    return {"type": "tool_use", "id": call.tool_call_id, "name": call.name, "input": arguments}


def _tool_result_block(message: ToolResultMessage) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.content:
        block["content"] = message.content
    if message.is_error:
        block["is_error"] = True
    return block


def _tool_results_first(blocks: list[Block]) -> list[Block]:
    return sorted(blocks, key=lambda block: block["type"] != "tool_result")


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    """One tool in the Messages API's form."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


# --- wire -> neutral ---


def parse_response(
    payload: Mapping[str, Any], conversation_length: int, where: str, model_name: str
) -> ModelResponse:
    """A Messages API response as a ModelResponse. Never fails on bad tool input."""
    blocks = payload.get("content")
    if not isinstance(blocks, list):
        raise _wire_errors.malformed_response(PROVIDER, where, "no `content` list", payload)
    blocks = [block for block in blocks if isinstance(block, dict)]
    texts = [_body.optional_str(block.get("text")) or "" for block in blocks if _is_text(block)]
    uses = [block for block in blocks if block.get("type") == "tool_use"]
    tool_calls = tuple(
        _tool_calls.tool_call(
            block.get("id"), block.get("name"), block.get("input"), conversation_length, index
        )
        for index, block in enumerate(uses)
    )
    content = "\n".join(text for text in texts if text)
    return ModelResponse(
        content=content if content or not tool_calls else None,
        tool_calls=tool_calls,
        usage=_parse_usage(payload.get("usage")),
        model_name=_body.optional_str(payload.get("model")) or model_name,
        finish_reason=_body.optional_str(payload.get("stop_reason")),
    )


def _is_text(block: dict[str, Any]) -> bool:
    return block.get("type") == "text"


def _parse_usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    # Cached prompt tokens are reported apart from `input_tokens`; they were still read.
    parts = [
        _body.optional_int(usage.get(key))
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    counted = [part for part in parts if part is not None]
    return Usage(
        input_tokens=sum(counted) if parts[0] is not None else None,
        output_tokens=_body.optional_int(usage.get("output_tokens")),
    )
