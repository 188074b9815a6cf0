"""Findings: one problem a validator found, with a stable code and a concrete location."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FindingCode = Literal[
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
    "evidence_index_missing",
    "evidence_index_tampered",
    "hook_blocked",
    "hook_error",
]

ArtifactStatus = Literal["validated", "rejected", "missing"]


class Finding(BaseModel):
    """`{validator, artifact, code, path, message, details}` (SPEC section 6).

    `artifact` is the contract name of the artifact where the bad value sits ("" when the
    finding is about the run rather than one artifact, e.g. a missing Evidence Index).
    `path` is the concrete location inside it (`items[3].sentiment`), "" for the whole file.
    """

    model_config = ConfigDict(frozen=True)

    validator: str
    artifact: str
    code: FindingCode
    path: str = ""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
