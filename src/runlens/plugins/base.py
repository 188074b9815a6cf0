"""The plugin interface: one business task as skill, prompts, tools, contracts and a plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from runlens.contracts import ArtifactContract

if TYPE_CHECKING:
    from runlens.models.base import Model
    from runlens.tools.base import Tool, ToolContext
    from runlens.validation.figures import FigureRule

CriterionKind = Literal["evidence_index_built", "artifact_validated", "stop_passed"]


@dataclass(frozen=True, slots=True)
class SuccessCriterion:
    """What must hold for a plan step to count as completed."""

    kind: CriterionKind
    artifact: str | None = None

    def describe(self) -> str:
        if self.kind == "artifact_validated":
            return f"{self.artifact} validated"
        if self.kind == "evidence_index_built":
            return "evidence index built"
        return "all Stop validators passed"


@dataclass(frozen=True, slots=True)
class PlanStep:
    step_id: str
    title: str
    success_criteria: tuple[SuccessCriterion, ...]
    #: Tools whose first call marks this step `running`.
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plugin:
    """A business task package. Registered through the `runlens.plugins` entry point group.

    `tools` builds the plugin's own tools for one run (the workspace file tools are added by
    the runtime). `input_tool` names the tool that reads the input and builds the Evidence
    Index. `offline_model` returns the plugin's deterministic offline analyst, used by the
    `offline` model provider.
    """

    name: str
    description: str
    skill: str
    prompt_fragments: tuple[str, ...]
    contracts: tuple[ArtifactContract, ...]
    plan: tuple[PlanStep, ...]
    tools: Callable[[ToolContext], Sequence[Tool]]
    input_tool: str
    task_prompt: str = "Analyse the input file and write every deliverable."
    offline_model: Callable[[], Model] | None = None
    id_column: str = "id"
    text_column: str = "text"
    extra_validators: tuple[object, ...] = field(default=())
    #: Figures its Markdown deliverables state, recomputed from the data (SPEC 13.2).
    figure_rules: tuple[FigureRule, ...] = ()
    #: Rich-printable text summarising a completed run's deliverables for the terminal.
    describe_result: Callable[[Path], object] | None = None

    def contract(self, artifact_name: str) -> ArtifactContract | None:
        return next((c for c in self.contracts if c.name == artifact_name), None)
