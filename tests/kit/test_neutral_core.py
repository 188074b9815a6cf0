"""The core speaks of rows, not of any one plugin's business: no file under `src/runlens`
(code, templates, data) names feedback."""

from __future__ import annotations

import re
from pathlib import Path

import runlens

CORE = Path(runlens.__file__).parent
WORD = re.compile("feedback", re.IGNORECASE)


def test_no_file_of_the_core_names_feedback() -> None:
    named = {
        path.relative_to(CORE).as_posix(): len(WORD.findall(text))
        for path in sorted(CORE.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
        for text in [path.read_text(encoding="utf-8", errors="replace")]
        if WORD.search(text) or WORD.search(path.name)
    }

    assert named == {}, f"files under src/runlens naming feedback (occurrences): {named}"
