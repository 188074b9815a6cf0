"""A finding on the offline analyst's own deliverables is a RunLens defect, and every verdict
says so (`runlens.validation.defects`): `runlens run`, `runlens validate` and `runlens show`,
human and `--json`, and the run page. A finding on a model's deliverables does not.

The defect is simulated the way one would happen: the analyst's quote picker returns words
that are not in the row (as a bug in it would), and nothing else is touched.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from tests.ui.conftest import running_server
from tests.ui.runs import failed_run

from runlens.cli import cli
from runlens_feedback.contracts import ANALYSIS, REPORT

from .helpers import ENGLISH_ROWS, OfflineRun, run_offline, write_csv

DEFECT = "This is a RunLens defect, not a problem with your file"


@pytest.fixture
def broken_analyst(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline analyst with a bug in its report: every share it writes is 99.9%."""
    import runlens_feedback.analyst.report as report

    monkeypatch.setattr(report, "_pct", lambda count, total: "99.9%")


@pytest.fixture
def broken_quotes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline analyst with a bug in its quotes: a paraphrase, not the row's words (the
    batch engine refuses every item, and the rows end up not analysed)."""
    import runlens_feedback.analyst.rows as rows

    monkeypatch.setattr(rows, "pick_evidence", lambda doc, theme: "words nobody wrote")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def assert_the_run_says_defect(source: Path, workspace: Path) -> None:
    """The human verdict of `runlens run` itself carries the notice."""
    code, output = invoke("run", "feedback-analysis", str(source), "--workspace", str(workspace))
    assert code == 1 and "RunLens defect:" in output


def defective_run(folder: Path) -> tuple[Path, OfflineRun]:
    """The input and the offline run on it (with whichever bug the test's fixture planted)."""
    source = write_csv(folder / "feedback.csv", ENGLISH_ROWS)
    return source, run_offline(source, folder / "ws")


def test_every_verdict_of_a_defective_offline_run_says_it_is_a_runlens_defect(
    broken_analyst: None, tmp_path: Path
) -> None:
    source, run = defective_run(tmp_path)
    verdict = run.result
    assert run.exit_code == 1 and verdict["status"] == "failed"
    # Shares in the figure sections are tied to their figure; elsewhere a share that equals
    # no figure is unsupported.
    codes = {f["code"] for f in verdict["findings"]}
    assert "figure_mismatch" in codes and codes <= {"figure_mismatch", "unsupported_figure"}
    assert verdict["defect"].startswith(DEFECT)
    assert f"runlens show {verdict['run_id']} --json" in verdict["defect"]

    code, output = invoke("validate", str(run.workspace), "--json")
    assert code == 1 and json.loads(output)["defect"].startswith(DEFECT)
    code, output = invoke("validate", str(run.workspace))
    assert "RunLens defect:" in output and DEFECT in " ".join(output.split())

    code, output = invoke("show", verdict["run_id"], "--json")
    assert code == 0 and json.loads(output)["defect"].startswith(DEFECT)
    code, output = invoke("show", verdict["run_id"])
    assert "RunLens defect:" in output

    assert_the_run_says_defect(source, tmp_path / "ws2")


def test_rows_the_contract_refused_from_the_offline_analyst_are_a_defect_too(
    broken_quotes: None, tmp_path: Path
) -> None:
    source, run = defective_run(tmp_path)
    verdict = run.result
    assert verdict["status"] == "failed" and "every batch failed" in verdict["error_message"]
    assert verdict["defect"].startswith(DEFECT) and "not analysed" in verdict["defect"]
    assert_the_run_says_defect(source, tmp_path / "ws2")


def test_deliverables_edited_after_the_run_are_no_longer_the_analysts(
    broken_analyst: None, tmp_path: Path
) -> None:
    run = run_offline(write_csv(tmp_path / "feedback.csv", ENGLISH_ROWS), tmp_path / "ws")
    assert run.result["defect"]
    report = run.workspace / REPORT
    report.write_text(report.read_text(encoding="utf-8") + "\nEdited by hand.\n", "utf-8")
    code, output = invoke("validate", str(run.workspace), "--json")
    assert code == 1 and json.loads(output)["defect"] is None
    code, output = invoke("show", run.result["run_id"], "--json")
    assert json.loads(output)["defect"] is None


def test_a_clean_offline_run_and_a_models_findings_carry_no_defect_notice(
    tmp_path: Path,
) -> None:
    run = run_offline(write_csv(tmp_path / "feedback.csv", ENGLISH_ROWS), tmp_path / "ws")
    assert run.result["status"] == "completed" and run.result["defect"] is None
    home = tmp_path / "home"
    made = failed_run(home)  # a scripted model's mistakes
    assert made.findings and made.verdict["defect"] is None


def test_the_run_page_shows_the_defect_notice(
    broken_analyst: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("RUNLENS_HOME", str(home))
    run = run_offline(write_csv(tmp_path / "feedback.csv", ENGLISH_ROWS), home / "runs" / "one")
    assert run.result["defect"]
    with running_server(home) as server, server.client() as client:
        page = client.get(f"runs/{run.result['run_id']}")
        assert page.status_code == httpx.codes.OK
        assert 'class="defect"' in page.text and DEFECT in page.text
        # In the verdict, before anything else: the reader view shows it too.
        assert page.text.index(DEFECT) < page.text.index('id="findings"')
        reader = client.get(f"runs/{run.result['run_id']}/report")
        assert 'class="defect"' in reader.text and DEFECT in reader.text
        scripted = failed_run(home)
        other = client.get(f"runs/{scripted.run_id}")
        assert 'class="defect"' not in other.text
    assert (run.workspace / ANALYSIS).is_file()
