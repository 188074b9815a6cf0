"""The plugin interface and plugin loading."""

from runlens.plugins.base import Conformance, CriterionKind, PlanStep, Plugin, SuccessCriterion
from runlens.plugins.loader import available_plugins, load_plugin

__all__ = [
    "Conformance",
    "CriterionKind",
    "PlanStep",
    "Plugin",
    "SuccessCriterion",
    "available_plugins",
    "load_plugin",
]
