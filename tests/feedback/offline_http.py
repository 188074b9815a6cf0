"""An OpenAI-compatible chat server on 127.0.0.1 that answers as the offline analyst does,
except for the batches a test wants broken.

`runlens run --model openai:...` talks real HTTP to it through the real provider: requests
are decoded from the Chat Completions wire format into RunLens messages, answered by
`OfflineAnalyst`, and encoded back. A batch whose rows contain `fail_marker` gets a tool call
whose arguments are not JSON (what a confused model sends), every time it is asked.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runlens.models.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from runlens_feedback.batches import SUBMIT_TOOL
from runlens_feedback.offline import OfflineAnalyst

ERROR_PREFIX = "ERROR: "


def messages_from_wire(wire: list[dict[str, Any]]) -> list[Message]:
    """Chat Completions messages as RunLens messages (tool results get their call's name)."""
    names: dict[str, str] = {}
    messages: list[Message] = []
    for entry in wire:
        role, content = entry["role"], entry.get("content") or ""
        if role == "system":
            messages.append(SystemMessage(content))
        elif role == "user":
            messages.append(UserMessage(content))
        elif role == "assistant":
            calls = []
            for call in entry.get("tool_calls") or []:
                function = call["function"]
                names[call["id"]] = function["name"]
                arguments = json.loads(function["arguments"] or "{}")
                calls.append(ToolCall(call["id"], function["name"], arguments))
            messages.append(AssistantMessage(content or None, tuple(calls)))
        else:
            call_id = entry["tool_call_id"]
            messages.append(
                ToolResultMessage(
                    call_id, names.get(call_id, ""), content, content.startswith(ERROR_PREFIX)
                )
            )
    return messages


def response_to_wire(response: ModelResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.raw_arguments
                    or json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in response.tool_calls
        ]
    return {
        "id": "chatcmpl-offline",
        "object": "chat.completion",
        "model": "offline-over-http",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if response.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


class OfflineChatServer:
    """`with OfflineChatServer(fail_marker="...") as server:` then use `server.base_url`."""

    def __init__(self, fail_marker: str | None = None) -> None:
        self.fail_marker = fail_marker
        self.analyst = OfflineAnalyst()
        self.batch_requests = 0
        self.broken_replies = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> OfflineChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = messages_from_wire(request["messages"])
        tools = [
            ToolSpec(t["function"]["name"], t["function"].get("description", ""), {})
            for t in request.get("tools") or []
        ]
        is_batch = any(tool.name == SUBMIT_TOOL for tool in tools)
        if is_batch:
            with self._lock:
                self.batch_requests += 1
            prompt = next(m.content for m in messages if isinstance(m, UserMessage))
            if self.fail_marker is not None and self.fail_marker in prompt:
                with self._lock:
                    self.broken_replies += 1
                broken = ToolCall("call_broken", SUBMIT_TOOL, None, '{"items": [{"feedback_id"')
                return response_to_wire(ModelResponse(content=None, tool_calls=(broken,)))
        response = asyncio.run(self.analyst.complete(messages, tools))
        return response_to_wire(response)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length).decode("utf-8"))
                body = json.dumps(server.answer(request), ensure_ascii=False).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
