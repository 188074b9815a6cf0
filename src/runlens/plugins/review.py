"""What a plugin declares about review by people (SPEC section 17): its review policy and the
corrections a reviewer may attach to a mark.

`ReviewPolicy` says how many reviewers must approve a run and whether the person who started
it may be one of them; `Correction` names a value a mark may carry besides correct/wrong/unsure
(another theme for a row, say), with the choices offered when the plugin can list them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runlens.errors import ContractError

_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True, slots=True)
class ReviewPolicy:
    """When a run counts as approved: `approvals` distinct reviewers' valid approvals, the
    run's submitter's own never counted unless `submitter_may_approve`."""

    approvals: int = 1
    submitter_may_approve: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.approvals, bool) or not isinstance(self.approvals, int):
            raise ContractError(f"ReviewPolicy.approvals must be an int, not {self.approvals!r}")
        if self.approvals < 1:
            raise ContractError(f"ReviewPolicy.approvals must be at least 1, not {self.approvals}")

    def describe(self) -> str:
        """`1 approval; the submitter may not approve`."""
        count = f"{self.approvals} approval{'s' if self.approvals != 1 else ''}"
        may = "may" if self.submitter_may_approve else "may not"
        return f"{count}; the submitter {may} approve"


@dataclass(frozen=True, slots=True)
class Correction:
    """A correction a mark may carry: `name` is its key in the mark's `correction`, `label`
    what a reviewer reads. `artifacts` are the deliverables (contract names) it applies to,
    () for any; `choices`, given the workspace root, lists the values offered (None: free
    text)."""

    name: str
    label: str
    artifacts: tuple[str, ...] = ()
    choices: Callable[[Path], Sequence[str]] | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ContractError(
                f"Correction name {self.name!r}: use 1 to 40 lowercase letters, digits or '_', "
                "starting with a letter"
            )
        if not self.label.strip():
            raise ContractError(f"Correction {self.name!r} needs a label")

    def applies_to(self, artifact: str) -> bool:
        return not self.artifacts or artifact in self.artifacts

    def options(self, root: Path) -> tuple[str, ...] | None:
        """The values offered for the run at `root`, None for free text (also when the
        plugin's list cannot be read: a reviewer can still type one)."""
        if self.choices is None:
            return None
        try:
            found = self.choices(root)
        except (OSError, ValueError):
            return None
        return tuple(dict.fromkeys(str(choice) for choice in found))


__all__ = ["Correction", "ReviewPolicy"]
