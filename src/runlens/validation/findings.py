"""Findings: one problem a validator found, with a stable code and a concrete location."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: A finding code: a snake_case word. The built-in validators use `BUILTIN_CODES`; plugin
#: validators add their own (for example `figure_mismatch` from a plugin's figure rules).
FindingCode = str

BUILTIN_CODES: frozenset[str] = frozenset(
    {
        "missing_file",
        "invalid_json",
        "missing_field",
        "invalid_enum",
        "schema_violation",
        "missing_heading",
        "heading_order",
        "duplicate_heading",
        "unknown_evidence_id",
        "evidence_text_mismatch",
        "empty_evidence_text",
        "weak_evidence_quote",
        "unsourced_quote",
        "unknown_reference",
        "evidence_index_missing",
        "evidence_index_tampered",
        "evidence_source_missing",
        "rows_not_covered",
        "figure_mismatch",
        "unsupported_figure",
        "secret_in_artifact",
        "hook_blocked",
        "hook_error",
    }
)

_CODE = re.compile(r"[a-z][a-z0-9_]*")

ArtifactStatus = Literal["validated", "rejected", "missing"]


class Finding(BaseModel):
    """`{validator, artifact, code, path, message, details}` (SPEC section 6).

    `artifact` is the contract name of the artifact where the bad value sits ("" when the
    finding is about the run rather than one artifact, e.g. a missing Evidence Index).
    `path` is the concrete location inside it (`items[3].sentiment`, or `line 12` in a
    Markdown file), "" for the whole file. Markdown findings carry `line` and `column`
    (1-based) in `details`.
    """

    model_config = ConfigDict(frozen=True)

    validator: str
    artifact: str
    code: FindingCode
    path: str = ""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)

    @field_validator("code")
    @classmethod
    def _snake_case(cls, code: str) -> str:
        if not _CODE.fullmatch(code):
            raise ValueError(f"a finding code is a snake_case word, got {code!r}")
        return code
