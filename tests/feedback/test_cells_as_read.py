"""Every code point a text cell can hold, the offline analyst's own report quoting it passes:
the Markdown citation parse and the quote judge read a cell the same way (`as_read`: NUL as
U+FFFD, CR LF and CR as LF, as markdown-it reads them), and the quote's offsets still point
at the row as written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hostile import texts_with_controls

from runlens.validation import validate_workspace
from runlens_feedback.contracts import CONTRACTS, REPORT

from .helpers import run_offline

#: What the Markdown parser reads as something else (the other controls: tests/validation).
_READ_OTHERWISE = ("\0", "\r", "\r\n")


def write_cells(path: Path, row_texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["feedback_id", "text"])
        writer.writerows((f"c{n}", text) for n, text in enumerate(row_texts, start=1))
    return path


def quoted_rows(workspace: Path) -> set[str]:
    """The ids of the rows the report quotes."""
    report = (workspace / "artifacts" / "insight_report.md").read_text(encoding="utf-8")
    return {
        match.group(1)
        for line in report.splitlines()
        if line.startswith("> ")
        for match in [re.search(r"(?:— |\[)(c\d+)\]? \(", line)]
        if match
    }


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(row_texts=st.lists(texts_with_controls(_READ_OTHERWISE), min_size=1, max_size=3))
def test_the_report_quoting_any_cell_passes(
    row_texts: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("cells")
    run = run_offline(write_cells(folder / "cells.csv", row_texts), folder / "workspace")
    assert run.result["findings"] == [], run.result["error_message"]
    assert run.result["status"] == "completed"


def test_a_nul_in_a_quoted_cell_passes_and_marks_the_row_as_written(tmp_path: Path) -> None:
    """The issue's case: the report quotes a row holding NUL, CR LF and CR; the run completes,
    and the recorded quote offsets mark the row's own characters, NUL included."""
    written = [
        "the app is so slow\0 and it crashes every time",
        "battery dies fast\r\nsupport never answered\rrefund please",
    ]
    run = run_offline(write_cells(tmp_path / "nul.csv", written), tmp_path / "workspace")
    assert run.result["findings"] == [], run.result["error_message"]
    assert {"c1"} <= quoted_rows(tmp_path / "workspace")
    report = (tmp_path / "workspace" / "artifacts" / "insight_report.md").read_text("utf-8")
    assert "slow\0 and" in report  # the report writes the row's words, NUL and all
    record = json.loads((tmp_path / "workspace" / "runtime" / "run.json").read_text("utf-8"))
    verdict = validate_workspace(
        tmp_path / "workspace", CONTRACTS, expected_index_sha256=record["evidence_index_sha256"]
    )
    assert verdict.passed, verdict.error_message
    (quote,) = [q for q in verdict.quotes if q.artifact == REPORT and q.row_id == "c1"]
    assert written[0][quote.start : quote.end] == "the app is so slow\0 and it crashes every time"
