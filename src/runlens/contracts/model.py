"""ArtifactContract: the single declaration of one deliverable (SPEC section 4).

One contract serves validation, the manifest and UI metadata, so an artifact's rules live in
one place. Contracts are plain data: a plugin author can write them in Python or load them
from JSON/YAML with `ArtifactContract.model_validate`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Audience = Literal["user", "developer"]
ArtifactKind = Literal["json", "markdown", "file"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class JsonRules(_Frozen):
    """Lightweight JSON rules: top-level required fields and enums at dotted paths."""

    required_fields: tuple[str, ...] = ()
    enum_fields: dict[str, tuple[str, ...]] = Field(default_factory=dict)


class HeadingRules(_Frozen):
    """Extra rules on `required_headings`: their order, and that each appears at most once."""

    ordered: bool = False
    unique: bool = False


class EvidenceQuote(_Frozen):
    """The text at `text` must quote the source row whose id is at `id`, in the same item.

    Both are dotted paths sharing the list they walk, e.g. `items.evidence_text` and
    `items.feedback_id`. A quote shorter than `min_length` characters is accepted only when it
    is the row's whole text.
    """

    text: str
    id: str
    min_length: int = Field(default=1, ge=1)


class ArtifactContract(_Frozen):
    """The declaration of one deliverable."""

    name: str
    description: str = ""
    label: str = ""
    audience: Audience = "user"
    sensitivity: str = "internal"
    required: bool = True
    rules: JsonRules | None = Field(default=None, alias="schema")
    json_schema: dict[str, Any] | None = None
    required_headings: tuple[str, ...] = ()
    heading_rules: HeadingRules | None = None
    evidence_fields: tuple[str, ...] = ()
    evidence_quotes: tuple[EvidenceQuote, ...] = ()

    @field_validator("name")
    @classmethod
    def _name_is_workspace_relative(cls, name: str) -> str:
        parts = name.replace("\\", "/").split("/")
        if name.startswith("/") or ".." in parts or not name.strip():
            raise ValueError(f"artifact name must be a workspace-relative path, got {name!r}")
        return name

    @property
    def kind(self) -> ArtifactKind:
        lowered = self.name.lower()
        if lowered.endswith(".json"):
            return "json"
        if lowered.endswith((".md", ".markdown")):
            return "markdown"
        return "file"

    @property
    def display_name(self) -> str:
        return self.label or self.name

    def to_metadata(self) -> dict[str, Any]:
        """The UI / manifest view of this contract."""
        return {
            "name": self.name,
            "label": self.display_name,
            "description": self.description,
            "audience": self.audience,
            "sensitivity": self.sensitivity,
            "required": self.required,
        }
