"""`runlens plugins`: the installed plugins, each loaded, with its deliverables.

A plugin that fails to load is listed with its error: one broken package must not hide the
others, nor turn the listing into a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

from runlens._entry_points import group_entry_points
from runlens.contracts import ArtifactContract
from runlens.plugins.base import Plugin
from runlens.plugins.loader import GROUP, load_plugin


@dataclass(frozen=True, slots=True)
class InstalledPlugin:
    """One entry point of the `runlens.plugins` group: its plugin, or why it did not load."""

    name: str
    entry_point: str
    distribution: str | None
    version: str | None
    plugin: Plugin | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        plugin = self.plugin
        return {
            "name": self.name,
            "entry_point": self.entry_point,
            "distribution": self.distribution,
            "version": self.version,
            "error": self.error,
            "description": plugin.description if plugin else None,
            "input_tool": plugin.input_tool if plugin else None,
            "offline_model": plugin.offline_model is not None if plugin else None,
            "conformance": plugin.conformance is not None if plugin else None,
            "contracts": [contract_row(contract) for contract in plugin.contracts]
            if plugin
            else [],
        }


def contract_row(contract: ArtifactContract) -> dict[str, Any]:
    """What the listing shows of one contract."""
    return {
        "name": contract.name,
        "label": contract.display_name,
        "required": contract.required,
        "kind": contract.kind,
        "audience": contract.audience,
        "description": contract.description,
    }


def installed_plugins() -> list[InstalledPlugin]:
    """Every installed plugin, sorted by name, each loaded (or with its load error)."""
    return [_load(entry) for entry in sorted(group_entry_points(GROUP), key=lambda e: e.name)]


def _load(entry: EntryPoint) -> InstalledPlugin:
    distribution = entry.dist.name if entry.dist is not None else None
    version = entry.dist.version if entry.dist is not None else None
    try:
        plugin = load_plugin(entry.name)
    except Exception as error:
        message = " ".join(str(error).split()) or "no message"
        failed = f"{type(error).__name__}: {message}"
        return InstalledPlugin(entry.name, entry.value, distribution, version, None, failed)
    return InstalledPlugin(entry.name, entry.value, distribution, version, plugin)


__all__ = ["InstalledPlugin", "contract_row", "installed_plugins"]
