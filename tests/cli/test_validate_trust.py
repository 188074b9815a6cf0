"""`runlens validate` judges the Evidence Index against the source, covers every row, keeps
backlog evidence in its theme and keeps provider keys out of deliverables and stdout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


KEY = "sk-live-0123456789abcdefABCDEF"


def verdict(*args: object, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    runner = CliRunner(env={"COLUMNS": "200", **(env or {})})
    result = runner.invoke(cli, ["validate", *map(str, args), "--json"], catch_exceptions=False)
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict), payload
    return result.exit_code, payload, result.stdout


def codes(payload: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["artifact"]) for f in payload["findings"]]


# --- the index is judged against input/, not against the hash in run.json ----------------------


def forge(ws: FeedbackWorkspace, *, text: str | None = None, add_row: bool = False) -> None:
    """Rewrite the index as a forger would: consistent with itself, not with the source."""
    index = json.loads(ws.index_path.read_text(encoding="utf-8"))
    if text is not None:
        index["items"]["fb_001"]["text"] = text
    if add_row:
        index["items"]["fb_999"] = {"row_hash": "0" * 64, "text": "全部都很好，没有任何问题"}
    index["total_rows"] = len(index["items"])
    ws.index_path.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")


def record_hash(ws: FeedbackWorkspace, value: str | None) -> None:
    path = ws.root / "runtime" / "run.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["evidence_index_sha256"] = value
    path.write_text(json.dumps(record), encoding="utf-8")


def rehash(ws: FeedbackWorkspace) -> str:
    import hashlib

    return hashlib.sha256(ws.index_path.read_bytes()).hexdigest()


@pytest.mark.parametrize("hide", ["delete run.json", "null the hash", "rewrite the hash"])
def test_a_forged_index_fails_however_the_recorded_hash_is_hidden(
    feedback_workspace: FeedbackWorkspace, hide: str
) -> None:
    forge(feedback_workspace, add_row=True)
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = ["fb_999"]
    feedback_workspace.write()
    if hide == "delete run.json":
        (feedback_workspace.root / "runtime" / "run.json").unlink()
    elif hide == "null the hash":
        record_hash(feedback_workspace, None)
    else:
        record_hash(feedback_workspace, rehash(feedback_workspace))
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert codes(payload) == [
        ("evidence_index_tampered", ANALYSIS),
        ("evidence_index_tampered", BACKLOG),
    ]
    assert "does not match sample_feedback.csv at rows fb_999" in payload["error_message"]
    assert payload["artifacts"][REPORT] == "validated"


def test_a_row_text_changed_in_the_index_is_named(feedback_workspace: FeedbackWorkspace) -> None:
    forge(feedback_workspace, text="导出周报太快了，我们很满意。")
    record_hash(feedback_workspace, rehash(feedback_workspace))
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert {code for code, _ in codes(payload)} == {"evidence_index_tampered"}
    assert "at rows fb_001" in payload["error_message"]


def test_forged_metadata_in_the_index_is_named(feedback_workspace: FeedbackWorkspace) -> None:
    index = json.loads(feedback_workspace.index_path.read_text(encoding="utf-8"))
    metadata = index["items"]["fb_002"]["metadata"]
    assert metadata, "the sample has columns besides the id and the text"
    index["items"]["fb_002"]["metadata"] = {name: "forged" for name in metadata}
    feedback_workspace.index_path.write_text(json.dumps(index, ensure_ascii=False), "utf-8")
    record_hash(feedback_workspace, rehash(feedback_workspace))
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert {code for code, _ in codes(payload)} == {"evidence_index_tampered"}
    assert "at rows fb_002" in payload["error_message"]


@pytest.mark.parametrize("layout", ["as written", "any other layout"])
def test_an_index_without_metadata_an_older_version_wrote_passes(
    feedback_workspace: FeedbackWorkspace, layout: str
) -> None:
    index = json.loads(feedback_workspace.index_path.read_text(encoding="utf-8"))
    for item in index["items"].values():
        del item["metadata"]
    if layout == "as written":  # the line layout the writer uses, without metadata
        head = json.dumps({k: v for k, v in index.items() if k != "items"}, ensure_ascii=False)
        lines = [
            json.dumps(key, ensure_ascii=False)
            + ":\n"
            + json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            for key, item in index["items"].items()
        ]
        text = head[:-1] + ',"items":{\n' + ",\n".join(lines) + "\n}}\n"
    else:
        text = json.dumps(index, ensure_ascii=False, indent=1)
    feedback_workspace.index_path.write_text(text, encoding="utf-8")
    record_hash(feedback_workspace, None)
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert (exit_code, payload["findings"]) == (0, [])


def test_a_changed_source_hash_in_the_index_is_tampered(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    index = json.loads(feedback_workspace.index_path.read_text(encoding="utf-8"))
    index["source_hash"] = "f" * 64
    feedback_workspace.index_path.write_text(json.dumps(index, ensure_ascii=False), "utf-8")
    record_hash(feedback_workspace, None)
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert "records source_hash ffffffffffff" in payload["error_message"]


def test_without_a_source_copy_the_index_cannot_be_trusted(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    (feedback_workspace.root / "input" / feedback_workspace.csv.name).unlink()
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert exit_code == 1
    assert {code for code, _ in codes(payload)} == {"evidence_source_missing"}
    assert "--source" in payload["error_message"]
    # Given the source, the same workspace passes.
    assert verdict(feedback_workspace.root, "--source", feedback_workspace.csv)[0] == 0


def test_the_untouched_workspace_passes_without_its_run_record(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    (feedback_workspace.root / "runtime" / "run.json").unlink()
    exit_code, payload, _ = verdict(feedback_workspace.root)
    assert (exit_code, payload["findings"]) == (0, [])


# --- coverage -----------------------------------------------------------------------------------


def test_a_row_neither_analysed_nor_failed_is_not_covered(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    del feedback_workspace.analysis["items"][2]  # fb_003
    feedback_workspace.backlog["items"][1]["evidence_feedback_ids"] = ["fb_001"]
    exit_code, payload, _ = verdict(feedback_workspace.write().root)
    assert exit_code == 1
    assert codes(payload) == [("rows_not_covered", ANALYSIS)]
    finding = payload["findings"][0]
    assert finding["details"] == {"count": 1, "row_ids": ["fb_003"]}
    assert "1 of 3 source rows with text" in finding["message"]
    assert payload["artifacts"] == {
        ANALYSIS: "rejected",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }


def test_a_row_listed_in_failed_batches_is_covered(feedback_workspace: FeedbackWorkspace) -> None:
    del feedback_workspace.analysis["items"][2]
    feedback_workspace.analysis["failed_batches"] = [
        {"batch": 1, "feedback_ids": ["fb_003"], "reason": "model returned no item"}
    ]
    feedback_workspace.backlog["items"][1]["evidence_feedback_ids"] = ["fb_001"]
    exit_code, payload, _ = verdict(feedback_workspace.write().root)
    assert (exit_code, payload["findings"]) == (0, [])


# --- backlog evidence belongs to its theme -------------------------------------------------------


def test_backlog_evidence_from_another_theme_is_rejected(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    items = feedback_workspace.analysis["items"]
    items[0]["theme"], items[1]["theme"], items[2]["theme"] = "export", "login", "Dashboard"
    backlog = feedback_workspace.backlog["items"]
    backlog[0]["theme"] = "login"
    backlog[1]["theme"] = "export"  # cites fb_001 (export) and fb_003 (dashboard)
    exit_code, payload, _ = verdict(feedback_workspace.write().root)
    assert exit_code == 1
    assert codes(payload) == [("evidence_theme_mismatch", BACKLOG)]
    assert payload["findings"][0]["path"] == "items[1].evidence_feedback_ids[1]"
    assert "'dashboard'" in payload["findings"][0]["message"]
    backlog[1]["evidence_feedback_ids"] = ["fb_001"]
    assert verdict(feedback_workspace.write().root)[0] == 0


# --- secrets -------------------------------------------------------------------------------


def test_a_known_key_in_a_deliverable_is_a_finding_and_never_printed(
    feedback_workspace: FeedbackWorkspace,
) -> None:
    feedback_workspace.report += f"\nDebug: Authorization: Bearer {KEY}\n"
    exit_code, payload, stdout = verdict(
        feedback_workspace.write().root, env={"OPENAI_API_KEY": KEY}
    )
    assert exit_code == 1
    assert codes(payload) == [("secret_in_artifact", REPORT)]
    assert KEY not in stdout
    assert payload["artifacts"][REPORT] == "rejected"
    # Without the key in the environment RunLens does not know it: nothing to find.
    assert verdict(feedback_workspace.root)[0] == 0


def test_a_key_in_a_file_name_is_found_and_redacted(feedback_workspace: FeedbackWorkspace) -> None:
    feedback_workspace.write_text(f"artifacts/{KEY}.txt", "notes")
    exit_code, payload, stdout = verdict(feedback_workspace.root, env={"ANTHROPIC_API_KEY": KEY})
    assert exit_code == 1
    assert codes(payload) == [("secret_in_artifact", "artifacts/[REDACTED].txt")]
    assert payload["findings"][0]["details"] == {"where": "file name"}
    assert KEY not in stdout
    # No contract names that file, but the run cannot pass with it.
    assert payload["status"] == "failed"
