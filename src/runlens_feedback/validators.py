"""The Feedback Analysis plugin's own Stop validators: backlog evidence belongs to its theme;
the insight chart is safe, linked only when it exists, and states only recomputed figures.

A backlog item that cites real rows can still cite the wrong ones: "Speed up export" backed
by rows about login. When a backlog item names a `theme` and the analysis items of the rows
it cites name one too, they must be the same theme (compared as the aggregate groups them:
trimmed, case-folded, spaces as `_`). Rows without an analysis item, or items without a
theme, are not judged here (coverage and evidence ids are other validators' findings).
"""

from __future__ import annotations

import re
from typing import Any

from runlens import Collector, Problem, ValidationContext, ValidatorResult, computed_figures
from runlens_feedback.aggregate import group_key
from runlens_feedback.chart import CHART_FILE, check_chart
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT
from runlens_feedback.figures import FIGURE_RULES


class BacklogThemeValidator:
    """Reports `evidence_theme_mismatch` for each cited row whose analysed theme differs."""

    name = "BacklogThemeValidationHook"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        analysed, analysis = context.load_document(ANALYSIS)
        readable, backlog = context.load_document(BACKLOG)
        if not (analysed and readable):
            return collector.result()  # unreadable artifacts are the JSON validator's finding
        themes = _themes_by_row(analysis, _cited(backlog))
        for position, entry in enumerate(_items(backlog)):
            theme = _theme(entry)
            ids = entry.get("evidence_feedback_ids")
            if theme is None or not isinstance(ids, list):
                continue
            for slot, row_id in enumerate(ids):
                cited = themes.get(row_id) if isinstance(row_id, str) else None
                if cited is not None and cited != theme:
                    path = f"items[{position}].evidence_feedback_ids[{slot}]"
                    collector.add(
                        BACKLOG,
                        "evidence_theme_mismatch",
                        f"{path} cites {row_id}, analysed under theme {cited!r}, for a backlog "
                        f"item of theme {theme!r}",
                        Problem("evidence of another theme", f"{row_id} ({cited}, not {theme})"),
                        path=path,
                        details={"feedback_id": row_id, "theme": theme, "row_theme": cited},
                    )
        return collector.result()


def _items(document: Any) -> list[dict[str, Any]]:
    items = document.get("items") if isinstance(document, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _theme(item: dict[str, Any]) -> str | None:
    """The item's theme as the aggregate groups it, or None when it names none."""
    theme = item.get("theme")
    if not isinstance(theme, str) or not theme.strip():
        return None
    return group_key({"theme": theme})[0]


def _cited(backlog: Any) -> set[str]:
    """The ids the backlog's items of a theme cite: the rows whose theme is compared."""
    cited: set[str] = set()
    for entry in _items(backlog):
        ids = entry.get("evidence_feedback_ids")
        if _theme(entry) is not None and isinstance(ids, list):
            cited.update(row_id for row_id in ids if isinstance(row_id, str))
    return cited


def _themes_by_row(analysis: Any, wanted: set[str]) -> dict[str, str]:
    """The theme of each row of `wanted` as `_theme` groups it (the first item of a row that
    names one wins), each distinct theme text worked out once; the items of other rows are
    passed over on their id alone."""
    themes: dict[str, str] = {}
    grouped: dict[str, str | None] = {}
    for item in _items(analysis):
        row_id = item.get("feedback_id")
        if not isinstance(row_id, str) or row_id not in wanted or row_id in themes:
            continue
        named = item.get("theme")
        if type(named) is str:
            if named not in grouped:
                grouped[named] = _theme(item)
            theme = grouped[named]
        else:
            theme = _theme(item)
        if theme is not None:
            themes[row_id] = theme
    return themes


#: A Markdown link or image to the chart, relative to the report (or from the workspace).
_CHART_LINK = re.compile(
    r"\]\(\s*<?(?:\./)?(?:artifacts/)?" + re.escape(CHART_FILE) + r"(?:[\s>)#?])", re.IGNORECASE
)
_CHART_HEADS = {
    "invalid_chart": "invalid chart",
    "unsafe_chart": "unsafe chart",
    "figure_mismatch": "figure mismatch",
    "unsupported_figure": "unsupported figures",
}


class ChartValidator:
    """Checks `artifacts/insight_chart.svg` (`runlens_feedback.chart.check_chart`): when the
    report links it, it must exist (`missing_file`); when it exists, it must be a safe SVG
    whose numbers are the figures the report's figure rule recomputes."""

    name = "ChartValidationHook"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        path = context.artifact_file(CHART)
        if path is None:
            if _links_chart(context):
                collector.add(
                    CHART,
                    "missing_file",
                    f"{REPORT} links {CHART}, which does not exist",
                    Problem("missing required files", CHART),
                    details={"linked_from": REPORT},
                )
            return collector.result()
        figures = computed_figures(FIGURE_RULES[0], context)
        for problem in check_chart(path.read_bytes(), figures):
            collector.add(
                CHART,
                problem.code,
                f"line {problem.line}: {problem.message}",
                Problem(
                    _CHART_HEADS.get(problem.code, problem.code), problem.message, f"in {CHART}"
                ),
                path=f"line {problem.line}",
                details=problem.details,
            )
        return collector.result()


def _links_chart(context: ValidationContext) -> bool:
    report = context.artifact_file(REPORT)
    if report is None:
        return False
    markdown = report.read_bytes().decode("utf-8-sig", errors="replace")
    return _CHART_LINK.search(markdown) is not None
