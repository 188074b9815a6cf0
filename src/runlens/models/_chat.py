"""`HttpChatModel`: what the HTTP chat providers (`openai`, `anthropic`) have in common.

A provider subclass says only what differs: its name, endpoint path, default base URL and
`max_tokens`, the environment variables it reads, its extra headers, its request body and
how to read a response. Posting lives in `_http`, error mapping in `_wire_errors`, settings in
`_settings`, tool-call parsing and cleaning the answer in `_tool_calls`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

import httpx

from runlens.errors import UserError
from runlens.models import _http, _settings, _tool_calls
from runlens.models._body import DEFAULT_MAX_RESPONSE_BYTES
from runlens.models._settings import DEFAULT_TIMEOUT
from runlens.models.base import Model
from runlens.models.messages import Message, ModelResponse, ToolSpec


def _url(text: str) -> httpx.URL | None:
    """`text` as a URL with a scheme, or None when it is not one."""
    if "://" not in text:
        return None
    try:
        return httpx.URL(text)
    except httpx.InvalidURL:
        return None


class HttpChatModel(Model):
    """A model behind one JSON `POST {base_url}{endpoint_path}` per turn.

    `base_url=None` and `max_tokens=None` mean the provider's defaults. The API key is kept
    out of `repr` and of every error message.
    """

    provider_name: ClassVar[str]
    endpoint_path: ClassVar[str]
    default_base_url: ClassVar[str]
    default_max_tokens: ClassVar[int | None] = None
    #: Where `from_env` looks, first match wins (`RUNLENS_*` before the SDK's own name).
    base_url_env: ClassVar[tuple[str, ...]]
    api_key_env: ClassVar[tuple[str, ...]]
    example_model: ClassVar[str]
    #: The UserError message when no key is set and the base URL is the provider's own host.
    missing_key_message: ClassVar[str]

    def __init__(
        self,
        model_name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.model_name = model_name
        self.base_url = (self.default_base_url if base_url is None else base_url).rstrip("/")
        self._check_settings(api_key)
        self.timeout = timeout
        self.max_tokens = self.default_max_tokens if max_tokens is None else max_tokens
        self.max_response_bytes = max_response_bytes
        self.spec = f"{self.provider_name}:{model_name}"
        self._api_key = api_key
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout))

    @classmethod
    def from_env(cls, name: str, env: Mapping[str, str]) -> Self:
        """A model for `provider:NAME` with the settings in `env`; UserError when they are wrong."""
        model_name = _settings.require_model_name(cls.provider_name, name, cls.example_model)
        settings = _settings.http_settings(
            env,
            base_url_env=cls.base_url_env,
            api_key_env=cls.api_key_env,
            default_base_url=cls.default_base_url,
            default_max_tokens=cls.default_max_tokens,
        )
        url = _url(settings.base_url)
        own_host = httpx.URL(cls.default_base_url).host
        if settings.api_key is None and url is not None and url.host == own_host:
            raise UserError(cls.missing_key_message)
        return cls(
            model_name,
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout,
            max_tokens=settings.max_tokens,
            max_response_bytes=settings.max_response_bytes,
        )

    def _check_settings(self, api_key: str | None) -> None:
        """UserError for settings no request could be sent with (rather than a traceback, or
        four retried "connection failed" errors, on the first model call)."""
        url = _url(self.base_url)
        if url is None or url.scheme not in ("http", "https") or not url.host:
            names = " / ".join(self.base_url_env)
            raise UserError(
                f"{self.provider_name}: the base URL ({names}) must be an http:// or https:// "
                f"URL, e.g. {self.default_base_url}; got {self.base_url!r}"
            )
        bad = next((i for i, char in enumerate(api_key or "") if not "!" <= char <= "~"), None)
        if bad is not None:
            names = " / ".join(self.api_key_env)
            raise UserError(
                f"{self.provider_name}: the API key ({names}) holds a character an HTTP header "
                f"cannot carry, at position {bad + 1} (a space, a line break or non-ASCII)"
            )

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        name = type(self).__name__
        return f"{name}({self.model_name!r}, base_url={self.base_url!r}, api_key={key})"

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        """Send the conversation; return the next turn. Failures raise ProviderCallError.

        What comes back is clean text whatever the server sent (`_tool_calls.clean_response`).
        """
        url = f"{self.base_url}{self.endpoint_path}"
        payload = await _http.post_json(
            self._client,
            url,
            self.request_body(messages, tools),
            headers=self._headers(),
            provider=self.provider_name,
            timeout=self.timeout,
            secrets=[self._api_key],
            max_body_bytes=self.max_response_bytes,
        )
        response = self._parse_response(payload, len(messages), _http.endpoint_label(url))
        return _tool_calls.clean_response(response)

    async def aclose(self) -> None:
        await self._client.aclose()

    @abstractmethod
    def request_body(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> dict[str, Any]:
        """The provider's request for this conversation."""

    @abstractmethod
    def _provider_headers(self) -> dict[str, str]:
        """Headers beyond content negotiation: the API key (when set) and any version."""

    @abstractmethod
    def _parse_response(
        self, payload: Mapping[str, Any], conversation_length: int, where: str
    ) -> ModelResponse:
        """The provider's JSON answer as a ModelResponse."""

    def _headers(self) -> dict[str, str]:
        return {
            "content-type": "application/json",
            "accept": "application/json",
            **self._provider_headers(),
        }
