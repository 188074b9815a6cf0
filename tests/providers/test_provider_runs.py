"""Whole runs through the CLI with a real HTTP provider: `runlens run feedback-analysis
--model openai:... | anthropic:...` against the scripted fault server on 127.0.0.1.

Each test scripts what "the model" answers, runs the command the way a user does (click's
runner in-process, or `python -m runlens` in a subprocess) and checks the run's verdict, its
records on disk and the requests the server received. Every test runs once per wire format
through the `provider` fixture unless it says otherwise. Retries wait 0.01 s, 0.02 s ... here
(`RUNLENS_RETRY_INITIAL_DELAY`), so failure paths cost milliseconds, not seconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fault_server import FaultServer, Reply, WireCall, hang
from provider_kit import TEST_KEY, ProviderKit

from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

RunCli = Callable[..., Any]  # the `run_cli` fixture; it returns conftest's `RunRecords`
RunRecords = Any
Documents = tuple[dict[str, Any], dict[str, Any], str]

TOOL_NAMES = {"read_feedback_csv", "analyze_feedback_batches", "write_file", "read_file"}
PARAPHRASE = "导出周报很慢"  # fb_001 says 导出周报太慢了: the meaning, not the words


# --- scripting the model ---------------------------------------------------------------------


def read_call(call_id: str = "call_read") -> WireCall:
    return WireCall("read_feedback_csv", {"offset": 0, "limit": 50}, call_id)


def write_call(path: str, document: dict[str, Any] | str, call_id: str) -> WireCall:
    text = document if isinstance(document, str) else json.dumps(document, ensure_ascii=False)
    return WireCall("write_file", {"path": path, "content": text}, call_id)


def deliverable_writes(documents: Documents) -> tuple[WireCall, ...]:
    analysis, backlog, report = documents
    return (
        write_call(ANALYSIS, analysis, "call_w_analysis"),
        write_call(BACKLOG, backlog, "call_w_backlog"),
        write_call(REPORT, report, "call_w_report"),
    )


def full_task(provider: ProviderKit, documents: Documents) -> list[Reply]:
    """Read the CSV, write the three deliverables in one turn, then say done."""
    wire = provider.wire
    return [
        wire.tool_calls(read_call(), usage=(100, 10)),
        wire.tool_calls(*deliverable_writes(documents), content="Writing.", usage=(200, 20)),
        wire.text("Done: three deliverables written.", usage=(300, 30)),
    ]


# --- reading what the server received ----------------------------------------------------------


def system_text(provider: ProviderKit, body: dict[str, Any]) -> str:
    if provider.name == "openai":
        (system,) = [m for m in body["messages"] if m["role"] == "system"]
        return str(system["content"])
    return str(body["system"])


def tool_schemas(provider: ProviderKit, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if provider.name == "openai":
        return {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}
    return {tool["name"]: tool["input_schema"] for tool in body["tools"]}


def tool_results(provider: ProviderKit, body: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """tool call id -> (result text, is_error) for every tool result in the conversation."""
    if provider.name == "openai":
        return {
            m["tool_call_id"]: (m["content"], m["content"].startswith("ERROR: "))
            for m in body["messages"]
            if m["role"] == "tool"
        }
    blocks = [b for m in body["messages"] if m["role"] == "user" for b in _blocks(m)]
    return {
        b["tool_use_id"]: (str(b.get("content", "")), bool(b.get("is_error")))
        for b in blocks
        if b.get("type") == "tool_result"
    }


def last_user_text(provider: ProviderKit, body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    assert last["role"] == "user", last
    if provider.name == "openai":
        return str(last["content"])
    return "\n".join(b["text"] for b in _blocks(last) if b.get("type") == "text")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def credential(provider: ProviderKit, headers: dict[str, str]) -> str | None:
    if provider.name == "openai":
        return headers.get("authorization", "").removeprefix("Bearer ") or None
    return headers.get("x-api-key")


# --- checks shared by many tests ---------------------------------------------------------------


def assert_no_open_steps(run: RunRecords) -> None:
    assert "running" not in run.plan.values(), run.plan


def assert_provider_failure(run: RunRecords) -> str:
    """The run failed on the provider, before any validation; returns the error message."""
    assert run.exit_code == 1, run.stdout
    assert run.verdict["status"] == "failed"
    message = run.verdict["error_message"]
    assert message.startswith("model provider error: "), message
    assert run.record["error_message"] == message
    assert "run.validating" not in run.types
    assert run.verdict["findings"] == []
    assert run.data("run.failed")[-1]["phase"] == "running"
    assert len(run.data("model.failed")) == 1
    assert_no_open_steps(run)
    return str(message)


def assert_completed(run: RunRecords) -> None:
    assert run.exit_code == 0, run.stdout
    assert run.verdict["status"] == "completed", run.verdict["error_message"]
    assert run.record["status"] == "completed"
    # The scripted model writes the three required deliverables and draws no chart: the
    # optional chart is listed as missing, with no finding.
    assert run.verdict["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }
    assert not [f for f in run.verdict["findings"] if f["artifact"] == CHART]
    assert set(run.plan.values()) == {"completed"}


# --- (a) a whole task with tool calls ----------------------------------------------------------


def test_tool_calling_run_completes_and_records_everything(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    fault_server.enqueue(*full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    assert fault_server.pending == 0
    assert (run.workspace / ANALYSIS).read_text(encoding="utf-8") == json.dumps(
        good_documents[0], ensure_ascii=False
    )
    assert (run.metrics["input_tokens"], run.metrics["output_tokens"]) == (600, 60)
    assert run.verdict["metrics"] == run.metrics
    counts = (run.metrics["turns"], run.metrics["model_calls"], run.metrics["tool_calls"])
    assert counts == (3, 3, 4)
    assert [(d["input_tokens"], d["output_tokens"]) for d in run.data("model.called")] == [
        (100, 10),
        (200, 20),
        (300, 30),
    ]
    called = run.data("tool.called")
    assert [(d["tool_call_id"], d["name"]) for d in called] == [
        ("call_read", "read_feedback_csv"),
        ("call_w_analysis", "write_file"),
        ("call_w_backlog", "write_file"),
        ("call_w_report", "write_file"),
    ]
    assert called[0]["arguments"] == {"offset": 0, "limit": 50}
    assert [d["tool_call_id"] for d in run.data("tool.completed")] == [
        d["tool_call_id"] for d in called
    ]
    assert run.data("tool.failed") == []


def test_every_request_carries_the_system_prompt_the_tools_and_the_history(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    fault_server.enqueue(*full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    prompt = (run.workspace / "runtime" / "system_prompt.md").read_text(encoding="utf-8")
    assert "artifacts/insight_report.md" in prompt
    requests = fault_server.requests
    assert [r.path for r in requests] == [provider.wire.path] * 3
    for request in requests:
        body = request.json
        assert body["model"] == "fault-model"
        assert system_text(provider, body) == prompt
        schemas = tool_schemas(provider, body)
        assert set(schemas) >= TOOL_NAMES, sorted(schemas)
        assert {"offset", "limit"} <= set(schemas["read_feedback_csv"]["properties"])
        assert schemas["write_file"]["required"] == ["path", "content"]
        assert credential(provider, request.headers) == TEST_KEY
    # The CSV page went back to the model as the result of its call, and so did each write.
    page, is_error = tool_results(provider, requests[1].json)["call_read"]
    assert not is_error
    assert json.loads(page)["total_rows"] == 3
    assert "invalid token" in page
    assert set(tool_results(provider, requests[2].json)) == {
        "call_read",
        "call_w_analysis",
        "call_w_backlog",
        "call_w_report",
    }


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
def test_the_cli_entry_point_runs_a_task_in_a_subprocess(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    """`python -m runlens run ...` with the environment a user would export."""
    fault_server.enqueue(*full_task(provider, good_documents))

    run = run_cli(in_subprocess=True)

    assert_completed(run)
    assert run.verdict["workspace"] == str(run.workspace)
    assert run.metrics["input_tokens"] == 600
    assert (run.workspace / "manifest.json").is_file()


# --- (b) 429 with Retry-After ----------------------------------------------------------------


def test_rate_limit_is_waited_out_and_recorded(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    fault_server.enqueue(
        provider.wire.error(429, "rate limited, slow down", retry_after="1"),
        *full_task(provider, good_documents),
    )

    run = run_cli()

    assert_completed(run)
    (retried,) = run.data("model.retried")
    assert retried["attempt"] == 1
    assert retried["status_code"] == 429
    assert retried["delay_seconds"] == 1.0  # Retry-After, not the 0.01 s backoff
    assert "429" in retried["error"]
    assert "rate limited, slow down" in retried["error"]
    assert run.seconds >= 1.0  # and it was actually waited
    assert run.metrics["model_retries"] == 1
    assert run.metrics["model_calls"] == 3  # a retried call is still one call
    assert len(fault_server.requests) == 4
    assert fault_server.requests[0].raw_body == fault_server.requests[1].raw_body


# --- (c) a provider that stays down ------------------------------------------------------------


def test_server_errors_until_the_retry_cap_fail_the_run_as_a_provider_error(
    provider: ProviderKit,
    fault_server: FaultServer,
    run_cli: RunCli,
    good_documents: Documents,
    retry_initial_delay: float,
) -> None:
    wire = provider.wire
    analysis_write = deliverable_writes(good_documents)[0]
    fault_server.enqueue(
        wire.tool_calls(read_call()),
        wire.tool_calls(analysis_write),
        *[wire.error(500, "upstream exploded") for _ in range(4)],
    )

    run = run_cli()

    message = assert_provider_failure(run)
    assert "HTTP 500" in message
    assert "after 4 attempts" in message
    assert "upstream exploded" in message
    assert fault_server.pending == 0
    assert len(fault_server.requests) == 2 + 4
    retried = run.data("model.retried")
    assert [d["status_code"] for d in retried] == [500, 500, 500]
    delays = [d["delay_seconds"] for d in retried]
    assert delays == pytest.approx([retry_initial_delay * 2**n for n in range(3)])
    assert run.metrics["model_retries"] == 3
    # The step under way when the provider went down failed; it is not left running.
    assert run.plan["load_feedback"] == "completed"
    assert run.plan["analyze_feedback"] == "failed"
    # What was written stays for inspection, and no artifact is called validated.
    assert (run.workspace / ANALYSIS).is_file()
    assert "validated" not in run.verdict["artifacts"].values()
    assert run.manifest["status"] == "failed"


# --- (d) a server that hangs past the timeout -------------------------------------------------


def test_a_hang_past_the_timeout_is_retried_and_the_run_completes(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    fault_server.enqueue(hang(5.0), *full_task(provider, good_documents))

    run = run_cli(env={"RUNLENS_MODEL_TIMEOUT": "0.5"})

    assert_completed(run)
    (retried,) = run.data("model.retried")
    assert "timed out" in retried["error"]
    assert "within 0.5 s" in retried["error"]
    assert retried["status_code"] is None
    assert run.seconds < 5.0  # the client gave up on the hang, it did not sit it out


def test_a_server_that_always_hangs_fails_the_run_with_a_timeout_message(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli
) -> None:
    fault_server.enqueue(*[hang(5.0) for _ in range(4)])

    run = run_cli(env={"RUNLENS_MODEL_TIMEOUT": "0.3"})

    message = assert_provider_failure(run)
    assert "timed out" in message
    assert "after 4 attempts" in message
    assert len(fault_server.requests) == 4
    assert run.seconds < 5.0


# --- (e), (f) what the model gets wrong goes back to it -----------------------------------------


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"offset": 0, "limit": ', "not valid JSON"),
        ("[0, 50]", "must be a JSON object"),
        ({"offset": "zero"}, "offset"),
    ],
    ids=["truncated-json", "array", "schema-violation"],
)
def test_malformed_tool_arguments_are_a_tool_error_and_the_run_goes_on(
    provider: ProviderKit,
    fault_server: FaultServer,
    run_cli: RunCli,
    good_documents: Documents,
    arguments: dict[str, Any] | str,
    reason: str,
) -> None:
    bad = WireCall("read_feedback_csv", arguments, "call_bad")
    fault_server.enqueue(provider.wire.tool_calls(bad), *full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    (failed,) = run.data("tool.failed")
    assert (failed["tool_call_id"], failed["name"]) == ("call_bad", "read_feedback_csv")
    assert failed["error_kind"] == "invalid_arguments"
    assert reason in failed["error"]
    assert run.metrics["tool_failures"] == 1
    text, is_error = tool_results(provider, fault_server.requests[1].json)["call_bad"]
    assert is_error
    assert "invalid arguments for read_feedback_csv" in text
    assert reason in text


def test_an_unknown_tool_is_a_tool_error_and_the_run_goes_on(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    unknown = WireCall("delete_all_feedback", {"confirm": True}, "call_unknown")
    fault_server.enqueue(provider.wire.tool_calls(unknown), *full_task(provider, good_documents))

    run = run_cli()

    assert_completed(run)
    (failed,) = run.data("tool.failed")
    assert (failed["tool_call_id"], failed["error_kind"]) == ("call_unknown", "unknown_tool")
    (called,) = [d for d in run.data("tool.called") if d["tool_call_id"] == "call_unknown"]
    assert called["arguments"] == {"confirm": True}
    text, is_error = tool_results(provider, fault_server.requests[1].json)["call_unknown"]
    assert is_error
    assert "unknown tool 'delete_all_feedback'" in text
    assert "read_feedback_csv" in text  # the model is told what it can call instead


# --- (g) loop limits ---------------------------------------------------------------------------


def test_a_model_that_never_finishes_is_stopped_by_max_turns(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    wire = provider.wire
    analysis_write = deliverable_writes(good_documents)[0]
    # Exactly three turns are scripted: a fourth request would get a 418 and a provider error.
    fault_server.enqueue(
        wire.tool_calls(read_call()),
        wire.tool_calls(analysis_write),
        wire.tool_calls(WireCall("list_files", {"path": "artifacts"}, "call_ls")),
    )

    run = run_cli("--max-turns", "3")

    assert run.exit_code == 1
    assert run.verdict["status"] == "failed"
    assert run.verdict["error_message"].startswith("loop limit: max turns (3) reached; ")
    assert len(fault_server.requests) == 3
    assert run.metrics["turns"] == 3
    assert "run.validating" in run.types  # what was delivered is still validated
    assert_no_open_steps(run)
    assert run.plan["analyze_feedback"] == "completed"  # its analysis was written and valid
    assert run.plan["write_report"] == "failed"
    assert run.plan["validate_deliverables"] == "failed"


# --- (h) a paraphrased quote is a validation failure -------------------------------------------


def paraphrased(documents: Documents) -> Documents:
    analysis, backlog, report = documents
    broken = json.loads(json.dumps(analysis))
    broken["items"][0]["evidence_text"] = PARAPHRASE
    return broken, backlog, report


def test_a_paraphrased_quote_fails_validation_not_the_provider(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    fault_server.enqueue(*full_task(provider, paraphrased(good_documents)))

    run = run_cli()

    assert run.exit_code == 1
    assert run.verdict["status"] == "failed"
    message = run.verdict["error_message"]
    assert "text mismatch" in message
    assert not message.startswith("model provider error")
    assert "run.validating" in run.types
    (finding,) = run.verdict["findings"]
    assert (finding["code"], finding["artifact"], finding["path"]) == (
        "evidence_text_mismatch",
        ANALYSIS,
        "items[0].evidence_text",
    )
    assert run.verdict["artifacts"] == {
        ANALYSIS: "rejected",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }
    assert run.metrics["findings_by_code"] == {"evidence_text_mismatch": 1}
    assert run.data("run.failed")[-1]["phase"] == "validating"
    assert run.data("model.failed") == []
    assert len(fault_server.requests) == 3  # no repair round by default


def test_a_repair_round_tells_the_model_what_to_fix_and_the_fix_completes_the_run(
    provider: ProviderKit, fault_server: FaultServer, run_cli: RunCli, good_documents: Documents
) -> None:
    wire = provider.wire
    fixed_analysis = write_call(ANALYSIS, good_documents[0], "call_fix")
    fault_server.enqueue(
        *full_task(provider, paraphrased(good_documents)),
        wire.tool_calls(fixed_analysis, usage=(400, 40)),
        wire.text("Fixed the quote.", usage=(500, 50)),
    )

    run = run_cli("--repair-turns", "1")

    assert_completed(run)
    assert fault_server.pending == 0
    repair = last_user_text(provider, fault_server.requests[3].json)
    prose = repair.split("```json")[0]  # the part written for the model to read
    assert prose.startswith("Validation failed")
    assert ANALYSIS in prose
    assert "items[0].evidence_text" in prose
    assert "evidence_text_mismatch" in prose
    assert BACKLOG not in prose.split("Already accepted")[0]  # only the rejected artifact
    (requested,) = run.data("repair.requested")
    assert requested["finding_codes"] == ["evidence_text_mismatch"]
    assert (run.metrics["validation_rounds"], run.metrics["repair_rounds"]) == (2, 1)
    assert run.metrics["input_tokens"] == 100 + 200 + 300 + 400 + 500
    assert [d["round"] for d in run.data("run.validating")] == [1, 2]


# --- secrets -----------------------------------------------------------------------------------

#: Not shaped like any provider's key, so only redacting the literal value can hide it.
PLAIN_KEY = "local-server-key-4f9c2a7e51"


@pytest.mark.parametrize(
    ("provider", "key_variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("openai", "RUNLENS_OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("anthropic", "RUNLENS_ANTHROPIC_API_KEY"),
    ],
    indirect=["provider"],
)
def test_the_api_key_never_reaches_a_workspace_file(
    provider: ProviderKit,
    fault_server: FaultServer,
    run_cli: RunCli,
    good_documents: Documents,
    key_variable: str,
) -> None:
    """A server that echoes the key, in an error and in the model's answer, must not get it
    written anywhere in the workspace."""
    wire = provider.wire
    *work, _ = full_task(provider, good_documents)
    fault_server.enqueue(
        wire.error(503, f"overloaded; request authorised with key {PLAIN_KEY}"),
        *work,
        wire.text(f"Done. (Your key {PLAIN_KEY} works.)"),
    )
    prefix = provider.name.upper()
    env = {f"{prefix}_API_KEY": None, key_variable: PLAIN_KEY}

    run = run_cli(env=env)

    assert_completed(run)
    assert credential(provider, fault_server.requests[0].headers) == PLAIN_KEY
    leaks = [p for p in run.files() if PLAIN_KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert PLAIN_KEY not in run.stdout
    events = (run.workspace / "runtime" / "events.jsonl").read_text(encoding="utf-8")
    assert events.count("[REDACTED]") >= 2  # the echoes were recorded, masked
