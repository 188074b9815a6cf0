"""Both HTTP providers against the live fault server: conversations, faults, retries, secrets.

Every test runs once per provider (`openai`, `anthropic`) through the `provider` fixture.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest
from fault_server import FaultServer, Reply, WireCall, disconnect, garbage, hang
from provider_kit import TEST_KEY, TOOLS, ProviderKit

from runlens.errors import ProviderCallError, ProviderError
from runlens.models.base import Model
from runlens.models.messages import Message, ToolResultMessage, Usage, UserMessage
from runlens.models.retry import RetryAttempt, RetryPolicy, complete_with_retries

pytestmark = pytest.mark.anyio

MakeModel = Callable[..., Model]
START: list[Message] = [UserMessage("Analyse the feedback.")]


class Sleeps(list[float]):
    """An injected sleep that records the delays instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def tool_names(provider: ProviderKit, body: dict[str, Any]) -> list[str]:
    if provider.name == "openai":
        return [tool["function"]["name"] for tool in body["tools"]]
    return [tool["name"] for tool in body["tools"]]


async def test_tool_calling_round_trip(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    wire = provider.wire
    fault_server.enqueue(
        wire.tool_calls(WireCall("read_feedback_csv", {"offset": 0}), usage=(50, 9)),
        wire.text("All three deliverables are written.", usage=(80, 12)),
    )
    model = make_model()

    first = await model.complete(START, TOOLS)
    (call,) = first.tool_calls
    assert (call.name, call.arguments, call.arguments_error) == (
        "read_feedback_csv",
        {"offset": 0},
        None,
    )
    assert first.usage == Usage(input_tokens=50, output_tokens=9)

    result = ToolResultMessage(call.tool_call_id, call.name, '{"rows": []}')
    second = await model.complete([*START, first.to_message(), result], TOOLS)
    assert second.is_final
    assert second.content == "All three deliverables are written."
    assert second.usage == Usage(input_tokens=80, output_tokens=12)

    sent = fault_server.requests[1].json
    assert tool_names(provider, sent) == ["read_feedback_csv", "write_file"]
    assert call.tool_call_id in fault_server.requests[1].raw_body.decode()
    assert len(sent["messages"]) == 3  # user, assistant tool call, tool result


async def test_429_then_success_honours_retry_after(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(
        provider.wire.error(429, "rate limited", retry_after="3"), provider.wire.text("ok")
    )
    sleeps, attempts = Sleeps(), list[RetryAttempt]()
    response = await complete_with_retries(
        make_model(), START, TOOLS, on_retry=attempts.append, sleep=sleeps
    )
    assert response.content == "ok"
    assert sleeps == [3.0]
    (attempt,) = attempts
    assert (attempt.attempt, attempt.delay) == (1, 3.0)
    assert (attempt.error.status_code, attempt.error.retry_after) == (429, 3.0)
    assert attempt.error.retryable
    assert "rate limited" in str(attempt.error)
    assert len(fault_server.requests) == 2


async def test_500_until_the_cap(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(*[provider.wire.error(500, "kaboom")] * 4)
    sleeps = Sleeps()
    with pytest.raises(ProviderCallError) as raised:
        await complete_with_retries(make_model(), START, TOOLS, sleep=sleeps)
    assert str(raised.value) == (
        f"{provider.name}: HTTP 500 Internal Server Error from {fault_server.address} "
        "after 4 attempts: kaboom"
    )
    assert (raised.value.status_code, raised.value.attempts) == (500, 4)
    assert len(fault_server.requests) == 4
    assert sleeps == [0.5, 1.0, 2.0]


async def test_overloaded_529_is_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.error(529, "Overloaded"), provider.wire.text("ok"))
    attempts: list[RetryAttempt] = []
    response = await complete_with_retries(
        make_model(), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
    )
    assert response.content == "ok"
    assert str(attempts[0].error) == (
        f"{provider.name}: HTTP 529 Overloaded from {fault_server.address}: Overloaded"
    )


async def test_hang_past_the_timeout_is_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(hang(10.0), provider.wire.text("ok"))
    attempts: list[RetryAttempt] = []
    response = await complete_with_retries(
        make_model(timeout=0.3), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
    )
    assert response.content == "ok"
    (attempt,) = attempts
    assert attempt.error.retryable
    assert str(attempt.error) == (
        f"{provider.name}: request timed out (no response from {fault_server.address} within 0.3 s)"
    )


async def test_hangs_until_the_cap(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(hang(10.0), hang(10.0))
    with pytest.raises(ProviderError, match=r"within 0\.2 s\) after 2 attempts$") as raised:
        await complete_with_retries(
            make_model(timeout=0.2), START, TOOLS, RetryPolicy(max_attempts=2), sleep=Sleeps()
        )
    assert raised.value.retryable and raised.value.status_code is None


async def test_401_is_not_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.error(401, "invalid api key"), provider.wire.text("no"))
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as raised:
        await complete_with_retries(make_model(), START, TOOLS, sleep=sleeps)
    assert str(raised.value) == (
        f"{provider.name}: HTTP 401 Unauthorized from {fault_server.address}: invalid api key"
    )
    assert not raised.value.retryable
    assert (len(fault_server.requests), fault_server.pending, sleeps) == (1, 1, [])


@pytest.mark.parametrize(
    ("arguments", "error_start"),
    [
        ('{"path": "artifacts/a.json", ', "arguments are not valid JSON: "),
        ("[1, 2]", "arguments must be a JSON object, got an array"),
    ],
)
async def test_malformed_arguments_become_arguments_error(
    provider: ProviderKit,
    fault_server: FaultServer,
    make_model: MakeModel,
    arguments: str,
    error_start: str,
) -> None:
    # Any: WireCall takes a dict or a str; the list is the point of the test.
    wire_arguments: Any = arguments
    if provider.name == "anthropic" and arguments.startswith("["):
        wire_arguments = [1, 2]  # `input` as a JSON array rather than an object
    fault_server.enqueue(
        provider.wire.tool_calls(
            WireCall("write_file", wire_arguments),
            WireCall("list_files", {"path": "."}),
        )
    )
    response = await make_model().complete(START, TOOLS)
    broken, fine = response.tool_calls
    assert broken.name == "write_file"
    assert broken.arguments is None
    assert broken.arguments_error is not None and broken.arguments_error.startswith(error_start)
    assert broken.raw_arguments.replace(" ", "") == arguments.replace(" ", "")
    assert (fine.arguments, fine.arguments_error) == ({"path": "."}, None)


async def test_unknown_tool_names_pass_through(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.tool_calls(WireCall("delete_everything", {"really": True})))
    (call,) = (await make_model().complete(START, TOOLS)).tool_calls
    assert (call.name, call.arguments) == ("delete_everything", {"really": True})


async def test_empty_answer(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.empty())
    response = await make_model().complete(START, TOOLS)
    assert (response.content, response.tool_calls, response.is_final) == ("", (), True)


async def test_missing_tool_call_ids_are_generated_deterministically(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    calls = (WireCall("list_files", {}), WireCall("list_files", {"path": "artifacts"}))
    fault_server.enqueue(*[provider.wire.tool_calls(*calls, omit_ids=True)] * 2)
    model = make_model()
    first = await model.complete(START, TOOLS)
    again = await model.complete(START, TOOLS)
    ids = [call.tool_call_id for call in first.tool_calls]
    assert len(set(ids)) == 2 and all(ids)
    assert ids == [call.tool_call_id for call in again.tool_calls]


async def test_unparseable_body_is_not_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(garbage(), provider.wire.text("never"))
    with pytest.raises(ProviderError, match="sent an HTML page, not JSON") as raised:
        await complete_with_retries(make_model(), START, TOOLS, sleep=Sleeps())
    assert not raised.value.retryable
    assert "text/html" in str(raised.value) and "Welcome" in str(raised.value)
    assert len(fault_server.requests) == 1


async def test_json_without_the_expected_fields_is_an_error(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply.json({"object": "something else"}))
    with pytest.raises(ProviderError, match="unexpected response"):
        await make_model().complete(START, TOOLS)


async def test_dropped_connection_is_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(disconnect(), provider.wire.text("ok"))
    attempts: list[RetryAttempt] = []
    response = await complete_with_retries(
        make_model(), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
    )
    assert response.content == "ok"
    assert str(attempts[0].error).startswith(
        f"{provider.name}: connection to {fault_server.address} failed: "
    )


async def test_connection_refused_is_retryable(provider: ProviderKit) -> None:
    with socket.socket() as probe:  # a port that nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = provider.model_class("m", base_url=f"http://127.0.0.1:{port}", timeout=2.0)
    try:
        with pytest.raises(ProviderError, match=f"connection to 127.0.0.1:{port} failed") as raised:
            await model.complete(START, TOOLS)
    finally:
        await model.aclose()
    assert raised.value.retryable


async def test_the_key_never_reaches_an_error_message(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    echo = f"Incorrect API key provided: {TEST_KEY}"
    fault_server.enqueue(provider.wire.error(500, echo), provider.wire.error(401, echo))
    attempts: list[RetryAttempt] = []
    with pytest.raises(ProviderError) as raised:
        await complete_with_retries(
            make_model(), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
        )
    texts = [str(raised.value), repr(raised.value), str(attempts[0].error)]
    assert all(TEST_KEY not in text for text in texts)
    assert "Incorrect API key provided: [REDACTED]" in str(raised.value)
    # the key went where it belongs and nowhere else
    request = fault_server.requests[0]
    assert TEST_KEY not in request.raw_body.decode()
    assert [name for name, value in request.headers.items() if TEST_KEY in value] == [
        "authorization" if provider.name == "openai" else "x-api-key"
    ]
