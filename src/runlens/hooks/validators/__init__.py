"""The built-in Stop validators and what they share.

    RequiredOutputValidator    (RequiredOutputValidationHook)    missing_file
    JsonOutputValidator        (JsonOutputValidationHook)        invalid_json, missing_field,
                                                                 invalid_enum, schema_violation
    MarkdownSectionValidator   (MarkdownSectionValidationHook)   missing_heading, heading_order,
                                                                 duplicate_heading
    EvidenceCitationValidator  (EvidenceCitationValidationHook)  unknown_evidence_id,
                                                                 evidence_text_mismatch,
                                                                 empty_evidence_text,
                                                                 evidence_index_missing,
                                                                 evidence_index_tampered

Each is built from the contracts it applies to and reads the workspace through a
`ValidationContext`; `runlens.validation` runs them all and aggregates.
"""

from runlens.hooks.validators.base import (
    QuoteLocation,
    ValidationContext,
    Validator,
    ValidatorResult,
)
from runlens.hooks.validators.evidence import EvidenceCitationValidator
from runlens.hooks.validators.json_rules import JsonOutputValidator
from runlens.hooks.validators.markdown import MarkdownSectionValidator
from runlens.hooks.validators.required import RequiredOutputValidator

__all__ = [
    "EvidenceCitationValidator",
    "JsonOutputValidator",
    "MarkdownSectionValidator",
    "QuoteLocation",
    "RequiredOutputValidator",
    "ValidationContext",
    "Validator",
    "ValidatorResult",
]
