"""RunLens's exception tree, split by who has to act.

    RunLensError
    ├── UserError              misuse by a person or plugin author: bad arguments, unknown
    │   │                      plugin, missing workspace (CLI exit code 2)
    │   └── ContractError      an ArtifactContract or plugin declaration that cannot be used
    ├── InputError             an input file the run cannot use (names the file, row, field or
    │                          byte offset); ends the run `failed` at the input step
    ├── EvidenceIndexError     the Evidence Index is missing or unreadable
    ├── ProviderError          a model provider call failed (infrastructure); `retryable` says
    │   │                      whether the retry policy tries again
    │   └── ProviderCallError  a failed HTTP call, split into what failed and what the server
    │                          said (`runlens.models`' HTTP providers raise it)
    └── TaskError              the task cannot be done at all (e.g. every batch failed); ends
                               the run `failed` with the cause

Signals to the model (a tool call it should fix) are `ToolError`, which never escapes a run:
the loop turns it into a tool result the model sees.
"""

from __future__ import annotations

import functools
from typing import Any

from runlens._text import clean_text


class RunLensError(Exception):
    """Base of every error RunLens raises on purpose."""


class UserError(RunLensError):
    """A mistake of the person or program calling RunLens. Exit code 2 in the CLI."""


class ContractError(UserError):
    """An artifact contract, plugin or hook declaration that cannot be used as written."""


class InputError(RunLensError):
    """An input file that cannot be used. The message names the file and the place."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
        byte_offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.row = row
        self.field = field
        self.byte_offset = byte_offset


class EvidenceIndexError(RunLensError):
    """The Evidence Index is missing, unreadable or not of the expected shape."""


class ProviderError(RunLensError):
    """A model provider call failed. `retryable` tells the retry policy whether to try again."""

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status_code: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status_code = status_code
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderCallError(ProviderError):
    """A failed provider call, split into what failed and what the server said.

    `failure` is e.g. `HTTP 500 Internal Server Error from 127.0.0.1:8080`, `detail` the
    server's own error message (redacted by whoever raises it). `attempts` is set once retries
    are exhausted. The message reads `openai: <failure>[ after N attempts][: <detail>]`.
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
        # Server text reaches these; a lone surrogate would make the message unprintable.
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


class TaskError(RunLensError):
    """Raised by a tool when the run's task cannot be done at all (for example every batch
    failed): unlike `ToolError` it is not the model's call to fix, so it ends the run
    `failed` with this message as the cause. Files the tool wrote before raising stay."""


class ToolError(Exception):
    """Raised by a tool to tell the model its call was wrong; becomes an error tool result."""


def one_line(error: BaseException, limit: int | None = None) -> str:
    """The error's message on one line (its type's name when it has none), with an input
    error's file, row and field when the message lacks them; cut to `limit` characters."""
    message = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, InputError):
        places = [
            f"{label} {value}"
            for label, value in (("file", error.file), ("row", error.row), ("field", error.field))
            if value is not None and str(value) not in message
        ]
        if places:
            message += f" ({', '.join(places)})"
    return message[:limit]
