"""Validation: the Stop validators, their findings, and the one runner both commands use.

    RequiredOutputValidator    (RequiredOutputValidationHook)    missing_file
    JsonOutputValidator        (JsonOutputValidationHook)        invalid_json, missing_field,
                                                                 invalid_enum, schema_violation
    MarkdownSectionValidator   (MarkdownSectionValidationHook)   missing_heading, heading_order,
                                                                 duplicate_heading
    EvidenceCitationValidator  (EvidenceCitationValidationHook)  unknown_evidence_id,
                                                                 evidence_text_mismatch,
                                                                 empty_evidence_text,
                                                                 weak_evidence_quote,
                                                                 evidence_index_missing,
                                                                 evidence_index_tampered
    MarkdownCitationValidator  (MarkdownCitationValidationHook)  unknown_evidence_id,
                                                                 evidence_text_mismatch,
                                                                 empty_evidence_text,
                                                                 weak_evidence_quote,
                                                                 unsourced_quote,
                                                                 unknown_reference
    CoverageValidator          (CoverageValidationHook)          rows_not_covered
    SecretValidator            (SecretValidationHook)            secret_in_artifact
    FigureValidator            (FigureValidationHook)            figure_mismatch,
                                                                 unsupported_figure

Each is built from the contracts it applies to (the figure validator from the plugin's
`figure_rules`: `Figure`, `FigureRule`) and reads the workspace through a
`ValidationContext`; `run_validators` runs them (each with a timeout, in a worker thread) and
`aggregate` turns their results into one `ValidationReport`. `runlens run` and
`runlens validate` both go through them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runlens._lazy import lazy_names

#: Public name -> the module it lives in. Names are imported on first use: a command that
#: only reads findings (`runlens show`) does not load every validator and what they need.
_HOMES: dict[str, str] = {
    "ArtifactStatus": "runlens.validation.findings",
    "BUILTIN_CODES": "runlens.validation.findings",
    "Collector": "runlens.validation.base",
    "DEFAULT_TIMEOUT": "runlens.validation.runner",
    "EvidenceCitationValidator": "runlens.validation.evidence",
    "Figure": "runlens.validation.figure_rules",
    "FigureRule": "runlens.validation.figure_rules",
    "FigureValidator": "runlens.validation.figures",
    "Finding": "runlens.validation.findings",
    "FindingCode": "runlens.validation.findings",
    "IdCitation": "runlens.validation.base",
    "JsonOutputValidator": "runlens.validation.json_rules",
    "MarkdownCitationValidator": "runlens.validation.citations",
    "MarkdownSectionValidator": "runlens.validation.markdown",
    "Problem": "runlens.validation.base",
    "QuoteLocation": "runlens.validation.base",
    "ReadText": "runlens.validation.reading",
    "RequiredOutputValidator": "runlens.validation.required",
    "VALIDATOR_GROUP": "runlens.validation.runner",
    "ValidationContext": "runlens.validation.base",
    "ValidationReport": "runlens.validation.runner",
    "Validator": "runlens.validation.base",
    "ValidatorResult": "runlens.validation.base",
    "aggregate": "runlens.validation.runner",
    "as_read": "runlens.validation.reading",
    "builtin_validators": "runlens.validation.runner",
    "extra_validators": "runlens.validation.runner",
    "load_validator_plugins": "runlens.validation.runner",
    "plugin_validators": "runlens.validation.runner",
    "read_markdown": "runlens.validation.reading",
    "run_validator": "runlens.validation.runner",
    "run_validators": "runlens.validation.runner",
    "stop_validators": "runlens.validation.runner",
    "validate_workspace": "runlens.validation.runner",
}

__all__ = [
    "BUILTIN_CODES",
    "DEFAULT_TIMEOUT",
    "VALIDATOR_GROUP",
    "ArtifactStatus",
    "Collector",
    "EvidenceCitationValidator",
    "Figure",
    "FigureRule",
    "FigureValidator",
    "Finding",
    "FindingCode",
    "IdCitation",
    "JsonOutputValidator",
    "MarkdownCitationValidator",
    "MarkdownSectionValidator",
    "Problem",
    "QuoteLocation",
    "ReadText",
    "RequiredOutputValidator",
    "ValidationContext",
    "ValidationReport",
    "Validator",
    "ValidatorResult",
    "aggregate",
    "as_read",
    "builtin_validators",
    "extra_validators",
    "load_validator_plugins",
    "plugin_validators",
    "read_markdown",
    "run_validator",
    "run_validators",
    "stop_validators",
    "validate_workspace",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)


if TYPE_CHECKING:
    from runlens.validation.base import (
        Collector,
        IdCitation,
        Problem,
        QuoteLocation,
        ValidationContext,
        Validator,
        ValidatorResult,
    )
    from runlens.validation.citations import MarkdownCitationValidator
    from runlens.validation.evidence import EvidenceCitationValidator
    from runlens.validation.figure_rules import Figure, FigureRule
    from runlens.validation.figures import FigureValidator
    from runlens.validation.findings import BUILTIN_CODES, ArtifactStatus, Finding, FindingCode
    from runlens.validation.json_rules import JsonOutputValidator
    from runlens.validation.markdown import MarkdownSectionValidator
    from runlens.validation.reading import ReadText, as_read, read_markdown
    from runlens.validation.required import RequiredOutputValidator
    from runlens.validation.runner import (
        DEFAULT_TIMEOUT,
        VALIDATOR_GROUP,
        ValidationReport,
        aggregate,
        builtin_validators,
        extra_validators,
        load_validator_plugins,
        plugin_validators,
        run_validator,
        run_validators,
        stop_validators,
        validate_workspace,
    )
