"""Issue 23, item 11, end to end: the offline analyst's report on the sample passes; the same
report with an invented quotation in its Executive Summary, or a count in words that no
figure has in its risks, fails `runlens validate` (a real process), each with its code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from runlens_feedback.contracts import REPORT

from .helpers import run_offline

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


def validate(workspace: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "runlens", "validate", str(workspace), "--json"],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ.copy(),
        timeout=300,
    )
    payload = json.loads(done.stdout)
    return done.returncode, [finding["code"] for finding in payload["findings"]]


def test_invented_quotes_and_numbers_in_words_fail_anywhere(tmp_path: Path) -> None:
    run = run_offline(SAMPLE, tmp_path / "workspace")
    assert run.result["findings"] == [], run.result["error_message"]
    assert validate(run.workspace) == (0, [])
    report = run.workspace / REPORT
    original = report.read_text(encoding="utf-8")

    summary = "## Executive Summary\n\n一位客户告诉我们“下个月我们有42%的席位会流失”。\n"
    report.write_text(original.replace("## Executive Summary\n", summary, 1), encoding="utf-8")
    assert validate(run.workspace) == (1, ["unsourced_quote"])

    risks = "## Risks And Unknowns\n\n- Only eighty-eight rows were analysed.\n"
    report.write_text(original.replace("## Risks And Unknowns\n", risks, 1), encoding="utf-8")
    assert validate(run.workspace) == (1, ["unsupported_figure"])

    risks = "## Risks And Unknowns\n\n- 共八十九条反馈，v2.3 将在 2026 年的前3个冲刺内上线。\n"
    report.write_text(original.replace("## Risks And Unknowns\n", risks, 1), encoding="utf-8")
    assert validate(run.workspace) == (0, [])  # 89 is the file's rows; the rest is no claim
