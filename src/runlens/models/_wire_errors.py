"""What goes wrong on the wire, as a `ProviderCallError` saying whether to retry.

Everything an HTTP provider call can fail with is mapped here, so the runtime never sees an
httpx exception:

    timeout, connection refused / reset / dropped   retryable
    HTTP 408, 429 (with Retry-After), 5xx, 529       retryable
    other 3xx / 4xx                                  not retryable
    a success status with a body that is not a      not retryable (usually a wrong base URL);
      UTF-8 JSON object (empty, not UTF-8, HTML,       the message names what arrived, escaped
      not JSON, an array ...)
    a body past RUNLENS_MODEL_MAX_RESPONSE_BYTES     not retryable: a server that sends 16 MiB
      (16 MiB, as received or decompressed)            for one chat turn will do it again
    malformed HTTP (a head past httpcore's 100 KiB,  retryable, as a dropped connection is
      a bad Content-Length, a body cut short)
    a JSON answer without what the format promises   not retryable (`malformed_response`)

API keys never reach a message: every text that may echo one (server error messages,
exception strings) goes through `runlens.secrets.redact` first, before it is shortened (so a
key cut in two is still masked). Lone surrogates are replaced (`ProviderCallError` does it).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

import httpx

from runlens._text import clean_text
from runlens.errors import ProviderCallError
from runlens.models import _body
from runlens.secrets import redact

_RETRYABLE_STATUSES = frozenset({408, 429})
_MAX_DETAIL_CHARS = 500
#: Seconds in `Retry-After` are ASCII digits (RFC 9110); float() would take "1_0" or "١٢".
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)", re.ASCII)


def exchange_error(
    provider: str,
    where: str,
    error: Exception,
    *,
    timeout: float,
    status_code: int | None = None,
    secrets: Iterable[str | None] = (),
) -> ProviderCallError:
    """The ProviderCallError for an exchange with `where` that raised `error`.

    `error` is a timeout (`TimeoutError`, `httpx.TimeoutException`), another
    `httpx.TransportError` or a `_body.BodyError`; `status_code` is the status received
    before a body failed, if any. Anything else is a bug and is raised as it is.
    """
    if isinstance(error, TimeoutError | httpx.TimeoutException):
        return ProviderCallError(
            provider=provider,
            failure=f"request timed out (no response from {where} within {timeout:g} s)",
            retryable=True,
        )
    if isinstance(error, httpx.TransportError):
        return ProviderCallError(
            provider=provider,
            failure=f"connection to {where} failed",
            detail=redact(str(error) or type(error).__name__, secrets),
            retryable=True,
        )
    if isinstance(error, _body.BodyError):
        return body_error(provider, where, error, status_code, secrets)
    raise error


def body_error(
    provider: str,
    where: str,
    error: _body.BodyError,
    status_code: int | None,
    secrets: Iterable[str | None] = (),
) -> ProviderCallError:
    """A body that could not be used (too large, not a JSON object ...): not retryable."""
    return ProviderCallError(
        provider=provider,
        failure=error.describe(where),
        detail=_shorten(redact(error.detail, secrets)),
        status_code=status_code,
    )


def status_error(
    provider: str,
    response: httpx.Response,
    where: str,
    secrets: Iterable[str | None] = (),
    *,
    body: bytes | None = None,
) -> ProviderCallError:
    """The ProviderCallError for an unsuccessful HTTP status (`body`: what was read of it)."""
    code = response.status_code
    retryable = code in _RETRYABLE_STATUSES or code >= 500
    return ProviderCallError(
        provider=provider,
        failure=" ".join(filter(None, ["HTTP", str(code), _reason(response), "from", where])),
        detail=error_detail(response if body is None else body, secrets),
        status_code=code,
        retryable=retryable,
        retry_after=parse_retry_after(response.headers) if retryable else None,
    )


def _reason(response: httpx.Response) -> str:
    if response.reason_phrase:
        return header_text(response.reason_phrase)
    if response.status_code == 529:  # Anthropic's "overloaded", not in the IANA registry
        return "Overloaded"
    try:
        return HTTPStatus(response.status_code).phrase
    except ValueError:
        return ""


def error_detail(response: httpx.Response | bytes, secrets: Iterable[str | None] = ()) -> str:
    """The server's own error message, from the usual JSON error shapes or the raw text.

    Understands `{"error": {"message": ...}}` (OpenAI, vLLM, llama.cpp, Anthropic),
    `{"error": "..."}` (Ollama) and `{"message": ...}`; falls back to the body text. Secrets
    are masked before the text is shortened, so a key cut at the end is masked too.
    """
    raw = response if isinstance(response, bytes) else response.content
    text = raw.decode("utf-8", "replace")
    try:
        payload = _body.loads(text)
    except (ValueError, RecursionError):
        payload = None
    message = _message_in(payload)
    if message is None:
        message = text.strip()
    return _shorten(" ".join(redact(clean_text(message)[0], secrets).split()))


def _message_in(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    message = payload.get("message") or payload.get("detail")
    return message if isinstance(message, str) else None


def malformed_response(
    provider: str, where: str, problem: str, payload: Mapping[str, Any]
) -> ProviderCallError:
    """A JSON answer that lacks what the wire format promises (e.g. no `choices`)."""
    try:
        snippet = json.dumps(payload, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        snippet = f"a JSON object with keys {sorted(map(str, payload))[:20]}"
    return ProviderCallError(
        provider=provider,
        failure=f"unexpected response from {where}: {problem}",
        detail=_shorten(snippet),
    )


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait, from `retry-after-ms` or `Retry-After` (seconds or an HTTP date).

    Returns None when neither header is present or parseable; never a negative number.
    """
    lowered = {name.lower(): value.strip() for name, value in headers.items()}
    milliseconds = _as_number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = lowered.get("retry-after")
    if not value:
        return None
    seconds = _as_number(value)
    if seconds is not None:
        return seconds
    return _seconds_until(value, time.time() if now is None else now)


def _as_number(value: str | None) -> float | None:
    if not value or not _DECIMAL.fullmatch(value):
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return max(0.0, number)


def _seconds_until(http_date: str, now: float) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(http_date)
        if moment.tzinfo is None:  # RFC 9110 dates are GMT; a date without a zone is unusable
            return None
        return max(0.0, moment.timestamp() - now)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def header_text(value: str, limit: int = 80) -> str:
    """A header value for a message: one line, and short (a server may send 100 KiB)."""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shorten(text: str) -> str:
    if len(text) <= _MAX_DETAIL_CHARS:
        return text
    return text[: _MAX_DETAIL_CHARS - 3] + "..."
