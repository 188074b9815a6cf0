"""The deterministic offline feedback analyst: pure functions, no runtime knowledge.

- `analyze_rows(rows)`: one analysis item per row (sentiment, severity, theme, pain point,
  verbatim evidence quote, suggested action, language), each row analysed on its own;
- `build_backlog(items)`: prioritised backlog items grouped by theme;
- `render_report(items, backlog, source=..., total_rows=...)`: the Markdown insight report;
- `summarize(items)`: a compact aggregate for a model's context.

Chinese is segmented with jieba (initialised lazily, silently); sentiment comes from the word
lists in `lexicon/` and the rules documented in `runlens_feedback.analyst.sentiment`. The same
input always gives the same output.
"""

from runlens_feedback.analyst.backlog import build_backlog
from runlens_feedback.analyst.labels import PRIORITIES, SENTIMENTS, SEVERITIES
from runlens_feedback.analyst.report import HEADINGS, render_report
from runlens_feedback.analyst.rows import analyze_rows, analyze_text
from runlens_feedback.analyst.summary import summarize

__all__ = [
    "HEADINGS",
    "PRIORITIES",
    "SENTIMENTS",
    "SEVERITIES",
    "analyze_rows",
    "analyze_text",
    "build_backlog",
    "render_report",
    "summarize",
]
