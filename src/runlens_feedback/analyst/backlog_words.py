"""The sentences of the backlog, in English and in Chinese (`runlens_feedback.analyst.
backlog`): one template per sentence and language, filled with the pain point's own name,
terms, ids and counts. The backlog is written in the report's language (`report_language`).

Every figure stays next to the words the figure check (`runlens_feedback.figures`) names it
by, as in the report's templates (`report_words`): "analysed rows" / "已分析 … 条",
"high or critical" / "高或严重", the severity and sentiment names. A Chinese sentence avoids
characters that are a measure's label where it means something else (低 in 降低, 行 in 执行,
高 in 最高): Chinese labels match inside words. No template puts quotation marks around a
name: the report reads quoted words as citations of rows.
"""

from __future__ import annotations

from runlens_feedback.analyst.report_words import ReportLanguage

EN: dict[str, str] = {
    "title_requests": "{name}: answer the requests",
    "title_reports": "{name}: look into the reports",
    "title_mixed": "{name}: fix the weak points customers mention",
    "title_complaints": "{name}: fix the complaints",
    "title_requests_said": "Answer the {name} requests: {problem}",
    "title_reports_said": "Look into {name}: {problem}",
    "title_mixed_said": "Improve {name}: {problem}",
    "title_complaints_said": "Fix {name}: {problem}",
    "rationale": (
        "{mentions} of {total} analysed rows ({share}) raise this; severity: {severity}; "
        "sentiment: {sentiment}. {priority}: {reason}."
    ),
    "count": "{count} {name}",
    "sep": ", ",
    "review": "The cited reports about {name} ({cited}) are reviewed and each cause recorded",
    "terms": (
        "Each complaint that names one of {terms} is traced to a cause, with an owner and a fix"
    ),
    "severe": (
        "No new high or critical report about {name} in the 30 days after the change "
        "({severe} of its {mentions} problem rows today)"
    ),
    "falls_back": (
        "Its share of each period's feedback falls back to at most {before}, its share before "
        "{period}"
    ),
    "new_in_period": (
        "New in {period} ({recent} of that period's feedback): its share of each later period "
        "is at most half of that"
    ),
    "recheck": "The cited cases ({cited}) are re-checked after the change and resolved",
    "metric": (
        "Share of analysed feedback reporting problems about {name} (baseline: {mentions} of "
        "{total} analysed rows ({share}), target: half)"
    ),
    "metric_severe": "; its high or critical reports (baseline: {severe}, target: 0)",
}

ZH: dict[str, str] = {
    "title_requests": "{name}：答复用户提出的需求",
    "title_reports": "{name}：排查用户反馈的情况",
    "title_mixed": "{name}：改进用户指出的不足",
    "title_complaints": "{name}：解决用户反映的问题",
    "title_requests_said": "答复{name}的需求：{problem}",
    "title_reports_said": "排查{name}：{problem}",
    "title_mixed_said": "改进{name}：{problem}",
    "title_complaints_said": "解决{name}的问题：{problem}",
    "rationale": (
        "已分析的 {total} 条中有 {mentions} 条（{share}）反映这一问题；严重程度：{severity}；"
        "情感：{sentiment}。{priority}：{reason}。"
    ),
    "count": "{name} {count}",
    "sep": "、",
    "review": "逐条查看关于{name}的引用反馈（{cited}），并记下每条的原因",
    "terms": "凡提到{terms}之一的投诉，都追溯到原因，并明确负责人和修复方案",
    "severe": (
        "改动上线后 30 天内，不再出现关于{name}的新的高或严重反馈"
        "（目前其 {mentions} 条反映问题的反馈中有 {severe} 条）"
    ),
    "falls_back": "其在各期反馈中的占比回落到不超过 {before}，即 {period} 之前的占比",
    "new_in_period": "{period} 新出现（占该期反馈的 {recent}）：此后各期的占比不超过这一数值的一半",
    "recheck": "改动上线后复查所引用的反馈（{cited}），确认均已解决",
    "metric": (
        "反映{name}相关问题的反馈占已分析反馈的比例"
        "（基线：已分析的 {total} 条中有 {mentions} 条，占 {share}；目标：减半）"
    ),
    "metric_severe": "；其中高或严重的反馈（基线：{severe} 条；目标：0 条）",
}

WORDS: dict[ReportLanguage, dict[str, str]] = {"en": EN, "zh": ZH}

#: The priority points (`runlens_feedback.priority.priority_points`) in Chinese.
REASON_ZH: dict[str, str] = {
    "severity": "严重程度 {points:+d}（{mentions} 条中有 {severe} 条为高或严重）",
    "critical": "严重反馈 {points:+d}（严重 {critical} 条）",
    "reach": "覆盖面 {points:+d}（占已分析反馈的 {share}）",
    "trend": "趋势 {points:+d}（{direction}：{period} 为 {recent}，此前为 {before}）",
    "too_few": (
        "趋势 {points:+d}（条数太少，无法判断：{period} 有 {rows} 条，"
        "占 {recent}，此前为 {before}）"
    ),
    "sep": "，",
    "total": "{reasons}，合计 {points} 分",
}
DIRECTIONS_ZH = {"rising": "上升", "falling": "下降", "steady": "平稳"}
