"""Does the input look like product feedback at all? A simple, documented heuristic.

Feedback is written by someone about their own use of a thing: it says "I", "we", "my",
addresses the maker ("you", "@app"), asks for something, or tells of using, buying or being
served ("installed", "ordered", "the staff", "side effects", "客服", "物流", "用了"). A news
item, a plot synopsis or a critic's review of a film or book speaks of third persons and of
the work, and judges it too, so opinion words alone ("great", "terrible", "不错") say
nothing about the genre and are not counted. Each analysed row's quoted text
(`evidence_text`) is read, in its language (`language`: `zh` Chinese, anything else English
rules; an item without a language is read as Chinese when its quote has Chinese characters):

- a *cue* row has a first-person word, a second-person address or an @mention, a request
  word, an exclamation mark, or a word of using, buying or being served from the lists below
  (English "US" in capitals is the country, not "us");
- a *story* row has no first-person word and a third-person pronoun or a word of a story or
  of criticism ("film", "director", "plot", "characters", "电影", "剧情"); reported, so a
  reader sees why, but not part of the decision;
- a *polar* row is one the analysis did not judge `neutral` (reported only).

The input is flagged (`not_product_feedback`) when at least `MIN_ROWS` rows are analysed and
fewer than `CUE_SHARE` of them are cue rows. The word lists are general English and Chinese
words of first person, address, request and use, written by hand, not taken from any
corpus. `CUE_SHARE` lies in the middle of the gap between the genres on the training halves
of the genre files (docs/quality.md): news headlines, plot synopses and critics' snippets have
at most 19 % cue rows there; tweets, drug reviews and Chinese shopping reviews at least 43 %.

`feedback_warnings(items)` returns the warnings (`[]` or one), each
`{code, message, details: {rows, cue_rows, story_rows, polar_rows}}`; `signals(items)` the
counts alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_ROWS = 10
CUE_SHARE = 0.3
NOT_FEEDBACK = "not_product_feedback"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_FIRST = _words("i i'm im i've i'd i'll me my mine myself we we're we've we'd we'll us our ours")
_EN_SECOND = _words("you you're your yours you've you'll u ur")
_EN_THIRD = _words("he she him his her hers himself herself they them their theirs")
_EN_REQUEST = _words("please pls plz wish hope should")
# Using, buying or being served: what a customer, user, guest or patient reports.
_EN_EXPERIENCE = _words(
    """
    use used uses using bought buy buying purchased purchase ordered order orders install
    installed update updated updates download downloaded upgrade subscription account login
    app apps website site device phone battery charger service customer support staff
    delivery delivered shipping shipped refund returned return paid charged works worked
    working stopped broke crashes crashed crashing freezes bug bugs glitch fix fixed room
    stay stayed hotel checked booked booking waiter served ordered menu flight flights
    seat luggage delayed cancelled canceled taking took dose doses prescribed side effects
    pill pills product item price quality recommend recommended satisfied disappointed worth
    waste stars
    """
)
# Words of a story or of criticism (a film, a book, a play): what a synopsis or a critic
# writes about, and a customer seldom does.
_EN_STORY = _words(
    """
    film films movie movies director directed directs filmmaker filmmakers screenplay script
    cast actor actors actress performance performances plot characters character audience
    audiences viewers scene scenes story stories novel narrative comedy drama thriller sequel
    hero heroine protagonist tale genre cinema documentary
    """
)
_ZH_FIRST = ("我", "咱", "本人")
_ZH_SECOND = ("你", "您", "亲们")
_ZH_THIRD = ("他们", "她们", "他", "她")
_ZH_REQUEST = ("希望", "建议", "请", "能不能", "能否", "麻烦", "应该")
_ZH_EXPERIENCE = (
    "用了", "使用", "好用", "难用", "买", "下单", "收到", "到货", "客服", "服务", "物流", "快递",
    "发货", "退货", "退款", "换货", "安装", "更新", "升级", "登录", "账号", "闪退", "卡顿", "崩溃",
    "性价比", "房间", "入住", "前台", "卖家", "商家", "店家", "包装", "送货", "外卖", "味道",
    "吃了", "副作用", "软件", "手机", "电池", "屏幕", "质量", "价格", "做工", "正品", "发票",
    "满意", "失望", "推荐", "好评", "差评", "值得", "不值", "划算",
)  # fmt: skip
_ZH_STORY = (
    "电影", "影片", "导演", "主演", "演员", "剧情", "观众", "小说", "主人公", "故事", "角色",
    "镜头", "片中",
)  # fmt: skip
#: The word lists as one set or one pattern per question a row is asked: a row is read once
#: per list, at C speed, however many words the lists hold.
_EN_CUE = _EN_SECOND | _EN_REQUEST | _EN_EXPERIENCE
_EN_TELLING = _EN_THIRD | _EN_STORY


def _any_of(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, words)))


_ZH_FIRST_WORD = _any_of(_ZH_FIRST)
_ZH_CUE = _any_of((*_ZH_SECOND, *_ZH_REQUEST, *_ZH_EXPERIENCE))
_ZH_TELLING = _any_of((*_ZH_THIRD, *_ZH_STORY))
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_MENTION = re.compile(r"(?:^|\s)@\w")
_COUNTRY = re.compile(r"\bUS\b")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class _Row:
    cue: bool
    story: bool


def _english(text: str) -> _Row:
    # "US" in capitals is the country, not "us".
    words = _WORD.findall(_COUNTRY.sub(" ", text).casefold().replace("’", "'"))
    first = not _EN_FIRST.isdisjoint(words)
    cue = first or "!" in text or bool(_MENTION.search(text)) or not _EN_CUE.isdisjoint(words)
    story = not first and not _EN_TELLING.isdisjoint(words)
    return _Row(cue, story)


def _chinese(text: str) -> _Row:
    first = _ZH_FIRST_WORD.search(text) is not None
    cue = first or "!" in text or "！" in text or _ZH_CUE.search(text) is not None
    story = not first and _ZH_TELLING.search(text) is not None
    return _Row(cue, story)


def signals(items: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The counts the warning is decided on: `rows` (with a quoted text), `cue_rows`,
    `story_rows` and `polar_rows` (module docstring)."""
    rows = cue_rows = story_rows = polar_rows = 0
    read: dict[tuple[bool, str], _Row] = {}  # each distinct quote read once per language
    for item in items:
        text = str(item.get("evidence_text") or "")
        if not text.strip():
            continue
        rows += 1
        language = item.get("language") or ("zh" if _CJK.search(text) else "en")
        chinese = language == "zh"
        row = read.get((chinese, text))
        if row is None:
            row = read[chinese, text] = _chinese(text) if chinese else _english(text)
        cue_rows += row.cue
        story_rows += row.story
        polar_rows += item.get("sentiment") not in (None, "neutral")
    return {"rows": rows, "cue_rows": cue_rows, "story_rows": story_rows, "polar_rows": polar_rows}


def _cue_rows_suffice(items: Sequence[Mapping[str, Any]]) -> bool:
    """Whether `signals` would find too few rows to judge or enough cue rows, whatever the
    other rows say. The rows with a quoted text are read (as `signals` reads them) in one
    pass, which stops once `CUE_SHARE` of all the items are cue rows (then at least that
    share of the quoted rows are: in product feedback, within the first few hundred rows);
    the cue rows only grow, so the whole count decides the rest. False leaves the decision
    to the full count."""
    enough, quoted, cue_rows = CUE_SHARE * len(items), 0, 0
    read: dict[tuple[bool, str], bool] = {}
    for item in items:
        text = str(item.get("evidence_text") or "")
        if not text.strip():
            continue
        quoted += 1
        language = item.get("language") or ("zh" if _CJK.search(text) else "en")
        chinese = language == "zh"
        cue = read.get((chinese, text))
        if cue is None:
            cue = read[chinese, text] = (_chinese(text) if chinese else _english(text)).cue
        cue_rows += cue
        if cue_rows >= enough:
            return True
    return quoted < MIN_ROWS or cue_rows >= CUE_SHARE * quoted


def feedback_warnings(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`[]`, or the one `not_product_feedback` warning (module docstring)."""
    if _cue_rows_suffice(items):
        return []
    counts = signals(items)
    rows = counts["rows"]
    if rows < MIN_ROWS or counts["cue_rows"] >= CUE_SHARE * rows:
        return []
    return [
        {
            "code": NOT_FEEDBACK,
            "message": (
                f"the input does not look like product feedback: {counts['cue_rows']} of "
                f"{rows} rows speak in the first person, address someone, ask for something "
                f"or tell of using or buying, {counts['story_rows']} tell a story or review "
                f"a work and {counts['polar_rows']} carry a sentiment"
            ),
            "details": counts,
        }
    ]
