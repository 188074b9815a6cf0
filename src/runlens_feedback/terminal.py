"""What `runlens run feedback-analysis` prints after a completed run: the top pain points.

`describe_result(workspace)` reads the run's backlog and analysis and returns a rich table:
one row per top backlog item with its priority, title, the rows behind it and one verbatim
quote with its feedback id. Feedback text is shown as plain text (never as rich markup).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from runlens_feedback.contracts import ANALYSIS, BACKLOG
from runlens_feedback.quotes import short_quote

TOP_ITEMS = 5
QUOTE_CHARS = 70
_PRIORITY_STYLE = {"P0": "bold red", "P1": "yellow", "P2": "cyan", "P3": "dim"}


def describe_result(workspace: Path) -> Table | None:
    """The top pain points of a completed run in `workspace`, or None when its backlog is
    missing, unreadable or empty."""
    backlog = _read_json(workspace / BACKLOG)
    entries = backlog.get("items") if isinstance(backlog, dict) else None
    if not isinstance(entries, list) or not entries:
        return None
    shown = [entry for entry in entries if isinstance(entry, dict)][:TOP_ITEMS]
    quotes = _quotes(workspace / ANALYSIS, {i for e in shown for i in _ids(e)})
    table = Table(title="Top pain points", title_justify="left", show_lines=False)
    table.add_column("Priority", no_wrap=True)
    table.add_column("Pain point")
    table.add_column("Rows", justify="right", no_wrap=True)
    table.add_column("Evidence")
    for entry in shown:
        priority = str(entry.get("priority", ""))
        table.add_row(
            Text(priority, style=_PRIORITY_STYLE.get(priority, "")),
            Text(" ".join(str(entry.get("title", "")).split())),
            Text(str(_count(entry))),
            _evidence(entry, quotes),
        )
    return table


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _ids(entry: Mapping[str, Any]) -> list[str]:
    ids = entry.get("evidence_feedback_ids")
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _count(entry: Mapping[str, Any]) -> int:
    """The rows behind an item: `mentions` when the writer recorded it, else its cited ids."""
    mentions = entry.get("mentions")
    if isinstance(mentions, int) and not isinstance(mentions, bool):
        return mentions
    return len(_ids(entry))


def _quotes(path: Path, wanted: set[str]) -> dict[str, str]:
    """`evidence_text` of the wanted ids, from the analysis file."""
    analysis = _read_json(path)
    items = analysis.get("items") if isinstance(analysis, dict) else None
    if not isinstance(items, Sequence):
        return {}
    return {
        str(item["feedback_id"]): item["evidence_text"]
        for item in items
        if isinstance(item, dict)
        and str(item.get("feedback_id")) in wanted
        and isinstance(item.get("evidence_text"), str)
        and item["evidence_text"].strip()
    }


def _evidence(entry: Mapping[str, Any], quotes: Mapping[str, str]) -> Text:
    for feedback_id in _ids(entry):
        quote = quotes.get(feedback_id)
        if quote is not None:
            line = max((part.strip() for part in quote.splitlines()), key=len)
            return Text.assemble(f"“{short_quote(line, QUOTE_CHARS)}” ", (feedback_id, "dim"))
    ids = _ids(entry)
    return Text(ids[0] if ids else "", style="dim")
