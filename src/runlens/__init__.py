"""RunLens: an agent runtime whose runs complete only when their deliverables hold up.

The names a plugin needs are importable from here (and `runlens.testing` for scripted and
function models); every other module is private. Names are imported on first use, so
`import runlens` (and the `runlens` command) stays fast.

    from runlens import ArtifactContract, PlanStep, Plugin, SuccessCriterion, TableInput
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> (home module, name there).
_HOMES: dict[str, tuple[str, str]] = {
    # plugins
    "Conformance": ("runlens.plugins.base", "Conformance"),
    "Correction": ("runlens.plugins.review", "Correction"),
    "ReviewPolicy": ("runlens.plugins.review", "ReviewPolicy"),
    "PlanStep": ("runlens.plugins.base", "PlanStep"),
    "Plugin": ("runlens.plugins.base", "Plugin"),
    "SuccessCriterion": ("runlens.plugins.base", "SuccessCriterion"),
    # contracts
    "ArtifactContract": ("runlens.contracts.model", "ArtifactContract"),
    "Coverage": ("runlens.contracts.model", "Coverage"),
    "EvidenceQuote": ("runlens.contracts.model", "EvidenceQuote"),
    "HeadingRules": ("runlens.contracts.model", "HeadingRules"),
    "JsonRules": ("runlens.contracts.model", "JsonRules"),
    "MarkdownCitations": ("runlens.contracts.model", "MarkdownCitations"),
    "QuoteRules": ("runlens.contracts.model", "QuoteRules"),
    # tools and inputs
    "TableInput": ("runlens.inputs", "TableInput"),
    "Tool": ("runlens.tools.base", "Tool"),
    "ToolContext": ("runlens.tools.base", "ToolContext"),
    # models
    "AssistantMessage": ("runlens.models.messages", "AssistantMessage"),
    "Message": ("runlens.models.messages", "Message"),
    "Model": ("runlens.models.base", "Model"),
    "ModelResponse": ("runlens.models.messages", "ModelResponse"),
    "SystemMessage": ("runlens.models.messages", "SystemMessage"),
    "ToolCall": ("runlens.models.messages", "ToolCall"),
    "ToolResultMessage": ("runlens.models.messages", "ToolResultMessage"),
    "ToolSpec": ("runlens.models.messages", "ToolSpec"),
    "Usage": ("runlens.models.messages", "Usage"),
    "UserMessage": ("runlens.models.messages", "UserMessage"),
    # evidence
    "SourceTable": ("runlens.evidence", "SourceTable"),
    "EvidenceIndex": ("runlens.evidence", "EvidenceIndex"),
    "QuoteSpan": ("runlens.evidence", "QuoteSpan"),
    # errors
    "ContractError": ("runlens.errors", "ContractError"),
    "InputError": ("runlens.errors", "InputError"),
    "ProviderError": ("runlens.errors", "ProviderError"),
    "RunLensError": ("runlens.errors", "RunLensError"),
    "TaskError": ("runlens.errors", "TaskError"),
    "ToolError": ("runlens.errors", "ToolError"),
    "UserError": ("runlens.errors", "UserError"),
    # the batch engine and the items it checks
    "NO_TEXT_REASON": ("runlens.batching", "NO_TEXT_REASON"),
    "Batch": ("runlens.batching", "Batch"),
    "BatchResult": ("runlens.batching", "BatchResult"),
    "ItemChecker": ("runlens.batching", "ItemChecker"),
    "MessageBuilder": ("runlens.batching", "MessageBuilder"),
    "batch_message": ("runlens.batching", "batch_message"),
    "has_text": ("runlens.batching", "has_text"),
    "parse_batch_message": ("runlens.batching", "parse_batch_message"),
    "run_batches": ("runlens.batching", "run_batches"),
    "item_problems": ("runlens.validation.items", "item_problems"),
    "submit_tool_spec": ("runlens.validation.items", "submit_tool_spec"),
    # validators and figures of a plugin's own
    "CITATION_BRACKETS": ("runlens.validation.citations", "BRACKETS"),
    "Collector": ("runlens.validation.base", "Collector"),
    "Problem": ("runlens.validation.base", "Problem"),
    "ValidationContext": ("runlens.validation.base", "ValidationContext"),
    "ValidatorResult": ("runlens.validation.base", "ValidatorResult"),
    "load_document": ("runlens.validation.base", "load_document"),
    "SOURCE_ROWS": ("runlens.validation.sources", "SOURCE_ROWS"),
    "Figure": ("runlens.validation.figure_rules", "Figure"),
    "FigureRule": ("runlens.validation.figure_rules", "FigureRule"),
    "Label": ("runlens.validation.figure_rules", "Label"),
    "Place": ("runlens.validation.figure_rules", "Place"),
    "computed_figures": ("runlens.validation.figures", "computed_figures"),
    "stated_numbers": ("runlens.validation.numbers", "stated_numbers"),
    "splits_word": ("runlens.validation.quotes", "splits_word"),
    "is_strong_quote": ("runlens.validation.quotes", "is_strong"),
    "cut_quote": ("runlens.validation.cuts", "cut_quote"),
    "cut_text": ("runlens.validation.cuts", "cut_text"),
    "fit_quote": ("runlens.validation.cuts", "fit_quote"),
    "one_line_quote": ("runlens.validation.cuts", "one_line_quote"),
    # the one rounding rule of figures
    "as_percent": ("runlens.validation.rounding", "as_percent"),
    "exact_value": ("runlens.validation.rounding", "exact"),
    "percent": ("runlens.validation.rounding", "percent"),
    "round_half_up": ("runlens.validation.rounding", "round_half_up"),
    # helpers
    "checkpoint": ("runlens.cancellation", "checkpoint"),
    "write_atomic": ("runlens.atomic", "write_atomic"),
}

__all__ = [
    "CITATION_BRACKETS",
    "NO_TEXT_REASON",
    "SOURCE_ROWS",
    "ArtifactContract",
    "AssistantMessage",
    "Batch",
    "BatchResult",
    "Collector",
    "Conformance",
    "ContractError",
    "Correction",
    "Coverage",
    "EvidenceIndex",
    "EvidenceQuote",
    "Figure",
    "FigureRule",
    "HeadingRules",
    "InputError",
    "ItemChecker",
    "JsonRules",
    "Label",
    "MarkdownCitations",
    "Message",
    "MessageBuilder",
    "Model",
    "ModelResponse",
    "Place",
    "PlanStep",
    "Plugin",
    "Problem",
    "ProviderError",
    "QuoteRules",
    "QuoteSpan",
    "ReviewPolicy",
    "RunLensError",
    "SourceTable",
    "SuccessCriterion",
    "SystemMessage",
    "TableInput",
    "TaskError",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserError",
    "UserMessage",
    "ValidationContext",
    "ValidatorResult",
    "as_percent",
    "batch_message",
    "checkpoint",
    "computed_figures",
    "cut_quote",
    "cut_text",
    "exact_value",
    "fit_quote",
    "has_text",
    "is_strong_quote",
    "item_problems",
    "load_document",
    "one_line_quote",
    "parse_batch_message",
    "percent",
    "round_half_up",
    "run_batches",
    "splits_word",
    "stated_numbers",
    "submit_tool_spec",
    "write_atomic",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'runlens' has no attribute {name!r}")
    value = getattr(import_module(home[0]), home[1])
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from runlens.atomic import write_atomic
    from runlens.batching import (
        NO_TEXT_REASON,
        Batch,
        BatchResult,
        ItemChecker,
        MessageBuilder,
        batch_message,
        has_text,
        parse_batch_message,
        run_batches,
    )
    from runlens.cancellation import checkpoint
    from runlens.contracts.model import (
        ArtifactContract,
        Coverage,
        EvidenceQuote,
        HeadingRules,
        JsonRules,
        MarkdownCitations,
        QuoteRules,
    )
    from runlens.errors import (
        ContractError,
        InputError,
        ProviderError,
        RunLensError,
        TaskError,
        ToolError,
        UserError,
    )
    from runlens.evidence import EvidenceIndex, QuoteSpan, SourceTable
    from runlens.inputs import TableInput
    from runlens.models.base import Model
    from runlens.models.messages import (
        AssistantMessage,
        Message,
        ModelResponse,
        SystemMessage,
        ToolCall,
        ToolResultMessage,
        ToolSpec,
        Usage,
        UserMessage,
    )
    from runlens.plugins.base import Conformance, PlanStep, Plugin, SuccessCriterion
    from runlens.plugins.review import Correction, ReviewPolicy
    from runlens.tools.base import Tool, ToolContext
    from runlens.validation.base import (
        Collector,
        Problem,
        ValidationContext,
        ValidatorResult,
        load_document,
    )
    from runlens.validation.citations import BRACKETS as CITATION_BRACKETS
    from runlens.validation.cuts import cut_quote, cut_text, fit_quote, one_line_quote
    from runlens.validation.figure_rules import Figure, FigureRule, Label, Place
    from runlens.validation.figures import computed_figures
    from runlens.validation.items import item_problems, submit_tool_spec
    from runlens.validation.numbers import stated_numbers
    from runlens.validation.quotes import is_strong as is_strong_quote
    from runlens.validation.quotes import splits_word
    from runlens.validation.rounding import as_percent, percent, round_half_up
    from runlens.validation.rounding import exact as exact_value
    from runlens.validation.sources import SOURCE_ROWS
