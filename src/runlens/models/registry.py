"""Resolve a model spec (`provider:name`) to a `Model`.

Built-in providers are listed here by module path and imported on first use; third-party
providers register a factory under the `runlens.models` entry point group. A factory takes
the part after the colon and the `ModelContext` and returns a `Model`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from runlens._entry_points import group_entry_points
from runlens.errors import UserError

if TYPE_CHECKING:
    from runlens.models.base import Model

GROUP = "runlens.models"

_BUILTIN: dict[str, str] = {
    "offline": "runlens.models.offline:create",
    "scripted": "runlens.models.scripted:create",
    "openai": "runlens.models.openai:create",
    "anthropic": "runlens.models.anthropic:create",
}


class ModelSource(Protocol):
    """What a provider may ask of the run's plugin (a `runlens.Plugin` is one): its name and
    its deterministic offline analyst, if it has one."""

    @property
    def name(self) -> str: ...

    @property
    def offline_model(self) -> Callable[[], Model] | None: ...


@dataclass(frozen=True)
class ModelContext:
    """What a provider factory may need beyond its name."""

    plugin: ModelSource | None = None


ModelFactory = Callable[[str, ModelContext], "Model"]


def _factory(provider: str) -> ModelFactory:
    target = _BUILTIN.get(provider)
    if target is None:
        for ep in group_entry_points(GROUP):
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
    return sorted({*_BUILTIN, *(ep.name for ep in group_entry_points(GROUP))})


def resolve_model(spec: str, context: ModelContext | None = None) -> Model:
    """Build the model named by `spec`, e.g. `offline`, `scripted:run.json`, `openai:gpt-4o`."""
    provider, _, name = spec.partition(":")
    model = _factory(provider.strip())(name.strip(), context or ModelContext())
    model.spec = spec
    return model
