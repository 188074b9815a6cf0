"""analyze_rows: invariants on the sample, on generated rows and on edge cases."""

from __future__ import annotations

import csv
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runlens_feedback.analyst import SENTIMENTS, SEVERITIES, analyze_rows

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
KEYS = {
    "feedback_id",
    "sentiment",
    "severity",
    "theme",
    "pain_point",
    "evidence_text",
    "suggested_action",
    "language",
}


def sample_rows() -> list[dict[str, str]]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def assert_item_invariants(row: dict[str, str], item: dict[str, Any]) -> None:
    text = row["text"]
    assert item.keys() >= KEYS
    assert item["feedback_id"] == row["feedback_id"]
    assert item["sentiment"] in SENTIMENTS
    assert item["severity"] in SEVERITIES
    assert item["language"] in ("zh", "en")
    assert isinstance(item["theme"], str) and item["theme"]
    assert isinstance(item["pain_point"], str) and item["pain_point"]
    assert isinstance(item["suggested_action"], str) and item["suggested_action"]
    assert item["evidence_text"] in text
    if text.strip():
        assert item["evidence_text"].strip()
        assert item["evidence_text"] == item["evidence_text"].strip()


def test_sample_file_has_the_documented_shape() -> None:
    rows = sample_rows()
    assert 80 <= len(rows) <= 100
    assert list(rows[0]) == [
        "feedback_id",
        "text",
        "channel",
        "created_at",
        "rating",
        "user_segment",
    ]
    assert rows[0]["feedback_id"] == "fb_001"
    assert len({row["feedback_id"] for row in rows}) == len(rows)
    assert any("\n" in row["text"] for row in rows)
    assert any("," in row["text"] for row in rows)
    assert not SAMPLE.read_bytes().startswith(b"\xef\xbb\xbf")


def test_sample_items_hold_every_invariant() -> None:
    rows = sample_rows()
    items = analyze_rows(rows)
    assert [item["feedback_id"] for item in items] == [row["feedback_id"] for row in rows]
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)


def test_sample_languages_are_detected() -> None:
    items = analyze_rows(sample_rows())
    languages = {item["language"] for item in items}
    assert languages == {"zh", "en"}


def test_analysis_is_deterministic() -> None:
    rows = sample_rows()
    assert analyze_rows(rows) == analyze_rows([dict(row) for row in rows])


def test_each_row_is_analysed_independently() -> None:
    rows = sample_rows()
    together = analyze_rows(rows)
    alone = [analyze_rows([row])[0] for row in rows[::7]]
    assert alone == together[::7]


def test_single_row_input() -> None:
    items = analyze_rows(
        [{"feedback_id": "only", "text": "导出周报太慢了，我们团队每周五都要导出。"}]
    )
    assert len(items) == 1
    assert items[0]["feedback_id"] == "only"
    assert items[0]["sentiment"] == "negative"


def test_empty_input() -> None:
    assert analyze_rows([]) == []


def test_custom_columns_and_any_id_format() -> None:
    rows = [{"ID": "ticket #42/α", "body": "The export keeps failing with an error."}]
    items = analyze_rows(rows, id_column="ID", text_column="body")
    assert items[0]["feedback_id"] == "ticket #42/α"
    assert items[0]["evidence_text"] in rows[0]["body"]


def test_missing_id_column_is_an_error() -> None:
    with pytest.raises(KeyError, match="feedback_id"):
        analyze_rows([{"text": "hello"}])


@pytest.mark.parametrize("text", ["", "   ", "\n\t  \n"])
def test_whitespace_only_rows_are_neutral_and_flagged(text: str) -> None:
    (item,) = analyze_rows([{"feedback_id": "blank", "text": text}])
    assert item["sentiment"] == "neutral"
    assert item["severity"] == "low"
    assert item["evidence_text"] == text
    assert item["flags"] == ["empty_text"]


def test_punctuation_only_row_still_quotes_something() -> None:
    (item,) = analyze_rows([{"feedback_id": "p", "text": "  ？！。。。 "}])
    assert item["evidence_text"] == "？！。。。"


def test_english_only_rows() -> None:
    rows = [
        {
            "feedback_id": "e1",
            "text": "Login fails every morning and the whole team is locked out.",
        },
        {"feedback_id": "e2", "text": "Great product, the dashboards are beautiful and fast."},
        {"feedback_id": "e3", "text": "We were charged twice this month. Please refund us."},
    ]
    items = analyze_rows(rows)
    assert {item["language"] for item in items} == {"en"}
    assert [item["theme"] for item in items] == [
        "login_auth",
        "dashboards_reports",
        "billing_pricing",
    ]
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)


def test_chinese_only_rows() -> None:
    rows = [
        {"feedback_id": "c1", "text": "登录一直失败，提示密码错误，但是密码是对的。"},
        {"feedback_id": "c2", "text": "手机上打开仪表盘经常闪退。"},
        {"feedback_id": "c3", "text": "客服回复很及时，问题很快就解决了，非常满意！"},
    ]
    items = analyze_rows(rows)
    assert {item["language"] for item in items} == {"zh"}
    assert items[0]["theme"] == "login_auth"
    assert items[1]["severity"] in ("high", "critical")
    assert items[2]["sentiment"] == "positive"
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)


def test_unknown_domain_rows_get_themes_and_quotes() -> None:
    rows = [
        {"feedback_id": "r1", "text": "The soup was cold. The bread was stale and we left hungry."},
        {"feedback_id": "r2", "text": "菜品分量太少了，价格还贵，不会再来了。"},
        {"feedback_id": "r3", "text": "The tiramisu was delicious and the terrace is lovely."},
        {"feedback_id": "r4", "text": "The parking lot is tiny, we circled for twenty minutes."},
    ]
    items = analyze_rows(rows)
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)
    assert items[0]["sentiment"] == "negative"
    assert items[0]["theme"].startswith("topic:")
    assert items[1]["sentiment"] == "negative"
    assert items[2]["theme"] == "praise"


def test_topic_keyword_groups_similar_unknown_rows() -> None:
    rows = [
        {"feedback_id": "a", "text": "The croissant was burnt."},
        {"feedback_id": "b", "text": "Our croissants were stale again."},
    ]
    themes = {item["theme"] for item in analyze_rows(rows)}
    assert themes == {"topic:croissant"}


def test_evidence_prefers_the_complaining_clause() -> None:
    text = "我们是一家做零售的公司，用了半年了，导出周报太慢了，每次都要等三分钟。"
    (item,) = analyze_rows([{"feedback_id": "x", "text": text}])
    assert "太慢" in item["evidence_text"]
    assert item["evidence_text"] != text


def test_evidence_never_spans_lines_when_widened() -> None:
    text = "很好\n但是导出失败了，数据也丢了，客服不理人"
    (item,) = analyze_rows([{"feedback_id": "x", "text": text}])
    assert item["evidence_text"] in text
    assert "\n" not in item["evidence_text"]


_WORDS = [
    "导出",
    "太慢了",
    "很好用",
    "不",
    "没有",
    "但是",
    "崩溃",
    "登录",
    "失败",
    "数据丢失",
    "希望",
    "export",
    "slow",
    "not",
    "but",
    "great",
    "crash",
    "login",
    "never",
    "very",
    "refund",
]
_PUNCT = ["，", "。", "！", "？", ",", ".", "!", "?", ";", "\n", " ", "  ", "\t", "…", "3.5"]
_texts = st.one_of(
    st.lists(st.sampled_from(_WORDS + _PUNCT), max_size=30).map("".join),
    st.text(alphabet=string.printable + "导出慢好差，。！？\u3000", max_size=80),
    st.text(max_size=60),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_texts, min_size=1, max_size=5), ids=st.data())
def test_generated_rows_hold_every_invariant(texts: list[str], ids: st.DataObject) -> None:
    rows = [
        {"feedback_id": ids.draw(st.text(min_size=1, max_size=12)), "text": text} for text in texts
    ]
    items = analyze_rows(rows)
    assert len(items) == len(rows)
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)
    assert analyze_rows(rows) == items


# -- discovered themes (theme_hint) and word sense -------------------------------------------


def test_a_theme_hint_is_the_rows_theme_and_names_its_pain_point() -> None:
    rows = [
        {"feedback_id": "h1", "text": "The server was rude and the soup was cold.",
         "theme_hint": "waiter_·_soup"},
        {"feedback_id": "h2", "text": "这本书写得很好，内容丰富，值得一读。",
         "theme_hint": "本书_·_内容"},
        {"feedback_id": "h3", "text": "The page loads slowly.", "theme_hint": "other"},
        {"feedback_id": "h4", "text": "The app crashes at start."},
        {"feedback_id": "h5", "text": "Parking is impossible and the lot is filthy.",
         "theme_hint": "other"},
    ]  # fmt: skip
    items = analyze_rows(rows)
    for row, item in zip(rows, items, strict=True):
        assert_item_invariants(row, item)
    first, second, third, fourth, fifth = items
    assert first["theme"] == "waiter_·_soup"
    assert first["pain_point"].startswith("Waiter · soup: ")
    assert "Waiter · soup" in first["suggested_action"]
    assert "Billing" not in first["pain_point"]
    # positive rows are praise of their theme, never a crash or error
    assert second["sentiment"] == "positive" and second["severity"] == "low"
    assert second["theme"] == "本书_·_内容"
    assert second["pain_point"].startswith("正面评价（本书 · 内容）")
    assert "崩溃" not in second["pain_point"] and "crash" not in second["suggested_action"]
    # "other": the keyword table when the row names a table theme in its sense, else other
    assert third["theme"] == "performance"
    assert fourth["theme"] == "stability"  # no hint: the keyword table
    assert fifth["theme"] == "other"
    assert fifth["pain_point"].startswith("About “parking”: ")


def test_keyword_fallback_takes_word_sense_from_the_row() -> None:
    rows = [
        {"feedback_id": "s1", "text": "The slow-motion fight scene dragged on and bored me."},
        {"feedback_id": "s2", "text": "The server did a terrible job with our table."},
        {"feedback_id": "s3", "text": "The website is so slow, every page takes a minute."},
        {"feedback_id": "s4", "text": "The server keeps crashing after the update."},
    ]
    slow_motion, waiter, website, outage = (item["theme"] for item in analyze_rows(rows))
    assert slow_motion not in ("performance", "stability")
    assert waiter not in ("billing_pricing", "stability", "performance")
    assert website == "performance"
    assert outage == "stability"
