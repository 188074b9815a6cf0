"""Theme discovery: themes from the data, named in words, few, deterministic, bounded."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from runlens_feedback.discovery import (
    GENERIC_SENTIMENT,
    MAX_THEMES,
    OTHER,
    ThemeCatalogue,
    discover_themes,
    terms,
    theme_name,
)

from .corpus import mixed_corpus

Mixed = tuple[list[str], list[str], ThemeCatalogue]


@pytest.fixture(scope="module")
def mixed() -> Mixed:
    texts, domains = mixed_corpus()
    return texts, domains, discover_themes(texts)


def _domains(catalogue: ThemeCatalogue, domains: list[str]) -> dict[str, Counter[str]]:
    found: dict[str, Counter[str]] = {}
    for key, domain in zip(catalogue.assignments, domains, strict=True):
        found.setdefault(key, Counter())[domain] += 1
    return found


def test_each_domain_gets_themes_of_its_own(mixed: Mixed) -> None:
    texts, domains, catalogue = mixed
    assert len(catalogue.assignments) == len(texts)
    by_theme = _domains(catalogue, domains)
    for theme in catalogue.themes:
        rows = by_theme[theme.key].most_common(1)[0][1]
        assert rows / theme.rows >= 0.9, (theme.name, by_theme[theme.key])
    covered = {by_theme[t.key].most_common(1)[0][0] for t in catalogue.themes}
    assert covered == set(domains)
    assert catalogue.other_rows <= 0.1 * len(texts)


def test_names_are_words_a_pm_reads(mixed: Mixed) -> None:
    _, domains, catalogue = mixed
    by_theme = _domains(catalogue, domains)
    names: dict[str, list[str]] = {
        by_theme[t.key].most_common(1)[0][0]: [] for t in catalogue.themes
    }
    for theme in catalogue.themes:
        names[by_theme[theme.key].most_common(1)[0][0]].append(theme.name.casefold())
    vocabulary = {
        "restaurant": ("waiter", "menu", "server", "hostess", "dish", "food", "reservation"),
        "phone": ("battery", "charging", "camera", "phone", "screen"),
        "book": ("character", "author", "plot", "chapter", "book", "novel"),
        "software": ("server", "dashboard", "upload", "page", "workspace"),
        "hotel": ("前台", "房间", "早餐", "酒店"),
        "delivery": ("快递", "物流", "包装", "送货", "客服"),
    }
    for domain, words in vocabulary.items():
        assert any(word in name for name in names[domain] for word in words), names[domain]
    for theme in catalogue.themes:
        # a word or a phrase of at most three words, never two words set side by side
        assert " · " not in theme.name
        assert len(theme.name.split()) <= 3, theme.name
        assert 1 <= len(theme.keywords) <= 8
        assert not set(theme.keywords) & GENERIC_SENTIMENT


def test_word_sense_comes_from_the_rest_of_the_row(mixed: Mixed) -> None:
    """A waiter "server" and a web "server" land in different themes."""
    texts, domains, catalogue = mixed
    by_domain: dict[str, set[str]] = {}
    for text, domain, key in zip(texts, domains, catalogue.assignments, strict=True):
        if "server" in text.lower() and key != OTHER:
            by_domain.setdefault(domain, set()).add(key)
    assert by_domain["restaurant"] and by_domain["software"]
    assert not by_domain["restaurant"] & by_domain["software"]


def test_at_most_fifteen_themes_and_other_is_never_a_theme(mixed: Mixed) -> None:
    texts, _, catalogue = mixed
    assert 1 <= len(catalogue.themes) <= MAX_THEMES
    keys = [t.key for t in catalogue.themes]
    assert OTHER not in keys and len(set(keys)) == len(keys)
    rows = [t.rows for t in catalogue.themes]
    assert rows == sorted(rows, reverse=True)
    assert sum(rows) + catalogue.other_rows == len(texts)
    assert Counter(catalogue.assignments) == {
        **{t.key: t.rows for t in catalogue.themes},
        **({OTHER: catalogue.other_rows} if catalogue.other_rows else {}),
    }
    for theme in catalogue.themes:
        assert theme.key == "_".join(theme.name.casefold().split())
        assert theme_name(theme.key) == theme.name


def test_generic_praise_and_complaints_do_not_make_a_theme() -> None:
    """Rows that say only "great" or "terrible" share no topic: they are "other", and the
    biggest theme is a real topic even when they are the majority."""
    generic = ["Great, love it!", "Terrible. Just terrible.", "Awesome!!", "Bad, very bad."]
    topical = [
        "The battery drains overnight and charging the phone takes hours.",
        "The phone battery dies by noon even after charging overnight.",
        "The waiter forgot our order and the pasta arrived cold.",
        "Our waiter never came back and the soup was cold.",
    ]
    texts = generic * 60 + topical * 20
    catalogue = discover_themes(texts)
    assert catalogue.themes
    for key, text in zip(catalogue.assignments, texts, strict=True):
        if text in generic:
            assert key == OTHER
    biggest = catalogue.themes[0]
    assert biggest.rows > 0 and not set(biggest.keywords) & GENERIC_SENTIMENT
    assert catalogue.other_rows > biggest.rows  # "other" is big, yet never a named theme


def test_a_short_row_with_one_rare_topical_word_joins_its_theme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Step 4c: "The sommelier." shares one word, rare in the restaurant rows, with them: its
    cosine stays under the floor, its anchor term places it. Rows without a topical word,
    or whose only word no theme anchors, stay "other"."""
    from runlens_feedback import discovery

    texts, domains = mixed_corpus()
    sommelier = [
        "The sommelier was rude and our waiter forgot the pasta.",
        "Our waiter was slow and the sommelier brought the wrong wine with the steak.",
        "The sommelier and the waiter ignored us, the soup came cold.",
    ]
    probes = ["The sommelier.", "Great!", "太差了", "Terrible, just terrible!!", "The zeppelin."]
    rows = texts + sommelier + probes
    catalogue = discover_themes(rows)
    found = dict(zip(rows[len(texts) :], catalogue.assignments[len(texts) :], strict=True))
    restaurant = {
        key
        for key, counts in _domains(catalogue, domains + ["?"] * 8).items()
        if key != OTHER and counts.most_common(1)[0][0] == "restaurant"
    }
    assert found["The sommelier."] in restaurant
    assert found["The sommelier."] == found[sommelier[0]]
    for probe in probes[1:]:
        assert found[probe] == OTHER, probe

    monkeypatch.setattr(discovery, "ANCHOR_TERMS", 0)  # the topics alone miss it
    monkeypatch.setattr(discovery, "VECTOR_ANCHOR_TERMS", 0)
    without = discover_themes(rows)
    assert without.assignments[len(texts) + len(sommelier)] == OTHER


def test_terms_drop_stopwords_and_sentiment_but_keep_topics() -> None:
    found = terms("The food was great but the waiter was rude, 服务态度很好，菜品不错")
    assert "food" in found and "waiter" in found
    assert not {"great", "the", "was", "rude", "不错", "很好"} & set(found)
    assert any("服务" in term for term in found)
    assert "crash" in terms("The app crashes on start")  # a concrete problem word stays


def test_discovery_is_deterministic(mixed: Mixed) -> None:
    texts, _, catalogue = mixed
    again = discover_themes(list(texts))
    assert again == catalogue
    assert json.dumps(again.describe(), ensure_ascii=False) == json.dumps(
        catalogue.describe(), ensure_ascii=False
    )


@pytest.mark.parametrize("count", [0, 1, 2, 5, 12, 20])
def test_tiny_inputs_still_work(count: int) -> None:
    texts = mixed_corpus(10)[0][:count]
    catalogue = discover_themes(texts)
    assert len(catalogue.assignments) == count
    assert len(catalogue.themes) <= max(1, count // 4)
    known = {t.key for t in catalogue.themes} | {OTHER}
    assert set(catalogue.assignments) <= known
    if count == 1:
        assert catalogue.themes == [] and catalogue.assignments == [OTHER]
        assert catalogue.describe() == [
            {"key": OTHER, "name": "Other (no common theme)", "keywords": [], "rows": 1}
        ]


def test_empty_and_blank_texts_are_other() -> None:
    texts, _ = mixed_corpus(30)
    catalogue = discover_themes(["", "   ", *texts, "!!!"])
    assert catalogue.assignments[0] == catalogue.assignments[1] == OTHER
    assert catalogue.assignments[-1] == OTHER


def test_chinese_only_input() -> None:
    rows = (
        ["快递送货太慢了，包装破损，物流信息不更新。", "物流三天才到，快递包装压坏了。"] * 15
        + ["客服态度很差，退款一直不处理。", "客服不回复，退款申请被拒绝。"] * 15
        + ["屏幕亮度太低，电池续航只有半天。", "电池不耐用，屏幕有亮点。"] * 15
    )
    catalogue = discover_themes(rows)
    assert 2 <= len(catalogue.themes) <= MAX_THEMES
    names = " ".join(t.name for t in catalogue.themes)
    for word in ("快递", "客服", "电池"):
        assert word in names or any(word in k for t in catalogue.themes for k in t.keywords)
    for theme in catalogue.themes:
        assert all("\u4e00" <= ch <= "\u9fff" or ch in " ·" for ch in theme.name)


def test_describe_is_compact_json(mixed: Mixed) -> None:
    _, _, catalogue = mixed
    described = catalogue.describe()
    assert [d["key"] for d in described[: len(catalogue.themes)]] == [
        t.key for t in catalogue.themes
    ]
    for entry in described:
        assert set(entry) == {"key", "name", "keywords", "rows"}
        assert len(entry["keywords"]) <= 8
    assert len(json.dumps(described, ensure_ascii=False)) < 4000


def test_a_hundred_thousand_rows_are_assigned() -> None:
    """Fitted on a bounded sample, every row assigned in chunks (not timed here)."""
    texts, _ = mixed_corpus(200)
    many = [f"{text} #{n % 89}" for n, text in enumerate(texts * (100_000 // len(texts) + 1))]
    many = many[:100_000]
    catalogue = discover_themes(many)
    assert len(catalogue.assignments) == 100_000
    assert 1 <= len(catalogue.themes) <= MAX_THEMES
    assert sum(t.rows for t in catalogue.themes) + catalogue.other_rows == 100_000


def _mojibake(text: str, encoding: str) -> str:
    """What an export's text looks like when its UTF-8 bytes are read in `encoding`."""
    return text.encode("utf-8").decode(encoding, "replace")


def test_junk_rows_are_never_a_theme() -> None:
    """Mojibake (UTF-8 read as cp1252 or GBK, replacement characters) and a review form's bare
    labels ("缺点：", "Cons:") are "other", however many of them repeat, while the topics of
    the same file still get their themes."""
    topical = [
        "导出周报太慢了，每周五导出都要等三分钟。",
        "每次导出周报都要等好几分钟，效率太低。",
        "客服响应很快，十分钟就解决了问题。",
        "客服态度很好，工单当天就有人回复。",
    ]
    wrecked = [
        _mojibake("导出周报太慢了，每周五都要等。", "cp1252"),
        _mojibake("客服态度很好，工单当天回复。", "cp1252"),
        _mojibake("导出的报表是乱码，很麻烦", "gbk"),
        "锟斤拷锟斤拷烫烫烫",
        "导出\ufffd\ufffd\ufffd失败",
    ]
    labels = ["缺点：", "优点：", "Cons:", "Pros: ", "缺点：无"]
    texts = topical * 15 + wrecked * 12 + labels * 12
    catalogue = discover_themes(texts)
    assert catalogue.themes, "the topical rows still make themes"
    for key, text in zip(catalogue.assignments, texts, strict=True):
        if text in wrecked or text in labels:
            assert key == OTHER, (text, key)
    for theme in catalogue.themes:
        assert not {"缺点", "优点", "con", "pro"} & set(theme.keywords), theme
        assert all(ch.isascii() or ch == "·" or "\u4e00" <= ch <= "\u9fff" for ch in theme.name)


def test_no_theme_is_named_by_a_word_the_report_labels_a_figure_with() -> None:
    # "严重" named a theme of written reviews, and the report's "严重 4" was then read as the
    # critical-severity count: the figure labels are never a name.
    from runlens_feedback.discovery import _measure_words

    assert {"严重", "negative", "row"} <= _measure_words()
    english = [f"Case {n}: the leak is critical, critical. Critical negative." for n in range(12)]
    english += [f"Case {n}: battery drains, battery hot" for n in range(12)]
    chinese = [f"第{n}台：漏光很严重，严重！" for n in range(12)]
    chinese += [f"第{n}块：电池续航很短，电池发热" for n in range(12)]
    for texts in (english, chinese):
        catalogue = discover_themes(texts)
        assert catalogue.themes
        for theme in catalogue.themes:
            assert theme.name, theme
            assert theme.name.casefold() not in _measure_words(), theme.name
            assert theme.name not in ("严重严重", "Critical critical"), "a word twice is no phrase"


def test_no_phrase_spans_punctuation() -> None:
    # "菜有点咸，上菜太慢了" named a theme "有点咸上菜": two clauses are not one phrase.
    assert "有点咸上菜" not in terms("菜有点咸，上菜太慢了")
    assert "battery life" not in terms("The battery, life is short.")
    assert "battery life" in terms("Battery life is short.")
    assert "服务态度" in terms("服务态度很差")
