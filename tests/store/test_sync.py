"""Workspaces into the store: what a finished run's records say, failed citations from its
findings, idempotent re-syncs, and damaged or interrupted workspaces."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from runlens.records.events import read_events
from runlens.store import RunStore, index_home, sync_workspace, tables
from runlens.store.sync import record_stamp

from .helpers import (
    RUN_LEVEL_CODES,
    failing_documents,
    library_run,
    report_text,
    run_level_run,
)

Documents = tuple[dict[str, Any], dict[str, Any], str]


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_finished_run_is_in_the_store_as_its_workspace_records_it(
    store: RunStore, tmp_path: Path, feedback_csv: Path
) -> None:
    workspace = tmp_path / "home" / "run_done"
    result = library_run(workspace, feedback_csv, None)
    assert result.status.value == "completed"
    run_id = sync_workspace(store, workspace)
    assert run_id == result.run_id
    detail = store.get_run(run_id)
    assert detail is not None
    record = _read(workspace / "runtime" / "run.json")
    manifest = _read(workspace / "manifest.json")
    assert (detail.status, detail.plugin, detail.model) == (
        "completed",
        "feedback-analysis",
        "offline",
    )
    assert detail.plan == record["plan"] and detail.metrics == record["metrics"]
    assert (detail.created_at, detail.finished_at) == (record["created_at"], record["finished_at"])
    assert detail.input_name == feedback_csv.name
    assert detail.source_hash == manifest["input"]["source_hash"]
    assert detail.workspace == str(workspace.resolve())
    assert [a.name for a in detail.artifacts] == [a["name"] for a in manifest["artifacts"]]
    assert [(a.status, a.sha256, a.size) for a in detail.artifacts] == [
        (a["status"], a["sha256"], a["size"]) for a in manifest["artifacts"]
    ]
    events = list(read_events(workspace / "runtime" / "events.jsonl"))
    assert store.events(run_id) == events
    assert detail.last_seq == events[-1]["seq"]
    cited = _read(workspace / "runtime" / "citations.json")["citations"]
    citations = store.citations(run_id)
    assert len(citations) == len(cited) > 0
    assert all(c.status == "verified" for c in citations)
    first = citations[0]
    assert (first.artifact, first.location, first.row_id, first.quote, first.start, first.end) == (
        cited[0]["artifact"], cited[0]["location"], cited[0]["row_id"], cited[0]["quote"],
        cited[0]["start"], cited[0]["end"],
    )  # fmt: skip
    assert detail.citation_counts == {"verified": len(cited), "failed": 0}

    sync_workspace(store, workspace)  # again: nothing doubles
    assert store.events(run_id) == events and len(store.citations(run_id)) == len(cited)

    # Events that never reached the store (it failed a while) are added by the next sync.
    with store.engine.begin() as connection:
        connection.execute(
            sa.delete(tables.events).where(
                tables.events.c.run_id == run_id, tables.events.c.seq < 5
            )
        )
    sync_workspace(store, workspace)
    assert store.events(run_id) == events


def test_failed_citations_come_from_findings_with_their_place(
    store: RunStore, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    workspace = tmp_path / "run_failed"
    result = library_run(workspace, feedback_csv, failing_documents(good_documents))
    assert result.status.value == "failed"
    run_id = sync_workspace(store, workspace)
    assert run_id is not None
    detail = store.get_run(run_id)
    assert detail is not None and detail.status == "failed" and detail.error_message
    codes = {f.code for f in detail.findings}
    assert {"evidence_text_mismatch", "unknown_evidence_id", "unsourced_quote"} <= codes
    assert detail.finding_count == sum(detail.findings_by_code.values()) >= len(detail.findings)

    failed = [c for c in store.citations(run_id) if c.status == "failed"]
    json_failure = next(c for c in failed if c.location == "items[1].evidence_text")
    assert json_failure.row_id == "fb_002" and json_failure.quote == "Login works perfectly"
    assert json_failure.code == "evidence_text_mismatch" and json_failure.reason
    report = "artifacts/insight_report.md"
    markdown = report_text(failing_documents(good_documents)[2].split("## Evidence\n\n")[1])
    lines = markdown.splitlines()
    wrong = next(c for c in failed if c.artifact == report and c.row_id == "fb_002")
    assert wrong.line is not None and lines[wrong.line - 1].startswith("> “Login works")
    assert wrong.column == 3  # the opening quotation mark
    assert any(c.row_id == "fb_999" and c.code == "unknown_evidence_id" for c in failed)

    # The verified Markdown citation is located by line and column too.
    verified = [c for c in store.citations(run_id, row_id="fb_001") if c.artifact == report]
    assert len(verified) == 1 and verified[0].status == "verified"
    assert verified[0].quote == "导出周报太慢了" and verified[0].column == 3
    assert verified[0].line is not None and "导出周报太慢了" in lines[verified[0].line - 1]
    assert (verified[0].start, verified[0].end) == (0, 7)


def test_ids_cited_without_a_quote_are_verified_citations_without_offsets(
    store: RunStore, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    from runlens_feedback.contracts import ANALYSIS, BACKLOG

    workspace = tmp_path / "run_ids"
    result = library_run(workspace, feedback_csv, good_documents)
    assert result.status.value == "completed"
    written = _read(workspace / "runtime" / "citations.json")["citations"]
    id_only = [c for c in written if c["quote"] is None]
    assert [(c["artifact"], c["location"], c["row_id"]) for c in id_only] == [
        (BACKLOG, "items[0].evidence_feedback_ids[0]", "fb_002"),
        (BACKLOG, "items[1].evidence_feedback_ids[0]", "fb_001"),
        (BACKLOG, "items[1].evidence_feedback_ids[1]", "fb_003"),
    ]
    assert all(c["start"] is None and c["end"] is None for c in id_only)
    run_id = sync_workspace(store, workspace)
    assert run_id is not None
    backlog = store.citations(run_id, artifact=BACKLOG)
    assert [(c.location, c.row_id, c.status, c.quote, c.start, c.end) for c in backlog] == [
        ("items[0].evidence_feedback_ids[0]", "fb_002", "verified", None, None, None),
        ("items[1].evidence_feedback_ids[0]", "fb_001", "verified", None, None, None),
        ("items[1].evidence_feedback_ids[1]", "fb_003", "verified", None, None, None),
    ]
    # An analysis id next to its verified quote is one citation (the quote's), not two.
    analysis = store.citations(run_id, artifact=ANALYSIS)
    assert analysis and all(c.quote and c.location.endswith(".evidence_text") for c in analysis)
    cited_fb_001 = {(c.artifact, c.location) for c in store.citations(run_id, row_id="fb_001")}
    assert (BACKLOG, "items[1].evidence_feedback_ids[0]") in cited_fb_001
    detail = store.get_run(run_id)
    assert detail is not None and detail.citation_counts["verified"] == len(written)


def test_findings_about_the_run_as_a_whole_are_stored_in_report_order(
    store: RunStore, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    workspace = tmp_path / "run_wide"
    result = run_level_run(workspace, feedback_csv, failing_documents(good_documents))
    assert result.status.value == "failed"
    manifest = _read(workspace / "manifest.json")
    # The manifest lists them at its top level; each artifact keeps its own.
    assert [(f["code"], f["artifact"]) for f in manifest["findings"]] == [
        (code, "") for code in RUN_LEVEL_CODES
    ]
    per_artifact = [f for entry in manifest["artifacts"] for f in entry["findings"]]
    assert per_artifact and all(f["artifact"] for f in per_artifact)
    assert len(per_artifact) + len(RUN_LEVEL_CODES) == len(result.findings)

    run_id = sync_workspace(store, workspace)
    assert run_id is not None
    detail = store.get_run(run_id)
    assert detail is not None
    # Every finding of the run, numbered in the order of the run's own report.
    assert [(f.ordinal, f.code, f.artifact, f.path) for f in detail.findings] == [
        (number, f.code, f.artifact, f.path) for number, f in enumerate(result.findings)
    ]
    crash = next(f for f in detail.findings if f.code == "hook_error")
    assert crash.validator == "CrashingCheck" and "the check itself is broken" in crash.message
    assert detail.finding_count == len(detail.findings) == len(result.findings)
    sync_workspace(store, workspace)  # again: nothing doubles
    detail_again = store.get_run(run_id)
    assert detail_again is not None and detail_again.findings == detail.findings


def test_without_validator_events_run_findings_come_first() -> None:
    from runlens.records.readers import EventView, FindingView
    from runlens.store.sync import _report_order

    findings = [
        FindingView(validator="RunWideCheck", artifact="", code="run_budget_exceeded"),
        FindingView(validator="Evidence", artifact="a.json", code="unknown_evidence_id"),
    ]
    assert _report_order(findings, []) == findings
    events = [
        EventView(type="validator.completed", data={"validator": "RunWideCheck", "round": 1}),
        EventView(type="validator.completed", data={"validator": "RunWideCheck", "round": 2}),
        EventView(type="validator.completed", data={"validator": "Evidence", "round": 2}),
    ]
    assert _report_order(findings, events) == findings  # the last round's order
    events[1], events[2] = events[2], events[1]
    assert _report_order(findings, events) == findings[::-1]


def test_report_events_are_read_only_when_findings_have_an_order_to_take() -> None:
    from runlens.records.readers import EventView, FindingView, ManifestView
    from runlens.store.sync import _results

    wide = FindingView(validator="RunWideCheck", artifact="", code="run_budget_exceeded")
    cited = FindingView(validator="Evidence", artifact="a.json", code="unknown_evidence_id")
    events = [
        EventView(type="validator.completed", data={"validator": "Evidence", "round": 1}),
        EventView(type="validator.completed", data={"validator": "RunWideCheck", "round": 1}),
    ]
    asked: list[int] = []

    def given() -> list[EventView]:
        asked.append(1)
        return events

    for findings in ([], [wide], [cited], [wide, cited]):
        manifest = ManifestView(findings=findings)
        lazily = _results(manifest, given)
        assert lazily == _results(manifest, events)
        assert len(asked) == (1 if len(findings) > 1 else 0)
    assert [f.validator for f in _results(ManifestView(findings=[wide, cited]), given)[1]] == [
        "Evidence",
        "RunWideCheck",
    ]


def test_index_home_adds_then_skips_unchanged_and_names_damage(
    store: RunStore, tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    home = tmp_path / "home"
    library_run(home / "run_one", feedback_csv, good_documents)
    library_run(home / "run_two", feedback_csv, good_documents)
    (home / "not_a_run").mkdir()
    first = index_home(store, home)
    assert len(first.added) == 2 and first.unchanged == 0 and first.damaged == []
    again = index_home(store, home)
    assert again.added == [] and again.updated == [] and again.unchanged == 2

    record = home / "run_two" / "runtime" / "run.json"
    record.chmod(0o644)
    record.write_bytes(record.read_bytes()[:40])  # cut short
    assert record_stamp(home / "run_two") is not None
    third = index_home(store, home)
    assert third.unchanged == 1 and len(third.updated) == 1 and third.added == []
    assert any("run.json" in problem for _, problem in third.damaged)
    runs, total = store.list_runs()
    assert total == 2  # the damaged folder is still the run the store knew it as
    damaged = [run for run in runs if run.status == "damaged"]
    assert len(damaged) == 1 and any("run.json" in p for p in damaged[0].problems)


def test_values_of_the_wrong_type_are_named_and_the_rest_is_synced(
    store: RunStore, tmp_path: Path, feedback_csv: Path
) -> None:
    workspace = tmp_path / "home" / "run_typed"
    library_run(workspace, feedback_csv, None)
    path = workspace / "runtime" / "run.json"
    record = _read(path)
    record["warnings"] = [*record["warnings"], 5]
    path.chmod(0o644)
    path.write_text(json.dumps(record), encoding="utf-8")
    run_id = sync_workspace(store, workspace)
    assert run_id is not None and run_id == record["run_id"]
    detail = store.get_run(run_id)
    assert detail is not None and detail.status == record["status"]
    assert detail.warnings == record["warnings"][:-1]
    assert detail.problems == [
        f"runtime/run.json: warnings[{len(record['warnings']) - 1}]: number 5 is not a string"
    ]


@contextlib.contextmanager
def _writes() -> Iterator[list[str]]:
    """The data-changing statements any engine runs inside the block (INSERT, UPDATE,
    DELETE), as SQLAlchemy hands them to the driver."""
    seen: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            seen.append(statement)

    sa.event.listen(sa.Engine, "before_cursor_execute", before)
    try:
        yield seen
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", before)


def test_a_second_index_of_an_unchanged_home_writes_nothing(
    store: RunStore, tmp_path: Path, feedback_csv: Path
) -> None:
    home = tmp_path / "home"
    library_run(home / "run_one", feedback_csv, None)
    library_run(home / "run_two", feedback_csv, None)
    with _writes() as first:
        assert len(index_home(store, home).added) == 2
    assert first  # the statements are seen: the listener counts this store's writes
    with _writes() as second:
        again = index_home(store, home)
    assert (again.added, again.updated, again.unchanged) == ([], [], 2)
    assert second == []


def test_indexing_reads_each_run_s_row_once_in_the_transaction_that_writes_it(
    store: RunStore, tmp_path: Path, feedback_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row the clash check and the events the store holds go by is read once per
    workspace (and once for the whole home), not once for each of them."""
    home = tmp_path / "home"
    library_run(home / "run_one", feedback_csv, None)
    library_run(home / "run_two", feedback_csv, None)
    asked: list[tuple[list[str] | None, bool]] = []
    read, begin = store.sync_states, store.transaction
    open_transactions = [0]

    def sync_states(run_ids: Any = None, **options: Any) -> Any:
        asked.append((None if run_ids is None else list(run_ids), open_transactions[0] > 0))
        return read(run_ids, **options)

    @contextlib.contextmanager
    def transaction(**options: Any) -> Iterator[None]:
        with begin(**options):
            open_transactions[0] += 1
            try:
                yield
            finally:
                open_transactions[0] -= 1

    monkeypatch.setattr(store, "sync_states", sync_states)
    monkeypatch.setattr(store, "transaction", transaction)
    pending: list[int] = []
    report = index_home(store, home, on_pending=pending.append)
    assert len(report.added) == 2 and pending == [2]  # told before the first is synced
    per_run = [(ids, inside) for ids, inside in asked if ids is not None]
    assert sorted(ids[0] for ids, _ in per_run) == sorted(report.added)
    assert all(inside for _, inside in per_run)
    assert index_home(store, home, on_pending=pending.append).unchanged == 2
    assert pending == [2]  # nothing pending: not told


def test_show_of_an_unchanged_indexed_run_writes_nothing(
    store: RunStore, store_url: str, tmp_path: Path, feedback_csv: Path
) -> None:
    from click.testing import CliRunner

    from runlens.cli.show import show_command

    home = tmp_path / "home"
    run_id = library_run(home / "run_one", feedback_csv, None).run_id
    library_run(home / "run_two", feedback_csv, None)
    assert len(index_home(store, home).added) == 2
    runner = CliRunner()
    for named in (run_id, str(home / "run_one")):  # by id, and by its workspace's path
        args = [named, "--home", str(home), "--database-url", store_url, "--json"]
        with _writes() as seen:
            shown = runner.invoke(show_command, args, catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.output)["run"]["run_id"] == run_id
        assert seen == []
    # A run whose record changed since it was indexed is written again.
    record = home / "run_one" / "runtime" / "run.json"
    record.chmod(0o644)
    record.write_text(record.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with _writes() as changed:
        shown = runner.invoke(
            show_command,
            [run_id, "--home", str(home), "--database-url", store_url, "--json"],
            catch_exceptions=False,
        )
    assert shown.exit_code == 0, shown.output
    assert changed
    assert store.sync_states([run_id])[run_id].record_stamp == record_stamp(home / "run_one")


def test_a_workspace_that_fails_midway_leaves_nothing_and_the_others_are_indexed(
    store: RunStore, tmp_path: Path, feedback_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    ids = [library_run(home / f"run_{n}", feedback_csv, None).run_id for n in range(3)]
    replace = store.replace_results

    def failing(run_id: str, *args: Any, **kwargs: Any) -> None:
        if run_id == ids[1]:  # after its run row and events were written
            raise RuntimeError("disk full")
        replace(run_id, *args, **kwargs)

    monkeypatch.setattr(store, "replace_results", failing)
    report = index_home(store, home)
    assert sorted(report.added) == sorted([ids[0], ids[2]])
    assert report.damaged == [(home.resolve() / "run_1", "not indexed (RuntimeError: disk full)")]
    assert set(store.sync_states()) == {ids[0], ids[2]}
    assert store.events(ids[1]) == [] and store.events(ids[0]) != []
    monkeypatch.undo()
    assert index_home(store, home).added == [ids[1]]
