"""Where a run's steps are checkpointed, so that a run resumed elsewhere does not pay twice.

A `runlens run` keeps nothing (`Journal`, the default): each step just runs. A run executed
by `runlens worker` gets a `runlens.workers.workflow.DurableJournal`, which makes each step a
DBOS step: its result is checkpointed in the system database, and when the run is replayed
after its worker died, a completed step returns what it returned the first time instead of
running again.

The steps, in the order a run takes them:

- `model.<purpose>.<request digest>`: one model call with its retries. The answer (or the
  provider error) is checkpointed; a completed call is never sent to the provider again.
  The request digest in the name makes a replay that asks a different question fail loudly
  instead of receiving another question's answer.
- `tool.<name>`: one tool call. Tools are local and deterministic, and they share in-memory
  state and call the model themselves (analysis batches), so on replay they run again, with
  their model calls answered from the checkpoints; that also rebuilds the worker's workspace.
  The checkpoint is the digest of the result, and a replay that comes to a different one says
  so (`ReplayDiverged`).
- `validation.<round>`: one validation round, checked the same way (verdict, statuses,
  finding codes).

Values are JSON: dicts of strings, numbers, booleans, lists and nulls.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import orjson

from runlens.errors import ProviderError
from runlens.models.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
)

JsonObject = dict[str, Any]


class ReplayDiverged(RuntimeError):
    """A replayed step came to a different result than the checkpointed one."""


class Journal:
    """No checkpoints: every step runs (a run in its own process, `runlens run`)."""

    #: Whether steps survive the process (`runlens worker`).
    durable = False

    async def step(
        self, name: str, body: Callable[[], Awaitable[JsonObject]]
    ) -> tuple[JsonObject, bool]:
        """Run `body` as the step `name`; its value, and whether it came from a checkpoint
        (a replay) rather than from running `body` now."""
        return await body(), False

    async def check(self, name: str, value: Mapping[str, Any]) -> None:
        """Checkpoint `value` as the step `name`; on replay, `ReplayDiverged` when the value
        checkpointed the first time differs."""
        recorded, replayed = await self.step(name, _constant(dict(value)))
        if replayed and recorded != dict(value):
            raise ReplayDiverged(
                f"step {name} came to a different result on recovery than before its worker "
                f"stopped (before: {_short(recorded)}; now: {_short(value)})"
            )


def digest(value: Any) -> str:
    """SHA-256 of `value`'s canonical JSON (sorted keys, no spaces), first 16 hex digits."""
    return hashlib.sha256(dumps_canonical(value)).hexdigest()[:16]


def dumps_canonical(value: Any) -> bytes:
    """`value` as JSON with sorted keys and no spaces (what digests and comparisons read)."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):  # a lone surrogate, a huge integer
        text = json.dumps(value, default=str, sort_keys=True, separators=(",", ":"))
        return text.encode("utf-8")


def _constant(value: JsonObject) -> Callable[[], Awaitable[JsonObject]]:
    async def body() -> JsonObject:
        return value

    return body


def _short(value: Mapping[str, Any]) -> str:
    text = dumps_canonical(dict(value)).decode("utf-8")
    return text if len(text) <= 300 else f"{text[:300]}…"


# -- what a model step checkpoints -------------------------------------------------------------


#: Where every request's chain of message digests starts.
_CHAIN_START: Final = hashlib.sha256(b"runlens.request").digest()


def request_digest(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
    """The digest of one model request: every message and tool as sent, first 16 hex digits.

    A chain over the messages (each link the SHA-256 of the previous link and the message's
    canonical JSON) closed by the tools, so that `RequestDigests` can extend the digest of a
    conversation by its new messages alone and come to this same value."""
    chain = _CHAIN_START
    for message in messages:
        chain = _link(chain, message)
    return _close(chain, _tools_digest(tools))


class RequestDigests:
    """`request_digest` for the model requests of one run, each in the time of its new
    messages: a conversation grows by appending to one list, so the chain of the messages
    digested at its previous request is kept (by the list's identity) and extended.

    The value is the one `request_digest` gives for the same request, whatever was cached: a
    replay in another process names its steps alike. A list that is not an extension of the
    one last digested under its identity (shorter, or another message object anywhere in
    what was digested) is digested from its start."""

    #: Conversations kept: the run's own, and the analysis batches in flight beside it.
    KEPT = 16

    def __init__(self) -> None:
        # id(list) -> (the list, the messages digested, the chain over them)
        self._chains: dict[int, tuple[Sequence[Message], tuple[Message, ...], bytes]] = {}
        self._tools: tuple[tuple[ToolSpec, ...], bytes] | None = None

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        key = id(messages)
        digested: tuple[Message, ...] = ()
        chain = _CHAIN_START
        kept = self._chains.pop(key, None)
        if kept is not None:
            known, known_messages, known_chain = kept
            # Identity of every message, not only the last: a message replaced in place
            # (frozen messages cannot change otherwise) is seen for the cost of a pointer.
            extended = known is messages and len(known_messages) <= len(messages)
            if extended and all(map(operator.is_, known_messages, messages)):
                digested, chain = known_messages, known_chain
        for message in messages[len(digested) :]:
            chain = _link(chain, message)
        self._chains[key] = (messages, tuple(messages), chain)
        if len(self._chains) > self.KEPT:  # the conversation asked least recently goes
            del self._chains[next(iter(self._chains))]
        return _close(chain, self._tools_digest(tools))

    def _tools_digest(self, tools: Sequence[ToolSpec]) -> bytes:
        if self._tools is not None:
            known, value = self._tools
            if len(known) == len(tools) and all(map(operator.is_, known, tools)):
                return value
        value = _tools_digest(tools)
        self._tools = (tuple(tools), value)
        return value


def _link(chain: bytes, message: Message) -> bytes:
    return hashlib.sha256(chain + dumps_canonical(_message_json(message))).digest()


def _tools_digest(tools: Sequence[ToolSpec]) -> bytes:
    specs = [[tool.name, tool.description, tool.parameters] for tool in tools]
    return hashlib.sha256(dumps_canonical(specs)).digest()


def _close(chain: bytes, tools: bytes) -> str:
    return hashlib.sha256(chain + tools).hexdigest()[:16]


def response_to_json(response: ModelResponse) -> JsonObject:
    return {
        "content": response.content,
        "tool_calls": [_tool_call_json(call) for call in response.tool_calls],
        "usage": [response.usage.input_tokens, response.usage.output_tokens],
        "model_name": response.model_name,
        "finish_reason": response.finish_reason,
        "notes": list(response.notes),
    }


def response_from_json(value: Mapping[str, Any]) -> ModelResponse:
    input_tokens, output_tokens = value["usage"]
    return ModelResponse(
        content=value["content"],
        tool_calls=tuple(
            ToolCall(
                call["tool_call_id"],
                call["name"],
                call["arguments"],
                call["raw_arguments"],
                call["arguments_error"],
            )
            for call in value["tool_calls"]
        ),
        usage=Usage(input_tokens, output_tokens),
        model_name=value["model_name"],
        finish_reason=value["finish_reason"],
        notes=tuple(value["notes"]),
    )


def error_to_json(error: Exception) -> JsonObject:
    """A failed model call as its checkpoint keeps it: enough to raise it again alike."""
    if isinstance(error, ProviderError):
        return {
            "kind": "provider",
            "message": str(error),
            "provider": error.provider,
            "status_code": error.status_code,
        }
    return {"kind": "exception", "type": type(error).__name__, "message": str(error)}


def error_from_json(value: Mapping[str, Any]) -> Exception:
    """The exception a checkpointed failure stands for: a `ProviderError` again, or an
    exception of the same class name (what messages quote, e.g. `analyst error: ValueError`)."""
    message = str(value.get("message") or "")
    if value.get("kind") == "provider":
        return ProviderError(
            message, provider=str(value.get("provider") or ""), status_code=value.get("status_code")
        )
    name = str(value.get("type") or "Error")
    if not name.isidentifier():
        name = "Error"
    error_class: type[RuntimeError] = type(name, (RuntimeError,), {})
    return error_class(message)


def _tool_call_json(call: ToolCall) -> JsonObject:
    return {
        "tool_call_id": call.tool_call_id,
        "name": call.name,
        "arguments": call.arguments,
        "raw_arguments": call.raw_arguments,
        "arguments_error": call.arguments_error,
    }


def _message_json(message: Message) -> JsonObject:
    if isinstance(message, AssistantMessage):
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [_tool_call_json(call) for call in message.tool_calls],
        }
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "content": message.content,
            "is_error": message.is_error,
        }
    return {"role": message.role, "content": message.content}
