"""Resolve a model spec (`provider:name`) to a `Model`.

Built-in providers are listed here by module path and imported on first use; third-party
providers register a factory under the `runlens.models` entry point group. A factory takes
the part after the colon and the `ModelContext` and returns a `Model`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from runlens.errors import UserError

if TYPE_CHECKING:
    from runlens.models.base import Model
    from runlens.plugins.base import Plugin

GROUP = "runlens.models"

_BUILTIN: dict[str, str] = {
    "offline": "runlens.models.offline:create",
    "scripted": "runlens.testing:create_scripted_model",
    "openai": "runlens.models.openai:create",
    "anthropic": "runlens.models.anthropic:create",
}


@dataclass(frozen=True)
class ModelContext:
    """What a provider factory may need beyond its name."""

    plugin: Plugin | None = None


ModelFactory = Callable[[str, ModelContext], "Model"]


def _factory(provider: str) -> ModelFactory:
    target = _BUILTIN.get(provider)
    if target is None:
        for ep in entry_points(group=GROUP):
            if ep.name == provider:
                factory: ModelFactory = ep.load()
                return factory
        known = ", ".join(known_providers())
        raise UserError(f"unknown model provider {provider!r} (available: {known})")
    module_name, attribute = target.split(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    return factory


def known_providers() -> list[str]:
    """Every provider name a spec may start with: the built-in ones and the registered ones."""
    return sorted({*_BUILTIN, *(ep.name for ep in entry_points(group=GROUP))})


def resolve_model(spec: str, context: ModelContext | None = None) -> Model:
    """Build the model named by `spec`, e.g. `offline`, `scripted:run.json`, `openai:gpt-4o`."""
    provider, _, name = spec.partition(":")
    model = _factory(provider.strip())(name.strip(), context or ModelContext())
    model.spec = spec
    return model
