"""RunLens's exception tree, split by who has to act.

    RunLensError
    ├── UserError            misuse by a person or plugin author: bad arguments, unknown plugin,
    │   │                    missing workspace (CLI exit code 2)
    │   └── ContractError    an ArtifactContract or plugin declaration that cannot be used
    ├── InputError           an input file the run cannot use (names the file, row, field or
    │                        byte offset); ends the run `failed` at the input step
    ├── EvidenceIndexError   the Evidence Index is missing or unreadable
    ├── ProviderError        a model provider failed after its retries (infrastructure)
    ├── TaskError            the task cannot be done at all (e.g. every analysis batch failed);
    │                        ends the run `failed` with the cause
    └── RunError             a run that ended `failed` or `cancelled`; carries its run id

Signals to the model (a tool call it should fix) are `ToolError`, which never escapes a run:
the loop turns it into a tool result the model sees.
"""

from __future__ import annotations


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


class TaskError(RunLensError):
    """Raised by a tool when the run's task cannot be done at all (for example every analysis
    batch failed): unlike `ToolError` it is not the model's call to fix, so it ends the run
    `failed` with this message as the cause. Files the tool wrote before raising stay."""


class RunError(RunLensError):
    """A run that did not complete. Carries the run id so the workspace can be inspected."""

    def __init__(self, message: str, *, run_id: str, status: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.status = status


class ToolError(Exception):
    """Raised by a tool to tell the model its call was wrong; becomes an error tool result."""
