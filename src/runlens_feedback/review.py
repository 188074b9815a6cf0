"""What a reviewer may correct in a Feedback Analysis run, and who must approve one.

One approval is enough, and the person who started the run may not give it. A mark on a
citation may carry another theme for the cited row, chosen from the themes the run's analysis
already uses (or typed in, when the analysis names none).
"""

from __future__ import annotations

import json
from pathlib import Path

from runlens import Correction, ReviewPolicy
from runlens_feedback.contracts import ANALYSIS

POLICY = ReviewPolicy(approvals=1, submitter_may_approve=False)


def analysis_themes(root: Path) -> list[str]:
    """The distinct `theme` values of the analysis deliverable under `root`, sorted; [] when
    it is missing or unreadable."""
    try:
        document = json.loads((root / ANALYSIS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = document.get("items") if isinstance(document, dict) else None
    themes = {
        item["theme"].strip()
        for item in items or ()
        if isinstance(item, dict) and isinstance(item.get("theme"), str) and item["theme"].strip()
    }
    return sorted(themes)


THEME = Correction(name="theme", label="Another theme for this row", choices=analysis_themes)

CORRECTIONS = (THEME,)

__all__ = ["CORRECTIONS", "POLICY", "THEME", "analysis_themes"]
