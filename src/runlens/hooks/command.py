"""External command hooks: any program can veto a tool call or a delivery.

The hooks file uses the same shape as other agent runtimes' settings, so existing hook scripts
port with little change:

    {"hooks": {
        "PreToolUse": [{"matcher": "write_file", "hooks": [
            {"type": "command", "command": "python scripts/no_secrets.py", "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./check-report.sh"}]}]
    }}

The command runs through the shell in the run's workspace and receives one JSON object on
stdin (`hook_event_name`, `session_id` = `run_id`, `cwd`, and per event `tool_name`,
`tool_input`, `tool_response`, or for Stop the `artifact` being checked). Exit code 0 passes;
2 blocks, with stderr as the reason; any other exit code, or no exit within the timeout, is a
hook error that blocks (fail closed). A Stop command is run once per artifact contract, so a
block is attributed to that artifact.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.errors import UserError
from runlens.hooks.manager import HookDecision, HookEvent, HookManager
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.findings import Finding, FindingCode

DEFAULT_TIMEOUT = 60.0
BLOCK_EXIT_CODE = 2


@dataclass(frozen=True, slots=True)
class CommandHook:
    event: HookEvent
    command: str
    timeout: float = DEFAULT_TIMEOUT
    matcher: str | None = None

    @property
    def name(self) -> str:
        return f"command:{self.command}"

    def matches(self, tool_name: str | None) -> bool:
        if not self.matcher or self.matcher == "*":
            return True
        return tool_name is not None and re.fullmatch(self.matcher, tool_name) is not None

    def decide(self, payload: dict[str, Any], cwd: Path | None) -> HookDecision:
        """Run the command with the payload on stdin and turn its exit code into a decision."""
        try:
            completed = subprocess.run(
                self.command,
                shell=True,
                input=_stdin(payload),
                capture_output=True,
                timeout=self.timeout,
                cwd=cwd,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return self._timed_out()
        return self._decision(completed.returncode, completed.stderr)

    async def decide_async(self, payload: dict[str, Any], cwd: Path | None) -> HookDecision:
        """`decide` for the event loop: a cancelled run kills the command at once.

        The process is started synchronously (a few milliseconds) so cancellation can never
        land half-way through its creation; only the wait happens in a worker thread.
        """
        process = subprocess.Popen(
            self.command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,  # so the whole process group can be killed
        )
        try:
            _, stderr = await asyncio.to_thread(process.communicate, _stdin(payload), self.timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            return self._timed_out()
        except BaseException:
            _kill(process)
            raise
        return self._decision(process.returncode, stderr)

    def _timed_out(self) -> HookDecision:
        return HookDecision.block(f"hook {self.command!r} timed out after {self.timeout:g}s")

    def _decision(self, returncode: int, stderr_bytes: bytes) -> HookDecision:
        stderr = stderr_bytes.decode("utf-8", errors="replace").strip()
        if returncode == 0:
            return HookDecision.allow()
        if returncode == BLOCK_EXIT_CODE:
            return HookDecision.block(stderr or f"blocked by hook {self.command!r}")
        detail = f": {stderr}" if stderr else ""
        return HookDecision.block(
            f"hook error: {self.command!r} exited with code {returncode}{detail}"
        )


def _stdin(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group (the shell and anything it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        process.communicate(timeout=5)


class CommandValidator:
    """A Stop command hook, run once per artifact contract."""

    def __init__(self, hook: CommandHook, run_info: dict[str, Any]) -> None:
        self.hook = hook
        self.name = hook.name
        self._run_info = run_info

    def validate(self, context: ValidationContext) -> ValidatorResult:
        findings: list[Finding] = []
        for contract in context.contracts:
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
            decision = self.hook.decide(payload, context.workspace)
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
    """Read a hooks file (see module docstring); raise `UserError` naming what is wrong."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"hooks file not found: {path}") from None
    except json.JSONDecodeError as error:
        raise UserError(f"hooks file {path} is not valid JSON: {error}") from None
    table = document.get("hooks") if isinstance(document, dict) else None
    if not isinstance(table, dict):
        raise UserError(f"hooks file {path}: expected an object with a 'hooks' object")
    return list(_parse_hooks(path, table))


def _parse_hooks(path: Path, table: dict[str, Any]) -> Iterable[CommandHook]:
    for event_name, groups in table.items():
        try:
            event = HookEvent(event_name)
        except ValueError:
            known = ", ".join(event.value for event in HookEvent)
            raise UserError(f"hooks file {path}: unknown event {event_name!r} ({known})") from None
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []):
                if entry.get("type", "command") != "command" or not entry.get("command"):
                    raise UserError(f"hooks file {path}: {event_name} entry needs a 'command'")
                yield CommandHook(
                    event=event,
                    command=str(entry["command"]),
                    timeout=float(entry.get("timeout", DEFAULT_TIMEOUT)),
                    matcher=group.get("matcher"),
                )


def register_command_hooks(
    manager: HookManager,
    hooks: Iterable[CommandHook],
    *,
    run_info: dict[str, Any],
    workspace: Path,
) -> None:
    for hook in hooks:
        if hook.event is HookEvent.STOP:
            # The validator applies its own per-command timeout for each artifact.
            manager.register_validator(CommandValidator(hook, run_info), timeout=None)
            continue
        manager.register(
            hook.event,
            _as_function(hook, run_info, workspace),
            name=hook.name,
            timeout=hook.timeout + 5,
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
