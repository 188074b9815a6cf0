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
"""

from runlens_feedback.analyst.backlog import backlog_from_summary, build_backlog
from runlens_feedback.analyst.labels import PRIORITIES, SENTIMENTS, SEVERITIES
from runlens_feedback.analyst.report import render_report, report_from_summary
from runlens_feedback.analyst.rows import analyze_rows, analyze_text
from runlens_feedback.contracts import REPORT_HEADINGS as HEADINGS

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
