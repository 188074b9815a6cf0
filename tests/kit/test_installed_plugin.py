"""The second plugin, installed: listed, conformant, and run end to end through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runlens.kit.conformance import CHECKS

from .conftest import NAME, InstalledPlugin


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_runlens_plugins_lists_it_with_its_contracts(installed_plugin: InstalledPlugin) -> None:
    done = installed_plugin.runlens("plugins", "--json")

    assert done.returncode == 0, done.stderr
    listed = {entry["name"]: entry for entry in as_json(done)["plugins"]}
    assert {NAME, "feedback-analysis"} <= set(listed)
    triage = listed[NAME]
    assert triage["error"] is None
    assert triage["distribution"] == NAME and triage["input_tool"] == "read_tickets"
    assert triage["offline_model"] is False and triage["conformance"] is True
    assert [(c["name"], c["label"], c["required"], c["kind"]) for c in triage["contracts"]] == [
        ("artifacts/triage.json", "Ticket Triage JSON", True, "json"),
        ("artifacts/summary.md", "Triage Summary", True, "markdown"),
    ]

    text = installed_plugin.runlens("plugins")
    assert text.returncode == 0
    assert "ticket-triage" in text.stdout and "artifacts/summary.md" in text.stdout
    assert "needs --model" in text.stdout


def test_it_passes_runlens_check_plugin(installed_plugin: InstalledPlugin, tmp_path: Path) -> None:
    done = installed_plugin.runlens("check-plugin", NAME, "--json", "--workspace", str(tmp_path))

    assert done.returncode == 0, done.stdout + done.stderr
    report = as_json(done)
    assert report["status"] == "passed"
    assert [(c["check"], c["status"]) for c in report["checks"]] == [
        (check, "passed") for check in CHECKS
    ]
    passing = json.loads((tmp_path / "passing" / "manifest.json").read_text(encoding="utf-8"))
    assert passing["status"] == "completed"

    table = installed_plugin.runlens("check-plugin", NAME)
    assert table.returncode == 0
    assert "fabricating_run" in table.stdout and f"{NAME}: passed" in table.stdout

    again = installed_plugin.runlens("check-plugin", NAME, "--workspace", str(tmp_path))
    assert again.returncode == 2
    assert f"{tmp_path / 'passing'} already exists" in " ".join(again.stderr.split())


def test_runlens_run_completes_with_its_passing_script(
    installed_plugin: InstalledPlugin, tmp_path: Path
) -> None:
    script = installed_plugin.samples / "passing.yaml"
    done = installed_plugin.runlens(
        "run", NAME, str(installed_plugin.fixture), "--model", f"scripted:{script}",
        "--workspace", str(tmp_path / "run"), "--json",
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    result = as_json(done)
    assert result["status"] == "completed" and result["findings"] == []
    assert result["artifacts"] == {
        "artifacts/triage.json": "validated",
        "artifacts/summary.md": "validated",
    }
    triage = json.loads((tmp_path / "run/artifacts/triage.json").read_text(encoding="utf-8"))
    assert [item["ticket_id"] for item in triage["items"]] == [f"T-00{n}" for n in range(1, 6)]


def test_runlens_run_fails_with_its_fabricating_script(
    installed_plugin: InstalledPlugin, tmp_path: Path
) -> None:
    script = installed_plugin.samples / "fabricating.yaml"
    done = installed_plugin.runlens(
        "run", NAME, str(installed_plugin.fixture), "--model", f"scripted:{script}",
        "--workspace", str(tmp_path / "run"), "--json",
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    result = as_json(done)
    assert result["status"] == "failed"
    cited = {(f["code"], f["path"]) for f in result["findings"]}
    assert ("unknown_evidence_id", "items[5].ticket_id") in cited
    assert ("evidence_text_mismatch", "items[1].evidence_text") in cited
    assert result["artifacts"]["artifacts/triage.json"] == "rejected"


@pytest.mark.parametrize("model", [None, "offline"])
def test_without_an_offline_model_run_names_the_models_it_needs(
    installed_plugin: InstalledPlugin, tmp_path: Path, model: str | None
) -> None:
    chosen = ["--model", model] if model else []
    done = installed_plugin.runlens(
        "run", NAME, str(installed_plugin.fixture), *chosen, "--workspace", str(tmp_path / "w")
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert (
        f"Error: plugin {NAME} has no offline model: run it with --model openai:MODEL, "
        "anthropic:MODEL or scripted:PATH"
    ) in message
    assert "passing.yaml" in message
    assert not (tmp_path / "w").exists()  # refused before a workspace was made


def test_its_own_conformance_test_passes(installed_plugin: InstalledPlugin) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=installed_plugin.source, env=installed_plugin.env(),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_a_plugin_that_fails_to_load_is_listed_with_its_error(
    installed_plugin: InstalledPlugin, tmp_path: Path
) -> None:
    broken = InstalledPlugin(installed_plugin.source, tmp_path)
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[runlens.plugins]\nbroken-plugin = broken_plugin:plugin\n", encoding="utf-8"
    )
    (tmp_path / "broken_plugin.py").write_text(
        'raise ImportError("needs the tickets SDK")\n', encoding="utf-8"
    )

    listing = broken.runlens("plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    entries = {entry["name"]: entry for entry in as_json(listing)["plugins"]}
    assert entries["broken-plugin"]["error"] == "ImportError: needs the tickets SDK"
    assert entries["broken-plugin"]["contracts"] == []
    assert entries["feedback-analysis"]["error"] is None  # the others still load

    text = broken.runlens("plugins")
    assert "failed to load: ImportError: needs the tickets SDK" in text.stdout
    assert "Traceback" not in text.stdout + text.stderr

    check = broken.runlens("check-plugin", "broken-plugin", "--json")
    assert check.returncode == 1
    report = as_json(check)
    assert report["checks"][0] == {
        "check": "plugin",
        "title": CHECKS["plugin"],
        "status": "failed",
        "details": ["ImportError: needs the tickets SDK"],
    }
    assert {c["status"] for c in report["checks"][1:]} == {"skipped"}


def test_check_plugin_of_an_unknown_name_is_a_usage_error(
    installed_plugin: InstalledPlugin,
) -> None:
    done = installed_plugin.runlens("check-plugin", "no-such-plugin")

    assert done.returncode == 2
    assert "unknown plugin 'no-such-plugin'" in done.stderr and NAME in done.stderr


def test_the_commands_are_in_the_help(installed_plugin: InstalledPlugin) -> None:
    done = installed_plugin.runlens("--help")

    assert all(command in done.stdout for command in ("plugins", "new-plugin", "check-plugin"))
