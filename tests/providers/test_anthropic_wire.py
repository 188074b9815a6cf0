"""anthropic: what goes on the wire, what comes back, and the settings `create` reads."""

from __future__ import annotations

import pytest
from fault_server import AnthropicWire, FaultServer, Reply, WireCall
from provider_kit import TEST_KEY, TOOLS, conversation

from runlens.errors import UserError
from runlens.models.anthropic import AnthropicModel, create, messages_to_wire
from runlens.models.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

pytestmark = pytest.mark.anyio


async def test_request_body_and_headers(fault_server: FaultServer) -> None:
    fault_server.enqueue(AnthropicWire.text("ok"))
    model = AnthropicModel(
        "claude-test", base_url=AnthropicWire.base_url(fault_server), api_key=TEST_KEY
    )
    messages = [*conversation(), UserMessage("Findings: 2 problems. Fix them.")]
    try:
        await model.complete([SystemMessage("Second rule."), *messages], TOOLS)
    finally:
        await model.aclose()

    (request,) = fault_server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.header("x-api-key") == TEST_KEY
    assert request.header("anthropic-version") == "2023-06-01"
    assert request.header("authorization") is None
    assert TEST_KEY not in request.raw_body.decode()
    body = request.json
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 4096
    assert body["system"] == "Second rule.\n\nYou analyse customer feedback."
    assert body["tool_choice"] == {"type": "auto"}
    assert body["tools"][1] == {
        "name": "write_file",
        "description": "Write a file under artifacts/.",
        "input_schema": TOOLS[1].parameters,
    }
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Analyse input/sample_feedback.csv."}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the file first."},
                {
                    "type": "tool_use",
                    "id": "call_a",
                    "name": "read_feedback_csv",
                    "input": {"offset": 0},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": '{"total_rows": 2}'}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "call_b",
                    "name": "write_file",
                    "input": {"path": "../x", "content": "hi"},
                },
                {"type": "tool_use", "id": "call_c", "name": "write_file", "input": {}},
            ],
        },
        {
            # two tool results and the repair message merged into one user turn, results first
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_b",
                    "content": "path escapes the workspace",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_c",
                    "content": "arguments are not valid JSON",
                    "is_error": True,
                },
                {"type": "text", "text": "Findings: 2 problems. Fix them."},
            ],
        },
    ]


def test_empty_turns_are_dropped_and_neighbours_merged() -> None:
    wire = messages_to_wire(
        [
            UserMessage("one"),
            AssistantMessage(content=""),  # an empty final answer in the history
            UserMessage("two"),
            UserMessage("   "),
            AssistantMessage(tool_calls=(ToolCall("t1", "list_files", {}),)),
            ToolResultMessage("t1", "list_files", ""),
        ]
    )
    assert wire == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "list_files", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
    ]


async def test_no_system_no_tools(fault_server: FaultServer) -> None:
    fault_server.enqueue(AnthropicWire.text("ok"))
    model = AnthropicModel("c", base_url=AnthropicWire.base_url(fault_server), max_tokens=100)
    try:
        await model.complete([UserMessage("hi")], [])
    finally:
        await model.aclose()
    body = fault_server.requests[0].json
    assert "system" not in body and "tools" not in body and "tool_choice" not in body
    assert body["max_tokens"] == 100
    assert fault_server.requests[0].header("x-api-key") is None


async def test_response_parsing(fault_server: FaultServer) -> None:
    fault_server.enqueue(
        AnthropicWire.tool_calls(
            WireCall("read_feedback_csv", {"offset": 100}, call_id="toolu_abc"),
            WireCall("write_file", {"path": "artifacts/a.json", "content": "{}"}),
            content="Paging on.",
            usage=(900, 40),
        )
    )
    model = AnthropicModel("c", base_url=AnthropicWire.base_url(fault_server))
    try:
        response = await model.complete([UserMessage("go")], TOOLS)
    finally:
        await model.aclose()

    assert response.content == "Paging on."
    assert response.finish_reason == "tool_use"
    assert response.usage == Usage(input_tokens=900, output_tokens=40)
    first, second = response.tool_calls
    assert (first.tool_call_id, first.name, first.arguments) == (
        "toolu_abc",
        "read_feedback_csv",
        {"offset": 100},
    )
    assert first.raw_arguments == '{"offset": 100}'
    assert second.tool_call_id == "toolu_1"


async def test_cached_prompt_tokens_count_as_input(fault_server: FaultServer) -> None:
    fault_server.enqueue(
        Reply.json(
            {
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": 10,
                    "cache_creation_input_tokens": 100,
                    "cache_read_input_tokens": 1000,
                    "output_tokens": 3,
                },
            }
        )
    )
    model = AnthropicModel("c", base_url=AnthropicWire.base_url(fault_server))
    try:
        response = await model.complete([UserMessage("go")], [])
    finally:
        await model.aclose()
    assert response.usage == Usage(input_tokens=1110, output_tokens=3)
    assert response.model_name == "c"


def test_create_reads_the_sdk_variables() -> None:
    env = {
        "ANTHROPIC_BASE_URL": "https://proxy.example/",
        "ANTHROPIC_API_KEY": "sk-ant-test-0000000000",
        "RUNLENS_MODEL_TIMEOUT": "30",
        "RUNLENS_MAX_TOKENS": "2048",
    }
    model = create("claude-sonnet-4-5", env=env)
    assert (model.base_url, model.timeout, model.max_tokens) == (
        "https://proxy.example",
        30.0,
        2048,
    )
    assert model.spec == "anthropic:claude-sonnet-4-5"


def test_runlens_variables_override_and_defaults() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-global-000000000",
        "RUNLENS_ANTHROPIC_API_KEY": "sk-ant-runlens-11111111",
        "RUNLENS_ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
    }
    model = create("c", env=env)
    assert model._api_key == "sk-ant-runlens-11111111"
    assert (model.base_url, model.max_tokens) == ("http://127.0.0.1:9", 4096)
    assert create("c", env={"ANTHROPIC_API_KEY": "k" * 20}).base_url == "https://api.anthropic.com"


@pytest.mark.parametrize(
    ("name", "env", "message"),
    [
        ("c", {}, "ANTHROPIC_API_KEY is not set"),
        ("", {"ANTHROPIC_API_KEY": "k" * 20}, "needs a model name"),
        ("c", {"ANTHROPIC_API_KEY": "k" * 20, "RUNLENS_MAX_TOKENS": "0"}, "RUNLENS_MAX_TOKENS"),
    ],
)
def test_bad_settings_are_user_errors(name: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        create(name, env=env)


def test_repr_never_shows_the_key() -> None:
    assert TEST_KEY not in repr(AnthropicModel("c", api_key=TEST_KEY))


def test_tool_results_go_first_in_a_merged_user_turn() -> None:
    wire = messages_to_wire(
        [
            AssistantMessage(tool_calls=(ToolCall("t1", "list_files", {}),)),
            UserMessage("(a note the runtime added)"),
            ToolResultMessage("t1", "list_files", "[]"),
        ]
    )
    assert [block["type"] for block in wire[1]["content"]] == ["tool_result", "text"]
