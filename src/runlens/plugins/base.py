"""The plugin interface: one business task as skill, prompts, tools, contracts and a plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from runlens.contracts import ArtifactContract
from runlens.plugins.review import Correction, ReviewPolicy

if TYPE_CHECKING:
    from runlens.inputs import TableInput
    from runlens.models.base import Model
    from runlens.tools.base import Tool, ToolContext
    from runlens.validation.base import Validator
    from runlens.validation.figure_rules import FigureRule


def _no_tools(context: ToolContext) -> Sequence[Tool]:
    return ()


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


@dataclass(frozen=True, slots=True)
class Conformance:
    """What `runlens check-plugin` runs a plugin on (`runlens.testing.check_plugin`).

    `fixture` is a small input file; `passing_model` a scripted-model file (SPEC section 9)
    whose run on the fixture completes; `fabricating_model` one whose run cites evidence the
    fixture does not hold and so fails with at least the finding codes `expected_codes`.
    """

    fixture: Path
    passing_model: Path
    fabricating_model: Path
    expected_codes: tuple[str, ...] = ("unknown_evidence_id", "evidence_text_mismatch")


@dataclass(frozen=True)
class Plugin:
    """A business task package. Registered through the `runlens.plugins` entry point group.

    `input` declares the input once: the tool that reads it and builds the Evidence Index,
    and its id and text columns (`TableInput`). `tools` builds the plugin's own tools for one
    run; `build_tools` adds the input tool before them (the workspace file tools are added by
    the runtime). `offline_model` returns the plugin's deterministic offline analyst, used by
    the `offline` model provider.
    """

    name: str
    description: str
    skill: str
    prompt_fragments: tuple[str, ...]
    contracts: tuple[ArtifactContract, ...]
    plan: tuple[PlanStep, ...]
    input: TableInput
    tools: Callable[[ToolContext], Sequence[Tool]] = _no_tools
    task_prompt: str = "Analyse the input file and write every deliverable."
    offline_model: Callable[[], Model] | None = None
    extra_validators: tuple[Validator, ...] = field(default=())
    #: Figures its Markdown deliverables state, recomputed from the data (SPEC 13.2).
    figure_rules: tuple[FigureRule, ...] = ()
    #: Rich-printable text summarising a completed run's deliverables for the terminal.
    describe_result: Callable[[Path], object] | None = None
    #: The fixture and scripted models of its conformance checks (`runlens check-plugin`).
    conformance: Conformance | None = None
    #: How many approvals a run needs and whether its submitter may give one (SPEC 17).
    review_policy: ReviewPolicy = field(default_factory=ReviewPolicy)
    #: Corrections a reviewer's mark may carry (another theme for a row, say).
    corrections: tuple[Correction, ...] = ()

    def correction(self, name: str) -> Correction | None:
        return next((c for c in self.corrections if c.name == name), None)

    def contract(self, artifact_name: str) -> ArtifactContract | None:
        return next((c for c in self.contracts if c.name == artifact_name), None)

    @property
    def input_tool(self) -> str:
        """The name of the tool that reads the input and builds the Evidence Index."""
        return self.input.tool_name

    @property
    def id_column(self) -> str:
        """The input's id column unless the user names another (`--id-column`)."""
        return self.input.id_column

    @property
    def text_column(self) -> str:
        """The input's text column unless the user names another (`--text-column`)."""
        return self.input.text_column

    def build_tools(self, context: ToolContext) -> tuple[Tool, ...]:
        """The plugin's tools for one run: its input tool, then its own tools."""
        return (self.input.tool(), *self.tools(context))
