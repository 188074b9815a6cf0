"""Real runs for the verdict tests: `runlens run` with the scripted model of
examples/scripts, each in a runs home of its own (its keys, its store)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runlens.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "examples" / "scripts"
SAMPLE = ROOT / "examples" / "sample_feedback.csv"


@dataclass
class SignedRun:
    home: Path
    workspace: Path
    result: Result

    @property
    def record(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(
            (self.workspace / "runtime" / "run.json").read_text(encoding="utf-8")
        )
        return document

    @property
    def envelope_path(self) -> Path:
        return self.workspace / "runtime" / "verdict.dsse.json"

    @property
    def envelope(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.envelope_path.read_text(encoding="utf-8"))
        return document

    def copy(self, target: Path) -> SignedRun:
        """The run's workspace copied beside it (same home, same keys): one test's to break."""
        workspace = target / self.workspace.name
        shutil.copytree(self.workspace, workspace)
        return SignedRun(self.home, workspace, self.result)


def invoke(*args: object, home: Path, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home), **(env or {})})
    return runner.invoke(cli, [str(arg) for arg in args])


def scripted_run(home: Path, script: str, name: str | None, **env: str) -> SignedRun:
    """`runlens run` of `script` in HOME/NAME (None: in HOME under the run's id)."""
    where = ["--workspace", home / name] if name else []
    result = invoke(
        "run", "feedback-analysis", SAMPLE, "--model", f"scripted:{SCRIPTS / script}",
        *where, "--json", home=home, env=env,
    )  # fmt: skip
    assert "Traceback" not in result.output
    workspace = Path(json.loads(result.stdout)["workspace"])
    return SignedRun(home, workspace, result)


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    """A completed run, signed with its home's default key (made by the run)."""
    home = tmp_path_factory.mktemp("signed-home")
    run = scripted_run(home, "passing.json", "run_passing")
    assert run.result.exit_code == 0, run.result.output
    return run


@pytest.fixture
def fresh_copy(passing_run: SignedRun, tmp_path: Path) -> Callable[[], SignedRun]:
    counter = iter(range(100))
    return lambda: passing_run.copy(tmp_path / f"copy{next(counter)}")
