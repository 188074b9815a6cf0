"""Artifact contracts and the dotted-path rule language."""

from runlens.contracts.model import (
    ArtifactContract,
    ArtifactKind,
    Audience,
    EvidenceQuote,
    HeadingRules,
    JsonRules,
)
from runlens.contracts.paths import Match, walk, walk_pairs

__all__ = [
    "ArtifactContract",
    "ArtifactKind",
    "Audience",
    "EvidenceQuote",
    "HeadingRules",
    "JsonRules",
    "Match",
    "walk",
    "walk_pairs",
]
