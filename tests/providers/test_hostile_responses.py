"""Both HTTP providers against a hostile server: bodies without end, decompression bombs,
lying headers, bytes that are not UTF-8, text that is not Unicode.

Every case ends in a `ProviderCallError` that names what arrived (never another exception),
in a tool call whose `arguments_error` tells the model what to fix, or in a clean response.
The server is the real fault server on 127.0.0.1; nothing of httpx is mocked. Each test runs
once per provider (`openai`, `anthropic`). `ATTACKS` at the bottom counts the cases tried.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import orjson
import pytest
from fault_server import (
    JSON_TYPE,
    FaultServer,
    Reply,
    WireCall,
    compressed,
    endless_body,
    garbage,
    gzip_bomb,
    raw_response,
)
from provider_kit import TEST_KEY, TOOLS, ProviderKit

from runlens.errors import ProviderCallError, UserError
from runlens.models._tool_calls import clean_response
from runlens.models._wire_errors import error_detail
from runlens.models.base import Model
from runlens.models.messages import (
    Message,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from runlens.models.retry import RetryAttempt, RetryPolicy, complete_with_retries

pytestmark = pytest.mark.anyio

MakeModel = Callable[..., Model]
START: list[Message] = [UserMessage("Analyse the feedback.")]
MiB = 1024 * 1024


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


async def failure(model: Model, server: FaultServer) -> ProviderCallError:
    """The error of one call, after retries; asserts it was not retried."""
    with pytest.raises(ProviderCallError) as raised:
        await complete_with_retries(model, START, TOOLS, sleep=Sleeps())
    assert not raised.value.retryable
    assert len(server.requests) == 1, "a hostile body must not be asked for again"
    return raised.value


# --- memory ------------------------------------------------------------------------------------


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


@contextmanager
def peak_memory_growth() -> Iterator[list[int]]:
    """Yields a list that receives, on exit, how far the process's peak RSS grew (bytes).

    Resets the kernel's high-water mark (`/proc/self/clear_refs`) where allowed; otherwise
    measures the resident set before and after, which bounds the growth less tightly.
    """
    growth: list[int] = []
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
        field = "VmHWM"
    except OSError:
        field = "VmRSS"
    before = _status_kib("VmRSS")
    yield growth
    growth.append((_status_kib(field) - before) * 1024)


# --- size --------------------------------------------------------------------------------------


async def test_an_endless_body_stops_at_16_mib_fast_and_in_bounded_memory(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(endless_body())
    model = make_model(timeout=10.0)
    started = time.monotonic()
    with peak_memory_growth() as growth:
        error = await failure(model, fault_server)
    assert time.monotonic() - started < 5.0
    assert str(error).startswith(f"{model.provider}: response body exceeds 16 MiB (from ")
    assert fault_server.address in str(error)
    assert "RUNLENS_MODEL_MAX_RESPONSE_BYTES" in str(error)
    # 16 MiB kept while reading, plus the allocator's slack: nowhere near the 546 MB of old.
    assert growth[0] < 64 * MiB, f"peak RSS grew {growth[0] / MiB:.0f} MiB"


async def test_the_limit_is_configurable_per_model(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.text("x" * 5000), provider.wire.text("y" * 500))
    small = provider.model_class(
        "m", base_url=provider.wire.base_url(fault_server), max_response_bytes=4096
    )
    try:
        error = await failure(small, fault_server)
        assert "response body exceeds 4 KiB" in str(error)
        assert (await small.complete(START, TOOLS)).content == "y" * 500
    finally:
        await small.aclose()


async def test_a_content_length_past_the_limit_fails_before_reading(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply(200, b"{}", (("Content-Type", JSON_TYPE),), content_length="9" * 12))
    error = await failure(make_model(), fault_server)
    assert "response body exceeds 16 MiB" in str(error)
    assert "Content-Length: 999999999999" in str(error)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_a_decompression_bomb_stops_at_the_limit_after_inflating(
    fault_server: FaultServer, make_model: MakeModel, encoding: str
) -> None:
    bomb = gzip_bomb(1 << 30, encoding=encoding)  # 1 GiB of JSON from about 1 MiB on the wire
    assert len(bomb.body) < 2 * MiB
    fault_server.enqueue(bomb)
    with peak_memory_growth() as growth:
        error = await failure(make_model(), fault_server)
    assert "response body exceeds 16 MiB" in str(error)
    assert "inflated from" in str(error) and encoding.removeprefix("raw-") in str(error)
    assert growth[0] < 64 * MiB, f"peak RSS grew {growth[0] / MiB:.0f} MiB"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_compressed_answers_still_work(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel, encoding: str
) -> None:
    fault_server.enqueue(compressed(provider.wire.text("compressed and fine"), encoding))
    assert (await make_model().complete(START, TOOLS)).content == "compressed and fine"
    assert fault_server.requests[0].header("accept-encoding") == "gzip, deflate"


async def test_a_corrupt_gzip_body_names_the_coding(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply(200, b"not gzip at all", (("Content-Encoding", "gzip"),)))
    error = await failure(make_model(), fault_server)
    assert "sent a body that could not be decompressed (gzip: " in str(error)


async def test_a_coding_not_asked_for_is_named_in_the_error(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply(200, b"\x1b\x00\x00\x00brotli?", (("Content-Encoding", "br"),)))
    error = await failure(make_model(), fault_server)
    assert "Content-Encoding br" in str(error)
    assert r'starts "\u001b\u0000\u0000\u0000brotli?"' in str(error)


async def test_a_chain_of_codings_is_refused_by_name(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    twice = compressed(compressed(Reply.json({"choices": []})))
    fault_server.enqueue(twice)
    assert twice.headers[-2:] == (("Content-Encoding", "gzip"), ("Content-Encoding", "gzip"))
    error = await failure(make_model(), fault_server)
    assert "sent a body with Content-Encoding gzip, gzip, which is not supported" in str(error)


async def test_an_endless_error_body_is_still_the_status_error_and_retried(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(endless_body(status=503), provider.wire.text("back"))
    attempts: list[RetryAttempt] = []
    started = time.monotonic()
    response = await complete_with_retries(
        make_model(), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
    )
    assert response.content == "back"
    assert time.monotonic() - started < 5.0
    (attempt,) = attempts
    assert str(attempt.error).startswith(
        f"{provider.name}: HTTP 503 Service Unavailable from {fault_server.address}: "
        '{"choices": [0, 0,'
    )
    assert len(str(attempt.error)) < 700


async def test_a_body_dripping_past_the_timeout_is_a_timeout(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    def drip() -> Iterator[bytes]:
        yield b'{"choices": ['
        while True:
            time.sleep(0.05)
            yield b" "

    fault_server.enqueue(Reply(200, headers=(("Content-Type", JSON_TYPE),), chunks=drip))
    started = time.monotonic()
    with pytest.raises(ProviderCallError, match=r"request timed out .* within 0\.4 s") as raised:
        await make_model(timeout=0.4).complete(START, TOOLS)
    assert raised.value.retryable
    assert time.monotonic() - started < 2.0


# --- lying or malformed HTTP -----------------------------------------------------------------


async def test_a_huge_content_type_is_cut_short_in_the_message(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply(200, b"nope", (("Content-Type", "text/" + "x" * 50_000),)))
    error = await failure(make_model(), fault_server)
    assert "not JSON (HTTP 200, text/xxxx" in str(error)
    assert len(str(error)) < 500


async def test_a_content_length_shorter_than_the_body_is_a_named_truncation(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    body = b'{"choices": [], "content": []}'
    fault_server.enqueue(Reply(200, body, content_length="14"))
    error = await failure(make_model(), fault_server)
    assert "sent a response that is not JSON" in str(error)
    assert r'starts "{\"choices\": []"' in str(error)


async def test_a_content_length_longer_than_the_body_is_a_dropped_connection(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(Reply(200, b'{"choices"', content_length="5000"), provider.wire.text("ok"))
    attempts: list[RetryAttempt] = []
    response = await complete_with_retries(
        make_model(), START, TOOLS, on_retry=attempts.append, sleep=Sleeps()
    )
    assert response.content == "ok"
    assert f"connection to {fault_server.address} failed" in str(attempts[0].error)


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * MiB + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X-Many: b\r\n" * 50_000 + b"\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}",
        b"\x00\xff garbage that is not HTTP at all\r\n\r\n",
    ],
    ids=["1-MiB-header", "50000-headers", "negative-content-length", "not-http"],
)
async def test_malformed_http_is_a_bounded_connection_error(
    fault_server: FaultServer, make_model: MakeModel, head: bytes
) -> None:
    fault_server.enqueue(*[raw_response(head)] * 2)
    with pytest.raises(ProviderCallError, match="failed") as raised:
        await complete_with_retries(
            make_model(), START, TOOLS, RetryPolicy(max_attempts=2), sleep=Sleeps()
        )
    assert f"connection to {fault_server.address} failed" in str(raised.value)
    assert len(str(raised.value)) < 400


@pytest.mark.parametrize(
    ("value", "delay"),
    [
        ("1_000", 0.5),  # float() would read these; Retry-After has ASCII digits only
        ("1e3", 0.5),
        ("1e999", 0.5),
        ("NaN", 0.5),
        ("Fri, 31 Dec 9999 23:59:59 -2359", 60.0),  # capped by the policy
        ("99999999999999999999", 60.0),
        ("Mon, 01 Jan 0001 00:00:00 +2359", 0.0),
        ("soon, I promise", 0.5),
    ],
)
async def test_retry_after_garbage_falls_back_to_backoff_or_the_cap(
    provider: ProviderKit,
    fault_server: FaultServer,
    make_model: MakeModel,
    value: str,
    delay: float,
) -> None:
    fault_server.enqueue(
        provider.wire.error(429, "slow", retry_after=value), provider.wire.text("ok")
    )
    sleeps = Sleeps()
    assert (await complete_with_retries(make_model(), START, TOOLS, sleep=sleeps)).content == "ok"
    assert sleeps == [delay]


# --- 200 bodies that are not a JSON object --------------------------------------------------

_NOT_AN_OBJECT = [
    pytest.param(
        b'{"choices": [{"\xff": 1}]}',
        r"sent a response that is not valid UTF-8 (byte 0xff at offset 15 of 23; HTTP 200",
        r'starts "{\"choices\": [{\"\xff\": 1}]}"',
        id="invalid-utf8",
    ),
    pytest.param(
        b"\xc3\x28 latin-1 caf\xe9",
        "not valid UTF-8 (byte 0xc3 at offset 0 of 15",
        r'starts "\xc3( latin-1 caf\xe9"',
        id="invalid-utf8-at-start",
    ),
    pytest.param(
        b"OK\n\tall good\x07",
        "sent a response that is not JSON (HTTP 200, application/json; Expecting value",
        r'starts "OK\n\tall good\u0007"',
        id="text",
    ),
    pytest.param(
        b'[{"choices": []}]',
        "sent JSON that is not an object (an array; HTTP 200",
        r'starts "[{\"choices\": []}]"',
        id="array",
    ),
    pytest.param(b'"just a string"', "JSON that is not an object (a string;", "", id="string"),
    pytest.param(b"null", "JSON that is not an object (null;", "", id="null"),
    pytest.param(b"  \r\n ", "sent an empty response (HTTP 200", "", id="blank"),
    pytest.param(
        b"\n<!DOCTYPE html><html><head><title>\n Login | Corp\n</title></head></html>",
        "sent an HTML page, not JSON (HTTP 200, application/json; is the base URL right?)",
        'title "Login | Corp", starts "\\n<!DOCTYPE html>',
        id="html",
    ),
    pytest.param(
        b"[" * 200_000,
        "sent JSON nested too deeply to read (HTTP 200",
        '"[[[[[[[[[[[[',
        id="nested-200000-deep",
    ),
    pytest.param(
        b'{"choices": [], "x": 1e99999999999999999999',
        "not JSON",
        "",
        id="truncated-number",
    ),
]


@pytest.mark.parametrize(("body", "expected", "shown"), _NOT_AN_OBJECT)
async def test_a_success_body_that_is_not_a_json_object_says_what_it_is(
    fault_server: FaultServer, make_model: MakeModel, body: bytes, expected: str, shown: str
) -> None:
    fault_server.enqueue(Reply(200, body, (("Content-Type", JSON_TYPE),)))
    model = make_model()
    error = await failure(model, fault_server)
    assert str(error).startswith(f"{model.provider}: {fault_server.address} "), str(error)
    assert expected in str(error)
    assert shown in str(error)
    assert error.status_code == 200


async def test_the_garbage_page_names_its_content_type(
    fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(garbage())
    error = await failure(make_model(), fault_server)
    assert "sent an HTML page, not JSON (HTTP 200, text/html;" in str(error)
    assert "Welcome" in str(error)


async def test_a_bom_and_non_finite_numbers_are_tolerated(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    reply = provider.wire.text("fine", usage=(3, 4))
    body = b"\xef\xbb\xbf" + reply.body.replace(b"3", b"NaN", 1).replace(b"4", b"1e999", 1)
    fault_server.enqueue(Reply(200, body, reply.headers))
    response = await make_model().complete(START, TOOLS)
    assert response.content == "fine"
    assert response.usage.input_tokens is None  # NaN is no count
    assert response.usage.output_tokens is None


# --- text that is not Unicode -------------------------------------------------------------------


def records_encode(response: ModelResponse) -> None:
    """What the runtime does with a response: record it (orjson) and send it back (UTF-8).

    Every field goes in, so a lone surrogate anywhere in the response fails here.
    """
    record = dataclasses.asdict(response)
    orjson.dumps(record)
    json.dumps(record, ensure_ascii=False).encode("utf-8")


async def test_lone_surrogates_in_text_become_u_fffd_and_are_noted(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.text("bad \ud800 and \udfff; fine \U0001f600"))
    response = await make_model().complete(START, TOOLS)
    assert response.content == "bad \ufffd and \ufffd; fine \U0001f600"
    assert response.notes == (
        "2 lone UTF-16 surrogates in the model's text (not valid Unicode) replaced with U+FFFD",
    )
    records_encode(response)


async def test_a_lone_surrogate_in_arguments_is_an_arguments_error(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(
        provider.wire.tool_calls(
            WireCall("write_file", {"path": "artifacts/a.md", "content": "x\udbffy"}),
            WireCall("read_feedback_csv", {"offset": 0}),
        )
    )
    broken, fine = (await make_model().complete(START, TOOLS)).tool_calls
    assert broken.arguments is None
    assert broken.arguments_error is not None
    assert broken.arguments_error.startswith(
        "arguments are not valid Unicode text: lone surrogate \\udbff in content; "
    )
    assert "\\udbff" in broken.raw_arguments  # shown as its escape, as it was sent
    assert (fine.arguments, fine.arguments_error) == ({"offset": 0}, None)


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_a_lone_surrogate_sent_raw_in_an_arguments_string_is_an_arguments_error(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    """`"arguments": "{\\"path\\": \\"\\ud800\\"}"` escaped once: the surrogate is in the text."""
    fault_server.enqueue(provider.wire.tool_calls(WireCall("list_files", '{"\ud800": "."}')))
    (call,) = (await make_model().complete(START, TOOLS)).tool_calls
    assert call.arguments is None
    assert call.arguments_error is not None
    assert "lone surrogate \\ud800 in a key of the arguments" in call.arguments_error
    assert call.raw_arguments == '{"\\ud800": "."}'


async def test_a_lone_surrogate_in_a_tool_name_or_id_is_replaced(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(
        provider.wire.tool_calls(WireCall("read_\udc80csv", {"offset": 0}, "id_\ud801"))
    )
    response = await make_model().complete(START, TOOLS)
    (call,) = response.tool_calls
    assert (call.name, call.tool_call_id) == ("read_\ufffdcsv", "id_\ufffd")
    assert response.notes and response.notes[0].startswith("2 lone UTF-16 surrogates")
    records_encode(response)


async def test_a_lone_surrogate_in_an_error_message_is_replaced(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.error(400, "bad input \ud800 here"))
    error = await failure(make_model(), fault_server)
    assert str(error).endswith(": bad input \ufffd here")
    str(error).encode("utf-8")


async def test_a_split_surrogate_pair_in_arguments_is_joined_not_refused(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    fault_server.enqueue(provider.wire.tool_calls(WireCall("write_file", {"content": "ok 😀"})))
    (call,) = (await make_model().complete(START, TOOLS)).tool_calls
    assert call.arguments == {"content": "ok 😀"}


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"offset": NaN}', "arguments are not valid JSON: NaN is not a JSON value"),
        ('{"offset": -Infinity}', "arguments are not valid JSON: -Infinity is not a JSON value"),
        ('{"offset": 1e400}', "arguments are not valid JSON: 1e400 is out of the range"),
        ("[" * 5000 + "]" * 5000, "arguments nest deeper than 64 levels"),
        ('{"a":' * 100 + "1" + "}" * 100, "arguments nest deeper than 64 levels"),
    ],
    ids=["NaN", "-Infinity", "1e400", "5000-deep", "100-deep-object"],
)
@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_arguments_json_cannot_hold_is_an_arguments_error(
    provider: ProviderKit,
    fault_server: FaultServer,
    make_model: MakeModel,
    arguments: str,
    reason: str,
) -> None:
    fault_server.enqueue(provider.wire.tool_calls(WireCall("read_feedback_csv", arguments)))
    (call,) = (await make_model().complete(START, TOOLS)).tool_calls
    assert call.arguments is None
    assert call.arguments_error is not None and call.arguments_error.startswith(reason)


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_anthropic_input_nested_too_deep_or_non_finite_is_safe_to_send_back(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    deep = json.loads('{"a":' * 100 + "1" + "}" * 100)
    reply = provider.wire.tool_calls(
        WireCall("write_file", deep, "t_deep"), WireCall("read_feedback_csv", {"offset": 7})
    )
    body = reply.body.replace(b'"offset": 7', b'"offset": NaN')
    fault_server.enqueue(Reply(200, body, reply.headers), provider.wire.text("done"))
    model = make_model()
    first = await model.complete(START, TOOLS)
    deep_call, nan_call = first.tool_calls
    assert deep_call.arguments is None
    assert deep_call.arguments_error == "arguments nest deeper than 64 levels"
    assert nan_call.arguments == {"offset": None}  # NaN is no JSON number: null, as sent back
    # Both calls go back in the history without breaking the next request.
    results = [
        *START,
        first.to_message(),
        *[_result(call) for call in first.tool_calls],
    ]
    assert (await model.complete(results, TOOLS)).content == "done"
    assert fault_server.requests[1].json is not None


def _result(call: ToolCall) -> Message:
    return ToolResultMessage(call.tool_call_id, call.name, "error", is_error=True)


async def test_an_absurd_tool_name_and_token_counts_are_bounded(
    provider: ProviderKit, fault_server: FaultServer, make_model: MakeModel
) -> None:
    reply = provider.wire.tool_calls(WireCall("n" * 100_000, {}), usage=(-5, 10**30))
    fault_server.enqueue(reply)
    response = await make_model().complete(START, TOOLS)
    (call,) = response.tool_calls
    assert len(call.name) == 256 and call.name.endswith("...")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (None, None)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"api_key": "sk-ключ-0123456789"}, "the API key (RUNLENS_"),
        ({"api_key": "sk-abc\ndef"}, "cannot carry, at position 7"),
        ({"base_url": "localhost:8080/v1"}, "must be an http:// or https:// URL"),
        ({"base_url": "ftp://127.0.0.1/"}, "must be an http:// or https:// URL"),
    ],
    ids=["non-ascii-key", "line-break-in-key", "no-scheme", "ftp"],
)
def test_settings_no_request_can_carry_are_a_user_error(
    provider: ProviderKit, setting: dict[str, str], message: str
) -> None:
    arguments = {"base_url": "http://127.0.0.1:9", **setting}
    with pytest.raises(UserError, match=re.escape(message)) as raised:
        provider.model_class("m", **arguments)
    assert "ключ" not in str(raised.value) and "def" not in str(raised.value)


def test_clean_response_catches_what_a_parser_let_through() -> None:
    """The boundary net in `HttpChatModel.complete`, for parsers that skip `parse_arguments`."""
    sneaky = ModelResponse(
        content="a\ud800",
        tool_calls=(ToolCall("c", "write_file", {"content": "b\udc00"}, '{"content": "b\udc00"}'),),
        model_name="m\ud800",
    )
    cleaned = clean_response(sneaky)
    (call,) = cleaned.tool_calls
    assert (cleaned.content, cleaned.model_name) == ("a\ufffd", "m\ufffd")
    assert call.arguments is None and "lone surrogate \\udc00 in content" in str(
        call.arguments_error
    )
    assert call.raw_arguments == '{"content": "b\\udc00"}'
    records_encode(cleaned)
    assert clean_response(cleaned) is cleaned


def test_the_key_is_masked_even_where_an_error_detail_is_cut() -> None:
    message = "x" * 480 + f" key {TEST_KEY} and then some more text"
    detail = error_detail(json.dumps({"error": {"message": message}}).encode(), [TEST_KEY])
    assert TEST_KEY[:12] not in detail
    assert detail.endswith("...")
