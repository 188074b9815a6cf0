"""The counting model server: real HTTP, real `runlens run` processes against it."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .model_server import (
    MODEL_SPEC,
    SAMPLE_CSV,
    CountingModelServer,
    distinct_inputs,
    env_for,
    fingerprint,
)

SERVER_SCRIPT = Path(__file__).with_name("model_server.py")
REPO = Path(__file__).resolve().parents[2]


def _chat(user: str = "Analyse input/x.csv") -> dict[str, Any]:
    """A first turn of the run's conversation, as the openai provider sends it."""
    return {
        "model": "counting-offline",
        "messages": [
            {"role": "system", "content": "You are a product analyst."},
            {"role": "user", "content": user},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "read_feedback_csv", "description": "", "parameters": {}},
            }
        ],
        "tool_choice": "auto",
    }


def _post(url: str, body: Any, *, path: str = "/chat/completions") -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(
        url + path, data=data, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _start(
    csv_path: Path, workspace: Path, server: CountingModelServer | None
) -> subprocess.Popen[str]:
    """`runlens run feedback-analysis CSV --model openai:...` as a real process (the offline
    model when `server` is None)."""
    model = ("--model", MODEL_SPEC) if server is not None else ()
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "runlens", "run", "feedback-analysis", str(csv_path)),
            *model,
            *("--workspace", str(workspace), "--json"),
        ],
        env={**os.environ, **(env_for(server) if server is not None else {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    """The run's `--json` verdict, once it has exited 0."""
    try:
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stdout + stderr
    payload: dict[str, Any] = json.loads(stdout)
    return payload


def _artifacts(workspace: Path) -> dict[str, bytes]:
    return {
        path.relative_to(workspace).as_posix(): path.read_bytes()
        for path in sorted((workspace / "artifacts").rglob("*"))
        if path.is_file()
    }


def test_the_fingerprint_is_the_canonical_json_of_the_body() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "导出 é"}], "n": 1}
    b = json.loads('{"n": 1,   "messages": [{"content": "导出 é", "role": "user"}], "model": "m"}')
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint({**a, "n": 2})
    canonical = '{"messages":[{"content":"导出 é","role":"user"}],"model":"m","n":1}'
    assert fingerprint(a) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_env_for_points_the_openai_provider_at_the_server() -> None:
    from runlens.models.openai import create

    with CountingModelServer() as server:
        env = env_for(server)
        # RUNLENS_* wins over the SDK's names: a real endpoint in the environment is not used
        model = create("counting-offline", env={**env, "OPENAI_BASE_URL": "https://x.invalid"})
        assert model.base_url == server.url
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        assert env_for(server.url) == env


def test_a_run_completes_and_an_identical_run_sends_identical_requests(tmp_path: Path) -> None:
    with CountingModelServer(latency=0.02) as server:
        offline = _start(SAMPLE_CSV, tmp_path / "offline", None)  # meanwhile, for comparison
        first = _finish(_start(SAMPLE_CSV, tmp_path / "first", server))
        sent_first = server.fingerprints()
        second = _finish(_start(SAMPLE_CSV, tmp_path / "second", server))
        sent = server.fingerprints()
        assert _finish(offline)["status"] == "completed"
    assert first["status"] == second["status"] == "completed"
    assert first["run_id"] != second["run_id"]
    assert len(sent_first) >= 5  # read, batches, writes, figures, report, final answer
    assert sent == sent_first + sent_first  # same requests, same order
    assert server.repeated() == dict.fromkeys(sent_first, 2)
    kinds = {request.kind for request in server.requests}
    assert kinds == {"main", "batch"}
    assert all(request.status == 200 for request in server.requests)
    # same answers, so the same deliverables as each other and as the offline model's
    assert _artifacts(tmp_path / "first") == _artifacts(tmp_path / "second")
    assert _artifacts(tmp_path / "offline") == _artifacts(tmp_path / "first")
    assert len(_artifacts(tmp_path / "first")) >= 3


def test_distinct_inputs_differ_only_in_the_first_row_and_send_distinct_requests(
    tmp_path: Path,
) -> None:
    paths = distinct_inputs(3, tmp_path / "inputs")
    assert [path.name for path in paths] == [f"sample_feedback_0{n}.csv" for n in (1, 2, 3)]
    original = list(csv.DictReader(SAMPLE_CSV.open(encoding="utf-8", newline="")))
    for number, path in enumerate(paths, start=1):
        rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
        assert rows[1:] == original[1:]
        assert rows[0] == {**original[0], "text": original[0]["text"] + f" [input {number}]"}
    with CountingModelServer(latency=0.05) as server:
        runs = [_start(path, tmp_path / f"ws{n}", server) for n, path in enumerate(paths[:2])]
        assert [_finish(run)["status"] for run in runs] == ["completed", "completed"]
    assert server.repeated() == {}
    assert server.max_concurrent() >= 1


def test_latency_overlaps_and_concurrency_is_counted() -> None:
    latency, clients = 0.4, 5
    with CountingModelServer(latency=latency) as server:
        answers: list[tuple[int, Any]] = []
        lock = threading.Lock()

        def ask() -> None:
            answer = _post(server.url, _chat())
            with lock:
                answers.append(answer)

        threads = [threading.Thread(target=ask) for _ in range(clients)]
        started = time.time()
        for thread in threads:
            thread.start()
        assert server.wait_for(clients, timeout=10)
        middle = time.time()
        assert server.in_flight() == clients
        for thread in threads:
            thread.join(timeout=30)
        wall = time.time() - started
        assert server.wait_idle(timeout=5)

        assert wall < latency * clients * 0.6  # they overlapped rather than queued
        assert server.max_concurrent() == clients
        assert len(server.in_flight_at(middle)) == clients
        assert server.in_flight_at(started - 1) == []
        after = time.time()
        assert server.in_flight_at(after) == []
        assert len(server.in_flight_at(after, grace=after - started)) == clients
        records = server.requests
        assert all(r.ended is not None and r.ended - r.started >= latency for r in records)
        assert all(r.status == 200 and r.kind == "main" for r in records)
        # deterministic: the same body always gets the same answer
        assert len({json.dumps(answer, sort_keys=True) for answer in answers}) == 1
        [(status, reply)] = {json.dumps(a, sort_keys=True): a for a in answers}.values()
        assert status == 200
        [call] = reply["choices"][0]["message"]["tool_calls"]
        assert call["function"]["name"] == "read_feedback_csv"
        assert server.repeated() == {fingerprint(_chat()): clients}

        # one at a time: the peak is 1 after a reset
        server.reset()
        server.latency = 0.0
        for text in ("a", "b"):
            assert _post(server.url, _chat(text))[0] == 200
        assert server.max_concurrent() == 1
        assert server.repeated() == {}
        assert len(server.requests) == 2


def test_requests_that_are_not_chat_requests_are_answered_and_logged() -> None:
    with CountingModelServer() as server:
        status, reply = _post(server.url, _chat(), path="/embeddings")
        assert status == 404 and "not a chat request" in reply["error"]["message"]
        status, reply = _post(server.url, b"not json")
        assert status == 400
        status, reply = _post(server.url, {"messages": [{"role": "nobody"}]})
        assert status == 500 and "KeyError" in reply["error"]["message"]
    kinds = [(request.kind, request.status) for request in server.requests]
    assert kinds == [("invalid", 404), ("invalid", 400), ("main", 500)]


def test_stop_cuts_a_sleeping_request_short() -> None:
    server = CountingModelServer(latency=30)
    server.start()
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            _post(server.url, _chat())
        except (OSError, ValueError) as error:
            failures.append(error)

    thread = threading.Thread(target=ask)
    thread.start()
    assert server.wait_for(1, timeout=10)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=10)
    assert time.monotonic() - started < 5 and not thread.is_alive()
    assert failures  # the client got no answer
    [request] = server.requests
    assert request.status == 0 and request.ended is not None


def test_the_script_prints_its_url_serves_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--port", "0", "--latency", "0.05"],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",  # it must not depend on the working directory
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert _post(url, _chat("warm-up"))[0] == 200
        root = url.removesuffix("/v1")
        assert _post(root, {}, path="/_reset") == (
            200,
            {"requests": 1, "distinct": 1, "repeated": 0, "max_concurrent": 1},
        )
        for _ in range(2):
            assert _post(url, _chat())[0] == 200
        assert _post(url, _chat("other"))[0] == 200
        with urllib.request.urlopen(root + "/_counts", timeout=10) as response:
            counts = json.loads(response.read())
        assert counts == {"requests": 3, "distinct": 2, "repeated": 1, "max_concurrent": 1}
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary == {"requests": 3, "distinct": 2, "repeated": 1, "max_concurrent": 1}
