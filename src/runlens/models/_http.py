"""One JSON exchange with a model server, for the HTTP providers (`openai`, `anthropic`).

`post_json` sends the request and returns the JSON object answered; whatever fails on the
way is a `ProviderCallError` (`_wire_errors` maps it, retryable or not). Bodies are streamed
and read through `_body.read_body`, which stops at the limit; error bodies are read only as
far as their message needs (64 KiB). Nothing here logs headers, so a key never reaches a log.

The neighbours split the rest of a provider's wire work by concern: `_wire_errors` (failures
-> ProviderCallError), `_body` (reading and parsing a body), `_tool_calls` (tool calls and
untrusted text in an answer), `_settings` (settings from the environment); redaction is
`runlens.secrets`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from runlens._text import clean_text
from runlens.errors import ProviderCallError
from runlens.models import _body, _wire_errors

#: An error body is read this far: its message is cut to 500 characters anyway.
_MAX_ERROR_BODY_BYTES = 64 * 1024
#: We undo these codings ourselves (`_body`), with bounded output.
_ACCEPT_ENCODING = "gzip, deflate"


def endpoint_label(url: str) -> str:
    """`host:port` (or just `host` on the default port) for messages: never a path or query."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    provider: str,
    timeout: float,
    secrets: Iterable[str | None] = (),
    max_body_bytes: int = _body.DEFAULT_MAX_RESPONSE_BYTES,
) -> dict[str, Any]:
    """POST `body` as JSON and return the JSON object answered, or raise ProviderCallError.

    `timeout` bounds the whole exchange, reading the body included (httpx's own timeouts bound
    each phase as well). The body is read at most `max_body_bytes` far (see `_body`).
    """
    secrets = tuple(secrets)
    where = endpoint_label(url)
    content = _request_content(provider, body)
    request_headers = {
        "content-type": "application/json",
        **headers,
        "accept-encoding": _ACCEPT_ENCODING,
    }
    status: int | None = None
    try:
        async with (
            asyncio.timeout(timeout),
            client.stream("POST", url, content=content, headers=request_headers) as response,
        ):
            status = response.status_code
            if response.is_success:
                raw = await _body.read_body(response, max_body_bytes)
            else:
                raw = await _error_body(response, min(max_body_bytes, _MAX_ERROR_BODY_BYTES))
    except (TimeoutError, httpx.TransportError, _body.BodyError) as exc:
        raise _wire_errors.exchange_error(
            provider, where, exc, timeout=timeout, status_code=status, secrets=secrets
        ) from exc
    if not response.is_success:
        raise _wire_errors.status_error(provider, response, where, secrets, body=raw)
    return _json_object(provider, response, where, raw, secrets)


async def _error_body(response: httpx.Response, limit: int) -> bytes:
    # The status says what failed; a body too long or undecodable only loses the detail.
    try:
        return await _body.read_body(response, limit, truncate=True)
    except _body.BodyError:
        return b""


def _request_content(provider: str, body: Mapping[str, Any]) -> bytes:
    # As httpx's `json=` would encode it, but a value no JSON can hold is a ProviderCallError
    # naming the problem, not a traceback (the conversation is built from cleaned text, so
    # this is a last line of defence).
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ProviderCallError(
            provider=provider, failure=f"could not encode the request as JSON ({exc})"
        ) from exc
    return clean_text(text)[0].encode("utf-8")


def _json_object(
    provider: str, response: httpx.Response, where: str, body: bytes, secrets: Iterable[str | None]
) -> dict[str, Any]:
    content_type = _wire_errors.header_text(response.headers.get("content-type", "no content type"))
    context = f"HTTP {response.status_code}, {content_type}"
    encoding = response.headers.get("content-encoding")
    if encoding:
        context += f", Content-Encoding {_wire_errors.header_text(encoding)}"
    try:
        return _body.parse_object(body, context=context)
    except _body.BodyError as exc:
        raise _wire_errors.body_error(provider, where, exc, response.status_code, secrets) from exc
