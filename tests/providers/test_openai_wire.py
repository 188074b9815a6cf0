"""openai: what goes on the wire, what comes back, and the settings `create` reads."""

from __future__ import annotations

import pytest
from fault_server import FaultServer, OpenAIWire, WireCall
from provider_kit import TEST_KEY, TOOLS, conversation

from runlens.errors import UserError
from runlens.models.messages import Usage, UserMessage
from runlens.models.openai import OpenAIModel, create
from runlens.models.registry import ModelContext

pytestmark = pytest.mark.anyio


async def test_request_body_and_headers(fault_server: FaultServer) -> None:
    fault_server.enqueue(OpenAIWire.text("ok"))
    model = OpenAIModel("gpt-test", base_url=OpenAIWire.base_url(fault_server), api_key=TEST_KEY)
    try:
        await model.complete(conversation(), TOOLS)
    finally:
        await model.aclose()

    (request,) = fault_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.header("authorization") == f"Bearer {TEST_KEY}"
    assert TEST_KEY not in request.raw_body.decode()
    body = request.json
    assert body["model"] == "gpt-test"
    assert body["tool_choice"] == "auto"
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_feedback_csv",
            "description": "Read a page of the feedback CSV.",
            "parameters": TOOLS[0].parameters,
        },
    }
    assert body["messages"] == [
        {"role": "system", "content": "You analyse customer feedback."},
        {"role": "user", "content": "Analyse input/sample_feedback.csv."},
        {
            "role": "assistant",
            "content": "Reading the file first.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read_feedback_csv", "arguments": '{"offset": 0}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"total_rows": 2}'},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "arguments": '{"path": "../x", "content": "hi"}',
                    },
                },
                # unparseable arguments are replayed as an empty object
                {
                    "id": "call_c",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "content": "ERROR: path escapes the workspace"},
        {
            "role": "tool",
            "tool_call_id": "call_c",
            "content": "ERROR: arguments are not valid JSON",
        },
    ]
    assert "max_tokens" not in body


async def test_no_tools_no_tool_fields_and_no_key_no_authorization(
    fault_server: FaultServer,
) -> None:
    fault_server.enqueue(OpenAIWire.text("ok"))
    model = OpenAIModel("local", base_url=OpenAIWire.base_url(fault_server), max_tokens=256)
    try:
        await model.complete([UserMessage("hi")], [])
    finally:
        await model.aclose()

    (request,) = fault_server.requests
    assert request.header("authorization") is None
    assert "tools" not in request.json and "tool_choice" not in request.json
    assert request.json["max_tokens"] == 256


async def test_response_parsing(fault_server: FaultServer) -> None:
    fault_server.enqueue(
        OpenAIWire.tool_calls(
            WireCall("read_feedback_csv", {"offset": 100}, call_id="call_xyz"),
            WireCall("write_file", {"path": "artifacts/a.json", "content": "{}"}),
            content="Paging on.",
            usage=(1200, 35),
        )
    )
    model = OpenAIModel("gpt-test", base_url=OpenAIWire.base_url(fault_server))
    try:
        response = await model.complete([UserMessage("go")], TOOLS)
    finally:
        await model.aclose()

    assert response.content == "Paging on."
    assert response.finish_reason == "tool_calls"
    assert response.model_name == "fault-model"
    assert response.usage == Usage(input_tokens=1200, output_tokens=35)
    first, second = response.tool_calls
    assert (first.tool_call_id, first.name, first.arguments) == (
        "call_xyz",
        "read_feedback_csv",
        {"offset": 100},
    )
    assert first.raw_arguments == '{"offset": 100}'
    assert second.tool_call_id == "call_1"
    assert second.arguments == {"path": "artifacts/a.json", "content": "{}"}
    assert not response.is_final


def test_create_reads_the_openai_variables() -> None:
    env = {
        "OPENAI_BASE_URL": "http://localhost:11434/v1/",
        "OPENAI_API_KEY": "ollama-key",
        "RUNLENS_MODEL_TIMEOUT": "7.5",
    }
    model = create("qwen2.5:7b", ModelContext(), env=env)
    assert (model.model_name, model.base_url, model.timeout) == (
        "qwen2.5:7b",
        "http://localhost:11434/v1",
        7.5,
    )
    assert model.spec == "openai:qwen2.5:7b"
    assert model.max_tokens is None


def test_runlens_variables_override_openai_ones() -> None:
    env = {
        "OPENAI_BASE_URL": "https://api.openai.com/v1",
        "OPENAI_API_KEY": "sk-global-0000000000000000",
        "RUNLENS_OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
        "RUNLENS_OPENAI_API_KEY": "sk-runlens-111111111111111",
        "RUNLENS_MAX_TOKENS": "1024",
    }
    model = create("m", env=env)
    assert model.base_url == "http://127.0.0.1:8080/v1"
    assert model._api_key == "sk-runlens-111111111111111"
    assert model.max_tokens == 1024


def test_defaults_and_key_requirement() -> None:
    model = create("gpt-4o-mini", env={"OPENAI_API_KEY": "sk-x-000000000000000000"})
    assert (model.base_url, model.timeout) == ("https://api.openai.com/v1", 120.0)
    with pytest.raises(UserError, match="OPENAI_API_KEY is not set"):
        create("gpt-4o-mini", env={})
    assert create("llama", env={"OPENAI_BASE_URL": "http://localhost:8080/v1"})._api_key is None


@pytest.mark.parametrize(
    ("name", "env", "message"),
    [
        ("", {"OPENAI_API_KEY": "k" * 20}, "needs a model name: --model openai:gpt-4o-mini"),
        ("m", {"OPENAI_API_KEY": "k" * 20, "RUNLENS_MODEL_TIMEOUT": "0"}, "RUNLENS_MODEL_TIMEOUT"),
        ("m", {"OPENAI_API_KEY": "k" * 20, "RUNLENS_MAX_TOKENS": "lots"}, "RUNLENS_MAX_TOKENS"),
    ],
)
def test_bad_settings_are_user_errors(name: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        create(name, env=env)


def test_repr_never_shows_the_key() -> None:
    model = OpenAIModel("m", api_key=TEST_KEY)
    assert TEST_KEY not in repr(model)
    assert "api_key=set" in repr(model)
