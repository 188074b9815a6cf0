"""A hook's child that leaves the hook's process group (`setsid`, a double fork) does not
outlive the hook either: it carries the command's token in its environment and is killed
with the group (real processes)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil

from runlens.hooks.command import CommandHook
from runlens.hooks.manager import HookEvent


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _wait_for(path: Path) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def test_a_setsid_child_does_not_outlive_a_hook_that_exited(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 302' & sleep 0.3; exit 0"
    hook = CommandHook(HookEvent.STOP, command, timeout=30)
    decision = hook.decide({}, tmp_path)
    assert not decision.blocked
    pid = int(_wait_for(pid_file))
    assert _gone(pid), f"the setsid child {pid} outlived its hook"


def test_a_double_forked_daemon_does_not_outlive_a_hook_that_timed_out(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    daemon = (
        "import os, sys, time\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(303)\n"
    )
    script = tmp_path / "daemon.py"
    script.write_text(daemon, encoding="utf-8")
    hook = CommandHook(HookEvent.STOP, f"{sys.executable} {script}; sleep 30", timeout=1)
    started = time.monotonic()
    hook.decide({}, tmp_path)
    assert time.monotonic() - started < 10
    pid = int(_wait_for(pid_file))
    assert pid != os.getpid() and _gone(pid), f"the daemon {pid} outlived its hook"
