"""Input that does not look like product feedback is flagged, in the summary and the report.

The plot synopses below were written for this test (no corpus): stories about third
persons, with no first person, no request and no judgement."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst import analyze_rows, backlog_from_summary, report_from_summary
from runlens_feedback.genre import CUE_SHARE, MIN_ROWS, NOT_FEEDBACK, feedback_warnings, signals

from .helpers import run_offline, write_csv
from .test_offline_runs import RESTAURANT_AND_GAMES

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"

SYNOPSES_EN = [
    "After his brother disappears at sea, a lighthouse keeper starts receiving letters that "
    "seem to come from him, and he follows them to a village that is not on any map.",
    "A retired detective is pulled back into a case she never solved when her granddaughter "
    "finds a photograph hidden in the attic of their old house.",
    "Two rival chefs are forced to share a kitchen for one summer, and their feud slowly "
    "turns into an unlikely partnership as the restaurant nears bankruptcy.",
    "In a city where it never stops raining, a young courier discovers that the parcels he "
    "delivers are changing the lives of the people who open them.",
    "A family of farmers fights to keep their land after a mining company arrives, while the "
    "eldest daughter falls for the son of the company's owner.",
    "When the last train of the night stops between two stations, the passengers realise "
    "that none of them remembers how they got on board.",
    "A composer who has lost his hearing hires a street musician to play his final symphony, "
    "and the two men learn to trust each other.",
    "She leaves her job in the capital to run her late father's bookshop, where she uncovers "
    "the letters he wrote to a woman she has never heard of.",
    "During a long winter, a boy and his grandfather build a boat in their barn, hoping to "
    "sail it to the island where his mother was born.",
    "A con artist poses as a priest in a small mountain town and finds that the villagers' "
    "faith in him begins to change his own life.",
    "The crew of a research station in Antarctica loses contact with the outside world, and "
    "their commander must decide whom she can trust.",
    "An ageing boxer agrees to one last fight to pay his daughter's debts, while his former "
    "trainer tries to talk him out of it.",
]
SYNOPSES_ZH = [
    "他在一次海难中失去了哥哥，多年后回到故乡的小岛，却发现哥哥留下的信件指向一个从未出现在地图上的村庄。",
    "她是一名退休的女警，孙女在阁楼里找到的一张旧照片，把她重新拉回了那桩多年未破的案子。",
    "两位互相看不顺眼的厨师被迫共用一间厨房，他们在餐馆濒临倒闭的夏天里渐渐成了搭档。",
    "在一座终年下雨的城市里，年轻的快递员发现，他送出的包裹正在改变收件人的命运。",
    "一家农民为了保住祖传的土地与矿业公司周旋，而他们的大女儿却爱上了公司老板的儿子。",
    "末班列车停在两站之间，乘客们发现他们谁都想不起自己是怎么上的车，他们开始互相猜疑。",
    "失聪的作曲家请来一位街头乐手演奏他最后的交响曲，他和他之间慢慢建立起信任。",
    "她辞去了首都的工作，回到父亲留下的旧书店，在那里她找到了父亲写给另一个女人的信。",
    "漫长的冬天里，男孩和他的祖父在谷仓里造了一条船，他们希望驾船去他母亲出生的小岛。",
    "一个骗子在山城里冒充神父，他渐渐发现村民对他的信任正在改变他自己的人生。",
    "南极科考站与外界失去联系，站长必须决定她还能相信谁，她的队员们各怀心事。",
    "年迈的拳击手为了替女儿还债答应再打最后一场，他的老教练劝他放弃，他却不肯。",
]


def rows(texts: list[str]) -> list[dict[str, str]]:
    return [{"feedback_id": f"s{n}", "text": text} for n, text in enumerate(texts)]


@pytest.mark.parametrize("texts", [SYNOPSES_EN, SYNOPSES_ZH], ids=["english", "chinese"])
def test_plot_synopses_are_flagged_in_summary_and_report(texts: list[str]) -> None:
    items = analyze_rows(rows(texts))
    summary = summarize_analysis(items, total_rows=len(items), source="films.csv")
    (warning,) = summary["warnings"]
    assert warning["code"] == NOT_FEEDBACK
    assert warning["details"]["rows"] == len(texts)
    assert warning["details"]["cue_rows"] < 0.3 * len(texts)
    report = report_from_summary(summary, backlog_from_summary(summary))
    risks = report[report.index("## Risks And Unknowns") :]
    executive = report[report.index("## Executive Summary") : report.index("## Top Pain Points")]
    if texts is SYNOPSES_ZH:
        assert "这看起来不是产品反馈" in risks and "不像产品反馈" in executive
    else:
        assert "Not product feedback?" in risks and "does not look like product" in executive


def test_product_feedback_is_not_flagged() -> None:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        sample = list(csv.DictReader(handle))
    for feedback in (sample, RESTAURANT_AND_GAMES * 2):
        assert feedback_warnings(analyze_rows(feedback)) == []


def test_too_few_rows_are_not_judged() -> None:
    assert feedback_warnings(analyze_rows(rows(SYNOPSES_EN[: MIN_ROWS - 1]))) == []


def test_first_person_opinion_is_feedback_even_when_it_tells_a_story() -> None:
    story = [text + " I loved it!" for text in SYNOPSES_EN]
    assert feedback_warnings(analyze_rows(rows(story))) == []


def test_a_run_on_synopses_completes_with_the_warning_in_its_report(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "films.csv", rows(SYNOPSES_EN))
    run = run_offline(path, tmp_path / "workspace")
    assert run.result["status"] == "completed", run.result["error_message"]
    assert "**Not product feedback?**" in run.report
    assert "**Warning:** the input does not look like product feedback" in run.report


# Written for these tests (no corpus): news headlines, critics' sentences and feedback of
# several kinds that names no first person, so only the rules of use, address and request
# tell the feedback apart.
NEWS_EN = [
    "Central bank holds interest rates as inflation eases for a third month",
    "US and Canada sign a new agreement on cross-border rail freight",
    "Floods close schools across the northern region for the rest of the week",
    "Shares in the carmaker fall sharply after a profit warning",
    "Parliament votes to extend the deadline for the census by two years",
    "Scientists map the genome of a rare mountain orchid",
    "Striking dock workers reach a deal with port operators",
    "Heatwave expected to break records in the south this weekend",
    "Football club appoints former captain as head coach",
    "Electricity prices to rise in the spring, regulator says",
    "Museum returns looted bronzes to their country of origin",
    "Election turnout highest in thirty years, officials report",
]
CRITICS_EN = [
    "A gorgeous, patient film whose director trusts the audience to keep up.",
    "The performances are terrific, but the screenplay loses its nerve in the last act.",
    "An overlong, joyless sequel that mistakes noise for excitement.",
    "Her finest role in years, and the film around her is nearly as good.",
    "The plot creaks, yet the characters are drawn with real warmth.",
    "A clumsy thriller with one brilliant scene and nothing else.",
    "Funny, sad and wise: the best comedy of the season.",
    "The cast does what it can with a script that never comes alive.",
    "Beautifully shot and utterly hollow.",
    "A documentary of rare tenderness about a town that refuses to die.",
    "The novel's wit survives the adaptation; its menace does not.",
    "A dull, worthy drama that tells its story twice.",
]
NEWS_ZH = [
    "央行宣布维持基准利率不变 通胀连续三个月回落",
    "北方多地暴雨致学校停课一周",
    "汽车制造商发布盈利预警 股价大幅下跌",
    "人大常委会表决通过延长普查期限的决定",
    "科学家完成一种高山兰花的基因组测序",
    "码头工人罢工结束 与港口运营方达成协议",
    "南方本周末或迎来创纪录高温",
    "足球俱乐部任命前队长为主教练",
    "监管部门称春季电价将上调",
    "博物馆归还流失海外的青铜器",
    "本届选举投票率创三十年来新高",
    "高校毕业生就业招聘会在省会举行",
]
CRITICS_ZH = [
    "影片节奏沉稳，导演相信观众能跟上。",
    "演员的表演非常出色，可惜剧本在最后一幕失去了勇气。",
    "一部冗长乏味的续集，把噪音当成了刺激。",
    "这是她多年来最好的角色，整部电影也几乎同样出色。",
    "剧情有些老套，但角色塑造得很有温度。",
    "一部笨拙的惊悚片，只有一场戏令人难忘。",
    "有趣、伤感又睿智，是本季最好的喜剧。",
    "演员们尽力了，但剧本始终没有活起来。",
    "镜头很美，内容却很空洞。",
    "一部温柔的纪录片，讲述一个不肯消失的小镇。",
    "小说的机智在改编中保留了下来，威胁感却没有。",
    "一部沉闷的正剧，把故事讲了两遍。",
]
FEEDBACK_EN = [
    "The app crashes every time the upload finishes.",
    "Battery died after two days of normal use.",
    "Delivery took three weeks and the box arrived crushed.",
    "Room was clean but the staff at the front desk were rude.",
    "Headaches and nausea were the only side effects, gone after a week.",
    "Please add an export to CSV.",
    "@ShopDesk still waiting on that refund",
    "Login fails after the latest update.",
    "Great value for the price, works as described.",
    "Customer support never answered the ticket.",
    "The waiter forgot half of the order.",
    "Flight delayed four hours and no one explained why.",
]
FEEDBACK_ZH = [
    "更新后一直闪退，根本打不开。",
    "电池用了两天就不行了。",
    "物流太慢了，三周才到货，包装还破了。",
    "房间很干净，但前台服务态度很差。",
    "吃了一周副作用就没了，效果不错。",
    "希望增加导出功能。",
    "客服一直不回复，退款也没消息。",
    "登录总是失败，账号被锁了两次。",
    "性价比很高，质量也好。",
    "外卖送得很快，味道一般。",
    "卖家发错了颜色，换货很麻烦。",
    "手机屏幕有划痕，申请退货中。",
]


@pytest.mark.parametrize(
    "texts",
    [NEWS_EN, CRITICS_EN, NEWS_ZH, CRITICS_ZH],
    ids=["news-en", "critics-en", "news-zh", "critics-zh"],
)
def test_news_and_critics_reviews_are_flagged(texts: list[str]) -> None:
    (warning,) = feedback_warnings(analyze_rows(rows(texts)))
    assert warning["code"] == NOT_FEEDBACK
    assert warning["details"]["cue_rows"] < CUE_SHARE * len(texts)


@pytest.mark.parametrize("texts", [FEEDBACK_EN, FEEDBACK_ZH], ids=["english", "chinese"])
def test_feedback_without_first_person_is_not_flagged(texts: list[str]) -> None:
    items = analyze_rows(rows(texts))
    assert feedback_warnings(items) == []
    assert signals(items)["cue_rows"] == len(texts)


def test_opinion_words_alone_are_no_feedback_cue() -> None:
    counts = signals(analyze_rows(rows(["Beautifully shot and utterly hollow."] * MIN_ROWS)))
    assert counts == {"rows": MIN_ROWS, "cue_rows": 0, "story_rows": 0, "polar_rows": MIN_ROWS}


def test_us_in_capitals_is_the_country_and_a_mention_is_an_address() -> None:
    country = signals(analyze_rows(rows(["US and Canada sign a rail deal"])))
    people = signals(analyze_rows(rows(["Tell us when the rail deal is signed"])))
    mention = signals(analyze_rows(rows(["@RailCo when is the deal signed"])))
    assert (country["cue_rows"], people["cue_rows"], mention["cue_rows"]) == (0, 1, 1)


def test_critics_and_synopses_count_as_story_rows() -> None:
    assert signals(analyze_rows(rows(CRITICS_EN[:2] + SYNOPSES_ZH[:1])))["story_rows"] == 3
    assert signals(analyze_rows(rows(FEEDBACK_EN[:2])))["story_rows"] == 0


@pytest.mark.parametrize("blank", [0, 10, 40])
@pytest.mark.parametrize("cue_rows", [0, 2, 5, 6, 7, 9, 20])
def test_the_warning_follows_the_full_count_around_the_threshold(cue_rows: int, blank: int) -> None:
    """The warning stops reading rows once enough are cue rows: its verdict is still the one
    the full count gives, on either side of `CUE_SHARE` (20 rows: 6 is the threshold), with
    `blank` rows quoting nothing (not counted, and interleaved with the others)."""
    texts = [
        f"I can't log in since the update, day {n}." if n < cue_rows else SYNOPSES_EN[n % 9]
        for n in range(20)
    ]
    items: list[dict[str, str | None]] = [
        {"evidence_text": text, "language": "en", "sentiment": "negative"} for text in texts[::-1]
    ]
    for n in range(blank):
        items.insert(n * 2 % (len(items) + 1), {"evidence_text": ("", " \n", None)[n % 3]})
    counts = signals(items)
    assert counts["rows"] == 20
    warned = counts["cue_rows"] < CUE_SHARE * counts["rows"]
    assert bool(feedback_warnings(items)) is warned
    if warned:
        assert feedback_warnings(items)[0]["details"] == counts
