"""The `offline` provider: the plugin's own deterministic analyst, no network, no key."""

from __future__ import annotations

from runlens.errors import UserError
from runlens.models.base import Model
from runlens.models.registry import ModelContext


def create(name: str, context: ModelContext) -> Model:
    plugin = context.plugin
    if plugin is None or plugin.offline_model is None:
        which = plugin.name if plugin else "this run"
        raise UserError(f"the offline model is not available for {which}; choose --model")
    return plugin.offline_model()
