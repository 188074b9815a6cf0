"""`runlens export RUN --html FILE`: the file written whole or not at all, for a run id or a
workspace folder; each usage error exit 2 with one line naming the run or the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.ui.runs import MadeRun, completed_run

from runlens.cli import cli
from runlens.verdict.exportfile import extract_bundle
from runlens.verdict.keys import load_public_keys


def invoke(home: Path, *args: object) -> Result:
    runner = CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home)})
    return runner.invoke(cli, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("export-cli-home")


@pytest.fixture(scope="module")
def made(home: Path) -> MadeRun:
    return completed_run(home)


def test_export_writes_one_file_and_says_how_to_check_it(
    home: Path, made: MadeRun, tmp_path: Path
) -> None:
    target = tmp_path / "report.html"
    result = invoke(home, "export", made.run_id, "--html", target)

    assert result.exit_code == 0, result.output
    bundle = extract_bundle(target.read_text(encoding="utf-8"))
    assert bundle["run_id"] == made.run_id
    (keyid,) = load_public_keys((), home)
    assert f"wrote {target}" in result.output and str(target.stat().st_size) in result.output
    assert f"signed by key id {keyid}" in result.output
    assert f"runlens verify {target}" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]

    by_folder = tmp_path / "again.html"
    assert invoke(home, "export", made.workspace, "--html", by_folder).exit_code == 0
    assert extract_bundle(by_folder.read_text(encoding="utf-8"))["run_id"] == made.run_id


def test_export_usage_errors_exit_2_and_write_nothing(
    home: Path, made: MadeRun, tmp_path: Path
) -> None:
    unknown = invoke(home, "export", "run_nope", "--html", tmp_path / "x.html")
    assert unknown.exit_code == 2 and "no run 'run_nope'" in unknown.output

    no_folder = tmp_path / "missing" / "x.html"
    result = invoke(home, "export", made.run_id, "--html", no_folder)
    assert result.exit_code == 2
    assert f"the folder {no_folder.parent} does not exist" in result.output
    assert not no_folder.parent.exists()

    unsigned = tmp_path / "unsigned"
    shutil.copytree(made.workspace, unsigned / made.workspace.name)
    (unsigned / made.workspace.name / "runtime/verdict.dsse.json").unlink()
    other_home = tmp_path / "other-home"
    shutil.move(unsigned / made.workspace.name, other_home / made.workspace.name)
    result = invoke(other_home, "export", made.run_id, "--html", tmp_path / "y.html")
    assert result.exit_code == 2, result.output
    assert f"run {made.run_id} has no signed verdict" in result.output
    assert "Traceback" not in result.output

    assert "Traceback" not in unknown.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-home", "unsigned"]
