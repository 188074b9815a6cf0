"""The plugin interface and plugin loading."""

from runlens.plugins.base import Conformance, CriterionKind, PlanStep, Plugin, SuccessCriterion
from runlens.plugins.loader import available_plugins, load_plugin
from runlens.plugins.review import Correction, ReviewPolicy

__all__ = [
    "Conformance",
    "Correction",
    "CriterionKind",
    "PlanStep",
    "Plugin",
    "ReviewPolicy",
    "SuccessCriterion",
    "available_plugins",
    "load_plugin",
]
