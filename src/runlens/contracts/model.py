"""ArtifactContract: the single declaration of one deliverable (SPEC section 4).

One contract serves validation, the manifest and UI metadata, so an artifact's rules live in
one place. Contracts are plain data: a plugin author can write them in Python or load them
from JSON/YAML with `ArtifactContract.model_validate`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


#: A quote of fewer characters than this is not evidence (unless it is the row's whole text).
DEFAULT_MIN_QUOTE_LENGTH = 2


class QuoteRules(_Frozen):
    """What makes a quote evidence rather than a coincidence.

    `min_length`: characters (Unicode NFC, surrounding whitespace not counted) a quote needs,
    unless it is the row's whole text. `whole_words`: a quote in a script that separates words
    with spaces (Latin, Cyrillic, Greek, ...) may not start or end inside a word; Chinese and
    Japanese text, which has no spaces between words, is exempt.
    """

    min_length: int = Field(default=DEFAULT_MIN_QUOTE_LENGTH, ge=1)
    whole_words: bool = True


class EvidenceQuote(QuoteRules):
    """The text at `text` must quote the source row whose id is at `id`, in the same item.

    Both are dotted paths sharing the list they walk, e.g. `items.evidence_text` and
    `items.row_id`. The quote must be strong enough (`QuoteRules`).
    """

    text: str
    id: str


#: The quotation marks a Markdown citation may use: (opening, closing).
DEFAULT_QUOTE_MARKS: tuple[tuple[str, str], ...] = (("“", "”"), ('"', '"'), ("「", "」"))


class MarkdownCitations(QuoteRules):
    """How a Markdown artifact cites source rows (SPEC section 13.1).

    A citation is a quotation followed by the id of the row it quotes, in the same paragraph:
    after a dash (`“quote” — fb_001`) or in brackets (`“quote” [fb_001]`, `“quote” (fb_001)`).
    Every citation is checked like `evidence_quotes`. Under the headings in
    `evidence_sections` every quotation must cite a row (`unsourced_quote`). An id-shaped token
    anywhere in the document that names no row is `unknown_reference`: `id_pattern` is the
    regular expression of an id-shaped token; None derives it from the ids of the index.
    `own_words` are the document's own words that may look like ids (priorities `P0`-`P3`,
    say): in running text they are never taken for row ids; nor is a value of one of the
    input's other columns (a document may write the input's data).
    """

    quote_marks: tuple[tuple[str, str], ...] = DEFAULT_QUOTE_MARKS
    evidence_sections: tuple[str, ...] = ()
    id_pattern: str | None = None
    own_words: tuple[str, ...] = ()


class Coverage(_Frozen):
    """Every source row with text is accounted for in this artifact (`rows_not_covered`).

    `ids` is the dotted path of the ids the artifact analysed (`items.row_id`);
    `excused_ids` the path of ids it lists as not analysed, with a reason next to them
    (`failed_batches.row_ids`).
    """

    ids: str
    excused_ids: str | None = None


class ArtifactContract(_Frozen):
    """The declaration of one deliverable.

    `row_fields` are the dotted paths of the fields that describe the row an item cites
    (`items.sentiment`): each sits in the same list as one of `evidence_fields`, the row's
    id. The UI shows them beside the row and filters rows by them.
    """

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
    citations: MarkdownCitations | None = None
    coverage: Coverage | None = None
    row_fields: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _name_is_workspace_relative(cls, name: str) -> str:
        parts = name.replace("\\", "/").split("/")
        if name.startswith("/") or ".." in parts or not name.strip():
            raise ValueError(f"artifact name must be a workspace-relative path, got {name!r}")
        return name

    @model_validator(mode="after")
    def _row_fields_sit_beside_an_id(self) -> ArtifactContract:
        for path in self.row_fields:
            keys = path.split(".")
            lists = (field.split(".")[:-1] for field in self.evidence_fields)
            if not any(len(keys) > len(at) and keys[: len(at)] == at for at in lists):
                raise ValueError(
                    f"row field {path!r} shares its list with none of evidence_fields "
                    f"{list(self.evidence_fields)}: name the field that holds the row's id"
                )
        return self

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
