"""`runlens validate`: the article's failure cases, the JSON shape, exit codes, --source."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner, Result

from runlens.cli import cli
from runlens.evidence import build_evidence_index
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workspace"
PARAPHRASE = "每周导出报告需要等待很长时间，影响团队协作效率。"


def invoke(*args: object) -> Result:
    runner = CliRunner(env={"COLUMNS": "200"})
    return runner.invoke(cli, ["validate", *map(str, args)], catch_exceptions=False)


def verdict(*args: object) -> tuple[int, dict[str, Any]]:
    result = invoke(*args, "--json")
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict), payload
    return result.exit_code, payload


# --- the article's six failure cases ---------------------------------------------------------


def only_two_files(ws: FeedbackWorkspace) -> None:
    ws.remove(REPORT)


def lacks_required_field(ws: FeedbackWorkspace) -> None:
    del ws.analysis["failed_batches"]
    ws.write()


def priority_high(ws: FeedbackWorkspace) -> None:
    ws.backlog["items"][0]["priority"] = "high"
    ws.write()


def no_risks_section(ws: FeedbackWorkspace) -> None:
    ws.report = ws.report.replace("## Risks And Unknowns", "Risks and unknowns are many.")
    ws.write()


def both_cite_fb_999(ws: FeedbackWorkspace) -> None:
    ws.analysis["items"].append({**ws.analysis["items"][0], "feedback_id": "fb_999"})
    ws.backlog["items"][1]["evidence_feedback_ids"] = ["fb_999"]
    ws.write()


def paraphrased_evidence(ws: FeedbackWorkspace) -> None:
    ws.analysis["items"][0]["evidence_text"] = PARAPHRASE
    ws.write()


ARTICLE_CASES = [
    (only_two_files, "missing_file", {REPORT: "missing"}, f"missing required files: {REPORT}"),
    (
        lacks_required_field,
        "missing_field",
        {ANALYSIS: "rejected"},
        "missing field: failed_batches",
    ),
    (priority_high, "invalid_enum", {BACKLOG: "rejected"}, 'invalid priority: "high" at'),
    (no_risks_section, "missing_heading", {REPORT: "rejected"}, "missing headings: ## Risks"),
    (
        both_cite_fb_999,
        "unknown_evidence_id",
        {ANALYSIS: "rejected", BACKLOG: "rejected"},
        "missing evidence ids: fb_999",
    ),
    (
        paraphrased_evidence,
        "evidence_text_mismatch",
        {ANALYSIS: "rejected"},
        f"text mismatch: {ANALYSIS} items[0].evidence_text is not a verbatim fragment of fb_001",
    ),
]


@pytest.mark.parametrize(("breaks", "code", "statuses", "phrase"), ARTICLE_CASES)
def test_each_article_failure_fails_validation(
    feedback_workspace: FeedbackWorkspace,
    breaks: Callable[[FeedbackWorkspace], None],
    code: str,
    statuses: dict[str, str],
    phrase: str,
) -> None:
    breaks(feedback_workspace)
    exit_code, payload = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert payload["status"] == "failed"
    assert {f["code"] for f in payload["findings"]} == {code}
    assert payload["error_message"].startswith(phrase)
    expected = {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",  # optional, not drawn in this workspace: listed, never a finding
        **statuses,
    }
    assert payload["artifacts"] == expected


def test_a_passing_workspace(feedback_workspace: FeedbackWorkspace) -> None:
    result = invoke(feedback_workspace.root)
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.stdout
    assert "3 evidence quote(s) traced" in result.stdout
    for label in ("Feedback Analysis JSON", "Product Backlog JSON", "Insight Report"):
        assert label in result.stdout
    # The optional chart is listed, as not drawn, and does not fail the verdict.
    (chart_row,) = [line for line in result.stdout.splitlines() if CHART in line]
    assert "Insight Chart" in chart_row
    assert "missing (optional)" in chart_row


def test_the_human_verdict_lists_each_finding_with_its_location(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    paraphrased_evidence(feedback_workspace)
    priority_high(feedback_workspace)
    result = invoke(feedback_workspace.root)
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith("FAILED")
    assert "rejected" in out
    assert "validated" in out  # the report is untouched
    for text in ("items[0].evidence_text", "evidence_text_mismatch", "items[0].priority"):
        assert text in out
    assert f"Findings: {BACKLOG}" in out


def test_json_is_exactly_one_object_with_the_spec_keys(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    priority_high(feedback_workspace)
    result = invoke(feedback_workspace.root, "--json")
    payload = json.loads(result.stdout)  # fails on anything around the object
    # The SPEC's keys, and `defect`: whether the findings are RunLens's own (null here: the
    # workspace's deliverables were not written by the offline analyst).
    assert set(payload) == {"status", "error_message", "findings", "artifacts", "defect"}
    assert payload["defect"] is None
    (finding,) = payload["findings"]
    assert set(finding) == {"validator", "artifact", "code", "path", "message", "details"}
    assert finding["validator"] == "JsonOutputValidationHook"
    assert finding["path"] == "items[0].priority"
    passing = json.loads(invoke(EXAMPLE, "--json").stdout)
    assert passing["status"] == "passed"
    assert passing["error_message"] is None
    assert passing["findings"] == []


def test_a_fabricated_id_in_the_backlog_only_rejects_only_the_backlog(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = ["fb_999"]
    _, payload = verdict(feedback_workspace.write().root)
    assert payload["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
    }


def test_a_tampered_index_fails(feedback_workspace: FeedbackWorkspace) -> None:
    text = feedback_workspace.index_path.read_text(encoding="utf-8")
    feedback_workspace.index_path.write_text(text.replace("希望", "我们希望"), encoding="utf-8")
    exit_code, payload = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert {f["code"] for f in payload["findings"]} == {"evidence_index_tampered"}


def test_a_missing_index_fails(feedback_workspace: FeedbackWorkspace) -> None:
    feedback_workspace.index_path.unlink()
    exit_code, payload = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert {f["code"] for f in payload["findings"]} == {"evidence_index_missing"}
    assert payload["error_message"].startswith("evidence index missing")


# --- --source ----------------------------------------------------------------------------


def test_source_builds_an_index_beside_the_runs_own_and_cites_against_it(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    run_json = feedback_workspace.root / "runtime" / "run.json"
    record = json.loads(run_json.read_text(encoding="utf-8"))
    record["evidence_index_sha256"] = "0" * 64  # stale: the index no longer matches the record
    run_json.write_text(json.dumps(record), encoding="utf-8")
    feedback_workspace.index_path.unlink()
    before = run_json.read_bytes()

    assert verdict(feedback_workspace.root)[0] == 1
    exit_code, payload = verdict(feedback_workspace.root, "--source", feedback_workspace.csv)
    assert (exit_code, payload["findings"]) == (0, [])
    rebuilt = feedback_workspace.root / "runtime" / "evidence_index.source.json"
    assert rebuilt.is_file()
    assert not feedback_workspace.index_path.exists(), "the run's own index is never written"
    assert run_json.read_bytes() == before  # validate never rewrites the run record


def test_source_never_overwrites_the_runs_index(
    feedback_workspace: FeedbackWorkspace, tmp_path: Path
) -> None:
    original = feedback_workspace.index_path.read_bytes()
    changed = tmp_path / "changed.csv"
    text = feedback_workspace.csv.read_text(encoding="utf-8")
    changed.write_text(text.replace("等三分钟很影响效率", "等很久"), encoding="utf-8")
    exit_code, payload = verdict(feedback_workspace.root, "--source", changed)
    assert exit_code == 1
    # The run's index does not match the CSV given: it is judged against it, not replaced.
    assert {f["code"] for f in payload["findings"]} == {"evidence_index_tampered"}
    assert "changed.csv" in payload["error_message"]
    assert feedback_workspace.index_path.read_bytes() == original


def test_source_from_a_changed_csv_exposes_stale_quotes(
    feedback_workspace: FeedbackWorkspace, tmp_path: Path
) -> None:
    feedback_workspace.index_path.unlink()  # a workspace written without an index of its own
    changed = tmp_path / "changed.csv"
    text = feedback_workspace.csv.read_text(encoding="utf-8")
    changed.write_text(text.replace("等三分钟很影响效率", "等很久"), encoding="utf-8")
    exit_code, payload = verdict(feedback_workspace.root, "--source", changed)
    assert exit_code == 1
    assert [f["path"] for f in payload["findings"]] == ["items[0].evidence_text"]


# --- usage errors: exit 2, one line on stderr -------------------------------------------------


def assert_usage_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("Error: ")
    assert "\n" not in line
    for fragment in fragments:
        assert fragment in line


def test_a_missing_workspace_is_a_usage_error(tmp_path: Path) -> None:
    assert_usage_error(invoke(tmp_path / "nope", "--json"), "workspace not found", "nope")


def test_an_unknown_plugin_is_a_usage_error(feedback_workspace: FeedbackWorkspace) -> None:
    result = invoke(feedback_workspace.root, "--plugin", "no-such-plugin")
    assert_usage_error(result, "unknown plugin 'no-such-plugin'", "feedback-analysis")


def test_the_plugin_recorded_in_run_json_is_used(feedback_workspace: FeedbackWorkspace) -> None:
    (feedback_workspace.root / "runtime" / "run.json").write_text('{"plugin": "recorded-one"}')
    assert_usage_error(invoke(feedback_workspace.root), "unknown plugin 'recorded-one'")
    assert invoke(feedback_workspace.root, "--plugin", "feedback-analysis").exit_code == 0


def test_an_unreadable_run_record_is_a_usage_error(feedback_workspace: FeedbackWorkspace) -> None:
    (feedback_workspace.root / "runtime" / "run.json").write_text("{oops", encoding="utf-8")
    assert_usage_error(invoke(feedback_workspace.root), "run.json")


def test_a_bad_source_csv_is_a_usage_error_naming_the_file(
    feedback_workspace: FeedbackWorkspace, tmp_path: Path
) -> None:
    bad = tmp_path / "no_ids.csv"
    bad.write_text("comment,text\nx,hello\n", encoding="utf-8")
    assert_usage_error(invoke(feedback_workspace.root, "--source", bad), "no_ids.csv")
    missing = tmp_path / "absent.csv"
    assert_usage_error(invoke(feedback_workspace.root, "--source", missing), "absent.csv")


# --- the real console script and the example workspace --------------------------------------


def _console_script() -> str:
    script = Path(sys.executable).with_name("runlens")
    found = str(script) if script.exists() else shutil.which("runlens")
    if found is None:
        pytest.skip("the runlens console script is not installed")
    return found


def test_the_console_script_exit_codes(
    feedback_workspace: FeedbackWorkspace, tmp_path: Path
) -> None:
    runlens = _console_script()

    def run(*args: object) -> subprocess.CompletedProcess[str]:
        command = [runlens, "validate", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    assert run(feedback_workspace.root, "--json").returncode == 0
    feedback_workspace.remove(REPORT)
    failed = run(feedback_workspace.root, "--json")
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["artifacts"][REPORT] == "missing"
    usage = run(tmp_path / "nowhere")
    assert usage.returncode == 2
    assert usage.stderr.startswith("Error: workspace not found")
    assert "Traceback" not in usage.stderr


def test_the_example_workspace_passes_and_its_index_matches_its_csv(tmp_path: Path) -> None:
    assert invoke(EXAMPLE).exit_code == 0
    fresh = tmp_path / "index.json"
    build_evidence_index(
        EXAMPLE / "input" / "feedback.csv", id_column="feedback_id", text_column="text"
    ).write(fresh)
    stored = json.loads((EXAMPLE / "runtime" / "evidence_index.json").read_text(encoding="utf-8"))
    rebuilt = json.loads(fresh.read_text(encoding="utf-8"))
    # The example's index predates the input-format fields; an index without them is valid
    # (its source is then read as detected), and every field it has is the same.
    added = {
        "encoding_confidence": 1.0,
        "encoding_method": "utf-8",
        "delimiter": ",",
        "format": "csv",
        "sheet": None,
        "id_rule": "column",
    }
    assert {name: rebuilt.pop(name) for name in added} == added
    # It predates the rows' metadata too (read as empty): the rebuilt index keeps each row's
    # other columns, exactly as the CSV has them.
    with (EXAMPLE / "input" / "feedback.csv").open(encoding="utf-8", newline="") as handle:
        source = {row["feedback_id"]: row for row in csv.DictReader(handle)}
    for row_id, item in rebuilt["items"].items():
        others = {k: v for k, v in source[row_id].items() if k not in ("feedback_id", "text")}
        assert item.pop("metadata") == others
    assert stored == rebuilt
