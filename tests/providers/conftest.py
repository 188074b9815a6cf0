"""Fixtures for provider tests: a live fault server, models pointed at it, and whole
`runlens run` invocations against it (`run_cli`, returning the run's `RunRecords`).

Async tests run on asyncio through anyio's pytest plugin (anyio ships with httpx).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fault_server import FaultServer
from provider_kit import KITS, TEST_KEY, ProviderKit

from runlens.cli import cli
from runlens.models.base import Model


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture(params=sorted(KITS))
def provider(request: pytest.FixtureRequest) -> ProviderKit:
    return KITS[request.param]


@pytest.fixture
async def make_model(
    provider: ProviderKit, fault_server: FaultServer
) -> AsyncIterator[Callable[..., Model]]:
    """Builds models of the parametrized provider pointed at the fault server; closes them."""
    made: list[Model] = []

    def make(**options: Any) -> Model:
        model: Model = provider.model(fault_server, **options)
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()


# --- end-to-end runs through the CLI against the fault server -------------------------------

#: Variables that would point RunLens elsewhere if the developer's shell has them set.
_PROVIDER_VARIABLES = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "RUNLENS_OPENAI_BASE_URL",
    "RUNLENS_OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "RUNLENS_ANTHROPIC_BASE_URL",
    "RUNLENS_ANTHROPIC_API_KEY",
    "RUNLENS_MODEL_TIMEOUT",
    "RUNLENS_MAX_TOKENS",
    "RUNLENS_RETRY_INITIAL_DELAY",
    "RUNLENS_MODEL_MAX_RESPONSE_BYTES",
)
#: Retries in CLI runs wait this long first (then 2x, 4x ...) instead of 0.5 s.
FAST_RETRY_DELAY = 0.01


@dataclass
class RunRecords:
    """What one `runlens run --json` left behind: exit code, verdict and the records on disk."""

    exit_code: int
    stdout: str
    workspace: Path
    seconds: float = 0.0
    #: Peak resident memory of the `python -m runlens` process (subprocess runs only).
    peak_rss_bytes: int | None = None
    stderr: str = ""

    @property
    def verdict(self) -> dict[str, Any]:
        """The object `--json` printed."""
        verdict: dict[str, Any] = json.loads(self.stdout)
        return verdict

    @property
    def record(self) -> dict[str, Any]:
        return self._load("runtime/run.json")

    @property
    def manifest(self) -> dict[str, Any]:
        return self._load("manifest.json")

    @property
    def metrics(self) -> dict[str, Any]:
        metrics: dict[str, Any] = self.record["metrics"]
        return metrics

    @property
    def events(self) -> list[dict[str, Any]]:
        lines = (self.workspace / "runtime" / "events.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in lines.splitlines() if line.strip()]

    @property
    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    def data(self, event_type: str) -> list[dict[str, Any]]:
        """The `data` of every event of `event_type`, in order."""
        return [event["data"] for event in self.events if event["type"] == event_type]

    @property
    def plan(self) -> dict[str, str]:
        return {step["id"]: step["status"] for step in self.record["plan"]}

    def files(self) -> list[Path]:
        """Every regular file in the workspace."""
        return sorted(path for path in self.workspace.rglob("*") if path.is_file())

    def _load(self, name: str) -> dict[str, Any]:
        record: dict[str, Any] = json.loads((self.workspace / name).read_text(encoding="utf-8"))
        return record


def provider_env(
    provider: ProviderKit, server: FaultServer, **overrides: str | None
) -> dict[str, str | None]:
    """Environment for a CLI run of `provider` against `server` (None unsets a variable)."""
    env: dict[str, str | None] = dict.fromkeys(_PROVIDER_VARIABLES)
    prefix = provider.name.upper()
    env[f"{prefix}_BASE_URL"] = provider.wire.base_url(server)
    env[f"{prefix}_API_KEY"] = TEST_KEY
    env["RUNLENS_MODEL_TIMEOUT"] = "10"
    env["RUNLENS_RETRY_INITIAL_DELAY"] = str(FAST_RETRY_DELAY)
    env.update(overrides)
    return env


@pytest.fixture
def retry_initial_delay() -> float:
    """The first backoff of CLI runs made by `run_cli` (it doubles after each attempt)."""
    return FAST_RETRY_DELAY


@pytest.fixture
def read_run() -> Callable[[int, str, Path], RunRecords]:
    """`read_run(exit_code, stdout, workspace)`: the records of a run made some other way."""
    return RunRecords


@pytest.fixture
def run_cli(
    provider: ProviderKit, fault_server: FaultServer, feedback_csv: Path, tmp_path: Path
) -> Callable[..., RunRecords]:
    """`run_cli(*args, env={...}, in_subprocess=False)`: `runlens run feedback-analysis` on the
    3-row CSV with the parametrized provider pointed at the fault server.

    In-process through click's runner by default; `in_subprocess=True` runs `python -m runlens`
    as a user would. `env` adds to (None: removes from) the provider environment.
    """
    counter = iter(range(1000))

    def run(
        *args: str, env: dict[str, str | None] | None = None, in_subprocess: bool = False
    ) -> RunRecords:
        workspace = tmp_path / f"run_{next(counter)}"
        command = [
            "run",
            "feedback-analysis",
            str(feedback_csv),
            "--model",
            f"{provider.name}:fault-model",
            "--workspace",
            str(workspace),
            "--json",
            *args,
        ]
        variables = {**provider_env(provider, fault_server), **(env or {})}
        started = time.monotonic()
        if in_subprocess:
            exit_code, stdout, stderr, peak = _run_subprocess(command, variables, tmp_path)
            seconds = time.monotonic() - started
            return RunRecords(exit_code, stdout, workspace, seconds, peak, stderr)
        exit_code, stdout, stderr = _run_in_process(command, variables)
        return RunRecords(exit_code, stdout, workspace, time.monotonic() - started, None, stderr)

    return run


def _run_in_process(command: list[str], env: dict[str, str | None]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, command, env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _run_subprocess(
    command: list[str], env: dict[str, str | None], scratch: Path
) -> tuple[int, str, str, int]:
    """Runs `python -m runlens`; returns exit code, stdout, stderr and the peak RSS in bytes.

    Output goes to files (no pipe to drain) so the child can be reaped with `os.wait4`,
    which reports the resource usage of that one child.
    """
    environment = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    for name in (k for k, v in env.items() if v is None):
        environment.pop(name, None)
    out, err = scratch / "subprocess.stdout", scratch / "subprocess.stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "runlens", *command],
            env=environment,
            stdout=stdout,
            stderr=stderr,
        )
        watchdog = threading.Timer(120, child.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            watchdog.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
    text = {path: path.read_text(encoding="utf-8", errors="replace") for path in (out, err)}
    return child.returncode, text[out], text[err], usage.ru_maxrss * 1024  # ru_maxrss is KiB
