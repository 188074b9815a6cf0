"""`anthropic:MODEL`: the Anthropic Messages API with tool use.

The environment is read only in `create`, with the names the official SDK uses (a
`RUNLENS_` variant of each wins, to point RunLens elsewhere without disturbing other tools):

    RUNLENS_ANTHROPIC_BASE_URL / ANTHROPIC_BASE_URL   default https://api.anthropic.com
    RUNLENS_ANTHROPIC_API_KEY  / ANTHROPIC_API_KEY    required for api.anthropic.com
    RUNLENS_MODEL_TIMEOUT                             seconds per request, default 120
    RUNLENS_MAX_TOKENS                                `max_tokens`, default 4096

The Messages API wants what Chat Completions does not: system prompts in a `system` field,
tool results as `tool_result` blocks inside a user message, strictly alternating roles, and
no empty text blocks. `messages_to_wire` takes care of all four.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from runlens.errors import UserError
from runlens.models import _http
from runlens.models.base import Model
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
DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_TOKENS = 4096

Block = dict[str, Any]


class AnthropicModel(Model):
    """A model behind the Anthropic Messages API, `POST {base_url}/v1/messages`."""

    def __init__(
        self,
        model_name: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.model_name = model_name
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.spec = f"{PROVIDER}:{model_name}"
        self._api_key = api_key
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout))

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"AnthropicModel({self.model_name!r}, base_url={self.base_url!r}, api_key={key})"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        """Send the conversation; return the next turn. Failures raise ProviderCallError."""
        url = f"{self.base_url}/v1/messages"
        payload = await _http.post_json(
            self._client,
            url,
            self.request_body(messages, tools),
            headers=self._headers(),
            provider=PROVIDER,
            timeout=self.timeout,
            secrets=[self._api_key],
        )
        return parse_response(payload, len(messages), _http.endpoint_label(url), self.model_name)

    async def aclose(self) -> None:
        await self._client.aclose()

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

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": API_VERSION,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers


def create(
    name: str, context: ModelContext | None = None, *, env: Mapping[str, str] | None = None
) -> AnthropicModel:
    """The `anthropic:NAME` factory: settings from the environment (see the module docstring)."""
    env = os.environ if env is None else env
    model_name = _http.require_model_name(PROVIDER, name, "claude-sonnet-4-5")
    base_url = (
        _http.env_text(env, "RUNLENS_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
    )
    api_key = _http.env_text(env, "RUNLENS_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    if api_key is None and httpx.URL(base_url).host == "api.anthropic.com":
        raise UserError("anthropic: ANTHROPIC_API_KEY is not set")
    return AnthropicModel(
        model_name,
        base_url=base_url,
        api_key=api_key,
        timeout=_http.env_positive_float(env, "RUNLENS_MODEL_TIMEOUT", DEFAULT_TIMEOUT),
        max_tokens=_http.env_positive_int(env, "RUNLENS_MAX_TOKENS", DEFAULT_MAX_TOKENS)
        or DEFAULT_MAX_TOKENS,
    )


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
        raise _http.malformed_response(PROVIDER, where, "no `content` list", payload)
    blocks = [block for block in blocks if isinstance(block, dict)]
    texts = [str(block.get("text") or "") for block in blocks if block.get("type") == "text"]
    uses = [block for block in blocks if block.get("type") == "tool_use"]
    tool_calls = tuple(
        _parse_tool_use(block, conversation_length, index) for index, block in enumerate(uses)
    )
    content = "\n".join(text for text in texts if text)
    return ModelResponse(
        content=content if content or not tool_calls else None,
        tool_calls=tool_calls,
        usage=_parse_usage(payload.get("usage")),
        model_name=str(payload.get("model") or model_name),
        finish_reason=_http.optional_str(payload.get("stop_reason")),
    )


def _parse_tool_use(block: Block, conversation_length: int, index: int) -> ToolCall:
    tool_input = block.get("input")
    if isinstance(tool_input, dict):
        arguments: dict[str, Any] | None = tool_input
        raw, error = json.dumps(tool_input, ensure_ascii=False), None
    else:
        arguments, raw, error = _http.parse_arguments(tool_input)
    call_id = block.get("id")
    return ToolCall(
        tool_call_id=(
            call_id
            if isinstance(call_id, str) and call_id
            else _http.generated_call_id(conversation_length, index)
        ),
        name=str(block.get("name") or ""),
        arguments=arguments,
        raw_arguments=raw,
        arguments_error=error,
    )


def _parse_usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    # Cached prompt tokens are reported apart from `input_tokens`; they were still read.
    parts = [
        _http.optional_int(usage.get(key))
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    counted = [part for part in parts if part is not None]
    return Usage(
        input_tokens=sum(counted) if parts[0] is not None else None,
        output_tokens=_http.optional_int(usage.get("output_tokens")),
    )
