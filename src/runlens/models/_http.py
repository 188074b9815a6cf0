"""HTTP plumbing shared by the HTTP model providers (`openai`, `anthropic`).

Everything that can go wrong on the wire is mapped here, at the boundary, to
`ProviderCallError` (a `ProviderError`), so the runtime never sees an httpx exception:

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

Bodies are streamed and read through `_body.read_body`, which stops at the limit; error
bodies are read only as far as their message needs (64 KiB).

What the server sends is untrusted text. Lone UTF-16 surrogates (a `"\\ud800"` escape with no
partner), which no UTF-8 encoder accepts and which would make the run's records unwritable,
never leave this module: in text (answers, names, ids, error messages) they become U+FFFD
and the response says so in `notes`; in tool-call arguments they make an `arguments_error`
the model is told about, as is nesting deeper than `MAX_ARGUMENT_DEPTH` levels. `NaN` and
`Infinity` (not JSON) are an error in an arguments string and null elsewhere (`_body.loads`).

API keys never reach a message: every text that may echo one (server error messages,
exception strings) goes through `redact` first, before it is shortened (so a key cut in two
is still masked). Nothing here logs headers; code that must should log `redact_headers(...)`.
"""

from __future__ import annotations

import asyncio
import dataclasses
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
from runlens.models import _body
from runlens.models._body import DEFAULT_MAX_RESPONSE_BYTES as DEFAULT_MAX_RESPONSE_BYTES
from runlens.models.messages import ModelResponse, ToolCall
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
#: An error body is read this far: its message is cut to `_MAX_DETAIL_CHARS` anyway.
_MAX_ERROR_BODY_BYTES = 64 * 1024
#: Tool-call arguments nested deeper than this are refused (a tool error for the model).
MAX_ARGUMENT_DEPTH = 64
#: Tool names longer than this are cut (no real tool has one; the call is an unknown tool).
_MAX_TOOL_NAME_CHARS = 256
#: We undo these codings ourselves (`_body`), with bounded output.
_ACCEPT_ENCODING = "gzip, deflate"

_SURROGATE = re.compile("[\ud800-\udfff]")
#: Seconds in `Retry-After` are ASCII digits (RFC 9110); float() would take "1_0" or "١٢".
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)", re.ASCII)


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
        # Server text reaches these; a lone surrogate here would make the run record unwritable.
        failure, detail = clean_text(failure)[0], clean_text(detail)[0]
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
    max_body_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
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
    except _body.BodyError as exc:
        raise _body_error(provider, where, exc, status, secrets) from exc
    if not response.is_success:
        raise status_error(provider, response, where, secrets, body=raw)
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


def _body_error(
    provider: str,
    where: str,
    error: _body.BodyError,
    status_code: int | None,
    secrets: Iterable[str | None],
) -> ProviderCallError:
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
        return _header_text(response.reason_phrase)
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


def _shorten(text: str) -> str:
    if len(text) <= _MAX_DETAIL_CHARS:
        return text
    return text[: _MAX_DETAIL_CHARS - 3] + "..."


def _json_object(
    provider: str, response: httpx.Response, where: str, body: bytes, secrets: Iterable[str | None]
) -> dict[str, Any]:
    content_type = _header_text(response.headers.get("content-type", "no content type"))
    context = f"HTTP {response.status_code}, {content_type}"
    encoding = response.headers.get("content-encoding")
    if encoding:
        context += f", Content-Encoding {_header_text(encoding)}"
    try:
        return _body.parse_object(body, context=context)
    except _body.BodyError as exc:
        raise _body_error(provider, where, exc, response.status_code, secrets) from exc


def _header_text(value: str, limit: int = 80) -> str:
    """A header value for a message: one line, and short (a server may send 100 KiB)."""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str, str | None]:
    """Tool-call arguments as sent by a model -> (object or None, raw text, error or None).

    Never raises: arguments that are not a JSON object come back as None with a reason the
    loop can show to the model. An empty string means "no arguments" (`{}`); an object
    double-encoded as a JSON string is decoded once more, as some local servers send that.
    Text that is not valid Unicode (a lone surrogate), `NaN`/`Infinity` and nesting deeper
    than `MAX_ARGUMENT_DEPTH` are errors too. The raw text shows a lone surrogate as its
    `\\uXXXX` escape, so it stays printable and means what was sent.
    """
    if isinstance(raw, dict):
        problem = _argument_problem(raw)
        text = _dumps_for_display(raw, problem)
        return (None, text, problem) if problem else (raw, text, None)
    if raw is None:
        return {}, "", None
    if not isinstance(raw, str):
        problem = _argument_problem(raw)
        text = _dumps_for_display(raw, problem)
        return None, text, problem or f"arguments must be a JSON object, got {_json_type(raw)}"
    text = escape_surrogates(raw)
    if not raw.strip():
        return {}, text, None
    try:
        value = _body.loads(raw, strict_numbers=True)
    except RecursionError:
        return None, text, f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    except ValueError as exc:
        return None, text, f"arguments are not valid JSON: {exc}"
    if isinstance(value, str):
        value = _decode_nested_object(value)
    if not isinstance(value, dict):
        return None, text, f"arguments must be a JSON object, got {_json_type(value)}"
    problem = _argument_problem(value)
    return (None, text, problem) if problem else (value, text, None)


def _decode_nested_object(text: str) -> Any:
    try:
        value = _body.loads(text, strict_numbers=True)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, dict) else text


def _argument_problem(value: Any) -> str | None:
    """Why decoded arguments cannot be used as they are, or None.

    Walks the value without recursion (the depth is what is being checked).
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
        if isinstance(item, str):
            problem = _surrogate_problem(item, path)
            if problem:
                return problem
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"arguments hold {item!r} at {path or 'the top level'}, which JSON does not allow"
            )
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                name = str(key)
                problem = _surrogate_problem(name, f"a key of {path or 'the arguments'}")
                if problem:
                    return problem
                stack.append((child, _child_path(path, f".{name}" if path else name), depth + 1))
        elif isinstance(item, list):
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], _child_path(path, f"[{index}]"), depth + 1))
    return None


_MAX_PATH_CHARS = 80


def _child_path(path: str, step: str) -> str:
    # Bounded: long keys nested deep would otherwise build paths of megabytes per item.
    if len(path) >= _MAX_PATH_CHARS:
        return path
    joined = path + step
    return joined if len(joined) <= _MAX_PATH_CHARS else joined[: _MAX_PATH_CHARS - 3] + "..."


def _surrogate_problem(text: str, where: str) -> str | None:
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"arguments are not valid Unicode text: lone surrogate \\u{ord(found.group()):04x} "
        f"in {where or 'the arguments'}; send the text as valid UTF-8, e.g. the character "
        "itself or a complete surrogate pair"
    )


def _dumps_for_display(value: Any, problem: str | None) -> str:
    try:
        return escape_surrogates(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return f"({problem or 'arguments that cannot be shown'})"


def _json_type(value: Any) -> str:
    return _body.json_type(value)


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
    # Not str() of just anything: a name sent as a deeply nested array would overflow repr.
    name_text = name if isinstance(name, str) else str(name) if isinstance(name, int) else ""
    if len(name_text) > _MAX_TOOL_NAME_CHARS:
        name_text = name_text[: _MAX_TOOL_NAME_CHARS - 3] + "..."
    return ToolCall(
        tool_call_id=(
            call_id
            if isinstance(call_id, str) and call_id
            else generated_call_id(conversation_length, index)
        ),
        name=name_text,
        arguments=arguments,
        raw_arguments=raw_text,
        arguments_error=error,
    )


def optional_str(value: Any) -> str | None:
    """A string field of a response, or None when absent or of another type."""
    return value if isinstance(value, str) else None


#: Token counts outside this range are not counts (and would not fit a 64-bit record field).
_MAX_TOKEN_COUNT = 2**53


def optional_int(value: Any) -> int | None:
    """A token count from a usage block, or None when absent, not an integer or absurd."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if 0 <= value <= _MAX_TOKEN_COUNT else None


# --- untrusted text ----------------------------------------------------------------------


def clean_text(text: str) -> tuple[str, int]:
    """`text` with each lone UTF-16 surrogate replaced by U+FFFD, and how many were.

    Two halves of a pair left apart (`"\\ud83d\\ude00"` decoded one by one) are joined into
    the character they encode rather than replaced.
    """
    if _SURROGATE.search(text) is None:
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count("\ufffd") - text.count("\ufffd")


def escape_surrogates(text: str) -> str:
    """`text` with each surrogate as its JSON escape `\\udXXX`: for JSON text shown as is."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def clean_response(response: ModelResponse) -> ModelResponse:
    """`response` with no lone surrogate left in any text, saying so in `notes`.

    Providers parse arguments with `parse_arguments`, which already refuses surrogates; any
    left in a call's arguments (a parser that did not) make that call an arguments error.
    """
    replaced = 0

    def clean(text: str) -> str:
        nonlocal replaced
        fixed, count = clean_text(text)
        replaced += count
        return fixed

    calls = tuple(_clean_call(call, clean) for call in response.tool_calls)
    content = clean(response.content) if response.content is not None else None
    finish = clean(response.finish_reason) if response.finish_reason is not None else None
    model_name = clean(response.model_name)
    if not replaced and calls == response.tool_calls:
        return response
    notes = response.notes
    if replaced:
        plural = "s" if replaced != 1 else ""
        notes = (
            *notes,
            f"{replaced} lone UTF-16 surrogate{plural} in the model's text (not valid "
            "Unicode) replaced with U+FFFD",
        )
    return dataclasses.replace(
        response,
        content=content,
        tool_calls=calls,
        finish_reason=finish,
        model_name=model_name,
        notes=notes,
    )


def _clean_call(call: ToolCall, clean: Any) -> ToolCall:
    problem = _argument_problem(call.arguments) if call.arguments is not None else None
    fixed = ToolCall(
        tool_call_id=clean(call.tool_call_id),
        name=clean(call.name),
        arguments=None if problem else call.arguments,
        raw_arguments=escape_surrogates(call.raw_arguments),
        arguments_error=clean(problem or call.arguments_error or "") or None,
    )
    return call if fixed == call else fixed


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


def env_max_response_bytes(env: Mapping[str, str]) -> int:
    """`RUNLENS_MODEL_MAX_RESPONSE_BYTES`: the cap on a response body, default 16 MiB."""
    value = env_positive_int(env, "RUNLENS_MODEL_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES)
    return DEFAULT_MAX_RESPONSE_BYTES if value is None else value


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
