"""A second plugin, written by `runlens new-plugin` and installed the way a user installs one.

The package is built with pip into a folder of its own (`--target`), never into the test
environment's site-packages; subprocesses see it through PYTHONPATH, so each command runs
exactly as `runlens ...` would after `pip install`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens.plugins import Plugin

NAME = "ticket-triage"
PACKAGE = "ticket_triage"


@dataclass(frozen=True)
class InstalledPlugin:
    """The generated package (`source`) and the folder it is installed into (`site`)."""

    source: Path
    site: Path

    @property
    def samples(self) -> Path:
        """The conformance samples as installed (package data of the wheel)."""
        return self.site / PACKAGE / "conformance"

    @property
    def fixture(self) -> Path:
        return self.samples / "tickets.csv"

    def env(self) -> dict[str, str]:
        paths = [str(self.site), *filter(None, [os.environ.get("PYTHONPATH")])]
        return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "NO_COLOR": "1"}

    def runlens(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`runlens ARGS...` in a fresh process that has the plugin installed."""
        return subprocess.run(
            [sys.executable, "-m", "runlens", *args],
            capture_output=True,
            text=True,
            env={**self.env(), "COLUMNS": "200"},
            cwd=cwd,
            timeout=120,
            check=False,
        )


def generate(parent: Path, name: str = NAME) -> Path:
    """`runlens new-plugin NAME --dir PARENT`, through the CLI; the package's folder."""
    result = CliRunner().invoke(cli, ["new-plugin", name, "--dir", str(parent)])
    assert result.exit_code == 0, result.output
    return parent / name


@pytest.fixture(scope="session")
def installed_plugin(tmp_path_factory: pytest.TempPathFactory) -> InstalledPlugin:
    source = generate(tmp_path_factory.mktemp("generated"))
    site = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--no-index", "--target", str(site), str(source)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    return InstalledPlugin(source, site)


@pytest.fixture
def triage_plugin(
    installed_plugin: InstalledPlugin, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Plugin]:
    """The generated plugin imported into this process (for the suite's own tests)."""
    monkeypatch.syspath_prepend(str(installed_plugin.site))
    plugin = import_module(PACKAGE).plugin
    assert isinstance(plugin, Plugin)
    yield plugin
