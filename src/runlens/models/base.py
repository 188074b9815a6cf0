"""The provider interface: one async call from a conversation to a model response."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from runlens.models.messages import Message, ModelResponse, ToolSpec


class Model(ABC):
    """A model provider bound to one model.

    `complete` sends the whole conversation and the tools the model may call, and returns
    the model's next turn. Providers map their own failures to `ProviderError` (with
    `retryable` set for timeouts, connection errors, 429 and 5xx); the runtime retries.
    """

    #: `provider:name` as the user wrote it, e.g. `openai:gpt-4o-mini`.
    spec: str = ""

    @property
    def provider(self) -> str:
        return self.spec.split(":", 1)[0]

    @abstractmethod
    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse: ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook for providers with clients
        """Release connections. Called once when the run ends."""
