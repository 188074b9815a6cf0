"""HTTP plumbing shared by the HTTP model providers (`openai`, `anthropic`).

Everything that can go wrong on the wire is mapped here, at the boundary, to
`ProviderCallError` (a `ProviderError`), so the runtime never sees an httpx exception:

    timeout, connection refused / reset / dropped   retryable
    HTTP 408, 429 (with Retry-After), 5xx, 529       retryable
    other 3xx / 4xx                                  not retryable
    a success status with a body that is not JSON    not retryable (usually a wrong base URL)

API keys never reach a message: every text that may echo one (server error messages,
exception strings) goes through `redact` first. Nothing here logs headers; code that must
should log `redact_headers(...)`.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

import httpx

from runlens.errors import ProviderError, UserError
from runlens.models.messages import ToolCall
from runlens.secrets import REDACTED

#: Headers that carry credentials; `redact_headers` masks their values.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key"})

#: Shapes of well-known provider keys, masked even when the key itself is not known.
_KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
)

#: Secrets shorter than this are not replaced: masking "x" would shred the text around it.
_MIN_SECRET_LENGTH = 4

_RETRYABLE_STATUSES = frozenset({408, 429})
_MAX_DETAIL_CHARS = 500


class ProviderCallError(ProviderError):
    """A failed provider call, split into what failed and what the server said.

    `failure` is e.g. `HTTP 500 Internal Server Error from 127.0.0.1:8080`, `detail` the
    server's own error message (redacted). `attempts` is set once retries are exhausted.
    The message reads `openai: <failure>[ after N attempts][: <detail>]`.
    """

    def __init__(
        self,
        *,
        provider: str,
        failure: str,
        detail: str = "",
        status_code: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        attempts: int | None = None,
    ) -> None:
        self.failure = failure
        self.detail = detail
        self.attempts = attempts
        super().__init__(
            _compose(provider, failure, detail, attempts),
            provider=provider,
            status_code=status_code,
            retryable=retryable,
            retry_after=retry_after,
        )

    def after_attempts(self, attempts: int) -> ProviderCallError:
        """The same failure, with the number of attempts it took in the message."""
        return ProviderCallError(**{**self._fields(), "attempts": attempts})

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments defeat Exception's default pickling (runs may cross processes).
        return (functools.partial(ProviderCallError, **self._fields()), ())

    def _fields(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "failure": self.failure,
            "detail": self.detail,
            "status_code": self.status_code,
            "retryable": self.retryable,
            "retry_after": self.retry_after,
            "attempts": self.attempts,
        }


def _compose(provider: str, failure: str, detail: str, attempts: int | None) -> str:
    message = f"{provider}: {failure}"
    if attempts is not None:
        message += f" after {attempts} attempt{'s' if attempts != 1 else ''}"
    return f"{message}: {detail}" if detail else message


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Mask every secret in `text`, and anything shaped like a provider API key.

    `secrets` are the literal values to hide (API keys, tokens); None and very short values
    are ignored. Use it on anything that may end up in a record, a message or a log.
    """
    known = {secret for secret in secrets if secret and len(secret) >= _MIN_SECRET_LENGTH}
    for secret in sorted(known, key=len, reverse=True):  # longest first: keys may nest
        text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A copy of `headers` safe to log: credential headers have their values masked."""
    return {
        name: (REDACTED if name.lower() in SECRET_HEADERS else value)
        for name, value in headers.items()
    }


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
    try:
        number = float(value) if value else None
    except ValueError:
        return None
    if number is None or not math.isfinite(number):
        return None
    return max(0.0, number)


def _seconds_until(http_date: str, now: float) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:  # RFC 9110 dates are GMT; be lenient with ones that omit it
        return None
    return max(0.0, moment.timestamp() - now)


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
) -> dict[str, Any]:
    """POST `body` as JSON and return the JSON object answered, or raise ProviderCallError.

    `timeout` bounds the whole exchange (httpx's own timeouts bound each phase as well).
    """
    secrets = tuple(secrets)
    where = endpoint_label(url)
    try:
        async with asyncio.timeout(timeout):
            response = await client.post(url, json=body, headers=dict(headers))
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise ProviderCallError(
            provider=provider,
            failure=f"request timed out (no response from {where} within {timeout:g} s)",
            retryable=True,
        ) from exc
    except httpx.TransportError as exc:
        raise ProviderCallError(
            provider=provider,
            failure=f"connection to {where} failed",
            detail=redact(str(exc) or type(exc).__name__, secrets),
            retryable=True,
        ) from exc
    if not response.is_success:
        raise status_error(provider, response, where, secrets)
    return _json_object(provider, response, where, secrets)


def status_error(
    provider: str, response: httpx.Response, where: str, secrets: Iterable[str | None] = ()
) -> ProviderCallError:
    """The ProviderCallError for an unsuccessful HTTP status."""
    code = response.status_code
    retryable = code in _RETRYABLE_STATUSES or code >= 500
    return ProviderCallError(
        provider=provider,
        failure=" ".join(filter(None, ["HTTP", str(code), _reason(response), "from", where])),
        detail=redact(error_detail(response), secrets),
        status_code=code,
        retryable=retryable,
        retry_after=parse_retry_after(response.headers) if retryable else None,
    )


def _reason(response: httpx.Response) -> str:
    if response.reason_phrase:
        return response.reason_phrase
    if response.status_code == 529:  # Anthropic's "overloaded", not in the IANA registry
        return "Overloaded"
    try:
        return HTTPStatus(response.status_code).phrase
    except ValueError:
        return ""


def error_detail(response: httpx.Response) -> str:
    """The server's own error message, from the usual JSON error shapes or the raw text.

    Understands `{"error": {"message": ...}}` (OpenAI, vLLM, llama.cpp, Anthropic),
    `{"error": "..."}` (Ollama) and `{"message": ...}`; falls back to the body text.
    """
    try:
        payload = response.json()
    except ValueError:
        payload = None
    message = _message_in(payload)
    if message is None:
        message = response.text.strip()
    return _shorten(" ".join(message.split()))


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


def _shorten(text: str) -> str:
    if len(text) <= _MAX_DETAIL_CHARS:
        return text
    return text[: _MAX_DETAIL_CHARS - 3] + "..."


def _json_object(
    provider: str, response: httpx.Response, where: str, secrets: Iterable[str | None]
) -> dict[str, Any]:
    try:
        payload = response.json()
    except (ValueError, UnicodeDecodeError):
        payload = None
    if isinstance(payload, dict):
        return payload
    content_type = response.headers.get("content-type", "no content type")
    raise ProviderCallError(
        provider=provider,
        failure=(
            f"unparseable response from {where} (HTTP {response.status_code}, {content_type}; "
            "expected a JSON object: is the base URL right?)"
        ),
        detail=redact(_shorten(" ".join(response.text.split())), secrets),
        status_code=response.status_code,
    )


def malformed_response(
    provider: str, where: str, problem: str, payload: Mapping[str, Any]
) -> ProviderCallError:
    """A JSON answer that lacks what the wire format promises (e.g. no `choices`)."""
    snippet = _shorten(json.dumps(payload, ensure_ascii=False))
    return ProviderCallError(
        provider=provider, failure=f"unexpected response from {where}: {problem}", detail=snippet
    )


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str, str | None]:
    """Tool-call arguments as sent by a model -> (object or None, raw text, error or None).

    Never raises: arguments that are not a JSON object come back as None with a reason the
    loop can show to the model. An empty string means "no arguments" (`{}`); an object
    double-encoded as a JSON string is decoded once more, as some local servers send that.
    """
    if isinstance(raw, dict):
        return raw, json.dumps(raw, ensure_ascii=False), None
    if raw is None:
        return {}, "", None
    if not isinstance(raw, str):
        text = json.dumps(raw, ensure_ascii=False)
        return None, text, f"arguments must be a JSON object, got {_json_type(raw)}"
    if not raw.strip():
        return {}, raw, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, raw, f"arguments are not valid JSON: {exc}"
    if isinstance(value, str):
        value = _decode_nested_object(value)
    if not isinstance(value, dict):
        return None, raw, f"arguments must be a JSON object, got {_json_type(value)}"
    return value, raw, None


def _decode_nested_object(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


def generated_call_id(conversation_length: int, index: int) -> str:
    """A deterministic tool call id for servers that send none (unique in one conversation)."""
    return f"call_rl_{conversation_length}_{index}"


def tool_call(
    call_id: Any, name: Any, raw_arguments: Any, conversation_length: int, index: int
) -> ToolCall:
    """A ToolCall from the wire's id, name and arguments, whatever their types.

    Never raises: a missing id gets `generated_call_id`, bad arguments an `arguments_error`.
    """
    arguments, raw_text, error = parse_arguments(raw_arguments)
    return ToolCall(
        tool_call_id=(
            call_id
            if isinstance(call_id, str) and call_id
            else generated_call_id(conversation_length, index)
        ),
        name=str(name or ""),
        arguments=arguments,
        raw_arguments=raw_text,
        arguments_error=error,
    )


def optional_str(value: Any) -> str | None:
    """A string field of a response, or None when absent or of another type."""
    return value if isinstance(value, str) else None


def optional_int(value: Any) -> int | None:
    """A token count from a usage block, or None when absent or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- settings from the environment (read only in the providers' `create` factories) ---


def env_text(env: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` set to a non-blank value in `env`, stripped."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def env_positive_float(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive number from `env[name]`, or `default` when unset; UserError when invalid."""
    value = env_text(env, name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise UserError(f"{name} must be a positive number of seconds, not {value!r}")
    return number


def env_positive_int(env: Mapping[str, str], name: str, default: int | None) -> int | None:
    """A positive integer from `env[name]`, or `default` when unset; UserError when invalid."""
    value = env_text(env, name)
    if value is None:
        return default
    if not value.isdigit() or int(value) < 1:
        raise UserError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def require_model_name(provider: str, name: str, example: str) -> str:
    """The model name after `provider:`, or a UserError showing a correct spec."""
    if not name.strip():
        raise UserError(f"{provider} needs a model name: --model {provider}:{example}")
    return name.strip()
