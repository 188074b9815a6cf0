"""Does the input look like product feedback at all? A simple, documented heuristic.

Feedback is written by someone about their own experience: it says "I", "we", "my", asks
for something, or judges ("slow", "love it", "太慢了", "希望"). A plot synopsis, a news item
or an encyclopedia entry tells a story about third persons ("he", "she", "他", "她") and
judges nothing. Each analysed row's quoted text (`evidence_text`) is read, in its language
(`language`: `zh` Chinese, anything else English rules):

- a *cue* row has a first-person word, a second-person address ("you", "your", "你", "您"),
  a request or an opinion word from the short lists below, or an exclamation mark;
- a *narrative* row has no first-person word and a third-person pronoun (the quoted text is
  often one clause of the row, so one pronoun is what a clause of a story shows);
- a *polar* row is one the analysis did not judge `neutral`.

The input is flagged (`not_product_feedback`) when at least `MIN_ROWS` rows are analysed,
fewer than `CUE_SHARE` of them are cue rows, and either at least `NARRATIVE_SHARE` are
narrative rows or fewer than `POLAR_SHARE` are polar. The word lists are general English and
Chinese words of first person, request and judgement, written by hand; they were not fitted
to any evaluation corpus.

`feedback_warnings(items)` returns the warnings (`[]` or one), each
`{code, message, details: {rows, cue_rows, narrative_rows, polar_rows}}`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

MIN_ROWS = 10
CUE_SHARE = 0.3
NARRATIVE_SHARE = 0.25
POLAR_SHARE = 0.3
NOT_FEEDBACK = "not_product_feedback"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_FIRST = _words("i i'm im i've i'd i'll me my mine myself we we're we've we'd we'll us our ours")
_EN_SECOND = _words("you you're your yours you've you'll")
_EN_THIRD = _words("he she him his her hers himself herself they them their theirs")
_EN_OPINION = _words(
    """
    love loved loves like liked hate hated dislike awful terrible horrible bad worse worst
    good great better best excellent amazing awesome nice poor useless useful annoying
    annoyed frustrating frustrated disappointed disappointing disappointment impressed
    recommend recommended avoid waste wasted slow slower fast faster broken bug bugs buggy
    crash crashes crashed crashing fix fixed please should wish hope want need needs
    expensive cheap overpriced refund unusable confusing easy hard difficult works worked
    fails failed failing issue issues problem problems glitch laggy stars rude friendly
    delicious tasty bland error errors can't cannot doesn't don't won't isn't unable missing
    feature features support update version app login price service quality
    """
)
_ZH_FIRST = ("我", "咱", "本人")
_ZH_SECOND = ("你", "您")
_ZH_THIRD = ("他们", "她们", "他", "她")
_ZH_OPINION = (
    "喜欢", "讨厌", "好用", "难用", "推荐", "失望", "满意", "不错", "太慢", "太差", "很差",
    "垃圾", "希望", "建议", "应该", "能不能", "麻烦", "卡顿", "崩溃", "闪退", "好评", "差评",
    "值得", "不值", "性价比", "客服", "bug", "退款", "很好", "很棒", "好看", "难看", "方便",
    "不方便", "糟糕", "一般", "还行", "失败", "错误", "太慢", "卡", "不能", "无法", "没法",
    "好", "差", "贵", "便宜", "功能", "体验", "界面", "更新", "版本", "登录", "服务", "质量",
)  # fmt: skip
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _english(text: str) -> tuple[bool, bool]:
    words = _WORD.findall(text.casefold().replace("’", "'"))
    first = any(w in _EN_FIRST for w in words)
    cue = first or "!" in text or any(w in _EN_SECOND or w in _EN_OPINION for w in words)
    narrative = not first and any(w in _EN_THIRD for w in words)
    return cue, narrative


def _chinese(text: str) -> tuple[bool, bool]:
    first = any(word in text for word in _ZH_FIRST)
    cue = (
        first
        or any(mark in text for mark in "!！")
        or any(word in text for word in (*_ZH_SECOND, *_ZH_OPINION))
    )
    return cue, not first and any(word in text for word in _ZH_THIRD)


def feedback_warnings(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`[]`, or the one `not_product_feedback` warning (module docstring)."""
    rows = cue_rows = narrative_rows = polar_rows = 0
    for item in items:
        text = str(item.get("evidence_text") or "")
        if not text.strip():
            continue
        rows += 1
        read = _chinese if item.get("language") == "zh" else _english
        cue, narrative = read(text)
        cue_rows += cue
        narrative_rows += narrative
        polar_rows += item.get("sentiment") not in (None, "neutral")
    if rows < MIN_ROWS or cue_rows >= CUE_SHARE * rows:
        return []
    if narrative_rows < NARRATIVE_SHARE * rows and polar_rows >= POLAR_SHARE * rows:
        return []
    return [
        {
            "code": NOT_FEEDBACK,
            "message": (
                f"the input does not look like product feedback: {cue_rows} of {rows} rows "
                f"speak in the first person, ask for something or judge, {narrative_rows} "
                f"read as third-person narrative and {polar_rows} carry a sentiment"
            ),
            "details": {
                "rows": rows,
                "cue_rows": cue_rows,
                "narrative_rows": narrative_rows,
                "polar_rows": polar_rows,
            },
        }
    ]
