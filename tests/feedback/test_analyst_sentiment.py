"""Sentiment, severity and theme rules on sentences whose answer is obvious."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runlens_feedback.analyst import analyze_text


def label(text: str) -> str:
    return str(analyze_text("t", text)["sentiment"])


@pytest.mark.parametrize(
    "text",
    [
        "客服态度很好，问题当天就解决了，非常满意！",
        "界面简洁，操作流畅，强烈推荐。",
        "质量没得说，物超所值。",
        "The new dashboards are excellent and really fast.",
        "I love this tool, it saves our team hours every week.",
        "Not bad at all, actually pretty useful.",
        "没有任何问题，很稳定。",
    ],
)
def test_positive_sentences(text: str) -> None:
    assert label(text) == "positive"


@pytest.mark.parametrize(
    "text",
    [
        "导出周报太慢了，很影响效率。",
        "一点也不好用，非常失望。",
        "登录不了，客服也不回复。",
        "这个功能不太稳定，经常闪退。",
        "The export is painfully slow and keeps crashing.",
        "I would not recommend this product.",
        "It doesn't work and support never answered.",
        "Why does the app always freeze when I open a report?",
    ],
)
def test_negative_sentences(text: str) -> None:
    assert label(text) == "negative"


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        # Praise first, then a complaint after the contrast word: the later clause wins or both
        # sides count.
        ("界面很好看，但是导出太慢了。", {"negative", "mixed"}),
        ("The charts look great, but exporting them is painfully slow.", {"negative", "mixed"}),
        # A concession followed by praise.
        ("虽然价格有点贵，但是质量真的很好。", {"positive", "mixed"}),
        ("It is a bit expensive, but the support team is fantastic.", {"positive", "mixed"}),
    ],
)
def test_contrast(text: str, allowed: set[str]) -> None:
    assert label(text) in allowed


def test_negation_flips_polarity() -> None:
    assert label("这个报表很好用。") == "positive"
    assert label("这个报表不好用。") == "negative"
    assert label("The report is good.") == "positive"
    assert label("The report is not good.") == "negative"


def test_intensifier_strengthens_the_score() -> None:
    plain = analyze_text("a", "导出慢。")["sentiment_score"]
    strong = analyze_text("b", "导出非常慢。")["sentiment_score"]
    assert strong < plain < 0


def test_neutral_request() -> None:
    item = analyze_text("r", "希望能增加定时推送到企业微信的功能。")
    assert item["sentiment"] == "neutral"
    assert item["theme"] == "feature_request"


def test_article_row() -> None:
    text = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
    item = analyze_text("fb_001", text)
    assert item["sentiment"] == "negative"
    assert item["severity"] == "high"
    assert item["theme"] == "performance"
    assert item["language"] == "zh"
    assert "太慢" in item["evidence_text"]
    assert item["evidence_text"] in text


@pytest.mark.parametrize(
    ("text", "severity"),
    [
        ("昨天编辑的仪表盘全部丢失了，太糟糕了。", "critical"),
        ("We were charged twice for the same invoice, this is unacceptable.", "critical"),
        ("App crashes every time I open a report.", "high"),
        ("登不上去，一直转圈，很烦。", "high"),
        ("报表的配色有点难看。", "medium"),
        ("The dashboards look great.", "low"),
    ],
)
def test_severity_rule(text: str, severity: str) -> None:
    assert analyze_text("s", text)["severity"] == severity


def test_praise_is_low_severity_even_with_impact_words() -> None:
    item = analyze_text("p", "Since the update it never crashes, great job!")
    assert item["sentiment"] == "positive"
    assert item["severity"] == "low"


@pytest.mark.parametrize(
    ("text", "theme"),
    [
        ("SSO login fails for half of our users.", "login_auth"),
        ("发票金额和套餐价格对不上，扣费规则看不懂。", "billing_pricing"),
        ("安卓手机上打开就闪退。", "mobile"),
        ("权限设置太复杂了，没法按部门分配。", "permissions"),
        ("The Slack integration stopped posting alerts.", "integrations_api"),
        ("导出Excel经常失败。", "export"),
    ],
)
def test_theme_table(text: str, theme: str) -> None:
    assert analyze_text("t", text)["theme"] == theme


def test_pain_point_is_in_the_row_language() -> None:
    zh = analyze_text("z", "导出太慢了。")
    en = analyze_text("e", "Exports are too slow.")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh["pain_point"])
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in en["pain_point"])
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh["suggested_action"])


def test_jieba_prints_nothing() -> None:
    """A fresh process: jieba's first initialisation must not log or print anything."""
    code = (
        "from runlens_feedback.analyst import analyze_text\n"
        "analyze_text('q', '第一次使用中文分词的时候也不应该输出日志。')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == ""
    assert done.stderr == ""
