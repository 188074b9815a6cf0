"""Artifact contracts and the dotted-path rule language."""

from runlens.contracts.model import (
    ArtifactContract,
    ArtifactKind,
    Audience,
    Coverage,
    EvidenceQuote,
    HeadingRules,
    JsonRules,
    MarkdownCitations,
    QuoteRules,
)
from runlens.contracts.paths import Match, walk, walk_pairs

__all__ = [
    "ArtifactContract",
    "ArtifactKind",
    "Audience",
    "Coverage",
    "EvidenceQuote",
    "HeadingRules",
    "JsonRules",
    "MarkdownCitations",
    "Match",
    "QuoteRules",
    "walk",
    "walk_pairs",
]
