"""The public API: exactly these names, each importable from `runlens`; the first plugin uses
nothing else."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import runlens

PUBLIC = {
    # plugins
    "Conformance",
    "PlanStep",
    "Plugin",
    "SuccessCriterion",
    "ReviewPolicy",
    "Correction",
    # contracts
    "ArtifactContract",
    "Coverage",
    "EvidenceQuote",
    "HeadingRules",
    "JsonRules",
    "MarkdownCitations",
    "QuoteRules",
    # tools and inputs
    "TableInput",
    "Tool",
    "ToolContext",
    # models
    "AssistantMessage",
    "Message",
    "Model",
    "ModelResponse",
    "SystemMessage",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    # evidence
    "EvidenceIndex",
    "QuoteSpan",
    "SourceTable",
    # errors
    "ContractError",
    "InputError",
    "ProviderError",
    "RunLensError",
    "TaskError",
    "ToolError",
    "UserError",
    # the batch engine and the item checks
    "NO_TEXT_REASON",
    "Batch",
    "BatchResult",
    "ItemChecker",
    "MessageBuilder",
    "batch_message",
    "has_text",
    "item_problems",
    "parse_batch_message",
    "run_batches",
    "submit_tool_spec",
    # a plugin's own validators and figures
    "CITATION_BRACKETS",
    "Collector",
    "Figure",
    "FigureRule",
    "Label",
    "Problem",
    "SOURCE_ROWS",
    "ValidationContext",
    "ValidatorResult",
    "computed_figures",
    "load_document",
    "splits_word",
    "as_percent",
    "exact_value",
    "percent",
    "round_half_up",
    "Place",
    "cut_quote",
    "cut_text",
    "fit_quote",
    "one_line_quote",
    "is_strong_quote",
    "stated_numbers",
    # helpers
    "checkpoint",
    "write_atomic",
}

SRC = Path(__file__).resolve().parents[1] / "src"
#: An import of a RunLens submodule: `from runlens.x import ...` or `import runlens.x`.
SUBMODULE_IMPORT = re.compile(r"^\s*(?:from\s+runlens\.\w|import\s+runlens\.\w)", re.MULTILINE)


def test_all_is_exactly_the_public_names() -> None:
    assert set(runlens.__all__) == PUBLIC
    assert len(runlens.__all__) == len(PUBLIC)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_resolves(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from runlens import {name}", namespace)
    assert namespace[name] is getattr(runlens, name)


def test_the_names_are_the_home_modules_objects() -> None:
    from runlens.evidence import SourceTable
    from runlens.plugins import Plugin
    from runlens.validation.citations import BRACKETS

    assert runlens.Plugin is Plugin
    assert runlens.SourceTable is SourceTable
    assert runlens.CITATION_BRACKETS is BRACKETS
    assert set(dir(runlens)) >= PUBLIC


def test_other_names_are_not_attributes() -> None:
    with pytest.raises(AttributeError, match="no attribute 'load_plugin'"):
        runlens.load_plugin  # noqa: B018
    with pytest.raises(ImportError):
        exec("from runlens import Workspace", {})


def test_importing_runlens_loads_no_submodule() -> None:
    code = "import sys, runlens; print(sorted(m for m in sys.modules if m.startswith('runlens.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_feedback_plugin_imports_only_the_public_api() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted((SRC / "runlens_feedback").rglob("*.py"))
        for text in [path.read_text(encoding="utf-8")]
        for match in SUBMODULE_IMPORT.finditer(text)
    ]
    assert offenders == []
    # ... and imports the public API at all (the check above is not vacuous)
    init = (SRC / "runlens_feedback" / "__init__.py").read_text(encoding="utf-8")
    assert "from runlens import" in init
