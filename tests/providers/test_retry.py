"""complete_with_retries: which errors are retried, for how long, and what is raised at the end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from runlens.errors import ProviderCallError, ProviderError, UserError
from runlens.models.base import Model
from runlens.models.messages import Message, ModelResponse, ToolSpec, UserMessage
from runlens.models.retry import RetryAttempt, RetryPolicy, complete_with_retries

pytestmark = pytest.mark.anyio

MESSAGES = [UserMessage("hi")]


class OutcomeModel(Model):
    """Answers each call with the next outcome: a response to return or an error to raise."""

    def __init__(self, *outcomes: ModelResponse | ProviderError) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ProviderError):
            raise outcome
        return outcome


class Sleeps(list[float]):
    """An injected sleep that records the delays instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def server_error(retry_after: float | None = None) -> ProviderCallError:
    return ProviderCallError(
        provider="openai",
        failure="HTTP 500 Internal Server Error from h:1",
        detail="boom",
        status_code=500,
        retryable=True,
        retry_after=retry_after,
    )


async def test_success_first_time_neither_sleeps_nor_reports() -> None:
    sleeps, attempts = Sleeps(), list[RetryAttempt]()
    model = OutcomeModel(ModelResponse(content="ok"))
    response = await complete_with_retries(
        model, MESSAGES, [], on_retry=attempts.append, sleep=sleeps
    )
    assert response.content == "ok"
    assert (model.calls, sleeps, attempts) == (1, [], [])


async def test_backoff_is_exponential_and_deterministic() -> None:
    sleeps, attempts = Sleeps(), list[RetryAttempt]()
    model = OutcomeModel(server_error(), server_error(), server_error(), ModelResponse("ok"))
    response = await complete_with_retries(
        model, MESSAGES, [], RetryPolicy(), on_retry=attempts.append, sleep=sleeps
    )
    assert response.content == "ok"
    assert sleeps == [0.5, 1.0, 2.0]
    assert [(a.attempt, a.delay, a.error.status_code) for a in attempts] == [
        (1, 0.5, 500),
        (2, 1.0, 500),
        (3, 2.0, 500),
    ]


async def test_backoff_is_capped_by_max_delay() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=5, initial_delay=1.0, multiplier=10.0, max_delay=15.0)
    model = OutcomeModel(*[server_error()] * 4, ModelResponse("ok"))
    await complete_with_retries(model, MESSAGES, [], policy, sleep=sleeps)
    assert sleeps == [1.0, 10.0, 15.0, 15.0]


async def test_retry_after_wins_over_backoff_and_is_capped() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(max_retry_after=30.0)
    model = OutcomeModel(server_error(retry_after=7.0), server_error(120.0), ModelResponse("ok"))
    await complete_with_retries(model, MESSAGES, [], policy, sleep=sleeps)
    assert sleeps == [7.0, 30.0]


async def test_after_the_last_attempt_the_error_says_how_many_attempts() -> None:
    sleeps = Sleeps()
    model = OutcomeModel(*[server_error()] * 4)
    with pytest.raises(ProviderCallError) as raised:
        await complete_with_retries(model, MESSAGES, [], sleep=sleeps)
    assert str(raised.value) == (
        "openai: HTTP 500 Internal Server Error from h:1 after 4 attempts: boom"
    )
    assert raised.value.attempts == 4
    assert raised.value.status_code == 500
    assert model.calls == 4
    assert len(sleeps) == 3


async def test_non_retryable_errors_are_raised_at_once_unchanged() -> None:
    unauthorized = ProviderError("openai: HTTP 401 Unauthorized", status_code=401)
    model = OutcomeModel(unauthorized, ModelResponse("never"))
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as raised:
        await complete_with_retries(model, MESSAGES, [], sleep=sleeps)
    assert raised.value is unauthorized
    assert (model.calls, sleeps) == (1, [])


async def test_a_plain_provider_error_gets_the_attempt_count_too() -> None:
    error = ProviderError("custom: overloaded", provider="custom", retryable=True)
    model = OutcomeModel(error, error)
    with pytest.raises(ProviderError, match=r"^custom: overloaded \(after 2 attempts\)$"):
        await complete_with_retries(
            model, MESSAGES, [], RetryPolicy(max_attempts=2), sleep=Sleeps()
        )


async def test_other_exceptions_are_not_swallowed() -> None:
    class Broken(OutcomeModel):
        async def complete(
            self, messages: Sequence[Message], tools: Sequence[ToolSpec]
        ) -> ModelResponse:
            raise KeyError("bug")

    with pytest.raises(KeyError):
        await complete_with_retries(Broken(), MESSAGES, [], sleep=Sleeps())


@pytest.mark.parametrize(
    "options",
    [{"max_attempts": 0}, {"initial_delay": -1.0}, {"multiplier": 0.5}],
)
def test_policy_rejects_nonsense(options: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        RetryPolicy(**options)
