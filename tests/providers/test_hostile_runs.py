"""Whole `runlens run ... --json` runs against a hostile provider: what reaches the records
and stdout when the server sends an endless body, a decompression bomb, bytes that are not
UTF-8, or text that is not Unicode (lone UTF-16 surrogates, which orjson refuses to write).

Every run must end `completed` or `failed` with a named cause, never `internal error`; its
stdout is one JSON object and every record on disk stays readable JSON. Each test runs once
per wire format unless it says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fault_server import FaultServer, Reply, WireCall, endless_body, gzip_bomb
from provider_kit import ProviderKit
from test_provider_runs import (
    Documents,
    assert_completed,
    assert_provider_failure,
    full_task,
    tool_results,
)

from runlens_feedback.contracts import ANALYSIS

RunCli = Callable[..., Any]
RunRecords = Any
MiB = 1024 * 1024


def assert_records_readable(run: RunRecords) -> None:
    """stdout is one JSON object; events, run record and every JSON file on disk parse."""
    assert "internal error" not in run.stdout
    assert run.verdict["status"] in {"completed", "failed"}
    assert run.record["status"] == run.verdict["status"]
    assert run.events and run.types[-1] in {"run.completed", "run.failed"}
    for path in run.files():
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))


# --- size ----------------------------------------------------------------------------------


def test_an_endless_body_fails_the_run_at_once_with_the_limit_named(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(endless_body(), provider.wire.text("never asked for"))

    run = run_cli()

    message = assert_provider_failure(run)
    assert message.startswith(
        f"model provider error: {provider.name}: response body exceeds 16 MiB (from "
    )
    assert len(fault_server.requests) == 1  # not retried
    assert run.data("model.retried") == []
    assert run.seconds < 10
    assert_records_readable(run)


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
def test_an_endless_body_in_a_subprocess_fails_fast_in_bounded_memory(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    """`python -m runlens` as a user runs it: before the cap it grew to 546 MB and hung on."""
    fault_server.enqueue(provider.wire.error(401, "baseline"))
    baseline = run_cli(in_subprocess=True)
    fault_server.enqueue(endless_body())

    run = run_cli(in_subprocess=True)

    assert run.exit_code == 1, run.stderr
    assert run.verdict["status"] == "failed"
    assert "response body exceeds 16 MiB" in run.verdict["error_message"]
    assert "Traceback" not in run.stderr
    assert run.seconds < baseline.seconds + 5
    growth = run.peak_rss_bytes - baseline.peak_rss_bytes
    assert growth < 48 * MiB, f"peak RSS {growth / MiB:.0f} MiB above a run that read nothing"


def test_the_limit_comes_from_the_environment(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(provider.wire.text("a" * 3000))

    run = run_cli(env={"RUNLENS_MODEL_MAX_RESPONSE_BYTES": "2048"})

    assert "response body exceeds 2 KiB" in assert_provider_failure(run)


def test_a_limit_that_is_no_number_is_a_usage_error(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    run = run_cli(env={"RUNLENS_MODEL_MAX_RESPONSE_BYTES": "16MiB"})

    assert run.exit_code == 2
    assert fault_server.requests == []


def test_an_api_key_no_header_can_carry_is_a_usage_error_not_a_traceback(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    run = run_cli(env={f"{provider.name.upper()}_API_KEY": "sk-ключ-0123456789"})

    assert run.exit_code == 2
    assert "holds a character an HTTP header cannot carry" in run.stderr
    assert fault_server.requests == []


def test_a_gzip_bomb_fails_the_run_at_the_limit(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(gzip_bomb(1 << 30))

    run = run_cli()

    message = assert_provider_failure(run)
    assert "response body exceeds 16 MiB" in message and "of gzip" in message
    assert run.seconds < 10


# --- 200 bodies that are not a JSON object ---------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"choices": [{"x\xff": 1}]}', "not valid UTF-8 (byte 0xff at offset 16 of 24"),
        (b"<!doctype html><title>Router</title>", "sent an HTML page, not JSON ("),
        (b"event: ping\ndata: {}\n\n", "not JSON (HTTP 200, application/json; Expecting value"),
        (b"[]", "sent JSON that is not an object (an array;"),
    ],
    ids=["invalid-utf8", "html", "event-stream", "array"],
)
def test_a_body_that_is_not_a_json_object_fails_the_run_naming_it(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, body: bytes, expected: str
) -> None:
    fault_server.enqueue(Reply(200, body, (("Content-Type", "application/json"),)))

    run = run_cli()

    message = assert_provider_failure(run)
    assert expected in message, message
    assert "starts " in message or "title" in message
    assert len(fault_server.requests) == 1
    assert_records_readable(run)


# --- text that is not Unicode ------------------------------------------------------------------


def test_a_lone_surrogate_in_the_answer_ends_in_a_clean_failed_run(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(provider.wire.text("All done \ud800 really."))

    run = run_cli()

    assert run.exit_code == 1
    assert run.verdict["status"] == "failed"
    assert run.verdict["error_message"].startswith("missing required files: ")
    (called,) = run.data("model.called")
    assert called["content"] == "All done \ufffd really."
    assert_records_readable(run)


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
def test_a_lone_surrogate_answer_in_a_subprocess_prints_json(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(provider.wire.text("\udfff"))

    run = run_cli(in_subprocess=True)

    assert run.exit_code == 1, run.stderr
    assert run.verdict["status"] == "failed"
    assert "internal error" not in run.stdout and "Traceback" not in run.stderr
    assert_records_readable(run)


def test_lone_surrogates_in_arguments_go_back_to_the_model_and_the_run_completes(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    bad_write = WireCall("write_file", {"path": ANALYSIS, "content": '{"x": "\udc00"}'}, "c_w")
    bad_read = WireCall("read_feedback_csv", {"offset": 0, "\ud800": 1}, "c_r")
    fault_server.enqueue(
        provider.wire.tool_calls(bad_write, bad_read), *full_task(provider, good_documents)
    )

    run = run_cli()

    assert_completed(run)
    failed = {d["tool_call_id"]: d for d in run.data("tool.failed")}
    assert set(failed) == {"c_w", "c_r"}
    assert {d["error_kind"] for d in failed.values()} == {"invalid_arguments"}
    assert "lone surrogate \\udc00 in content" in failed["c_w"]["error"]
    assert "lone surrogate \\ud800 in a key of the arguments" in failed["c_r"]["error"]
    text, is_error = tool_results(provider, fault_server.requests[1].json)["c_w"]
    assert is_error and "not valid Unicode text" in text
    called = {d["tool_call_id"]: d for d in run.data("tool.called")}
    assert "\\udc00" in called["c_w"]["arguments"]["_raw"]  # recorded as its escape
    assert_records_readable(run)


def test_a_lone_surrogate_in_a_tool_name_is_an_unknown_tool(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    odd = WireCall("read_feedback_csv\udbff", {"offset": 0}, "c_odd\ud800")
    fault_server.enqueue(provider.wire.tool_calls(odd), *full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    (failed,) = run.data("tool.failed")
    assert failed["error_kind"] == "unknown_tool"
    assert (failed["name"], failed["tool_call_id"]) == ("read_feedback_csv\ufffd", "c_odd\ufffd")
    assert_records_readable(run)


def test_a_lone_surrogate_in_server_errors_is_recorded_and_fails_cleanly(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(*[provider.wire.error(500, "upstream \ud800 broke")] * 4)

    run = run_cli()

    message = assert_provider_failure(run)
    assert message.endswith("after 4 attempts: upstream \ufffd broke")
    assert len(run.data("model.retried")) == 3
    assert_records_readable(run)


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
def test_tool_input_json_cannot_hold_goes_back_to_the_model_and_the_run_completes(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    """`input` with NaN, 1e999 or 100 levels of nesting: recorded, and sent back in the
    history of every later request without breaking it."""
    deep = json.loads('{"a":' * 100 + "0" + "}" * 100)
    reply = provider.wire.tool_calls(
        WireCall("read_feedback_csv", {"offset": 11, "limit": 12}, "c_nan"),
        WireCall("write_file", deep, "c_deep"),
    )
    body = reply.body.replace(b'"offset": 11', b'"offset": NaN').replace(b"12", b"1e999")
    fault_server.enqueue(Reply(200, body, reply.headers), *full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    failed = {d["tool_call_id"]: d for d in run.data("tool.failed")}
    assert set(failed) == {"c_nan", "c_deep"}
    assert "arguments nest deeper than 64 levels" in failed["c_deep"]["error"]
    assert all(request.json is not None for request in fault_server.requests)
    assert_records_readable(run)
