"""A real run's source lock, `runlens show`, `runlens verify-source` and `runlens drift`,
driven through the CLI as a user drives them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import invoke, json_object, run, run_record
from tests.sourcelock.conftest import SAMPLE_CSV, sample_rows, write_table, write_workbook

#: A --source-ref holding rich markup and a control character: shown inert, never obeyed.
SOURCE_REF = "s3://bucket/feedback.csv?v=[red]3[/red]\x1b[2J"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        check=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(workspace, input) of a completed offline run on a copy of the sample committed to git
    and tracked by DVC (a `.dvc` file as `dvc add` writes it)."""
    root = tmp_path_factory.mktemp("run")
    repository = root / "repo"
    (repository / "data").mkdir(parents=True)
    data = repository / "data" / "feedback.csv"
    data.write_bytes(SAMPLE_CSV.read_bytes())
    md5 = hashlib.md5(data.read_bytes()).hexdigest()
    (repository / "data" / "feedback.csv.dvc").write_text(
        f"outs:\n- md5: {md5}\n  size: {data.stat().st_size}\n  hash: md5\n  path: feedback.csv\n",
        encoding="utf-8",
    )
    git(repository, "init", "-q")
    git(repository, "add", ".")
    git(repository, "commit", "-qm", "export")
    workspace = root / "ws"
    result, payload = run(data, workspace, "--source-ref", SOURCE_REF)
    assert result.exit_code == 0, result.output
    assert payload["status"] == "completed"
    return workspace, data


def verify(workspace: Path, file: Path, *options: str) -> tuple[int, dict[str, Any]]:
    result = invoke("verify-source", workspace, file, "--json", *options)
    assert "Traceback" not in result.output
    return result.exit_code, json_object(result.stdout)


def test_the_run_records_its_source_lock(sample_run: tuple[Path, Path]) -> None:
    workspace, data = sample_run
    lock = run_record(workspace)["source_lock"]
    assert lock["bytes_sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert len(lock["rows_digest"]) == 64
    assert lock["rows"] == len(sample_rows()) - 1
    assert lock["columns"] == sample_rows()[0]
    assert (lock["format"], lock["encoding"]) == ("csv", "utf-8")
    repository = data.parents[1]
    assert lock["ref"] == {
        "git": {
            "remote": None,
            "commit": git(repository, "rev-parse", "HEAD"),
            "path": "data/feedback.csv",
            "blob": git(repository, "hash-object", "data/feedback.csv"),
            "dirty": False,
        },
        "dvc": {
            "path": "feedback.csv",
            "md5": hashlib.md5(data.read_bytes()).hexdigest(),
            "md5_matches": True,
            "tracked_by": "feedback.csv.dvc",
        },
        "uri": SOURCE_REF,
    }
    events = (workspace / "runtime" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    indexed = [json.loads(line) for line in events if '"evidence.indexed"' in line]
    assert indexed[0]["data"]["source_lock"] == lock  # what a reader of a live run folds in


def test_show_prints_the_source_lock_escaped(sample_run: tuple[Path, Path]) -> None:
    workspace, _ = sample_run
    lock = run_record(workspace)["source_lock"]
    shown = invoke("show", workspace, "--json")
    assert shown.exit_code == 0, shown.output
    assert json_object(shown.stdout)["run"]["source_lock"] == lock
    human = invoke("show", workspace, "--no-events")
    assert human.exit_code == 0, human.output
    assert lock["rows_digest"] in human.output
    assert "data/feedback.csv @ " in human.output and "clean" in human.output
    assert "s3://bucket/feedback.csv?v=[red]3[/red]\\x1b[2J" in human.output
    assert "\x1b" not in human.output


def test_identical_and_same_row_copies(sample_run: tuple[Path, Path], tmp_path: Path) -> None:
    workspace, data = sample_run
    code, verdict = verify(workspace, data)
    assert (code, verdict["result"]) == (0, "identical")
    rows = sample_rows()
    for copy in (
        write_table(tmp_path / "u16.csv", rows, encoding="utf-16"),
        write_table(tmp_path / "copy.tsv", rows, delimiter="\t"),
        write_workbook(tmp_path / "copy.xlsx", rows),
    ):
        code, verdict = verify(workspace, copy)
        assert (code, verdict["result"]) == (0, "same-rows"), copy
        assert verdict["source"]["rows_digest"] == verdict["run"]["rows_digest"]
        assert verdict["source"]["bytes_sha256"] != verdict["run"]["bytes_sha256"]
        assert verdict["added"] == verdict["removed"] == verdict["changed"] == []
    human = invoke("verify-source", workspace, tmp_path / "copy.xlsx")
    assert human.exit_code == 0
    assert "same-rows" in human.output


def test_an_encoding_named_reads_the_file_in_it(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, _ = sample_run
    copy = write_table(tmp_path / "gbk.csv", sample_rows(), encoding="gb18030")
    code, verdict = verify(workspace, copy, "--encoding", "gb18030")
    assert (code, verdict["result"]) == (0, "same-rows")
    assert verdict["source"]["encoding"] == "gb18030"
    misread = invoke("drift", workspace, copy, "--encoding", "latin-1", "--json")
    assert misread.exit_code == 1  # read as Latin-1, every Chinese row reads changed
    assert json_object(misread.stdout)["comparison"]["changed"]
    wrong = invoke("drift", workspace, copy, "--encoding", "no-such-codec")
    assert wrong.exit_code == 2 and "unknown encoding 'no-such-codec'" in wrong.output


def test_added_removed_and_changed_rows_are_named(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, _ = sample_run
    header, *rows = sample_rows()
    rows[10][1] += " (edited)"
    changed_id, removed_id = rows[10][0], rows[20][0]
    del rows[20]
    rows.append(["fb_new", "A brand new complaint", *rows[0][2:]])
    code, verdict = verify(workspace, write_table(tmp_path / "next.csv", [header, *rows]))
    assert code == 1
    assert verdict["result"] == "rows-changed"
    assert (verdict["added"], verdict["removed"], verdict["changed"]) == (
        ["fb_new"],
        [removed_id],
        [changed_id],
    )
    human = invoke("verify-source", workspace, tmp_path / "next.csv")
    assert human.exit_code == 1
    assert f"changed (1): {changed_id}" in human.output
    assert f"removed (1): {removed_id}" in human.output


def test_usage_errors_exit_2_naming_what_is_wrong(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, data = sample_run
    unknown = invoke("verify-source", "no-such-run", data)
    assert unknown.exit_code == 2
    assert "no run 'no-such-run'" in unknown.output
    missing = invoke("drift", workspace, tmp_path / "gone.csv")
    assert missing.exit_code == 2
    assert "gone.csv" in missing.output
    renamed = [["id", "body"], ["fb_001", "text"]]
    wrong = invoke("verify-source", workspace, write_table(tmp_path / "cols.csv", renamed))
    assert wrong.exit_code == 2
    assert "cols.csv" in wrong.output and "feedback_id" in wrong.output
    binary = tmp_path / "blob.csv"
    binary.write_bytes(b"\x00\xff\x00\xfe" * 50)
    unreadable = invoke("verify-source", workspace, binary)
    assert unreadable.exit_code == 2
    assert "blob.csv" in unreadable.output
    for result in (unknown, missing, wrong, unreadable):
        assert "Traceback" not in result.output


def test_drift_marks_the_claims_citing_a_changed_row(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, data = sample_run
    same = invoke("drift", workspace, data, "--json")
    assert same.exit_code == 0
    assert json_object(same.stdout)["stale"] == []
    citations = json.loads((workspace / "runtime" / "citations.json").read_text("utf-8"))
    cited = next(c for c in citations["citations"] if c["artifact"].endswith(".md"))
    header, *rows = sample_rows()
    for row in rows:
        if row[0] == cited["row_id"]:
            row[1] += " (edited)"
    newer = write_table(tmp_path / "next.csv", [header, *rows])
    result = invoke("drift", workspace, newer, "--json")
    assert result.exit_code == 1, result.output
    report = json_object(result.stdout)
    assert report["comparison"]["changed"] == [cited["row_id"]]
    stale = report["stale"]
    assert all(claim["status"] == "stale" for claim in stale)
    assert {
        "artifact": cited["artifact"],
        "location": cited["location"],
        "line": cited["line"],
        "row_id": cited["row_id"],
        "change": "changed",
        "kind": "quote",
    }.items() <= next(c for c in stale if c["kind"] == "quote").items()
    items = {(c["artifact"], c["location"]) for c in stale if c["kind"] == "item"}
    analysis = json.loads((workspace / "artifacts" / "feedback_analysis.json").read_text("utf-8"))
    position = next(
        n for n, item in enumerate(analysis["items"]) if cited["row_id"] in json.dumps(item)
    )
    assert ("artifacts/feedback_analysis.json", f"items[{position}]") in items
    figures = [c for c in stale if c["kind"] == "figure"]
    assert figures and all(c["line"] and cited["row_id"] in c["row_ids"] for c in figures)
    assert report["changed_since_run"] == []


def test_an_index_changed_since_the_run_is_refused(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace = Path(shutil.copytree(sample_run[0], tmp_path / "ws"))
    header, *rows = sample_rows()
    rows[0][1] += " (edited)"
    newer = write_table(tmp_path / "next.csv", [header, *rows])
    index = workspace / "runtime" / "evidence_index.json"
    index.write_bytes(index.read_bytes().replace(b'"fb_001"', b'"fb_00X"', 1))
    result = invoke("verify-source", workspace, newer)
    assert result.exit_code == 2
    assert "evidence_index.json changed since the run" in result.output
    assert "Traceback" not in result.output


def test_drift_survives_hostile_deliverables_and_names_edited_ones(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace = Path(shutil.copytree(sample_run[0], tmp_path / "ws"))
    (workspace / "artifacts" / "product_backlog.json").write_text("[" * 100_000, "utf-8")
    analysis = workspace / "artifacts" / "feedback_analysis.json"
    document = json.loads(analysis.read_text("utf-8"))
    document["items"][0]["feedback_id"] = {"not": "an id"}
    analysis.write_text(json.dumps(document), "utf-8")
    header, *rows = sample_rows()
    for row in rows:
        row[1] += " (edited)"
    newer = write_table(tmp_path / "next.csv", [header, *rows])
    result = invoke("drift", workspace, newer, "--json")
    assert result.exit_code == 1, result.output
    report = json_object(result.stdout)
    assert len(report["comparison"]["changed"]) == len(rows)
    assert {c["artifact"] for c in report["stale"]} >= {"artifacts/insight_report.md"}
    assert not any(c["artifact"].endswith("product_backlog.json") for c in report["stale"])
    assert any("product_backlog.json" in line for line in report["changed_since_run"])


def test_a_run_shown_from_the_store_has_its_source_lock(
    sample_run: tuple[Path, Path], _session_runs_home: Path
) -> None:
    workspace, _ = sample_run
    record = run_record(workspace)
    moved = workspace.with_name("moved-away")
    workspace.rename(moved)
    try:
        shown = invoke("show", record["run_id"], "--home", _session_runs_home, "--json")
    finally:
        moved.rename(workspace)
    assert shown.exit_code == 0, shown.output
    payload = json_object(shown.stdout)
    assert any("shown from the run store" in line for line in payload["problems"])
    assert payload["run"]["source_lock"] == record["source_lock"]


def test_a_source_lock_edited_since_the_run_is_refused(
    sample_run: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace = Path(shutil.copytree(sample_run[0], tmp_path / "ws"))
    other = write_table(tmp_path / "other.csv", [["feedback_id", "text"], ["x_1", "hello"]])
    record_path = workspace / "runtime" / "run.json"
    record = json.loads(record_path.read_text("utf-8"))
    record["source_lock"]["bytes_sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()
    record_path.write_text(json.dumps(record), "utf-8")
    result = invoke("verify-source", workspace, other)
    assert result.exit_code == 2
    assert "source_lock.bytes_sha256" in result.output


def test_run_is_found_by_its_id_in_the_run_store(
    sample_run: tuple[Path, Path], _session_runs_home: Path
) -> None:
    workspace, data = sample_run
    run_id = run_record(workspace)["run_id"]
    result = invoke("verify-source", run_id[-8:], data, "--home", _session_runs_home, "--json")
    assert result.exit_code == 0, result.output
    assert json_object(result.stdout)["result"] == "identical"
