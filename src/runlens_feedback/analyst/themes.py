"""Theme assignment: the keyword table first, then a keyword of the row's own.

A row's theme is the table theme with the most keyword matches in the clauses that carry the
row's sentiment (its negative clauses for a complaint, its positive ones for praise; all clauses
when those match nothing). Ties go to a `problem` theme (slow, crash, wrong charge) over an
`area` theme (export, dashboards, mobile), then to the theme mentioned first in the text, then
to the one listed first in `lexicon/themes.json`. `feature_request` is only given to rows that
are not positive; a neutral row with a request cue (希望, 建议, would like) is a feature request.
A row that matches no theme gets `praise` when it is positive, else `topic:<keyword>` from its
most salient noun-like word (stopwords and sentiment words removed), so feedback on unknown
domains still groups; `topic:general` when there is no such word.

Word sense: the table is written for software products, and many of its keywords have an
everyday sense too ("slow-motion", "the server", "the bill", 卡 in 银行卡). Those keywords
(`AMBIGUOUS_KEYWORDS`) count for a software theme only when the row is about software: it
has a software context word (`SOFTWARE_CONTEXT`: app, website, page, 软件, 页面 ...) or an
unambiguous keyword of a software theme (export, login, dashboard, 闪退 ...). Otherwise
they are ignored, so "The waiter was slow and the bill was wrong" is service, not
performance or billing accuracy; money words (price, refund, 价格) are billing in any
domain. The themes of everyday goods and services (`support_service`,
`delivery`, `product_quality`, `feature_request`) take every keyword.

This table is the fallback: a row that carries a `theme_hint` (the run's discovered themes,
`runlens_feedback.discovery`) takes the hint instead (`rows.analyze_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from runlens_feedback.analyst.document import Document
from runlens_feedback.analyst.labels import FEATURE_REQUEST, PRAISE_THEME, TOPIC_PREFIX
from runlens_feedback.analyst.matching import KeywordSet, compile_keywords
from runlens_feedback.analyst.resources import lexicon, stopwords, themes
from runlens_feedback.analyst.tokens import cjk_nouns

_DETERMINERS = frozenset(
    [
        "the",
        "a",
        "an",
        "my",
        "our",
        "your",
        "their",
        "this",
        "that",
        "these",
        "those",
        "his",
        "her",
        "its",
        "every",
        "each",
        "no",
        "any",
    ]
)
_GENERAL = "general"


@dataclass(frozen=True)
class ThemeChoice:
    """The theme of one row; `keyword` is set for `topic:` themes and "other";
    `discovered` marks a theme of the run's discovered catalogue (a `theme_hint`)."""

    key: str
    keyword: str | None = None
    discovered: bool = False


#: Themes that take every keyword whatever the row is about (not software-specific).
EVERYDAY_THEMES = frozenset(
    ["support_service", "delivery", "product_quality", "feature_request", PRAISE_THEME]
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Keywords of software themes with an everyday sense: they need a software context.
AMBIGUOUS_KEYWORDS = _words(
    """
    slow* lag* speed waiting wait minutes forever loading performance crash* freez* froze
    broken down 500 error* hangs bug* glitch* unstable charg* plan plans seat* tier* wrong
    incorrect inaccurate
    accurate accuracy totals figures duplicate* report reports reporting chart* graph*
    filter* drill* pivot* access share sharing shared role* admin* editor* viewer* push
    alert* email* reminder* spam* digest* mobile phone tablet iphone ipad android ios design
    layout menu* button* font* interface navigation navigate workflow intuitive confusing
    clunky cluttered security secure leak* breach* import* sync* database warehouse print*
    download* session* guide* training examples notify
    慢 卡 等了 等待 半天 分钟 要等 速度 效率 性能 延迟 错误 出错 异常 故障 挂了 不稳定
    丢失 准确 计算 合计 误差 报告 指标 分享 共享 访问 可见 消息 提醒
    手机 苹果 平板 设计 复杂 布局 菜单 字体 步骤 繁琐 上手 安全 打印 下载 同步 导入 说明 培训
    """
)
#: Themes whose unambiguous keywords (refund, price, 价格) are about money in any domain:
#: they do not make a row about software.
_MONEY_THEMES = frozenset(["billing_pricing"])
#: Words that make a row about software.
SOFTWARE_CONTEXT = (
    "app",
    "apps",
    "software",
    "website",
    "site",
    "web",
    "page*",
    "browser",
    "account*",
    "update*",
    "version*",
    "feature*",
    "settings",
    "click*",
    "screen*",
    "user*",
    "data",
    "tool",
    "platform",
    "server*",
    "upload*",
    "install*",
    "软件",
    "应用",
    "系统",
    "网站",
    "网页",
    "页面",
    "版本",
    "更新",
    "功能",
    "界面",
    "数据",
    "后台",
    "平台",
    "服务器",
    "客户端",
    "APP",
    "App",
)


@cache
def _sense_patterns() -> tuple[tuple[str, KeywordSet, KeywordSet | None], ...]:
    """(theme, keywords that always count, keywords that need a software context)."""
    result: list[tuple[str, KeywordSet, KeywordSet | None]] = []
    for spec in themes():
        keywords = (*spec.keywords_en, *spec.keywords_zh)
        if spec.key in EVERYDAY_THEMES:
            result.append((spec.key, compile_keywords(keywords), None))
            continue
        strong = [k for k in keywords if k not in AMBIGUOUS_KEYWORDS]
        weak = [k for k in keywords if k in AMBIGUOUS_KEYWORDS]
        result.append((spec.key, compile_keywords(strong), compile_keywords(weak)))
    return tuple(result)


@cache
def _senses() -> dict[str, tuple[KeywordSet, KeywordSet | None]]:
    return {key: (strong, weak) for key, strong, weak in _sense_patterns()}


@cache
def _software_context() -> KeywordSet:
    strong = [
        k
        for spec in themes()
        if spec.key not in EVERYDAY_THEMES and spec.key not in _MONEY_THEMES
        for k in (*spec.keywords_en, *spec.keywords_zh)
        if k not in AMBIGUOUS_KEYWORDS
    ]
    return compile_keywords((*SOFTWARE_CONTEXT, *strong))


def about_software(doc: Document) -> bool:
    """Whether the row names software (see the module docstring)."""
    context = _software_context()
    clauses = range(len(doc.clauses))
    return any(context.count_words(doc.clause_words(i)) for i in clauses)


@cache
def _patterns() -> tuple[tuple[str, KeywordSet], ...]:
    return tuple(
        (spec.key, compile_keywords((*spec.keywords_en, *spec.keywords_zh))) for spec in themes()
    )


@cache
def _keywords(theme_key: str) -> KeywordSet | None:
    return dict(_patterns()).get(theme_key)


def theme_hits(doc: Document, clause_index: int, theme_key: str) -> int:
    """Keyword matches of one theme in one clause."""
    keywords = _keywords(theme_key)
    if keywords is None:
        return 0
    return keywords.count_words(doc.clause_words(clause_index))


def choose_theme(doc: Document, *, unmatched: str | None = None) -> ThemeChoice:
    """The theme of a parsed row (see the module docstring). `unmatched`: the theme of a
    non-positive row that matches no table theme, instead of `topic:<keyword>` (the row's
    keyword is still given)."""
    label = doc.sentiment.label
    positive = label == "positive"
    excluded = {FEATURE_REQUEST, PRAISE_THEME} if positive else {PRAISE_THEME}
    everything = list(range(len(doc.clauses)))
    if label == "neutral" and _matches(doc, FEATURE_REQUEST, everything)[0]:
        return ThemeChoice(FEATURE_REQUEST)
    for clauses in (_focus_clauses(doc), everything):
        best = _best_table_theme(doc, clauses, excluded)
        if best is not None:
            return ThemeChoice(best)
    if positive:
        return ThemeChoice(PRAISE_THEME)
    keyword = salient_keyword(doc)
    if unmatched is not None:
        return ThemeChoice(unmatched, keyword)
    return ThemeChoice(TOPIC_PREFIX + (keyword or _GENERAL), keyword)


def _focus_clauses(doc: Document) -> list[int]:
    sign = 1 if doc.sentiment.label == "positive" else -1
    return [
        index for index in range(len(doc.clauses)) if doc.sentiment.clause_signal(index, sign) > 0
    ]


def _best_table_theme(doc: Document, clauses: list[int], excluded: set[str]) -> str | None:
    ranked = []
    software = about_software(doc)
    senses = _senses()
    for order, spec in enumerate(themes()):
        if spec.key in excluded:
            continue
        strong, weak = senses[spec.key]
        count, first = _scan(doc, strong, clauses)
        if weak is not None and software:
            more, at = _scan(doc, weak, clauses)
            count, first = count + more, min(first, at)
        if count:
            ranked.append((-count, spec.kind != "problem", first, order, spec.key))
    return min(ranked)[-1] if ranked else None


def _matches(doc: Document, theme_key: str, clauses: list[int]) -> tuple[int, int]:
    """(matches of a theme in the clauses, text offset of the first one or len(text))."""
    keywords = _keywords(theme_key)
    if keywords is None:
        return 0, len(doc.text)
    return _scan(doc, keywords, clauses)


def _scan(doc: Document, keywords: KeywordSet, clauses: list[int]) -> tuple[int, int]:
    count, first = 0, len(doc.text)
    for index in clauses:
        found, offset = keywords.scan_words(doc.clause_words(index))
        if found:
            count += found
            first = min(first, doc.clauses[index].start + offset)
    return count, first


def salient_keyword(doc: Document) -> str | None:
    """The first noun-like content word of the row's strongest clause, then of the others."""
    order = sorted(
        range(len(doc.clauses)),
        key=lambda index: (-doc.sentiment.clause_signal(index, 0), index),
    )
    for index in order:
        keyword = _clause_keyword(doc, index)
        if keyword is not None:
            return keyword
    return None


def _clause_keyword(doc: Document, index: int) -> str | None:
    clause = doc.clauses[index]
    if doc.lang == "zh":
        zh = lexicon("zh")
        for word, _ in cjk_nouns(doc.text[clause.start : clause.end]):
            if len(word) >= 2 and word not in stopwords("zh") and word not in zh.valences:
                return word
    return _english_keyword([token.norm for token in doc.tokens[index] if not token.cjk])


def _english_keyword(words: list[str]) -> str | None:
    en = lexicon("en")
    excluded = stopwords("en") | en.modifier_words()
    candidates = [
        (position, word)
        for position, word in enumerate(words)
        if word.isalpha()
        and len(word) >= 3
        and word not in excluded
        and word not in en.valences
        and not word.endswith("ly")
    ]
    after_determiner = [
        word for position, word in candidates if position and words[position - 1] in _DETERMINERS
    ]
    chosen = after_determiner[0] if after_determiner else (candidates[0][1] if candidates else None)
    return _singular(chosen) if chosen else None


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
