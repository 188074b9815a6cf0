"""The batch protocol carries rows as JSON, so no character of a CSV cell can break a batch;
a batch that still fails is recorded, reported live and named in the verdict."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runlens.cli import cli
from runlens.records.events import read_events
from runlens_feedback.batches import batch_message, parse_batch_message
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

from .helpers import generated_rows, run_offline, write_csv
from .offline_http import OfflineChatServer

#: Every character `str.splitlines()` breaks on, and the other C0/C1 controls a cell can hold.
LINE_BREAKERS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
CONTROLS = "".join(map(chr, [*range(1, 32), 127, *range(0x80, 0xA0)]))

cell_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(LINE_BREAKERS + CONTROLS),
        st.characters(codec="utf-8", exclude_characters="\x00"),
    ),
    min_size=0,
    max_size=60,
)


@given(texts=st.lists(cell_text, min_size=1, max_size=8))
def test_batch_message_round_trips_any_text(texts: list[str]) -> None:
    rows = [
        {"id": f"r{n}", "body": text, "channel": "app\u2028store"} for n, text in enumerate(texts)
    ]
    parsed = parse_batch_message(batch_message(rows, "id", "body"))
    assert [row["feedback_id"] for row in parsed] == [row["id"] for row in rows]
    assert [row["text"] for row in parsed] == texts
    assert all(row["metadata"] == {"channel": "app\u2028store"} for row in parsed)


def test_batch_message_is_one_json_document() -> None:
    message = batch_message([{"feedback_id": "a", "text": "x\x85y"}], "feedback_id", "text")
    document = json.loads(message)
    assert set(document) == {"task", "themes", "rows"}
    assert document["rows"] == [{"feedback_id": "a", "text": "x\x85y"}]
    themes = [{"key": "battery", "name": "Battery", "keywords": ["battery"], "rows": 1}]
    hinted = batch_message(
        [{"feedback_id": "a", "text": "battery"}, {"feedback_id": "b", "text": "x"}],
        "feedback_id",
        "text",
        themes=themes,
        hints=["battery", None],
    )
    document = json.loads(hinted)
    assert document["themes"] == themes
    assert [row.get("theme_hint") for row in document["rows"]] == ["battery", None]
    with pytest.raises(ValueError, match="not a batch message"):
        parse_batch_message('{"task": "no rows"}')


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(texts=st.lists(cell_text, min_size=1, max_size=6))
def test_any_text_goes_through_the_whole_offline_pipeline(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    """Arbitrary cell text (every line separator and control character included) reaches the
    analysis intact: the run completes, every row with text is analysed, every quote is a
    fragment of its row, and the report's quotes are verified by the validators."""
    folder = tmp_path_factory.mktemp("any")
    rows = [
        {"feedback_id": f"fb{n}", "text": text}
        for n, text in enumerate(["The export is slow and crashes.", *texts])
    ]
    run = run_offline(write_csv(folder / "in.csv", rows), folder / "ws")
    assert run.exit_code == 0, run.output
    assert run.result["status"] == "completed", run.result["error_message"]
    items = {item["feedback_id"]: item for item in run.analysis["items"]}
    failed = {fid for entry in run.analysis["failed_batches"] for fid in entry["feedback_ids"]}
    for row in rows:
        if row["text"].strip():
            assert row["feedback_id"] in items, row
            assert _nfc(items[row["feedback_id"]]["evidence_text"]) in _nfc(row["text"])
        else:
            assert row["feedback_id"] in failed
    assert not [
        e for e in run.analysis["failed_batches"] if e["reason"] != "row has no text to quote"
    ]


def test_a_row_with_next_line_characters_no_longer_sinks_a_run(tmp_path: Path) -> None:
    rows = [
        {"feedback_id": "f1", "text": "The script is\x85was there a script?"},
        {"feedback_id": "f2", "text": "Line one\u2028line two\u2029and\x0bthree\x0cfour\x1cfive"},
        {"feedback_id": "f3", "text": "Battery drains fast since the update."},
    ]
    run = run_offline(write_csv(tmp_path / "odd.csv", rows), tmp_path / "ws")
    assert run.result["status"] == "completed", run.result["error_message"]
    assert [item["feedback_id"] for item in run.analysis["items"]] == ["f1", "f2", "f3"]
    assert run.analysis["failed_batches"] == []
    assert run.result["warnings"] == []


def _many_rows(count: int, marker_rows: range) -> list[dict[str, str]]:
    rows = generated_rows(count, seed=11)
    for position in marker_rows:
        rows[position]["text"] += " FAIL-THIS-BATCH"
    return rows


def _run_over_http(csv_path: Path, workspace: Path, server: OfflineChatServer, *extra: str) -> Any:
    return CliRunner().invoke(
        cli,
        [
            "run",
            "feedback-analysis",
            str(csv_path),
            "--model",
            "openai:offline-over-http",
            "--workspace",
            str(workspace),
            *extra,
        ],
        env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local-test"},
    )


def test_a_failed_batch_is_recorded_reported_live_and_named_in_the_verdict(
    tmp_path: Path,
) -> None:
    # The offline analyst asks for batches of 200 rows: rows 200-399 make up batch 2.
    rows = _many_rows(600, range(250, 252))
    csv_path = write_csv(tmp_path / "three_batches.csv", rows)
    with OfflineChatServer(fail_marker="FAIL-THIS-BATCH") as server:
        result = _run_over_http(csv_path, tmp_path / "ws", server)
    output = result.output  # progress (stderr) and verdict (stdout)
    assert result.exit_code == 0, output
    assert server.broken_replies == 2  # the batch and its one retry
    analysis = json.loads((tmp_path / "ws" / ANALYSIS).read_text(encoding="utf-8"))
    [entry] = analysis["failed_batches"]
    assert entry["batch"] == 2 and entry["offset"] == 200 and entry["rows"] == 200
    assert entry["feedback_ids"] == [row["feedback_id"] for row in rows[200:400]]
    assert "submit_batch_analysis" in entry["reason"]
    analysed = [item["feedback_id"] for item in analysis["items"]]
    assert analysed == [row["feedback_id"] for row in rows[:200] + rows[400:]]
    # live progress (not a TTY here: one line per batch) and the verdict both say so
    assert "batch 2/3: 0 of 200 rows analysed; failed: no submit_batch_analysis" in output
    assert "COMPLETED" in output
    assert "Warning: 200 rows were not analysed: 1 of 3 batches failed (batch 2)" in output
    record = json.loads((tmp_path / "ws" / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "completed"
    assert record["warnings"] and "1 of 3 batches failed" in record["warnings"][0]
    events = list(read_events(tmp_path / "ws" / "runtime" / "events.jsonl"))
    types = [event["type"] for event in events]
    assert types.count("batch.failed") == 1 and types.count("batch.completed") == 2
    assert "run.warned" in types
    for name in (BACKLOG, REPORT):
        assert (tmp_path / "ws" / name).is_file()
    shown = CliRunner().invoke(cli, ["show", str(tmp_path / "ws"), "--no-events"])
    assert shown.exit_code == 0, shown.output
    assert "Warning: 200 rows were not analysed" in " ".join(shown.output.split())


def test_when_every_batch_fails_the_run_fails_with_the_cause(tmp_path: Path) -> None:
    rows = _many_rows(30, range(30))
    csv_path = write_csv(tmp_path / "all_broken.csv", rows)
    with OfflineChatServer(fail_marker="FAIL-THIS-BATCH") as server:
        result = _run_over_http(csv_path, tmp_path / "ws", server, "--json")
    payload = json.loads(result.stdout)
    assert result.exit_code == 1, result.stdout
    assert payload["status"] == "failed"
    assert payload["error_message"].startswith("analysis failed: every batch failed (1 of 1;")
    assert "30 rows not analysed" in payload["error_message"]
    assert "submit_batch_analysis" in payload["error_message"]
    # what was written before the failure stays: every row is in failed_batches
    analysis = json.loads((tmp_path / "ws" / ANALYSIS).read_text(encoding="utf-8"))
    assert analysis["items"] == []
    assert analysis["failed_batches"][0]["feedback_ids"] == [row["feedback_id"] for row in rows]
    plan = {step["id"]: step["status"] for step in payload_record(tmp_path / "ws")["plan"]}
    assert plan["analyze_feedback"] == "failed"


def payload_record(workspace: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(
        (workspace / "runtime" / "run.json").read_text(encoding="utf-8")
    )
    return record


def _old_batch_message(
    rows: list[dict[str, str]], extra: dict[str, Any], row_extras: list[dict[str, Any] | None]
) -> str:
    """`runlens.batch_message` as it was, with `json.dumps` making an encoder per value."""
    from runlens.batch_protocol import MAX_METADATA_CHARS, MAX_TEXT_CHARS
    from runlens.validation.cuts import cut_text

    entries = []
    for position, row in enumerate(rows):
        text = row["text"]
        shown = cut_text(text, MAX_TEXT_CHARS)
        entry: dict[str, Any] = {"feedback_id": row["id"], "text": shown}
        if len(shown) < len(text):
            entry["text_cut"] = True
        metadata = {
            key: value
            for key, value in row.items()
            if key not in ("id", "text") and value and len(value) <= MAX_METADATA_CHARS
        }
        if metadata:
            entry["metadata"] = metadata
        added = row_extras[position] if position < len(row_extras) else None
        if added:
            entry.update(added)
        entries.append(json.dumps(entry, ensure_ascii=False))
    head = [f'"task": {json.dumps("Analyse.", ensure_ascii=False)}']
    head.extend(
        f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in extra.items()
    )
    body = ",\n".join(entries)
    return "{" + ",\n".join(head) + f',\n"rows": [\n{body}\n]}}'


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cells=st.lists(st.tuples(cell_text, cell_text, cell_text), min_size=1, max_size=8),
    hints=st.lists(st.one_of(st.none(), cell_text), max_size=8),
    themes=st.lists(st.dictionaries(cell_text, cell_text, max_size=3), max_size=3),
)
def test_batch_message_and_artifact_are_the_earlier_encodings(
    cells: list[tuple[str, str, str]], hints: list[str | None], themes: list[dict[str, str]]
) -> None:
    """The message and the artifact are byte for byte what encoding each value with
    `json.dumps(value, ensure_ascii=False)` gave."""
    from runlens.batch_protocol import artifact_json
    from runlens.batch_protocol import batch_message as core_batch_message

    rows = [
        {"id": f"r{n}", "text": text * (1 + 4000 // max(1, len(text)) * (n % 2)), "c": c, "d": d}
        for n, (text, c, d) in enumerate(cells)
    ]
    extras = [{"theme_hint": hint} if hint else None for hint in hints]
    assert core_batch_message(
        rows,
        "id",
        "text",
        task="Analyse.",
        id_key="feedback_id",
        extra={"themes": themes},
        row_extras=extras,
    ) == _old_batch_message(rows, {"themes": themes}, extras)
    items: list[Any] = [*rows, *themes, "text", 1.5, None, [hints]]
    old = b"".join(
        (
            b'{"items": [\n',
            b",\n".join(json.dumps(v, ensure_ascii=False).encode("utf-8") for v in items),
            b'\n],\n"failed_batches": []}\n',
        )
    )
    assert artifact_json(items, []) == old
