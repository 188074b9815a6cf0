"""A 12,000-row run whose report, backlog and analysis cite rows past 10,000: a change to one
of them is named by `verify-source` and every claim citing it is marked by `drift`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import invoke, json_object, run, run_record
from tests.sourcelock.conftest import sample_rows, write_table

from runlens.sourcelock.compare import compare_source
from runlens.sourcelock.drift import find_drift

ROWS = 12_000
#: The first rows are praise, the last 2,000 the whole sample: the complaints a report quotes
#: and a backlog cites are rows past 10,000.
PRAISE_ROWS = 10_000


def large_table() -> list[list[str]]:
    header, *rows = sample_rows()
    positive = [row for row in rows if row[4] == "5"]  # rating 5: praise
    table = [header]
    for n in range(ROWS):
        late = n - PRAISE_ROWS
        source = positive[n % len(positive)] if late < 0 else rows[late % len(rows)]
        table.append([f"fb_{n + 1:05d}", f"{source[1]} #{n + 1}", *source[2:]])
    return table


@pytest.fixture(scope="module")
def large_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[str]]]:
    root = tmp_path_factory.mktemp("large")
    table = large_table()
    data = write_table(root / "feedback.csv", table)
    result, payload = run(data, root / "ws")
    assert result.exit_code == 0, result.output
    assert payload["status"] == "completed"
    return root / "ws", table


def late_citation(workspace: Path, suffix: str) -> dict[str, Any]:
    citations = json.loads((workspace / "runtime" / "citations.json").read_text("utf-8"))
    return next(
        c
        for c in citations["citations"]
        if c["artifact"].endswith(suffix) and int(c["row_id"][3:]) > PRAISE_ROWS
    )


def test_a_change_after_row_10000_is_named_and_its_claims_are_stale(
    large_run: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    workspace, table = large_run
    assert run_record(workspace)["source_lock"]["rows"] == ROWS
    quoted = late_citation(workspace, ".md")
    row_id = quoted["row_id"]
    edited = [list(row) for row in table]
    position = next(n for n, row in enumerate(edited) if row[0] == row_id)
    assert position > PRAISE_ROWS
    edited[position][1] += " (edited)"
    newer = write_table(tmp_path / "next.csv", edited)

    comparison = compare_source(workspace, newer)
    assert (comparison.result, comparison.changed) == ("rows-changed", [row_id])
    assert comparison.added == comparison.removed == []
    verified = invoke("verify-source", workspace, newer, "--json")
    assert verified.exit_code == 1
    assert json_object(verified.stdout)["changed"] == [row_id]

    report = find_drift(workspace, newer)
    kinds = {(claim.kind, claim.artifact) for claim in report.stale}
    assert ("quote", quoted["artifact"]) in kinds
    assert ("item", "artifacts/feedback_analysis.json") in kinds
    quote = next(claim for claim in report.stale if claim.kind == "quote")
    assert (quote.location, quote.line, quote.row_id) == (
        quoted["location"],
        quoted["line"],
        row_id,
    )
    analysis = next(c for c in report.stale if c.artifact.endswith("feedback_analysis.json"))
    assert analysis.location == f"items[{position - 1}]"  # the analysis lists rows in order
    backlog = [c for c in report.stale if c.artifact.endswith("product_backlog.json")]
    if any(c["row_id"] == row_id for c in _backlog_citations(workspace)):
        assert backlog and all(c.kind == "item" for c in backlog)
    figures = [c for c in report.stale if c.kind == "figure"]
    assert figures and all(row_id in c.row_ids and c.line for c in figures)
    # A total of rows does not depend on what one row says.
    assert not any("(rows.analysed)" in c.detail for c in figures)
    shown = invoke("drift", workspace, newer)
    assert shown.exit_code == 1
    assert f"stale quote {quoted['artifact']} {quoted['location']}: row {row_id}" in shown.output


def _backlog_citations(workspace: Path) -> list[dict[str, str]]:
    citations = json.loads((workspace / "runtime" / "citations.json").read_text("utf-8"))
    return [c for c in citations["citations"] if c["artifact"].endswith("product_backlog.json")]


def test_added_and_removed_rows_past_10000(
    large_run: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    workspace, table = large_run
    header, *rows = table
    removed = rows.pop(11_000)[0]
    rows.append(["fb_12001", "A new row at the end", *rows[0][2:]])
    newer = write_table(tmp_path / "next.csv", [header, *rows])
    comparison = compare_source(workspace, newer)
    assert (comparison.added, comparison.removed, comparison.changed) == (
        ["fb_12001"],
        [removed],
        [],
    )
    report = find_drift(workspace, newer)
    assert any(c.row_id == removed and c.change == "removed" for c in report.stale)
    # The total of rows the report states is stale once rows are added or removed.
    assert any(c.kind == "figure" and c.change in ("added", "removed") for c in report.stale)
