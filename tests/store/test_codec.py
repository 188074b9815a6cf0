"""Every value a run records is storable on both engines and reads back as written: U+0000,
lone surrogates, the escape character itself, NaN and Infinity, over-long values, integers
out of range (`runlens.store.codec`)."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from runlens.store import CitationRow, FindingRow, RunStore
from runlens.store.codec import (
    CUT_MARK,
    ESCAPE,
    decode_json,
    encode_json,
    escape_text,
    fit,
    unescape_text,
)

#: Text no engine stores as it is, and text that looks like an escape.
HOSTILE = [
    "a\x00b",
    "\x00",
    "lone \ud800 high",
    "lone \udfff low",
    f"the escape {ESCAPE} itself",
    f"{ESCAPE}0 looks escaped",
    f"{ESCAPE}s0041",
    f"{ESCAPE}fnan",
    "ünïcødé 导出周报 \U0001f600",
    "",
]


@given(st.text(alphabet=st.characters(codec=None, categories=None)))
def test_escaping_round_trips_every_string(text: str) -> None:
    escaped = escape_text(text)
    assert "\x00" not in escaped
    assert not any("\ud800" <= c <= "\udfff" for c in escaped)
    escaped.encode("utf-8")  # no lone surrogate left
    assert unescape_text(escaped) == text


@given(st.text(max_size=30), st.text(max_size=30))
def test_escaping_keeps_substrings(head: str, tail: str) -> None:
    assert escape_text(head + tail) == escape_text(head) + escape_text(tail)


def test_json_round_trips_nan_infinity_and_hostile_keys() -> None:
    value = {
        "a\x00": [float("nan"), float("inf"), float("-inf"), 1.5, "x\ud800", None, True],
        f"{ESCAPE}fnan": {"nested\x00": f"{ESCAPE}fnan"},
    }
    back = decode_json(encode_json(value))
    assert math.isnan(back["a\x00"][0])
    assert back["a\x00"][1:] == [float("inf"), float("-inf"), 1.5, "x\ud800", None, True]
    assert back[f"{ESCAPE}fnan"] == {"nested\x00": f"{ESCAPE}fnan"}


def test_an_over_long_value_is_cut_with_a_hash_of_the_whole() -> None:
    one, other = "p" * 300, "p" * 299 + "q"
    assert len(fit(one, 200)) == 200 and CUT_MARK in fit(one, 200)
    assert fit(one, 200) != fit(other, 200)  # distinct values stay distinct
    assert fit(one, 200) == fit(one, 200)
    assert fit("short", 200) == "short"
    # A cut never leaves half an escape behind.
    nul = escape_text("\x00" * 150)
    assert unescape_text(fit(nul, 200)).startswith("\x00" * 80)


def test_hostile_values_reach_the_store_and_read_back_as_written(store: RunStore) -> None:
    for number, text in enumerate(HOSTILE):
        run_id = f"run_{number}"
        store.upsert_run(
            run_id,
            plugin="feedback-analysis",
            model="offline",
            status="running",
            workspace=f"/w/{text}",
            error_message=text,
            input_name=text,
            warnings=[text],
            metrics={text: text, "nan": float("nan"), "big": 2**70},
        )
        store.append_events(
            run_id,
            [{"seq": 1, "ts": text, "type": "model.called", "data": {"text": text, text: 1}}],
        )
        detail = store.get_run(run_id)
        assert detail is not None
        assert (detail.error_message, detail.input_name, detail.warnings) == (text, text, [text])
        assert detail.workspace == f"/w/{text}"
        assert detail.metrics[text] == text and math.isnan(detail.metrics["nan"])
        assert detail.metrics["big"] == 2**70
        [event] = store.events(run_id)
        assert event["ts"] == text and event["data"] == {"text": text, text: 1}


def test_findings_and_citations_with_nul_read_back_as_written(store: RunStore) -> None:
    store.upsert_run("run_nul", plugin="p", model="m", status="running", workspace="/w")
    quote = "slow\x00 export \ud83d"
    finding = FindingRow(
        ordinal=0,
        validator="CitationCheck",
        artifact="artifacts/report.md",
        code="evidence_text_mismatch",
        path="line 3",
        message=f"“{quote}” is not in fb_001",
        details={"quote": quote, "row_id": "fb_001"},
        row_id="fb_001",
        line=3,
        column=2**40,  # out of range: clamped, not refused
    )
    citation = CitationRow(
        ordinal=0,
        artifact="artifacts/report.md",
        location="line 3",
        row_id="fb\x00001",
        quote=quote,
        status="verified",
    )
    store.replace_results("run_nul", [], [finding], [citation])
    detail = store.get_run("run_nul")
    assert detail is not None
    [back] = detail.findings
    assert back.message == finding.message and back.details == finding.details
    assert back.column == 2**31 - 1
    assert store.citations("run_nul", row_id="fb\x00001")[0].quote == quote


def test_long_and_hostile_run_ids_and_names_fit_and_are_found(store: RunStore) -> None:
    long_id = "run_" + "x" * 500
    store.upsert_run(long_id, plugin="p" * 300, model="m" * 900, status="s" * 40, workspace="/w")
    summaries, total = store.list_runs()
    assert total == 1
    [summary] = summaries
    assert len(summary.run_id) == 200 and CUT_MARK in summary.run_id
    assert len(summary.plugin) == 200 and len(summary.model) == 500
    # The same long id names the same row (it cuts the same way), and the cut id finds it.
    store.upsert_run(long_id, error_message="again")
    assert store.resolve_run(summary.run_id) == summary.run_id
    detail = store.get_run(long_id)
    assert detail is not None and detail.error_message == "again"


def test_a_search_finds_text_holding_nul(store: RunStore) -> None:
    store.upsert_run("run_a", plugin="p", model="m", status="failed", workspace="/w",
                     error_message="bad\x00byte")  # fmt: skip
    store.upsert_run("run_b", plugin="p", model="m", status="failed", workspace="/w",
                     error_message="other")  # fmt: skip
    found, total = store.list_runs(query="d\x00b")
    assert total == 1 and found[0].run_id == "run_a"


def test_events_with_a_seq_no_column_holds_are_left_out(store: RunStore) -> None:
    store.upsert_run("run_seq", plugin="p", model="m", status="running", workspace="/w")
    events: list[dict[str, Any]] = [
        {"seq": 1, "ts": "t", "type": "a", "data": {}},
        {"seq": 2**40, "ts": "t", "type": "b", "data": {}},
        {"seq": -1, "ts": "t", "type": "c", "data": {}},
    ]
    assert store.append_events("run_seq", events) == 1
    assert [e["type"] for e in store.events("run_seq")] == ["a"]
