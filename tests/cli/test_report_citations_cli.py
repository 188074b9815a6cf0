"""Report citations through the CLI: a fabricated and a misattributed quote in `## Evidence`
reject the report, at their lines, and leave the JSON deliverables validated."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from runlens.cli import cli
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MISATTRIBUTED = "> “Exports are instant and we love them” — fb_001"  # not fb_001's words
FABRICATED = "> “全部都很好” — fb_999"  # no such row
EXPECTED = {ANALYSIS: "validated", BACKLOG: "validated", REPORT: "rejected"}


def invoke(*args: object) -> Any:
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, [str(a) for a in args])


def with_bad_evidence(report: str) -> tuple[str, int, int]:
    """`report` with the two bad citations first under `## Evidence`, and their lines."""
    lines = report.splitlines()
    at = lines.index("## Evidence") + 1
    lines[at:at] = ["", MISATTRIBUTED, "", FABRICATED]
    return "\n".join(lines) + "\n", at + 2, at + 4


def citation_findings(payload: dict[str, Any]) -> list[tuple[str, str, str, int, int]]:
    return [
        (f["code"], f["artifact"], f["path"], f["details"]["line"], f["details"]["column"])
        for f in payload["findings"]
        if f["validator"] == "MarkdownCitationValidationHook"
    ]


def expected_findings(misattributed: int, fabricated: int) -> list[tuple[str, str, str, int, int]]:
    return [
        ("evidence_text_mismatch", REPORT, f"line {misattributed}", misattributed, 3),
        ("unknown_evidence_id", REPORT, f"line {fabricated}", fabricated, 3),
    ]


def test_validate_rejects_bad_citations_added_to_a_real_runs_report(
    tmp_path: Path, feedback_csv: Path
) -> None:
    workspace = tmp_path / "run"
    run = invoke("run", "feedback-analysis", feedback_csv, "--json", "--workspace", workspace)
    assert run.exit_code == 0, run.output
    passing = invoke("validate", workspace)
    assert passing.exit_code == 0, passing.output
    assert f"in {REPORT})" in " ".join(passing.stdout.split())  # report quotes are counted

    report, misattributed, fabricated = with_bad_evidence((workspace / REPORT).read_text("utf-8"))
    (workspace / REPORT).write_text(report, encoding="utf-8")
    result = invoke("validate", workspace, "--json")
    payload = json.loads(result.stdout)

    assert result.exit_code == 1
    # The offline run drew the chart; bad citations in the report leave it validated.
    assert payload["artifacts"] == {**EXPECTED, CHART: "validated"}
    assert citation_findings(payload) == expected_findings(misattributed, fabricated)
    assert {f["artifact"] for f in payload["findings"]} == {REPORT}
    assert (
        f"text mismatch: {REPORT} line {misattributed} “Exports are instant"
        in (payload["error_message"])
    )
    assert "missing evidence ids: fb_999" in payload["error_message"]


def cited_rows_csv(path: Path, feedback_ids: set[str]) -> Path:
    """The sample's rows the passing script analyses, so the run accounts for every row."""
    with (EXAMPLES / "sample_feedback.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = [row for row in reader if row["feedback_id"] in feedback_ids]
        columns = reader.fieldnames or []
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_scripted_run_whose_report_cites_badly_fails_on_the_report_alone(
    tmp_path: Path,
) -> None:
    script = json.loads((EXAMPLES / "scripts" / "passing.json").read_text(encoding="utf-8"))
    writes = {
        call["arguments"]["path"]: call["arguments"]
        for turn in script["turns"]
        for call in turn.get("tool_calls", [])
        if call["name"] == "write_file"
    }
    report, misattributed, fabricated = with_bad_evidence(writes[REPORT]["content"])
    writes[REPORT]["content"] = report
    script_path = tmp_path / "bad_citations.json"
    script_path.write_text(json.dumps(script, ensure_ascii=False), encoding="utf-8")
    analysed = {item["feedback_id"] for item in json.loads(writes[ANALYSIS]["content"])["items"]}
    source = cited_rows_csv(tmp_path / "feedback.csv", analysed)

    result = invoke(
        "run", "feedback-analysis", source, "--model", f"scripted:{script_path}",
        "--workspace", tmp_path / "run", "--json",
    )  # fmt: skip
    payload = json.loads(result.stdout)

    assert result.exit_code == 1
    assert payload["status"] == "failed"
    # The script writes no chart: the optional chart is missing, with no finding.
    assert payload["artifacts"] == {**EXPECTED, CHART: "missing"}
    assert citation_findings(payload) == expected_findings(misattributed, fabricated)
