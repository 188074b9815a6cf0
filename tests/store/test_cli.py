"""`runlens runs`, `runlens show` and `runlens reindex` reading and filling the store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from runlens.store import open_store, store_url, sync_workspace

from .helpers import (
    RUN_LEVEL_CODES,
    failing_documents,
    killed_worker_workspace,
    library_run,
    run_level_run,
    runlens,
)

Documents = tuple[dict[str, Any], dict[str, Any], str]


def _home_with_runs(tmp_path: Path, csv: Path, good: Documents) -> tuple[Path, str, str]:
    """A runs home with a completed and a failed run, made before any store existed."""
    home = tmp_path / "home"
    passed = library_run(home / "run_20261201T100000Z_aaaaaa", csv, good)
    failed = library_run(home / "run_20261201T110000Z_bbbbbb", csv, failing_documents(good))
    assert (passed.status.value, failed.status.value) == ("completed", "failed")
    assert not (home / "runlens.db").exists()
    return home, passed.run_id, failed.run_id


def test_reindex_puts_existing_workspaces_in_the_store(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home, passed, failed = _home_with_runs(tmp_path, feedback_csv, good_documents)
    done = runlens("reindex", home=home)
    assert done.returncode == 0, done.stderr
    assert "2 added, 0 updated, 0 unchanged" in done.stdout
    again = runlens("reindex", "--home", home, home=tmp_path)
    assert "0 added, 2 updated" in again.stdout  # reindex re-reads every one
    store = open_store(store_url(home=home))
    try:
        runs, total = store.list_runs()
        assert total == 2 and {r.run_id for r in runs} == {passed, failed}
        detail = store.get_run(failed)
        assert detail is not None and detail.status == "failed" and detail.findings
    finally:
        store.close()
    one = runlens("reindex", home / "run_20261201T100000Z_aaaaaa", home=home)
    assert one.returncode == 0 and "0 added, 1 updated" in one.stdout
    (home / "empty").mkdir()
    refused = runlens("reindex", home / "empty", home=home)
    assert refused.returncode == 2 and "is not a run workspace" in refused.stderr


def test_runs_lists_from_the_store_with_filters(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home, passed, failed = _home_with_runs(tmp_path, feedback_csv, good_documents)
    listed = runlens("runs", "--json", home=home)  # indexes the home on the way
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [r["run_id"] for r in runs] == [failed, passed]  # newest first
    assert (home / "runlens.db").is_file()
    only_failed = json.loads(runlens("runs", "--json", "--status", "failed", home=home).stdout)
    assert [r["run_id"] for r in only_failed] == [failed]
    assert only_failed[0]["error_message"] and only_failed[0]["workspace"].endswith("bbbbbb")
    assert json.loads(runlens("runs", "--json", "--plugin", "other", home=home).stdout) == []
    table = runlens("runs", home=home)
    assert passed in table.stdout and failed in table.stdout and "failed" in table.stdout
    assert "feedback-analysis · " in table.stdout
    limited = json.loads(runlens("runs", "--json", "--limit", "1", home=home).stdout)
    assert len(limited) == 1
    # The store in step, a workspace it does not hold appears: the listing indexes it (the
    # store's reads through sqlite3 give way to the store itself), and lists it first.
    later = library_run(home / "run_20261201T120000Z_cccccc", feedback_csv, good_documents)
    relisted = runlens("runs", "--json", home=home)
    assert relisted.returncode == 0, relisted.stderr
    assert [r["run_id"] for r in json.loads(relisted.stdout)] == [later.run_id, failed, passed]


def test_show_reads_the_store_and_a_path_is_synced_first(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home, _, failed = _home_with_runs(tmp_path, feedback_csv, good_documents)
    by_id = runlens("show", failed, "--json", "--no-events", home=home)
    assert by_id.returncode == 0, by_id.stderr
    shown = json.loads(by_id.stdout)
    assert shown["run"]["run_id"] == failed and shown["run"]["status"] == "failed"
    # A workspace outside the home, shown by its path: in the store afterwards.
    elsewhere = tmp_path / "elsewhere"
    library_run(elsewhere, feedback_csv, good_documents)
    by_path = runlens("show", elsewhere, "--no-events", home=home)
    assert by_path.returncode == 0 and "completed" in by_path.stdout
    run_id = json.loads((elsewhere / "runtime" / "run.json").read_text(encoding="utf-8"))["run_id"]
    store = open_store(store_url(home=home))
    try:
        found = store.get_run(run_id)
        assert found is not None and found.workspace == str(elsewhere.resolve())
    finally:
        store.close()
    # A run whose workspace has gone is shown from what the store holds.
    shutil.rmtree(elsewhere)
    gone = runlens("show", run_id, home=home)
    assert gone.returncode == 0, gone.stderr
    assert "not on this machine: shown from the run store" in gone.stdout
    assert "completed" in gone.stdout and "run.completed" in gone.stdout
    as_json = json.loads(runlens("show", run_id, "--json", home=home).stdout)
    assert as_json["run"]["status"] == "completed" and as_json["events"]
    statuses = {a["name"]: a["status"] for a in as_json["manifest"]["artifacts"]}
    assert statuses["artifacts/insight_report.md"] == "validated"
    assert "rejected" not in statuses.values()
    missing = runlens("show", "nothing_like_it", home=home)
    assert missing.returncode == 2 and "no run 'nothing_like_it'" in missing.stderr


def test_show_lists_findings_about_the_run_as_a_whole(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere"
    result = run_level_run(elsewhere, feedback_csv, good_documents)
    assert result.status.value == "failed"
    from_disk = runlens("show", elsewhere, "--no-events", home=home)
    assert from_disk.returncode == 0, from_disk.stderr
    assert "Run findings" in from_disk.stdout
    assert "[hook_error] validator CrashingCheck failed" in from_disk.stdout
    assert "[run_budget_exceeded] the run made more model calls" in from_disk.stdout
    # Once the workspace has gone, the store still holds them where the manifest had them.
    shutil.rmtree(elsewhere)
    stored = runlens("show", result.run_id, "--json", home=home)
    assert stored.returncode == 0, stored.stderr
    manifest = json.loads(stored.stdout)["manifest"]
    assert [(f["code"], f["artifact"]) for f in manifest["findings"]] == [
        (code, "") for code in RUN_LEVEL_CODES
    ]
    assert all(not a["findings"] for a in manifest["artifacts"])
    text = runlens("show", result.run_id, "--no-events", home=home)
    assert "shown from the run store" in text.stdout and "[hook_error]" in text.stdout


def test_database_url_names_the_store(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home, _, _ = _home_with_runs(tmp_path, feedback_csv, good_documents)
    url = f"sqlite:///{tmp_path / 'other.db'}"
    listed = runlens("runs", "--json", "--database-url", url, "--home", home, home=tmp_path)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 2
    assert (tmp_path / "other.db").is_file() and not (home / "runlens.db").exists()
    broken = runlens("runs", "--database-url", "postgresql://u:pw@127.0.0.1:1/x", home=home)
    assert broken.returncode == 2 and "cannot open the run store" in broken.stderr
    assert ":pw@" not in broken.stderr


def test_runs_and_show_with_queued_and_worker_runs(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    """A queued run is listed (and filtered) as such; a run whose worker was killed here
    stays `running` however often it is listed or shown (another worker resumes it); a
    worker's run done elsewhere is shown from the store with its worker and artifact hashes."""
    home = tmp_path / "home"
    store = open_store(store_url(home=home))
    try:
        store.upsert_run(
            "run_20261202T100000Z_qqqqqq", plugin="feedback-analysis", model="offline",
            status="queued", workspace="", input_name="tickets.csv",
            created_at="2026-12-02T10:00:00.000+00:00",
        )  # fmt: skip
        held = killed_worker_workspace(home, "run_20261202T090000Z_hhhhhh")
        record = (held / "runtime" / "run.json").read_bytes()
        store.upsert_run(
            "run_20261202T090000Z_hhhhhh", plugin="feedback-analysis", model="offline",
            status="running", workspace=str(held.resolve()), worker="w-dead",
            created_at="2026-12-02T09:00:00.000+00:00",
        )  # fmt: skip
        elsewhere = tmp_path / "elsewhere"
        done = library_run(elsewhere, feedback_csv, good_documents)
        store.upsert_run(
            done.run_id, plugin="feedback-analysis", model="offline", status="running",
            workspace=str(elsewhere.resolve()), worker="w-done",
        )  # fmt: skip
        sync_workspace(store, elsewhere, upload_files=True)
        manifest = json.loads((elsewhere / "manifest.json").read_text(encoding="utf-8"))
    finally:
        store.close()
    shutil.rmtree(elsewhere)

    listed = runlens("runs", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    runs = {r["run_id"]: r for r in json.loads(listed.stdout)}
    assert runs["run_20261202T100000Z_qqqqqq"]["status"] == "queued"
    assert runs["run_20261202T100000Z_qqqqqq"]["worker"] is None
    killed = runs["run_20261202T090000Z_hhhhhh"]
    assert (killed["status"], killed["worker"]) == ("running", "w-dead")
    assert runs[done.run_id]["worker"] == "w-done"
    queued = json.loads(runlens("runs", "--json", "--status", "queued", home=home).stdout)
    assert [r["run_id"] for r in queued] == ["run_20261202T100000Z_qqqqqq"]
    table = runlens("runs", home=home)
    assert "queued" in table.stdout

    shown = runlens("show", "hhhhhh", "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    as_json = json.loads(shown.stdout)
    assert as_json["run"]["status"] == "running" and as_json["worker"] == "w-dead"
    assert (held / "runtime" / "run.json").read_bytes() == record  # never settled
    again = json.loads(runlens("runs", "--json", home=home).stdout)
    assert {r["run_id"]: r["status"] for r in again}["run_20261202T090000Z_hhhhhh"] == "running"

    from_store = json.loads(runlens("show", done.run_id, "--json", home=home).stdout)
    assert from_store["worker"] == "w-done"
    assert from_store["artifact_hashes"] == {a["name"]: a["sha256"] for a in manifest["artifacts"]}
    assert any(h for h in from_store["artifact_hashes"].values())


def test_a_home_of_runs_the_store_has_never_seen_says_it_is_indexing_them(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    """From `SAY_INDEXING_FROM` workspaces to index, `runlens runs` says on stderr what the
    wait is for (stdout stays the listing); once they are in the store, it says nothing."""
    from runlens.cli.runs import SAY_INDEXING_FROM

    home = tmp_path / "home"
    first = library_run(home / "run_20261201T100000Z_000000", feedback_csv, good_documents)
    source = home / "run_20261201T100000Z_000000"
    original = first.run_id.encode()
    files = [path for path in source.rglob("*") if path.is_file()]
    for number in range(1, SAY_INDEXING_FROM):  # copies, each under a run id of its own
        run_id = f"{first.run_id[:-6]}{number:06x}".encode()
        for path in files:
            copy = home / f"run_20261201T100000Z_{number:06x}" / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(path.read_bytes().replace(original, run_id))
    for name in ("runlens.db", "runlens.db-wal", "runlens.db-shm"):
        (home / name).unlink(missing_ok=True)
    listed = runlens("runs", "--json", "--limit", "100", home=home)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == SAY_INDEXING_FROM
    assert f"Indexing {SAY_INDEXING_FROM} runs the run store does not hold yet" in listed.stderr
    again = runlens("runs", "--json", home=home)
    assert again.returncode == 0 and "Indexing" not in again.stderr
    reread = runlens("reindex", home=home)
    assert f"Reading {SAY_INDEXING_FROM} runs into the run store" in reread.stderr
    assert f"0 added, {SAY_INDEXING_FROM} updated" in reread.stdout
