"""`RunSettings`: everything that shapes a run besides its plugin, input and model."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from runlens.hooks.command import CommandHook
from runlens.models._settings import env_positive_float
from runlens.models.retry import RetryPolicy
from runlens.runtime.loop import LoopLimits
from runlens.secrets import known_secrets


@dataclass(frozen=True)
class RunSettings:
    """Everything that shapes a run besides plugin, input and model. Passed explicitly."""

    limits: LoopLimits = field(default_factory=LoopLimits)
    repair_turns: int = 0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    hook_timeout: float = 30.0
    command_hooks: tuple[CommandHook, ...] = ()
    #: Values (API keys) that must never appear in any record.
    secrets: tuple[str, ...] = ()
    #: Load validators registered by other packages under `runlens.validators`.
    validator_plugins: bool = True
    #: The input's encoding as the user named it (`runlens run --encoding`); None: detect it.
    input_encoding: str | None = None
    #: The input's id and text columns as the user named them (`--id-column`,
    #: `--text-column`); None: the plugin's defaults.
    input_id_column: str | None = None
    input_text_column: str | None = None
    #: The workbook sheet to read (`--sheet`); None: the first worksheet.
    input_sheet: str | None = None
    #: Where the input comes from, as the user named it (`--source-ref URI`): the source
    #: lock's `ref.uri`.
    source_ref: str | None = None
    #: The runs home whose `keys/default.pem` signs the verdict when `RUNLENS_SIGNING_KEY`
    #: names no key (a worker's `--home`); None: `$RUNLENS_HOME` or `./runlens-runs`.
    keys_home: Path | None = None
    #: Who started the run (`--as NAME`, `$RUNLENS_USER`, the login name): run.json's
    #: `submitted_by`, whom a plugin's review policy may forbid to approve it (SPEC 17).
    submitted_by: str | None = None
    #: The run this one re-runs (`runlens rerun RUN --with-review`): run.json's `rerun_of`.
    rerun_of: str | None = None
    #: What people's review of `rerun_of` asks to change, one plain-text line each: the
    #: model is given them with the task, before its first turn, as findings to address.
    review_findings: tuple[str, ...] = ()

    @classmethod
    def from_options(
        cls,
        *,
        repair_turns: int = 0,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
        wall_time: float | None = None,
        encoding: str | None = None,
        id_column: str | None = None,
        text_column: str | None = None,
        sheet: str | None = None,
        source_ref: str | None = None,
        submitted_by: str | None = None,
        rerun_of: str | None = None,
        review_findings: tuple[str, ...] = (),
        command_hooks: tuple[CommandHook, ...] = (),
    ) -> RunSettings:
        """The settings the run options name (`runlens run`, a queued run), with this
        process's secrets, and the first retry delay from `RUNLENS_RETRY_INITIAL_DELAY`
        (seconds, doubling after; tests shorten it)."""
        defaults = LoopLimits()
        return cls(
            limits=LoopLimits(
                max_turns=max_turns or defaults.max_turns,
                max_tool_calls=max_tool_calls or defaults.max_tool_calls,
                wall_time_seconds=wall_time or defaults.wall_time_seconds,
            ),
            repair_turns=repair_turns,
            command_hooks=command_hooks,
            secrets=known_secrets(),
            input_encoding=encoding,
            input_id_column=id_column,
            input_text_column=text_column,
            input_sheet=sheet,
            source_ref=source_ref,
            submitted_by=submitted_by,
            rerun_of=rerun_of,
            review_findings=tuple(review_findings),
            retry=RetryPolicy(
                initial_delay=env_positive_float(
                    os.environ, "RUNLENS_RETRY_INITIAL_DELAY", RetryPolicy.initial_delay
                )
            ),
        )
