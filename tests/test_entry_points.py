"""The installed entry points are read once per process, and again when `sys.path` changes."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import runlens._entry_points as installed
from runlens.models.registry import known_providers
from runlens.plugins.loader import available_plugins, load_plugin
from runlens.validation.runner import load_validator_plugins


def test_plugins_models_and_validators_share_one_reading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    readings: list[object] = []

    def counted() -> Any:
        readings.append(None)
        return entry_points()

    monkeypatch.setattr(installed, "entry_points", counted)
    installed._installed.cache_clear()
    assert load_plugin("feedback-analysis").name == "feedback-analysis"
    load_validator_plugins()
    assert "scripted" in known_providers()
    assert "feedback-analysis" in available_plugins()
    assert len(readings) == 1

    # A folder of plugins put on sys.path is found: the reading is redone, once.
    info = tmp_path / "extra_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: extra-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[runlens.plugins]\nextra-plugin = extra_plugin:plugin\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "extra-plugin" in available_plugins()
    assert "feedback-analysis" in available_plugins()
    assert len(readings) == 2
