"""External command hooks: any program can veto a tool call or a delivery.

The hooks file uses the same shape as other agent runtimes' settings, so existing hook scripts
port with little change (its schema and checks: `runlens.hooks.settings`):

    {"hooks": {
        "PreToolUse": [{"matcher": "write_file", "hooks": [
            {"type": "command", "command": "python scripts/no_secrets.py", "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./check-report.sh"}]}]
    }}

Where a command runs: through the shell (`/bin/sh -c`), with the settings file's folder as
its working directory, so every relative path in the command (`./check-report.sh`,
`python scripts/no_secrets.py`, a redirect) means what it would in a shell opened next to
the settings file. The run's workspace is in the payload's `cwd` and in
`$RUNLENS_WORKSPACE`; the settings folder is also in `$RUNLENS_HOOKS_DIR`. A `CommandHook`
built in code without a `base_dir` runs in the workspace.

The command receives one JSON object on stdin (`hook_event_name`, `session_id` = `run_id`,
`cwd`, and per event `tool_name`, `tool_input`, `tool_response`, or for Stop the `artifact`
being checked). Exit code 0 passes; 2 blocks, with stderr as the reason (stdout when stderr
is empty); any other exit code, or no exit within the hook's own `timeout`, is a hook error
that blocks (fail closed). A Stop command is run once per artifact contract, so a block is
attributed to that artifact; its timeout applies to each of those runs, whatever the timeout
of the other Stop validators.

Each command runs in a process group of its own, killed as a whole when it times out, when
the run is cancelled or its validation round ends while it runs, and after it exits (so no
background child outlives it). At most `OUTPUT_LIMIT` bytes of stdout and of stderr are kept,
marked "… [truncated, N bytes in all]" when cut (`runlens.hooks.process`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.hooks.manager import HookDecision, HookEvent, HookManager
from runlens.hooks.process import OUTPUT_LIMIT, RUNNING, Completed, HookProcess, Stopped
from runlens.hooks.settings import DEFAULT_TIMEOUT, MAX_TIMEOUT, read_settings
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.findings import Finding, FindingCode

__all__ = [
    "BLOCK_EXIT_CODE",
    "DEFAULT_TIMEOUT",
    "KILL_GRACE",
    "MAX_TIMEOUT",
    "OUTPUT_LIMIT",
    "CommandHook",
    "CommandValidator",
    "load_hooks_file",
    "register_command_hooks",
]

BLOCK_EXIT_CODE = 2
#: Seconds allowed beyond a command's own timeout for killing and reaping it.
KILL_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class CommandHook:
    event: HookEvent
    command: str
    timeout: float = DEFAULT_TIMEOUT
    matcher: str | None = None
    #: The settings file's folder, where the command runs (None: in the run's workspace).
    base_dir: Path | None = None

    @property
    def name(self) -> str:
        return f"command:{self.command}"

    def matches(self, tool_name: str | None) -> bool:
        if not self.matcher or self.matcher == "*":
            return True
        return tool_name is not None and re.fullmatch(self.matcher, tool_name) is not None

    def decide(
        self, payload: dict[str, Any], workspace: Path, *, owner: object | None = None
    ) -> HookDecision:
        """Run the command with the payload on stdin and turn how it ended into a decision.

        Blocks the calling thread (the Stop validators' worker). `owner` is the span of work
        the command belongs to (the validation round's context): `RUNNING.close(owner)` kills
        it, and a closed owner starts no command (the decision says it was stopped).
        """
        try:
            process = self._start(workspace, owner)
        except Stopped:
            return self._stopped()
        except OSError as error:
            return self._not_started(error)
        return self._decision(process.communicate(_stdin(payload), self.timeout))

    async def decide_async(self, payload: dict[str, Any], workspace: Path) -> HookDecision:
        """`decide` for the event loop: a cancelled run kills the command's group at once.

        The process is started synchronously (a few milliseconds) so cancellation can never
        land half-way through its creation; only the wait happens in a worker thread.
        """
        try:
            process = self._start(workspace, None)
        except OSError as error:
            return self._not_started(error)
        try:
            completed = await asyncio.to_thread(process.communicate, _stdin(payload), self.timeout)
        except BaseException:
            process.kill()  # the worker thread then sees it exit, and reaps it
            raise
        return self._decision(completed)

    def _start(self, workspace: Path, owner: object | None) -> HookProcess:
        env = {**os.environ, "RUNLENS_WORKSPACE": str(workspace)}
        if self.base_dir is not None:
            env["RUNLENS_HOOKS_DIR"] = str(self.base_dir)
        cwd = self.base_dir if self.base_dir is not None else workspace
        return RUNNING.start(self.command, cwd=cwd, env=env, owner=owner)

    def _not_started(self, error: OSError) -> HookDecision:
        return HookDecision.block(f"hook error: {self.command!r} could not be started: {error}")

    def _stopped(self) -> HookDecision:
        return HookDecision.block(
            f"hook error: {self.command!r} was stopped: its run or validation round ended"
        )

    def _decision(self, completed: Completed) -> HookDecision:
        if completed.timed_out:
            return HookDecision.block(f"hook {self.command!r} timed out after {self.timeout:g}s")
        if completed.stopped or completed.returncode is None:
            return self._stopped()
        returncode, stderr = completed.returncode, completed.stderr
        if returncode == 0:
            return HookDecision.allow()
        if returncode == BLOCK_EXIT_CODE:
            return HookDecision.block(
                stderr or completed.stdout or f"blocked by hook {self.command!r}"
            )
        how = f"was killed by signal {-returncode}" if returncode < 0 else None
        detail = f": {stderr}" if stderr else ""
        return HookDecision.block(
            f"hook error: {self.command!r} {how or f'exited with code {returncode}'}{detail}"
        )


def _stdin(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")


class CommandValidator:
    """A Stop command hook, run once per artifact contract.

    Its time budget in the validation runner (`stop_timeout`) follows the command's own
    timeout, not the runner's default; `end_round` kills a command still running for a
    round that is over (cancelled, or abandoned by the runner).
    """

    def __init__(self, hook: CommandHook, run_info: dict[str, Any]) -> None:
        self.hook = hook
        self.name = hook.name
        self._run_info = run_info

    def stop_timeout(self, context: ValidationContext) -> float:
        """Seconds this validator may take for a round: one command run per contract."""
        return max(len(context.contracts), 1) * (self.hook.timeout + KILL_GRACE)

    def end_round(self, context: ValidationContext) -> None:
        RUNNING.close(context)

    def validate(self, context: ValidationContext) -> ValidatorResult:
        findings: list[Finding] = []
        for contract in context.contracts:
            # Once the round is closed (`end_round`), `decide` starts nothing and blocks.
            path = context.workspace / contract.name
            payload = {
                **self._run_info,
                "hook_event_name": "Stop",
                "cwd": str(context.workspace),
                "artifact": {
                    **contract.to_metadata(),
                    "path": str(path),
                    "exists": path.is_file(),
                },
            }
            decision = self.hook.decide(payload, context.workspace, owner=context)
            if decision.blocked:
                code: FindingCode = (
                    "hook_error" if decision.reason.startswith("hook error") else "hook_blocked"
                )
                findings.append(
                    Finding(
                        validator=self.name,
                        artifact=contract.name,
                        code=code,
                        message=decision.reason,
                        details={"command": self.hook.command},
                    )
                )
        summary = None
        if findings:
            summary = "blocked by hook: " + "; ".join(
                f"{finding.artifact}: {finding.message}" for finding in findings[:5]
            )
        return ValidatorResult(validator=self.name, findings=tuple(findings), summary=summary)


def load_hooks_file(path: Path) -> list[CommandHook]:
    """Read a hooks settings file; raise `UserError` naming the file and what is wrong.

    Relative commands resolve against the file's folder (see the module docstring).
    """
    settings = read_settings(path)
    base_dir = path.resolve().parent
    hooks: list[CommandHook] = []
    for event in HookEvent:
        for group in getattr(settings.hooks, event.value):
            hooks.extend(
                CommandHook(
                    event=event,
                    command=entry.command,
                    timeout=entry.timeout,
                    matcher=group.matcher,
                    base_dir=base_dir,
                )
                for entry in group.hooks
            )
    return hooks


def register_command_hooks(
    manager: HookManager,
    hooks: Iterable[CommandHook],
    *,
    run_info: dict[str, Any],
    workspace: Path,
) -> None:
    for hook in hooks:
        if hook.event is HookEvent.STOP:
            # No fixed timeout: the manager asks the validator (`stop_timeout`).
            manager.register_validator(CommandValidator(hook, run_info), timeout=None)
            continue
        manager.register(
            hook.event,
            _as_function(hook, run_info, workspace),
            name=hook.name,
            timeout=hook.timeout + KILL_GRACE,
        )


def _as_function(
    hook: CommandHook, run_info: dict[str, Any], workspace: Path
) -> Callable[[dict[str, Any]], Awaitable[HookDecision | None]]:
    async def run(payload: dict[str, Any]) -> HookDecision | None:
        if not hook.matches(payload.get("tool_name")):
            return None
        full = {**run_info, **payload, "hook_event_name": hook.event.value, "cwd": str(workspace)}
        return await hook.decide_async(full, workspace)

    return run
