"""Feedback Analysis: the first RunLens business plugin.

Registered through the `runlens.plugins` entry point exactly as a third-party plugin would be,
and built only on RunLens's public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from runlens import Conformance, PlanStep, Plugin, SuccessCriterion
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, CONTRACTS, INPUT, REPORT
from runlens_feedback.figures import FIGURE_RULES
from runlens_feedback.review import CORRECTIONS, POLICY
from runlens_feedback.validators import BacklogThemeValidator, ChartValidator

if TYPE_CHECKING:
    from runlens import Model, Tool, ToolContext

NAME = "feedback-analysis"


_SAMPLES = Path(__file__).parent / "conformance"


def _text(name: str) -> str:
    return files("runlens_feedback").joinpath(name).read_text(encoding="utf-8")


def _tools(context: ToolContext) -> Sequence[Tool]:
    from runlens_feedback.tools import own_tools

    return own_tools(context)


def _describe_result(workspace: Path) -> object:
    from runlens_feedback.terminal import describe_result

    return describe_result(workspace)


def _offline_model() -> Model:
    from runlens_feedback.offline import OfflineAnalyst

    return OfflineAnalyst()


PLAN = (
    PlanStep(
        "load_feedback",
        "Load the feedback CSV and build the Evidence Index",
        (SuccessCriterion("evidence_index_built"),),
        tools=(INPUT.tool_name,),
    ),
    PlanStep(
        "analyze_feedback",
        "Analyse every feedback row",
        (SuccessCriterion("artifact_validated", ANALYSIS),),
        tools=("analyze_feedback_batches",),
    ),
    PlanStep(
        "build_backlog",
        "Build the product backlog",
        (SuccessCriterion("artifact_validated", BACKLOG),),
    ),
    PlanStep(
        "write_report",
        "Write the insight report",
        (SuccessCriterion("artifact_validated", REPORT),),
        tools=("report_figures", "write_insight_chart"),
    ),
    PlanStep(
        "validate_deliverables",
        "Validate every deliverable against its contract and the source",
        (SuccessCriterion("stop_passed"),),
    ),
)


def _build() -> Plugin:
    return Plugin(
        name=NAME,
        description="Analyse product-feedback CSVs into an analysis, a backlog and a report.",
        skill=_text("skill.md"),
        prompt_fragments=tuple(
            block.strip()
            for block in _text("prompt_fragments.md").split("\n---\n")
            if block.strip()
        ),
        contracts=CONTRACTS,
        figure_rules=FIGURE_RULES,
        plan=PLAN,
        input=INPUT,
        tools=_tools,
        task_prompt=(
            "Analyse the product feedback in the input CSV and write the three deliverables: "
            f"{ANALYSIS}, {BACKLOG} and {REPORT}; draw {CHART} with write_insight_chart and "
            "link it from the report."
        ),
        offline_model=_offline_model,
        extra_validators=(BacklogThemeValidator(), ChartValidator()),
        describe_result=_describe_result,
        # What `runlens check-plugin feedback-analysis` runs (conformance/*).
        conformance=Conformance(
            fixture=_SAMPLES / "feedback.csv",
            passing_model=_SAMPLES / "passing.yaml",
            fabricating_model=_SAMPLES / "fabricating.yaml",
        ),
        review_policy=POLICY,
        corrections=CORRECTIONS,
    )


plugin = _build()

__all__ = ["NAME", "PLAN", "plugin"]
