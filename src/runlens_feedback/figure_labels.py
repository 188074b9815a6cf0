"""The words the report's figures are labelled with, in English and Chinese.

A figure of the insight report (`runlens_feedback.figures`) is tied to a number by the words
written next to it: "rows", "negative", "严重", "P1" ... (`runlens.Label`). These are the
measures' labels. `GENERIC_TERMS` is every word of them: no discovered theme may be named by
one (`runlens_feedback.discovery`), or its figures would read as that measure's.
"""

from __future__ import annotations

from runlens import Label
from runlens_feedback.contracts import PRIORITIES

Labels = tuple[Label, ...]


FILE_LABELS: Labels = (
    ("file",),
    ("文件",),
    ("input",),
    ("total row",),
    ("总数",),
    ("总条数",),
)
ANALYSED_LABELS: Labels = (("analysed",), ("analyzed",), ("分析",))
NOT_ANALYSED_LABELS: Labels = (
    ("not analysed",),
    ("not analyzed",),
    ("unanalysed",),
    ("unanalyzed",),
    ("未分析",),
    ("未能分析",),
    ("未被分析",),
)
PROBLEM_LABELS: Labels = (
    ("reporting a problem",),
    ("反映问题",),
    ("report a problem",),
    ("problem or request",),
    ("problems or requests",),
    ("problem row",),
    ("actionable",),
    ("问题或需求",),
    ("问题或建议",),
    ("提出问题",),
)
ROWS_LABELS: Labels = (("row",), ("条",), ("mention",), ("行",))
#: A group's share: its name alone, or with "share" or the rows words it is a share of.
SHARE_LABELS: Labels = ((), ("share",), ("占比",), *ROWS_LABELS)
SENTIMENT_LABELS: dict[str, Labels] = {
    "positive": (("positive",), ("正面",), ("积极",), ("好评",)),
    "neutral": (("neutral",), ("中性",)),
    "negative": (("negative",), ("负面",), ("消极",), ("差评",)),
    "mixed": (("mixed",), ("混合",), ("褒贬不一",)),
}
SEVERITY_LABELS: dict[str, Labels] = {
    "low": (("low",), ("低",), ("轻微",)),
    "medium": (("medium",), ("中等",), ("中度",)),
    "high": (("high",), ("高",)),
    "critical": (("critical",), ("严重",), ("致命",)),
}
HIGH_OR_CRITICAL_LABELS: Labels = (
    ("high or critical",),
    ("high and critical",),
    ("高或严重",),
    ("严重或高",),
)
THEMES_LABELS: Labels = (("theme",), ("group",), ("主题",))
OTHER_GROUPS_LABELS = ("other group", "other theme", "其他主题", "其他分组")
BACKLOG_LABELS: Labels = (("backlog",), ("backlog item",), ("待办",), ("待办事项",))
FAILED_LABELS = ("failed batch", "batches failed", "失败批次", "批次失败")
LANGUAGES_LABELS: dict[str, Labels] = {
    "zh": (("chinese",), ("中文",)),
    "en": (("english",), ("英文",), ("英语",)),
}


#: Every word of the labels of figures that are not a theme's: no theme may be named by one.
GENERIC_TERMS = frozenset(
    term.casefold()
    for labels in (
        FILE_LABELS,
        ANALYSED_LABELS,
        NOT_ANALYSED_LABELS,
        PROBLEM_LABELS,
        ROWS_LABELS,
        SHARE_LABELS,
        *SENTIMENT_LABELS.values(),
        *SEVERITY_LABELS.values(),
        HIGH_OR_CRITICAL_LABELS,
        THEMES_LABELS,
        BACKLOG_LABELS,
        *LANGUAGES_LABELS.values(),
        tuple((name,) for name in (*OTHER_GROUPS_LABELS, *FAILED_LABELS, *PRIORITIES)),
    )
    for label in labels
    for term in label
)
