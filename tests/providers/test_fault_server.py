"""The fault server itself: it must serve the script in order and record what it received."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
from fault_server import (
    AnthropicWire,
    FaultServer,
    OpenAIWire,
    Reply,
    WireCall,
    disconnect,
    garbage,
    hang,
)


def test_serves_replies_in_order_and_records_requests(fault_server: FaultServer) -> None:
    fault_server.enqueue(OpenAIWire.text("first"), OpenAIWire.error(503, "busy"))
    with httpx.Client(base_url=fault_server.base_url) as client:
        first = client.post("/v1/chat/completions", json={"n": 1}, headers={"X-Probe": "a"})
        second = client.post("/v1/chat/completions", json={"n": 2})

    assert first.status_code == 200
    assert first.json()["choices"][0]["message"]["content"] == "first"
    assert second.status_code == 503
    assert second.json()["error"]["message"] == "busy"
    assert [r.json for r in fault_server.requests] == [{"n": 1}, {"n": 2}]
    assert fault_server.requests[0].header("x-probe") == "a"
    assert fault_server.requests[0].path == "/v1/chat/completions"
    assert fault_server.pending == 0


def test_an_exhausted_script_answers_418_naming_the_request(fault_server: FaultServer) -> None:
    response = httpx.post(f"{fault_server.base_url}/v1/messages", json={})
    assert response.status_code == 418
    assert "no scripted reply left for POST /v1/messages" in response.json()["error"]["message"]


def test_reply_headers_are_sent(fault_server: FaultServer) -> None:
    fault_server.enqueue(AnthropicWire.error(429, "slow down", retry_after="3"))
    response = httpx.post(f"{fault_server.base_url}/v1/messages", json={})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "3"
    assert response.json() == {
        "type": "error",
        "error": {"type": "fault_injected", "message": "slow down"},
    }


def test_hang_outlasts_a_client_timeout(fault_server: FaultServer) -> None:
    fault_server.enqueue(hang(5.0), OpenAIWire.text("after"))
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(fault_server.base_url, json={}, timeout=0.2)
    assert time.monotonic() - started < 2.0
    # the server keeps serving other connections while one request hangs
    assert httpx.post(fault_server.base_url, json={}).json()["choices"][0]["message"]["content"]


def test_hang_then_reply_when_the_client_waits(fault_server: FaultServer) -> None:
    fault_server.enqueue(hang(0.1, then=Reply.json({"ok": True})))
    assert httpx.post(fault_server.base_url, json={}, timeout=2.0).json() == {"ok": True}


def test_disconnect_closes_without_a_response(fault_server: FaultServer) -> None:
    fault_server.enqueue(disconnect())
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(fault_server.base_url, json={})


def test_garbage_is_not_json(fault_server: FaultServer) -> None:
    fault_server.enqueue(garbage())
    response = httpx.post(fault_server.base_url, json={})
    assert response.headers["content-type"] == "text/html"
    with pytest.raises(ValueError):
        response.json()


def test_wire_builders_match_the_formats() -> None:
    call = WireCall("write_file", {"path": "a"})
    openai = reply_json(OpenAIWire.tool_calls(call, omit_ids=True))
    wire_call = openai["choices"][0]["message"]["tool_calls"][0]
    assert "id" not in wire_call
    assert wire_call["function"] == {"name": "write_file", "arguments": '{"path": "a"}'}
    assert openai["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

    anthropic = reply_json(AnthropicWire.tool_calls(call, content="ok"))
    assert anthropic["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "name": "write_file", "input": {"path": "a"}, "id": "toolu_0"},
    ]
    assert anthropic["stop_reason"] == "tool_use"


def test_close_releases_a_hanging_request_at_once() -> None:
    server = FaultServer()
    server.start()
    server.enqueue(hang(30.0))
    with httpx.Client(timeout=5.0) as client:
        errors: list[BaseException] = []

        def call() -> None:
            try:
                client.post(server.base_url, json={})
            except httpx.HTTPError as exc:
                errors.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        while not server.requests:
            time.sleep(0.01)
        started = time.monotonic()
        server.close()
        caller.join(timeout=5)
    assert time.monotonic() - started < 2.0
    assert errors and isinstance(errors[0], httpx.RemoteProtocolError)


def reply_json(reply: Reply) -> dict[str, Any]:
    return dict(json.loads(reply.body))
