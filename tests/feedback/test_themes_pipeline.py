"""Discovered themes through the offline analyst, as a run wires them: discover over the text
column, a `theme_hint` per row, the summary with the catalogue and the rows' metadata, then
the backlog and the report."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from runlens.validation.figures import check_figures
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst import analyze_rows, backlog_from_summary, report_from_summary
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.discovery import OTHER, discover_themes
from runlens_feedback.figures import SECTIONS, analysis_figures, backlog_figures

from .corpus import mixed_corpus

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
TEMPLATE_WORDS = ("p95", "99.5%", "5 seconds", "regression test", "progress indicator")


def run_with_themes(rows: list[dict[str, str]]) -> dict[str, Any]:
    catalogue = discover_themes([row["text"] for row in rows])
    hinted = [
        {**row, "theme_hint": key} for row, key in zip(rows, catalogue.assignments, strict=True)
    ]
    items = analyze_rows(hinted)
    metadata = {
        row["feedback_id"]: {k: v for k, v in row.items() if k not in ("feedback_id", "text")}
        for row in rows
    }
    summary = summarize_analysis(items, catalogue=catalogue, row_metadata=metadata)
    backlog = backlog_from_summary(summary)
    report = report_from_summary(summary, backlog)
    return {
        "catalogue": catalogue,
        "items": items,
        "summary": summary,
        "backlog": backlog,
        "report": report,
    }


def sample_rows() -> list[dict[str, str]]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_sample_gets_named_themes_and_separated_priorities() -> None:
    run = run_with_themes(sample_rows())
    names = {theme.key: theme.name for theme in run["catalogue"].themes}
    pains = run["summary"]["pain_points"]
    assert pains
    assert any(group["key"] in names for group in pains)
    for group in pains:
        assert group["key"] != OTHER
        # a discovered theme's name, else (rows no discovered theme fits that name a theme
        # of the keyword table in its sense) the table's label
        assert group["pain_point"] == names.get(group["key"], group_label(group))
    assert len({group["priority"] for group in pains}) >= 2
    # ties are broken by the evidence: within a priority, more points, then more problem rows
    order = [(g["priority"], -g["points"], -g["problem_rows"]) for g in pains]
    assert order == sorted(order)
    assert len({g["points"] for g in pains}) >= 3
    assert any(group["trend"] for group in pains)  # created_at is a date column
    for entry in run["backlog"]["items"]:
        text = " ".join([entry["title"], entry["metric"], *entry["acceptance_criteria"]])
        assert not any(word in text for word in TEMPLATE_WORDS)
        if entry["theme"] in names:
            assert names[entry["theme"]] in entry["title"]


def test_the_pain_point_table_states_the_figures_the_check_recomputes() -> None:
    rows = sample_rows()
    run = run_with_themes(rows)
    figures = analysis_figures({"items": run["items"], "failed_batches": []}, len(rows))
    figures += backlog_figures(run["backlog"])
    stated = check_figures(run["report"], SECTIONS, figures)
    lines = run["report"].splitlines()
    keys = [f"`{group['key']}`" for group in run["summary"]["pain_points"]]
    table = [s for s in stated if any(key in lines[s.line - 1] for key in keys)]
    assert len(table) >= 5 * len(keys)
    assert [(s.line, s.number.text) for s in table if s.verdict != "agrees"] == []


def test_a_mixed_domain_file_gets_a_spread_of_priorities() -> None:
    texts, _ = mixed_corpus()
    rows = [
        {
            "feedback_id": f"m{n}",
            "text": text,
            "created_at": f"2025-{1 + n % 6:02d}-{1 + n % 27:02d}",
        }
        for n, text in enumerate(texts)
    ]
    run = run_with_themes(rows)
    pains = run["summary"]["pain_points"]
    assert pains[0]["key"] != OTHER
    biggest = max(pains, key=lambda group: group["count"])
    assert biggest["key"] != OTHER
    priorities = [entry["priority"] for entry in run["backlog"]["items"]]
    assert len(set(priorities)) >= 2
    assert priorities == sorted(priorities)
