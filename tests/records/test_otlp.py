"""OTLP export of a run's trace, received by a real HTTP collector on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens.records.otlp import to_otlp, traces_url


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.path, json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


Received = list[tuple[str, dict[str, Any]]]


@pytest.fixture
def collector() -> Iterator[tuple[str, Received]]:
    _Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Collector.received
    finally:
        server.shutdown()
        server.server_close()


def _workspace_with_trace(tmp_path: Path) -> Path:
    from runlens.records.events import EventLog
    from runlens.records.trace import build_trace

    workspace = tmp_path / "ws"
    (workspace / "runtime").mkdir(parents=True)
    log = EventLog(None, "run_x")
    log.publish("run.started", {"tools": ["write_file"], "repair_turns": 0})
    log.publish(
        "model.called",
        {
            "turn": 1,
            "purpose": "turn",
            "duration_ms": 5,
            "input_tokens": 12,
            "output_tokens": 3,
            "finish_reason": "tool_calls",
            "tool_calls": ["write_file"],
            "content": None,
        },
    )
    log.publish("tool.called", {"tool_call_id": "c1", "name": "write_file", "arguments": {}})
    log.publish(
        "tool.completed",
        {
            "tool_call_id": "c1",
            "name": "write_file",
            "duration_ms": 1.0,
            "result": "ok",
            "result_chars": 2,
        },
    )
    log.publish("run.completed", {"round": 1})
    trace = build_trace("run_x", log.events, plugin="p", model="openai:m", status="completed")
    (workspace / "runtime" / "trace.json").write_text(json.dumps(trace.encode()), encoding="utf-8")
    (workspace / "runtime" / "run.json").write_text("{}", encoding="utf-8")
    return workspace


def test_export_trace_to_a_collector(tmp_path: Path, collector: tuple[str, Received]) -> None:
    url, received = collector
    workspace = _workspace_with_trace(tmp_path)
    result = CliRunner().invoke(cli, ["export-trace", str(workspace), "--endpoint", url])
    assert result.exit_code == 0, result.output
    assert "sent 3 spans" in result.stdout
    path, body = received[0]
    assert path == "/v1/traces"
    spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root, chat, tool = spans
    assert root["name"] == "invoke_agent p" and "parentSpanId" not in root
    assert chat["parentSpanId"] == tool["parentSpanId"] == root["spanId"]
    attributes = {a["key"]: a["value"] for a in chat["attributes"]}
    assert attributes["gen_ai.usage.input_tokens"] == {"intValue": "12"}
    assert len(root["traceId"]) == 32 and len(root["spanId"]) == 16


def test_unreachable_collector_is_a_clear_error(tmp_path: Path) -> None:
    workspace = _workspace_with_trace(tmp_path)
    result = CliRunner().invoke(
        cli, ["export-trace", str(workspace), "--endpoint", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 2
    assert "could not send the trace" in result.output


def test_endpoint_from_environment() -> None:
    assert (
        traces_url(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"})
        == "http://c:4318/v1/traces"
    )
    assert traces_url("http://c:4318/v1/traces", {}) == "http://c:4318/v1/traces"
    assert to_otlp({"spans": []})["resourceSpans"][0]["scopeSpans"][0]["spans"] == []
