"""The sentences of the insight report, in English and in Chinese (`runlens_feedback.analyst.
report`): one template per sentence and language, filled with the summary's figures.

Every sentence that states a figure keeps the figure next to the words the figure check
(`runlens_feedback.figures`) names it by: "rows in the file" / "文件共 … 条", "analysed" /
"已分析", "reporting a problem" / "反映问题", the sentiment and severity names, "other
group" / "其他主题", "backlog" / "待办事项". A Chinese sentence avoids characters that are a
measure's label where it means something else (高 in 最高, 行 in 行动): Chinese labels match
inside words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

ReportLanguage = Literal["en", "zh"]

EN: dict[str, str] = {
    "title": "Insight report on the product feedback in `{source}`.",
    "source": "- Source: `{source}`, {total} rows in the file, {analysed} analysed.",
    "languages": "- Languages: {languages}.",
    "language": "{count} {name}",
    "list_sep": ", ",
    "themes": "- Themes: {groups} distinct; highest-priority pain points: {top}.",
    "top": "{label} ({problems} reporting a problem)",
    "none": "none",
    "method": (
        "- Method: deterministic offline analysis (sentiment from word lists and a small "
        "trained classifier, themes from the words of the data); every quote below is "
        "verbatim from the cited row."
    ),
    "by_column": "By `{column}`:",
    "by_period": "By {period} of `{column}`:",
    "month": "month",
    "week": "week",
    "breakdown_header": "Rows | Share | Positive | Negative | Negative share",
    "chart": "![Pain points by rows and sentiment{trend}](insight_chart.svg)",
    "chart_trend": ", and rows by {period}",
    "sentiment_lead": "Sentiment of the {total} analysed rows:",
    "level": "- {name}: {count} ({share})",
    "severity_lead": "Severity:",
    "problems": "Rows reporting a problem or request: {rows} ({share}).",
    "leading": "Highest-priority pain points: {parts}.",
    "leading_part": "{label} ({priority}): {rows} ({share}), {problems} reporting a problem",
    "leading_sep": "; ",
    "backlog": "Backlog: {count} items{priorities}.",
    "backlog_priorities": " ({parts})",
    "backlog_part": "{count} {priority}",
    "warning": (
        "**Warning:** the input does not look like product feedback; read Risks And Unknowns "
        "before acting on these figures."
    ),
    "no_pains": "No analysed row reports a problem or a request.",
    "pains_intro": (
        "Pain points by priority, then by rows reporting a problem or request. Rows, share, "
        "negative and mixed count every row of the group; high or critical counts its problem "
        "rows."
    ),
    "pains_header": (
        "| # | Pain point | Key | Rows | Share | Problem rows | Negative | Mixed "
        "| High or critical | Priority |"
    ),
    "evidence_group": "**{label}** (`{key}`, {rows} reporting a problem):",
    "evidence_positive": "**What users value** ({count} positive {noun}):",
    "no_quotes": "No quotable feedback was analysed.",
    "quote_tail": "({sentiment}, {severity})",
    "no_actions": (
        "No actionable problems were found; keep collecting feedback and re-run the analysis."
    ),
    "action": "{rank}. **{priority} — {title}** (`{theme}`). {rationale}",
    "criteria": "   - Acceptance criteria: {criteria}.",
    "criteria_sep": "; ",
    "metric": "   - Metric: {metric}.",
    "evidence_ids": "   - Evidence: {ids}.",
    "failed_none": "- Failed batches: none.",
    "failed": (
        "- Failed batches: {batches} could not be analysed in full ({rows} left unanalysed). "
        "Reasons:"
    ),
    "first_failures": "  - First failures: {details}.",
    "unanalysed": (
        "- Unanalysed rows: {unanalysed} of {total} ({share}) are not in these figures."
    ),
    "small": "- Small sample: only {rows} analysed; shares are indicative only.",
    "uncertain": "- Neutral or mixed rows: {count} ({share})",
    "uncertain_high": " — a large share; read those rows before acting.",
    "uncertain_low": ".",
    "grouping": (
        "- Grouping: {rows} carried no theme and are grouped by the wording of their pain "
        "point, which can split one problem across groups."
    ),
    "topics": (
        "- Uncategorised: {count} of the listed pain points matched no known theme and are "
        "named by their own keyword."
    ),
    "skipped": "- Columns not broken down: {columns}.",
    "skipped_part": "`{column}` ({reason})",
    "not_feedback": (
        "- **Not product feedback?** Of {rows} analysed rows, {cues} speak in the first "
        "person, address someone, ask for something or tell of using or buying; {story} tell "
        "a story or review a work and {polar} carry a sentiment. The input looks like another "
        "kind of text (news, synopses, critics' reviews, articles): read a sample of rows "
        "before acting on this report."
    ),
    "limits": (
        "- Method limits: automatic sentiment misses sarcasm and domain slang; themes come "
        "from word statistics and can merge or split topics; breakdowns describe the metadata "
        "columns, they do not explain them."
    ),
}

ZH: dict[str, str] = {
    "title": "对 `{source}` 中产品反馈的洞察报告。",
    "source": "- 来源：`{source}`，文件共 {total} 条，已分析 {analysed} 条。",
    "languages": "- 语言：{languages}。",
    "language": "{name} {count} 条",
    "list_sep": "，",
    "themes": "- 主题：共 {groups} 个；首要痛点：{top}。",
    "top": "{label}（{problems} 条反映问题）",
    "none": "无",
    "method": (
        "- 方法：确定性的离线分析（情感来自词表与一个小型训练分类器，主题取自数据本身的用词）；"
        "下文每条引用都逐字摘自所注明的反馈。"
    ),
    "by_column": "按 `{column}` 统计：",
    "by_period": "按{period}统计 `{column}`：",
    "month": "月",
    "week": "周",
    "breakdown_header": "条数 | 占比 | 正面 | 负面 | 负面占比",
    "chart": "![痛点的条数与情感{trend}](insight_chart.svg)",
    "chart_trend": "，以及每{period}的条数",
    "sentiment_lead": "已分析的 {total} 条反馈的情感分布：",
    "level": "- {name}：{count} 条（{share}）",
    "severity_lead": "严重程度：",
    "problems": "反映问题或需求的反馈：{rows}（{share}）。",
    "leading": "首要痛点：{parts}。",
    "leading_part": "{label}（{priority}）：{rows}（{share}），其中 {problems} 条反映问题",
    "leading_sep": "；",
    "backlog": "待办事项：共 {count} 项{priorities}。",
    "backlog_priorities": "（{parts}）",
    "backlog_part": "{priority} {count} 项",
    "warning": "**注意：** 输入看起来不像产品反馈；据此行动前请先阅读 Risks And Unknowns 一节。",
    "no_pains": "没有已分析的反馈反映问题或需求。",
    "pains_intro": (
        "痛点按优先级排列，其次按反映问题或需求的条数排列。条数、占比、负面和混合统计该组的全部反馈；"
        "高或严重只统计其中反映问题的反馈。"
    ),
    "pains_header": (
        "| # | 痛点 | 键 | 条数 | 占比 | 反映问题 | 负面 | 混合 | 高或严重 | 优先级 |"
    ),
    "evidence_group": "**{label}**（`{key}`，{rows}反映问题）：",
    "evidence_positive": "**用户认可的方面**（{count} 条正面反馈）：",
    "no_quotes": "没有可引用的已分析反馈。",
    "quote_tail": "（{sentiment}，{severity}）",
    "no_actions": "未发现需要处理的问题；请继续收集反馈，之后重新分析。",
    "action": "{rank}. **{priority} — {title}**（`{theme}`）。{rationale}",
    "criteria": "   - 验收标准：{criteria}。",
    "criteria_sep": "；",
    "metric": "   - 指标：{metric}。",
    "evidence_ids": "   - 证据：{ids}。",
    "failed_none": "- 失败批次：无。",
    "failed": "- 失败批次：{batches} 个批次未能完整分析（{rows}未分析）。原因：",
    "first_failures": "  - 最先失败的批次：{details}。",
    "unanalysed": "- 未分析的反馈：{total} 条中有 {unanalysed} 条（{share}）不在上述数字中。",
    "small": "- 样本较小：只分析了 {rows}，占比仅供参考。",
    "uncertain": "- 中性或混合的反馈：{count} 条（{share}）",
    "uncertain_high": "，占比较大；行动前请先阅读这些反馈。",
    "uncertain_low": "。",
    "grouping": "- 分组：{rows}没有主题，按痛点的措辞分组，同一个问题可能被拆到多个组。",
    "topics": "- 未归类：列出的痛点中有 {count} 个不属于已知主题，以其自身的关键词命名。",
    "skipped": "- 未统计的列：{columns}。",
    "skipped_part": "`{column}`（{reason}）",
    "not_feedback": (
        "- **这看起来不是产品反馈：** 已分析的 {rows} 条中，只有 {cues} 条以第一人称叙述、"
        "称呼对方、提出需求或讲述使用和购买；{story} 条在讲故事或评论作品，{polar} 条带有情感"
        "倾向。输入更像其他类型的文本（新闻、剧情简介、影评、文章）：据此行动前请先阅读部分原文。"
    ),
    "limits": (
        "- 方法局限：自动的情感判断会漏掉反讽和行业俚语；主题来自词频统计，可能合并或拆分话题；"
        "按元数据列的统计只描述分布，不解释原因。"
    ),
}

WORDS: dict[ReportLanguage, dict[str, str]] = {"en": EN, "zh": ZH}

LANGUAGE_NAMES: dict[ReportLanguage, dict[str, str]] = {
    "en": {"zh": "Chinese", "en": "English"},
    "zh": {"zh": "中文", "en": "英文"},
}
SENTIMENT_NAMES: dict[ReportLanguage, dict[str, str]] = {
    "en": {"positive": "positive", "neutral": "neutral", "negative": "negative", "mixed": "mixed"},
    "zh": {"positive": "正面", "neutral": "中性", "negative": "负面", "mixed": "混合"},
}
SEVERITY_NAMES: dict[ReportLanguage, dict[str, str]] = {
    "en": {"low": "low", "medium": "medium", "high": "high", "critical": "critical"},
    "zh": {"low": "低", "medium": "中等", "high": "高", "critical": "严重"},
}
#: Why a metadata column is not broken down (`runlens_feedback.breakdowns`), in Chinese.
SKIP_REASONS_ZH = {
    "free text": "自由文本",
    "too many distinct values": "取值过多",
    "one value": "只有一个取值",
    "no values": "没有取值",
    "dates within one week": "日期都在同一周内",
    "too many columns": "超出列数上限",
}


class Phrasebook:
    """Sentences in one language: `words("template", name=value)` fills a template of
    `table` (a language's dict of templates, e.g. `WORDS[language]`)."""

    def __init__(
        self, language: ReportLanguage, table: Mapping[ReportLanguage, Mapping[str, str]]
    ) -> None:
        self.language = language
        self.text = table[language]

    def __call__(self, template: str, /, **values: object) -> str:
        return self.text[template].format(**values)
