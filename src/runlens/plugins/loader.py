"""Finding plugins through the `runlens.plugins` entry point group.

Built-in plugins are registered the same way a third-party package would register its own,
in `pyproject.toml`:

    [project.entry-points."runlens.plugins"]
    my-task = "my_package:plugin"
"""

from __future__ import annotations

from runlens._entry_points import group_entry_points
from runlens.errors import ContractError, UserError
from runlens.plugins.base import Plugin

GROUP = "runlens.plugins"


def available_plugins() -> list[str]:
    return sorted(ep.name for ep in group_entry_points(GROUP))


def load_plugin(name: str) -> Plugin:
    """Load the plugin registered under `name`, or raise `UserError` naming the known ones."""
    matches = [ep for ep in group_entry_points(GROUP) if ep.name == name]
    if not matches:
        known = ", ".join(available_plugins()) or "none installed"
        raise UserError(f"unknown plugin {name!r} (available: {known})")
    loaded = matches[0].load()
    plugin = loaded() if callable(loaded) and not isinstance(loaded, Plugin) else loaded
    if not isinstance(plugin, Plugin):
        raise ContractError(
            f"entry point {name!r} ({matches[0].value}) did not provide a runlens Plugin"
        )
    return plugin
