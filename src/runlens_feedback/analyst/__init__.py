"""The deterministic offline feedback analyst: pure functions, no runtime knowledge.

- `analyze_rows(rows)`: one analysis item per row (sentiment, severity, theme, pain point,
  verbatim evidence quote, suggested action, language), each row analysed on its own; a
  row's `theme_hint` (the run's discovered themes, `runlens_feedback.discovery`) is its theme;
- `backlog_from_summary(summary)`: prioritised backlog items, one per pain point of the
  aggregated analysis (`runlens_feedback.aggregate.summarize_analysis`);
- `report_from_summary(summary, backlog)`: the Markdown insight report;
- `build_backlog(items)` and `render_report(items, backlog, ...)`: the same, from items
  (they summarise the items first).

The backlog and the report are written from the bounded summary, never from raw rows, so
they cost the same for 100 rows or 100,000. Chinese is segmented with jieba (initialised
lazily, silently); sentiment comes from the word lists in `lexicon/` and the rules documented
in `runlens_feedback.analyst.sentiment`, combined with a small linear model whose learned
weights ship in `lexicon/` (see docs/quality.md). The same input always gives the same output.

The package's names load on first use: its lower modules (the theme table, the tokeniser,
the group labels) serve discovery and the aggregate, which its writers (backlog, report)
then read, so importing one of them must not import the writers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_HOMES = {
    "HEADINGS": ("runlens_feedback.contracts", "REPORT_HEADINGS"),
    "PRIORITIES": ("runlens_feedback.analyst.labels", "PRIORITIES"),
    "SENTIMENTS": ("runlens_feedback.analyst.labels", "SENTIMENTS"),
    "SEVERITIES": ("runlens_feedback.analyst.labels", "SEVERITIES"),
    "analyze_rows": ("runlens_feedback.analyst.rows", "analyze_rows"),
    "analyze_text": ("runlens_feedback.analyst.rows", "analyze_text"),
    "backlog_from_summary": ("runlens_feedback.analyst.backlog", "backlog_from_summary"),
    "build_backlog": ("runlens_feedback.analyst.backlog", "build_backlog"),
    "render_report": ("runlens_feedback.analyst.report", "render_report"),
    "report_from_summary": ("runlens_feedback.analyst.report", "report_from_summary"),
}

__all__ = [
    "HEADINGS",
    "PRIORITIES",
    "SENTIMENTS",
    "SEVERITIES",
    "analyze_rows",
    "analyze_text",
    "backlog_from_summary",
    "build_backlog",
    "render_report",
    "report_from_summary",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'runlens_feedback.analyst' has no attribute {name!r}")
    value = getattr(import_module(home[0]), home[1])
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from runlens_feedback.analyst.backlog import backlog_from_summary, build_backlog
    from runlens_feedback.analyst.labels import PRIORITIES, SENTIMENTS, SEVERITIES
    from runlens_feedback.analyst.report import render_report, report_from_summary
    from runlens_feedback.analyst.rows import analyze_rows, analyze_text
    from runlens_feedback.contracts import REPORT_HEADINGS as HEADINGS
