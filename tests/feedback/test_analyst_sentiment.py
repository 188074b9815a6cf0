"""Sentiment, severity and theme rules on sentences whose answer is obvious."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from importlib.resources import files

import pytest

from runlens_feedback.analyst import analyze_rows, analyze_text
from runlens_feedback.analyst.document import parse
from runlens_feedback.analyst.labels import Lang
from runlens_feedback.analyst.sentiment import lexicon_score
from runlens_feedback.analyst.sentiment_model import load_model


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


def _lexicon_score(text: str) -> float:
    doc = parse(text)
    return lexicon_score(text, doc.lang, list(doc.clauses), [list(u) for u in doc.units]).score


def test_intensifier_strengthens_the_lexicon_score() -> None:
    assert _lexicon_score("导出非常慢。") < _lexicon_score("导出慢。") < 0
    assert _lexicon_score("The export is very slow.") < _lexicon_score("The export is slow.") < 0
    assert analyze_text("a", "导出非常慢。")["sentiment_score"] < 0


@pytest.mark.parametrize(
    "text",
    [
        # Restaurants, books, hotels, devices: domains beyond software feedback.
        "The waiter was friendly and the pasta was delicious.",
        "Lovely little hotel, spotless room and a great breakfast.",
        "This novel kept me up all night, beautifully written.",
        "Battery easily lasts two days, I'm impressed.",
        "Worth every penny.",
        "这家店的牛肉面汤头浓郁，分量十足，下次还来。",
        "房间宽敞明亮，前台小姐姐很耐心。",
        "这本小说文笔细腻，情节引人入胜。",
        "耳机戴着很舒服，音质也清楚。",
    ],
)
def test_praise_in_any_domain_is_positive(text: str) -> None:
    assert label(text) == "positive"


@pytest.mark.parametrize(
    "text",
    [
        "The soup was cold and the waiter ignored us for twenty minutes.",
        "Room smelled of smoke and the shower barely worked.",
        "I gave up on this book after fifty pages, dull and repetitive.",
        "Stopped charging after a week, total waste of money.",
        "汤是凉的，服务员半天不理人。",
        "房间一股烟味，热水也时有时无。",
        "看了几十页就看不下去了，又拖沓又重复。",
        "用了一个星期就充不进电，白花钱。",
    ],
)
def test_complaints_in_any_domain_are_negative(text: str) -> None:
    assert label(text) == "negative"


@pytest.mark.parametrize(
    "text",
    [
        "Absolutely loved it.",
        "Terrible customer service.",
        "Not worth the price.",
        "Best pizza in town!",
        "太难用了。",
        "非常好，推荐！",
        "不值这个价。",
        "一般般，不会再买了。",
    ],
)
def test_clearly_polar_text_is_never_neutral(text: str) -> None:
    assert label(text) in {"positive", "negative"}


@pytest.mark.parametrize(
    ("positive", "negative"),
    [
        ("The staff were helpful.", "The staff were not helpful."),
        ("I would recommend this hotel.", "I would never recommend this hotel."),
        ("服务很周到。", "服务不周到。"),
        ("这次买得很满意。", "这次买得不满意。"),
    ],
)
def test_negation_flips_the_label(positive: str, negative: str) -> None:
    assert label(positive) == "positive"
    assert label(negative) == "negative"


@pytest.mark.parametrize(
    "text",
    [
        "How do I export a report to CSV?",
        "Can I use one licence on two laptops?",
        "Is there a dark mode on Android?",
        "请问这个支持导出PDF吗？",
        "会员可以开发票吗？",
        "Please add an option to schedule exports.",
        "建议增加按部门筛选的功能。",
    ],
)
def test_questions_and_requests_without_sentiment_are_neutral(text: str) -> None:
    assert label(text) == "neutral"


@pytest.mark.parametrize("text", ["!!!", "12345", "zzzz qqqq", "……"])
def test_text_without_any_known_word_is_neutral_with_score_zero(text: str) -> None:
    item = analyze_text("x", text)
    assert (item["sentiment"], item["sentiment_score"]) == ("neutral", 0.0)


def test_the_result_is_deterministic_and_row_independent() -> None:
    texts = [
        "The charts look great, but exporting them is painfully slow.",
        "虽然价格有点贵，但是质量真的很好。",
        "How do I export a report?",
        "Stopped charging after a week.",
    ]
    rows = [{"feedback_id": str(i), "text": t} for i, t in enumerate(texts)]
    first = analyze_rows(rows)
    again = analyze_rows(rows)
    backwards = analyze_rows(list(reversed(rows)))
    assert first == again
    assert first == list(reversed(backwards))
    code = (
        "import json\n"
        "from runlens_feedback.analyst import analyze_rows\n"
        f"print(json.dumps(analyze_rows({rows!r}), sort_keys=True))\n"
    )
    expected = json.loads(json.dumps(first, sort_keys=True))
    for seed in ("1", "2"):  # string hashing differs between these processes
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        assert json.loads(done.stdout) == expected


def test_the_probability_agrees_with_the_score() -> None:
    doc = parse("The room was clean and the staff were lovely.")
    assert doc.sentiment.score > 0
    assert 0.5 < doc.sentiment.probability <= 1.0
    doc = parse("房间很脏，服务也差。")
    assert doc.sentiment.score < 0
    assert 0.0 <= doc.sentiment.probability < 0.5


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_shipped_weights_load_and_are_small(lang: Lang) -> None:
    path = files("runlens_feedback.analyst.lexicon").joinpath(f"sentiment_model_{lang}.txt")
    assert len(path.read_bytes()) < 400_000
    model = load_model(lang)
    assert 1_000 <= len(model.weights) <= 20_000
    assert all(math.isfinite(w) for w in model.weights.values())
    # The lexicon's evidence points the expected way, and the neutral margin is sane.
    assert model.lex_pos > 0 > model.lex_neg
    assert 0 < model.neutral_margin < 3


def test_inference_needs_neither_scikit_learn_nor_numpy() -> None:
    code = (
        "import sys\n"
        "from runlens_feedback.analyst import analyze_text\n"
        "analyze_text('a', 'Great food.'); analyze_text('b', '很好吃。')\n"
        "print(sorted(m for m in ('sklearn', 'numpy', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


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
