"""What a plugin's tests need from RunLens: a scripted model, a function model, the checks.

`ScriptedModel` replays a file of assistant turns (SPEC section 9), the same model as
`--model scripted:PATH`; `FunctionModel` lets a Python function decide every response (both
live in `runlens.models.scripted`). `check_plugin` runs the conformance suite of
`runlens check-plugin`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from runlens.models.scripted import FunctionModel, Responder, ScriptedModel, response_from_turn

if TYPE_CHECKING:
    from runlens.kit.conformance import ConformanceReport
    from runlens.plugins.base import Plugin


def check_plugin(plugin: Plugin, *, workspace: Path | None = None) -> ConformanceReport:
    """The conformance suite of `runlens check-plugin` (`runlens.kit.conformance`) on
    `plugin`, for a plugin's own tests: `assert check_plugin(plugin).passed`."""
    from runlens.kit.conformance import check_plugin as run_suite  # the kit loads on use

    return run_suite(plugin, workspace=workspace)


__all__ = ["FunctionModel", "Responder", "ScriptedModel", "check_plugin", "response_from_turn"]
