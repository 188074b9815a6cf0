"""describe_result: the top pain points of a completed run, for the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from runlens_feedback.contracts import ANALYSIS, BACKLOG
from runlens_feedback.terminal import TOP_ITEMS, describe_result


def write(workspace: Path, name: str, document: object) -> None:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def rendered(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def entry(n: int, ids: list[str], **extra: object) -> dict[str, Any]:
    return {
        "title": f"Fix problem {n}",
        "priority": f"P{min(n, 3)}",
        "evidence_feedback_ids": ids,
        "acceptance_criteria": ["works"],
        "metric": "m",
        **extra,
    }


def test_shows_title_priority_count_and_a_verbatim_quote(tmp_path: Path) -> None:
    write(tmp_path, BACKLOG, {"items": [entry(0, ["a1", "a2"], mentions=42), entry(1, ["b1"])]})
    items = [
        {"feedback_id": "a1", "evidence_text": "导出周报太慢了"},
        {"feedback_id": "b1", "evidence_text": "first line\nthe [bold]longest[/bold] line here"},
    ]
    write(tmp_path, ANALYSIS, {"items": items, "failed_batches": []})
    text = rendered(describe_result(tmp_path))
    assert "Fix problem 0" in text and "P0" in text and "42" in text
    assert "“导出周报太慢了” a1" in text
    assert "“the [bold]longest[/bold] line here” b1" in text  # shown as text, not markup
    assert "Fix problem 1" in text and "P1" in text


def test_count_falls_back_to_the_cited_ids_and_quote_to_the_next_id(tmp_path: Path) -> None:
    write(tmp_path, BACKLOG, {"items": [entry(2, ["missing", "c2", "c3"])]})
    write(tmp_path, ANALYSIS, {"items": [{"feedback_id": "c2", "evidence_text": "quote two"}]})
    text = rendered(describe_result(tmp_path))
    assert "“quote two” c2" in text
    assert " 3 " in text


def test_at_most_the_top_items(tmp_path: Path) -> None:
    write(tmp_path, BACKLOG, {"items": [entry(n, [f"x{n}"]) for n in range(TOP_ITEMS + 3)]})
    text = rendered(describe_result(tmp_path))
    assert f"Fix problem {TOP_ITEMS - 1}" in text
    assert f"Fix problem {TOP_ITEMS}" not in text


def test_nothing_to_show(tmp_path: Path) -> None:
    assert describe_result(tmp_path) is None
    write(tmp_path, BACKLOG, {"items": []})
    assert describe_result(tmp_path) is None
    (tmp_path / BACKLOG).write_text("{not json", encoding="utf-8")
    assert describe_result(tmp_path) is None
