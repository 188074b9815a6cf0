"""`runlens rerun RUN --with-review` and `--as NAME` (SPEC 17), driven as a user drives them:
a run started `--as alice`, reviewed by bob (a real signed ledger in a real SQLite store),
re-run with the review's findings; the two runs link both ways."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runlens.cli import cli
from runlens.review.record import record_decision, record_mark
from runlens.review.reviewers import new_reviewer_key, new_token, token_digest
from runlens.start import RerunPlan, rerun_settings
from runlens.store.db import RunStore, open_store, store_url
from runlens.verdict.keys import public_pem
from runlens_feedback.contracts import REPORT

NOTE = "The P1 theme is overstated: <script>alert(1)</script> **check** the counts"
WRONG = 'Not about exports at all; "see" the row\nsecond line'


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _run(csv: Path, workspace: Path, *args: str) -> dict[str, Any]:
    done = _invoke(
        "run", "feedback-analysis", str(csv), f"--workspace={workspace}", "--json", *args
    )
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _record(workspace: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((workspace / "runtime" / "run.json").read_bytes())
    return record


def _store() -> RunStore:
    return open_store(store_url(None))


def _add_reviewer(store: RunStore, name: str, home: Path) -> None:
    key = new_reviewer_key(name, home)
    store.add_reviewer(name, key.keyid, public_pem(key.public_key), token_digest(new_token()))


def _review(run_id: str, home: Path) -> None:
    """bob requests changes with NOTE and marks one report citation wrong with WRONG."""
    with _store() as store:
        _add_reviewer(store, "bob", home)
        record_decision(
            store, run_id, reviewer="bob", decision="request-changes", note=NOTE, home=home
        )
        cited = next(c for c in store.citations(run_id, artifact=REPORT) if c.quote)
        record_mark(
            store,
            run_id,
            reviewer="bob",
            mark="wrong",
            note=WRONG,
            artifact=REPORT,
            location=cited.location,
            row_id=cited.row_id,
        )


@pytest.fixture
def reviewed(tmp_path: Path, feedback_csv: Path, runs_home: Path) -> tuple[str, Path]:
    """A run started `--as alice` with some options, reviewed by bob; its id and workspace."""
    workspace = tmp_path / "first"
    first = _run(
        feedback_csv,
        workspace,
        "--as=alice",
        "--text-column=text",
        "--encoding=utf-8",
        "--repair-turns=1",
        "--max-turns=30",
        "--source-ref=s3://bucket/feedback.csv",
    )
    _review(first["run_id"], runs_home)
    return first["run_id"], workspace


def test_as_names_the_submitter_in_run_json_and_the_store(
    tmp_path: Path, feedback_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _run(feedback_csv, tmp_path / "named", "--as=alice")
    assert _record(tmp_path / "named")["submitted_by"] == "alice"
    monkeypatch.setenv("RUNLENS_USER", "carol.d")
    by_env = _run(feedback_csv, tmp_path / "env")
    assert _record(tmp_path / "env")["submitted_by"] == "carol.d"
    with _store() as store:
        rows = {run_id: store.get_run(run_id) for run_id in (named["run_id"], by_env["run_id"])}
    assert [row.submitted_by if row else None for row in rows.values()] == ["alice", "carol.d"]

    refused = CliRunner().invoke(
        cli, ["run", "feedback-analysis", str(feedback_csv), "--as=no one"]
    )
    assert refused.exit_code == 2 and "reviewer name 'no one'" in refused.output
    monkeypatch.setenv("RUNLENS_USER", "../etc")
    refused = CliRunner().invoke(cli, ["run", "feedback-analysis", str(feedback_csv)])
    assert refused.exit_code == 2 and "$RUNLENS_USER: reviewer name '../etc'" in refused.output


def test_a_rerun_with_review_gives_the_findings_and_links_both_ways(
    tmp_path: Path, reviewed: tuple[str, Path]
) -> None:
    first_id, first_workspace = reviewed
    workspace = tmp_path / "second"
    done = _invoke(
        "rerun", first_id[-6:], "--with-review", "--as=dave", f"--workspace={workspace}", "--json"
    )
    assert done.exit_code == 0, done.output
    second_id = json.loads(done.stdout)["run_id"]

    record = _record(workspace)
    assert (record["rerun_of"], record["submitted_by"]) == (first_id, "dave")
    # The same plugin, input and options; the run's model.
    assert (record["plugin"], record["model"], record["repair_turns"]) == (
        "feedback-analysis",
        "offline",
        1,
    )
    assert record["limits"]["max_turns"] == 30
    assert record["input_format"]["encoding_method"] == "given"
    assert record["source_lock"]["ref"] == {"uri": "s3://bucket/feedback.csv"}
    first_input = first_workspace / _record(first_workspace)["input"]
    assert (workspace / record["input"]).read_bytes() == first_input.read_bytes()
    # The review's findings, as the model was given them: the note, the wrong mark.
    findings = record["review_findings"]
    assert len(findings) == 2
    assert json.dumps(NOTE) in findings[0] and "requested changes" in findings[0]
    assert json.dumps(WRONG) in findings[1] and "wrong" in findings[1]
    # Both ways in the store.
    with _store() as store:
        second, first = store.get_run(second_id), store.get_run(first_id)
    assert second is not None and second.rerun_of == first_id and second.submitted_by == "dave"
    assert first is not None and first.reruns == [second_id]


def test_the_plan_reads_the_runs_options_and_its_input_from_the_store_when_not_here(
    tmp_path: Path, reviewed: tuple[str, Path], runs_home: Path
) -> None:
    run_id, workspace = reviewed
    with _store() as store:
        here = rerun_settings(store, run_id, home=runs_home, submitted_by="dave")
        _check_plan(here, run_id)
        assert here.input_path.parent == workspace / "input"
        # The workspace is gone; the store holds the run's files (as a worker's run).
        store.put_files(
            run_id,
            {
                path.relative_to(workspace).as_posix(): path.read_bytes()
                for path in workspace.rglob("*")
                if path.is_file()
            },
        )
        saved = tmp_path / "saved"
        shutil.copytree(workspace, saved)
        shutil.rmtree(workspace)
        try:
            elsewhere = rerun_settings(store, run_id, home=runs_home, submitted_by="dave")
        finally:
            shutil.copytree(saved, workspace)
    _check_plan(elsewhere, run_id)
    assert (
        elsewhere.input_path
        == runs_home / ".store-cache" / run_id / "input" / "sample_feedback.csv"
    )
    assert elsewhere.input_path.read_bytes() == here.input_path.read_bytes()
    assert elsewhere.options == here.options


def _check_plan(plan: RerunPlan, run_id: str) -> None:
    options = plan.options
    assert (options.plugin, options.model, options.rerun_of) == (
        "feedback-analysis",
        "offline",
        run_id,
    )
    assert (options.encoding, options.text_column, options.id_column) == (
        "utf-8",
        "text",
        "feedback_id",
    )
    assert (options.repair_turns, options.max_turns, options.max_tool_calls) == (1, 30, None)
    assert (options.source_ref, options.submitted_by) == ("s3://bucket/feedback.csv", "dave")
    assert len(plan.findings) == 2 and plan.settings().review_findings == plan.findings


def test_a_run_whose_review_asks_for_nothing_is_not_rerun(
    tmp_path: Path, feedback_csv: Path, runs_home: Path
) -> None:
    run_id = _run(feedback_csv, tmp_path / "first", "--as=alice")["run_id"]
    done = CliRunner().invoke(cli, ["rerun", run_id, "--with-review"])
    assert done.exit_code == 2
    assert f"run {run_id} has nothing to re-run with" in " ".join(done.output.split())
    with _store() as store:
        _add_reviewer(store, "bob", runs_home)
        record_decision(
            store, run_id, reviewer="bob", decision="approve", note="fine", home=runs_home
        )
    done = CliRunner().invoke(cli, ["rerun", run_id, "--with-review"])
    assert done.exit_code == 2 and "(state approved)" in " ".join(done.output.split())
    done = CliRunner().invoke(cli, ["rerun", run_id])
    assert done.exit_code == 2 and "give --with-review" in done.output
    done = CliRunner().invoke(cli, ["rerun", "no-such-run", "--with-review"])
    assert done.exit_code == 2 and "no-such-run" in done.output
    assert sorted(p.name for p in runs_home.iterdir() if p.name.startswith("run_")) == []


def test_the_ui_starts_a_rerun_with_its_own_id_and_no_login_name_as_submitter(
    tmp_path: Path, reviewed: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLENS_USER", "server")
    first_id, _ = reviewed
    workspace = tmp_path / "from-ui"
    args = ["rerun", first_id, "--with-review", f"--workspace={workspace}", "--json"]
    done = _invoke(*args, "--run-id=run_from_ui", "--origin=ui")
    assert done.exit_code == 0, done.output
    record = _record(workspace)
    assert (record["run_id"], record["rerun_of"], record["submitted_by"]) == (
        "run_from_ui",
        first_id,
        None,
    )
    with _store() as store:
        row = store.get_run("run_from_ui")
    assert row is not None and row.origin == "ui" and row.rerun_of == first_id
    refused = CliRunner().invoke(cli, [*args, "--run-id=../x"])
    assert refused.exit_code == 2 and "--run-id '../x'" in refused.output
