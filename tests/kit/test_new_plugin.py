"""`runlens new-plugin NAME`: a complete package from the template, or a usage error and
nothing written."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from runlens.cli import cli

from .conftest import generate

# Not the installed test plugin's name: that one may be imported in this process already.
NAME = "support-desk"
PACKAGE = "support_desk"

FILES = {
    "README.md",
    "pyproject.toml",
    f"src/{PACKAGE}/__init__.py",
    f"src/{PACKAGE}/contracts.py",
    f"src/{PACKAGE}/skill.md",
    f"src/{PACKAGE}/prompt_fragments.md",
    f"src/{PACKAGE}/conformance/tickets.csv",
    f"src/{PACKAGE}/conformance/passing.yaml",
    f"src/{PACKAGE}/conformance/fabricating.yaml",
    "tests/test_conformance.py",
}
#: The lint rules RunLens holds itself to; the package plugin authors copy meets them too.
RUFF = ["--select", "E,F,W,I,B,UP,SIM,RUF", "--ignore", "RUF001,RUF002,RUF003"]
RUFF_STYLE = ["--line-length", "100", "--target-version", "py311", "--no-cache"]


def written(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def test_writes_the_template_package_with_its_entry_point(tmp_path: Path) -> None:
    root = generate(tmp_path, NAME)

    assert written(root) == FILES
    assert [path.name for path in tmp_path.iterdir()] == [NAME]  # no staging folder left
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == NAME
    assert project["project"]["entry-points"]["runlens.plugins"] == {NAME: f"{PACKAGE}:plugin"}
    for relative in FILES:
        text = (root / relative).read_text(encoding="utf-8")
        assert "{{" not in text and "__package__" not in text, relative
    tests = (root / "tests/test_conformance.py").read_text(encoding="utf-8")
    assert "from runlens.testing import check_plugin" in tests


def test_the_generated_code_imports_only_the_public_api(tmp_path: Path) -> None:
    root = generate(tmp_path, NAME)
    imports = [
        line.split()[1]
        for path in root.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith(("from runlens", "import runlens"))
    ]

    assert imports and set(imports) <= {"runlens", "runlens.testing"}


def test_the_generated_code_is_lint_clean(tmp_path: Path) -> None:
    root = generate(tmp_path, NAME)
    check = [sys.executable, "-m", "ruff", "check", *RUFF, *RUFF_STYLE, str(root)]
    form = [sys.executable, "-m", "ruff", "format", "--check", *RUFF_STYLE, str(root)]
    for command in (check, form):
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=root)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Ticket-Triage", "lowercase letters, digits and single hyphens"),
        ("ticket_triage", "lowercase letters, digits and single hyphens"),
        ("9-lives", "starting with a letter"),
        ("a--b", "single hyphens"),
        ("triage-", "single hyphens"),
        ("x" * 51, "at most 50 characters"),
        ("class", "'class' is a Python built-in name"),
        ("json", "'json' is a Python built-in name"),
        ("runlens", "taken by RunLens"),
        ("feedback-analysis", "already installed"),
        ("click", "'click' is already importable"),
    ],
)
def test_a_bad_name_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, name: str, says: str
) -> None:
    result = CliRunner().invoke(cli, ["new-plugin", name, "--dir", str(tmp_path)])

    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: ") and says in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / "notes.txt").write_text("mine", encoding="utf-8")

    result = CliRunner().invoke(cli, ["new-plugin", NAME, "--dir", str(tmp_path)])

    assert result.exit_code == 2
    assert "already exists" in result.output
    assert written(tmp_path) == {f"{NAME}/notes.txt"}


def test_a_missing_dir_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["new-plugin", NAME, "--dir", str(tmp_path / "nope")])

    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert list(tmp_path.iterdir()) == []
