"""Exporting a run's trace over OTLP/HTTP (JSON encoding), to any OpenTelemetry collector.

`runtime/trace.json` is already shaped like OpenTelemetry spans; this maps it to the OTLP
`ExportTraceServiceRequest` JSON form and posts it to `<endpoint>/v1/traces`. The endpoint
comes from the caller or from the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
`OTEL_EXPORTER_OTLP_ENDPOINT` variables, as OpenTelemetry SDKs read them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from runlens.errors import UserError

_KIND = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS = {"OK": 1, "ERROR": 2}


def traces_url(endpoint: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The URL to post traces to; a generic endpoint gets `/v1/traces` appended."""
    env = os.environ if env is None else env
    if endpoint:
        return endpoint.rstrip("/") + (
            "" if endpoint.rstrip("/").endswith("/v1/traces") else "/v1/traces"
        )
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return env["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    raise UserError("no OTLP endpoint: pass --endpoint or set OTEL_EXPORTER_OTLP_ENDPOINT")


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _span(span: Mapping[str, Any]) -> dict[str, Any]:
    status = span.get("status", {})
    encoded: dict[str, Any] = {
        "traceId": span["trace_id"],
        "spanId": span["span_id"],
        "name": span["name"],
        "kind": _KIND.get(str(span.get("kind")), 1),
        "startTimeUnixNano": str(span["start_time_unix_nano"]),
        "endTimeUnixNano": str(span["end_time_unix_nano"]),
        "attributes": _attributes(span.get("attributes", {})),
        "status": {
            "code": _STATUS.get(str(status.get("code")), 0),
            **({"message": status["message"]} if status.get("message") else {}),
        },
    }
    if span.get("parent_span_id"):
        encoded["parentSpanId"] = span["parent_span_id"]
    return encoded


def to_otlp(trace: Mapping[str, Any]) -> dict[str, Any]:
    """`runtime/trace.json` as an OTLP ExportTraceServiceRequest (JSON encoding)."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(trace.get("resource", {}))},
                "scopeSpans": [
                    {
                        "scope": {"name": "runlens"},
                        "spans": [_span(span) for span in trace.get("spans", [])],
                    }
                ],
            }
        ]
    }


def export_trace(trace: Mapping[str, Any], url: str, *, timeout: float = 10.0) -> int:
    """Post the trace; return the number of spans sent. Raises `UserError` on failure."""
    payload = to_otlp(trace)
    try:
        response = httpx.post(url, json=payload, timeout=timeout)
    except httpx.HTTPError as error:
        raise UserError(f"could not send the trace to {url}: {error}") from None
    if response.status_code >= 300:
        raise UserError(
            f"the collector at {url} answered HTTP {response.status_code}: {response.text[:200]}"
        )
    return len(payload["resourceSpans"][0]["scopeSpans"][0]["spans"])
