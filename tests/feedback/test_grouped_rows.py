"""`aggregate.grouped_rows` against `group_items` and `group_rows` (the plain rules, item by
item), on items whose themes, sentiments, severities and wordings hit every rule: blank and
non-text themes grouped by their wording, praise and empty groups, the feature requests
(where a neutral row with a low severity is a problem row too), themes that fold into one
group and more groups than stand alone."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from runlens_feedback.aggregate import group_items, group_rows, grouped_rows

_THEMES = [
    "Billing",
    "billing ",
    "  ",
    "",
    "Feature Request",
    "feature_request",
    "Praise",
    "empty",
    "other",
    None,
    3,
    *(f"topic {n}" for n in range(18)),
]
_item = st.fixed_dictionaries(
    {"feedback_id": st.integers(0, 50).map(lambda n: f"fb_{n}")},
    optional={
        "theme": st.sampled_from(_THEMES),
        "sentiment": st.sampled_from(["negative", "mixed", "neutral", "positive", None, 1]),
        "severity": st.sampled_from(["low", "medium", "high", "critical", "", None, 2]),
        "pain_point": st.sampled_from(["Slow export", "slow  export!", "", "Login", None, 7]),
    },
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_item, max_size=60))
@example(
    [
        {"feedback_id": "fb_1", "theme": "  ", "pain_point": "Login", "sentiment": "negative"},
        {"feedback_id": "fb_2", "theme": "  ", "pain_point": "Export", "sentiment": "negative"},
        {"feedback_id": "fb_3", "theme": "Feature Request", "sentiment": "neutral"},
        {"feedback_id": "fb_4", "theme": "feature_request", "sentiment": "neutral"},
    ]
)
def test_the_groups_and_their_rows_are_those_of_the_plain_rules(items: list[Any]) -> None:
    groups, counted = grouped_rows(items)
    expected = group_items(items)
    assert list(groups) == list(expected)
    for key, members in expected.items():
        assert [id(item) for item in groups[key]] == [id(item) for item in members]
        assert counted[key] == group_rows(members)
