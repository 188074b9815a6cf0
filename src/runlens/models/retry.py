"""Retrying model calls: exponential backoff for retryable `ProviderError`s.

Deterministic on purpose (no jitter): a run's retry events and its delays can be asserted
and replayed. One run makes one model call at a time, so there is no thundering herd to
spread out. A `Retry-After` the server sent wins over the backoff, capped by
`max_retry_after`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from runlens.errors import ProviderCallError, ProviderError, UserError
from runlens.models.base import Model
from runlens.models.messages import Message, ModelResponse, ToolSpec

Sleep = Callable[[float], Awaitable[object]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. `max_attempts` counts the first call too."""

    max_attempts: int = 4
    initial_delay: float = 0.5
    max_delay: float = 20.0
    multiplier: float = 2.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise UserError(f"RetryPolicy.max_attempts must be at least 1, not {self.max_attempts}")
        if min(self.initial_delay, self.max_delay, self.max_retry_after) < 0:
            raise UserError("RetryPolicy delays must not be negative")
        if self.multiplier < 1:
            raise UserError(f"RetryPolicy.multiplier must be at least 1, not {self.multiplier}")

    def delay(self, attempt: int, error: ProviderError) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based) before the next."""
        if error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        backoff = self.initial_delay * self.multiplier ** (attempt - 1)
        return min(backoff, self.max_delay)


@dataclass(frozen=True)
class RetryAttempt:
    """One failed attempt that will be retried: its number, its error, the wait before the next.

    The runtime records each one as an event.
    """

    attempt: int
    error: ProviderError
    delay: float


async def complete_with_retries(
    model: Model,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    policy: RetryPolicy = RetryPolicy(),  # frozen: sharing one default is safe
    *,
    on_retry: Callable[[RetryAttempt], None] | None = None,
    sleep: Sleep = asyncio.sleep,
) -> ModelResponse:
    """`model.complete(messages, tools)`, retrying retryable ProviderErrors per `policy`.

    Non-retryable errors are raised at once, unchanged. When the last attempt fails, the
    error raised says what failed and after how many attempts, e.g.
    `openai: HTTP 500 Internal Server Error from 127.0.0.1:8080 after 4 attempts: boom`.
    """
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return await model.complete(messages, tools)
        except ProviderError as error:
            if not error.retryable:
                raise
            if attempt == policy.max_attempts:
                raise exhausted(error, attempt) from error
            delay = policy.delay(attempt, error)
            if on_retry is not None:
                on_retry(RetryAttempt(attempt=attempt, error=error, delay=delay))
            await sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def exhausted(error: ProviderError, attempts: int) -> ProviderError:
    """The error to raise once `attempts` attempts have all failed with `error` last."""
    if isinstance(error, ProviderCallError):
        return error.after_attempts(attempts)
    plural = "s" if attempts != 1 else ""
    return ProviderError(
        f"{error} (after {attempts} attempt{plural})",
        provider=error.provider,
        status_code=error.status_code,
        retryable=error.retryable,
        retry_after=error.retry_after,
    )
