"""Figures: reading the numbers a Markdown section states, tying each to a figure, the
verdicts, and a plugin of its own declaring figure rules without touching core."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from runlens.contracts import ArtifactContract
from runlens.evidence import EvidenceIndex, build_evidence_index
from runlens.inputs import TableInput
from runlens.plugins import Plugin
from runlens.validation import stop_validators, validate_workspace
from runlens.validation.figure_rules import Figure, FigureRule
from runlens.validation.figures import Statement, check_figures
from runlens.validation.numbers import quoted_spans, stated_numbers

# -- reading numbers ------------------------------------------------------------------------


def read(text: str) -> list[str]:
    return [n.text for n in stated_numbers(text, quoted_spans(text, [("“", "”")]))]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("89 rows, 1,234 items and 3.5 on average", ["89", "1,234", "3.5"]),
        ("11.2% and 7 % and 8％ and 12 percent", ["11.2%", "7 %", "8％", "12 percent"]),
        ("共89条，其中58条负面", ["89", "58"]),
        ("P1 fb_001 v2 5G COVID-19 a 5-star #12 @3 x2", []),
        ("on 2026-06-01, at 09:30, 2026-06-01T09:30:00Z, 2026/6/1", []),
        ("2026年6月1日 and 6月3日, June 2026, 1 June 2026, June 1, 2026", []),
        ("release 1.2.3 and the list 1,2,3", ["1", "2", "3"]),
        ("they wrote “waited 3 minutes” 4 times", ["4"]),
        ("89 rows.", ["89"]),
    ],
)
def test_the_numbers_a_text_states(text: str, numbers: list[str]) -> None:
    assert read(text) == numbers


def test_a_stated_number_keeps_its_value_and_precision() -> None:
    (number,) = stated_numbers("about 1,234.50%")
    assert (str(number.value), number.decimals, number.percent) == ("1234.50", 2, True)


# -- tying numbers to figures ---------------------------------------------------------------

ROWS = Figure("rows.file", 89, "count", (("file",),))
ANALYSED = Figure("rows.analysed", 89, "count", (("analysed",),))
NEGATIVE = Figure("negative", 58, "count", (("negative",),))
NEGATIVE_SHARE = Figure("negative.share", 58 / 89, "share", (("negative",),))
HIGH = Figure("high", 25, "count", (("high",),))
SEVERE = Figure("high_or_critical", 30, "count", (("high or critical",),))
BILLING = Figure("billing.rows", 10, "count", (("Billing", "row"),))
BILLING_SHARE = Figure("billing.share", 10 / 89, "share", (("Billing",),))
BILLING_NEGATIVE = Figure("billing.negative", 9, "count", (("Billing", "negative"),))
SLOW = Figure("slow.rows", 13, "count", (("Slow", "row"),))
SLOW_SHARE = Figure("slow.share", 13 / 89, "share", (("Slow",),))
FIGURES = (
    ROWS,
    ANALYSED,
    NEGATIVE,
    NEGATIVE_SHARE,
    HIGH,
    SEVERE,
    BILLING,
    BILLING_SHARE,
    BILLING_NEGATIVE,
    SLOW,
    SLOW_SHARE,
)


def check(body: str, figures: tuple[Figure, ...] = FIGURES) -> list[Statement]:
    return check_figures(f"# Report\n\n## Summary\n\n{body}\n", ("## Summary",), figures)


def ties(body: str) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(s.number.text, s.verdict, tuple(f.key for f in s.tied)) for s in check(body)]


def test_each_number_ties_to_the_figure_its_clause_names() -> None:
    assert ties("89 rows in the file, 88 analysed.") == [
        ("89", "agrees", ("rows.file",)),
        ("88", "mismatch", ("rows.analysed",)),
    ]


def test_a_bracketed_share_widens_to_its_clause_then_to_its_part_of_the_sentence() -> None:
    body = "Billing: 10 rows (11.2%); Slow: 13 rows (14.6%)."
    assert ties(body) == [
        ("10", "agrees", ("billing.rows",)),
        ("11.2%", "agrees", ("billing.share",)),
        ("13", "agrees", ("slow.rows",)),
        ("14.6%", "agrees", ("slow.share",)),
    ]


def test_the_label_with_more_terms_wins_then_the_nearer_then_the_longer() -> None:
    assert ties("Billing: 10 rows.")[0][2] == ("billing.rows",)  # over "rows" of nothing
    assert ties("High or critical: 30.") == [("30", "agrees", ("high_or_critical",))]
    assert ties("Negative 58 and high 25.") == [
        ("58", "agrees", ("negative",)),
        ("25", "agrees", ("high",)),
    ]


def test_a_clause_is_extended_by_a_name_earlier_in_its_part_of_the_sentence() -> None:
    assert ties("Billing has 10 rows, 9 negative.")[1] == ("9", "agrees", ("billing.negative",))
    # Not by a name after it, nor across a semicolon.
    assert ties("58 negative, most of them about Billing.")[0][2] == ("negative",)
    assert ties("Billing: 10 rows; 58 negative.")[1][2] == ("negative",)


def test_words_inside_a_quotation_name_no_figure() -> None:
    # "Billing" is the customer's word here: 42% must not be read as Billing's share.
    assert ties("Churn rose 42%, as in “Billing is a mess”.") == [("42%", "unsupported", ())]
    assert ties("Churn rose 42%, as Billing shows.") == [("42%", "mismatch", ("billing.share",))]


def test_a_percentage_ties_only_to_shares_and_a_count_only_to_counts_and_values() -> None:
    assert ties("Negative: 58 (65.2%).") == [
        ("58", "agrees", ("negative",)),
        ("65.2%", "agrees", ("negative.share",)),
    ]


def test_shares_compare_at_the_precision_written() -> None:
    verdicts = [
        s.verdict for s in check("Billing 11.2%, Billing 11%, Billing 11.24%, Billing 11.3%.")
    ]
    assert verdicts == ["agrees", "agrees", "agrees", "mismatch"]


def test_both_half_up_and_half_even_rounding_are_accepted() -> None:
    eighth = Figure("late.share", 0.125, "share", (("late",),))
    written = [s.verdict for s in check("late 12%, late 13%, late 12.5%, late 14%", (eighth,))]
    assert written == ["agrees", "agrees", "agrees", "mismatch"]


def test_an_untied_number_agrees_only_when_it_equals_a_figure_of_its_kind() -> None:
    assert ties("We looked at 89 and at 42.") == [("89", "agrees", ()), ("42", "unsupported", ())]
    assert ties("Churn was 89%.") == [("89%", "unsupported", ())]


def test_equally_named_figures_all_count() -> None:
    twin = Figure("twin", 88, "count", (("file",),))
    assert [s.verdict for s in check("88 in the file.", (ROWS, twin))] == ["agrees"]


def test_a_number_inside_a_name_is_part_of_the_name() -> None:
    named = Figure("theme.top_3_issues.rows", 4, "count", (("top 3 issues", "row"),))
    assert ties_with("Top 3 issues: 4 rows", named) == [("4", "agrees")]


def ties_with(body: str, *figures: Figure) -> list[tuple[str, str]]:
    return [(s.number.text, s.verdict) for s in check(body, figures)]


def test_only_the_rule_sections_are_read_and_subsections_belong_to_them() -> None:
    markdown = (
        "# Report\n\n42 before.\n\n## Summary\n\n89 in the file.\n\n### Detail\n\n43 here.\n\n"
        "## Other\n\n44 after.\n"
    )
    read_numbers = [s.number.text for s in check_figures(markdown, ("## Summary",), FIGURES)]
    assert read_numbers == ["89", "43"]


def test_lines_and_columns_are_where_the_number_is_written() -> None:
    markdown = "# R\n\n## Summary\n\n- Source: `a.csv`, **88** rows in the \\*file\\*.\n"
    (statement,) = check_figures(markdown, ("## Summary",), FIGURES)
    assert (statement.line, statement.column, statement.verdict) == (5, 22, "mismatch")


def test_a_table_cell_is_named_by_its_header_and_its_rows_text_cells() -> None:
    table = (
        "| # | Theme | Rows | Share | Negative |\n| --- | --- | --- | --- | --- |\n"
        "| 1 | Billing | 10 | 11.2% | 8 |\n| 2 | Slow | 13 | 14.6% | 9 |"
    )
    assert ties(table) == [
        ("10", "agrees", ("billing.rows",)),
        ("11.2%", "agrees", ("billing.share",)),
        ("8", "mismatch", ("billing.negative",)),
        ("13", "agrees", ("slow.rows",)),
        ("14.6%", "agrees", ("slow.share",)),
        ("9", "mismatch", ("negative",)),  # no figure for Slow's negative rows: the header's
    ]


def test_a_rank_column_holds_no_figures() -> None:
    table = "| Rank | Theme | Rows |\n| --- | --- | --- |\n| 7 | Billing | 10 |"
    assert ties(table) == [("10", "agrees", ("billing.rows",))]


def test_a_list_is_named_by_the_sentence_that_introduces_it() -> None:
    assert ties("Billing:\n\n- 10 rows\n- 9 negative") == [
        ("10", "agrees", ("billing.rows",)),
        ("9", "agrees", ("billing.negative",)),
    ]


def test_numbers_in_quotations_are_not_figures() -> None:
    assert ties("> “I waited 42 minutes” — fb_001") == []


# -- the validator, declared by a plugin of its own -----------------------------------------

ORDERS = "artifacts/orders.json"
SUMMARY = "artifacts/summary.md"


def order_figures(documents: Mapping[str, Any], index: EvidenceIndex) -> list[Figure]:
    orders = documents[ORDERS]["orders"]
    late = sum(1 for order in orders if order["late"])
    return [
        Figure("source_rows", len(index), "count", (("source",),)),
        Figure("orders", len(orders), "count", (("orders",),)),
        Figure("late.share", late / len(orders), "share", (("late",),)),
        Figure("average", sum(o["value"] for o in orders) / len(orders), "value", (("average",),)),
    ]


def orders_plugin() -> Plugin:
    contracts = (
        ArtifactContract(name=ORDERS, required=True),
        ArtifactContract(name=SUMMARY, required=True, required_headings=("## Summary",)),
    )
    rule = FigureRule(
        artifact=SUMMARY, sections=("## Summary",), sources=(ORDERS,), compute=order_figures
    )
    return Plugin(
        name="orders",
        description="Order summaries",
        skill="",
        prompt_fragments=(),
        contracts=contracts,
        plan=(),
        tools=lambda context: (),
        input=TableInput(tool_name="read_orders", id_column="id", text_column="text"),
        figure_rules=(rule,),
    )


@pytest.fixture
def orders_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "input").mkdir(parents=True)
    (root / "input" / "orders.csv").write_text("id,text\no1,late\no2,fine\n", encoding="utf-8")
    build_evidence_index(root / "input" / "orders.csv", id_column="id", text_column="text").write(
        root / "runtime" / "evidence_index.json"
    )
    orders = [
        {"late": True, "value": 10},
        {"late": False, "value": 20},
        {"late": False, "value": 35},
    ]
    write(root, ORDERS, json.dumps({"orders": orders}))
    write(root, SUMMARY, "## Summary\n\n3 orders from 2 source rows; 33.3% late; average 21.7.\n")
    return root


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_plugin_declares_its_own_figure_rules(orders_workspace: Path) -> None:
    plugin = orders_plugin()
    assert "FigureValidationHook" in [v.name for v in stop_validators(plugin, entry_points=False)]
    report = validate_workspace(orders_workspace, plugin.contracts, plugin=plugin)
    assert report.passed, report.error_message


def test_a_wrong_figure_is_a_mismatch_with_the_right_value(orders_workspace: Path) -> None:
    plugin = orders_plugin()
    write(orders_workspace, SUMMARY, "## Summary\n\n4 orders; 33.3% late; average 21.5.\n")
    report = validate_workspace(orders_workspace, plugin.contracts, plugin=plugin)
    assert [(f.code, f.artifact, f.path) for f in report.findings] == [
        ("figure_mismatch", SUMMARY, "line 3"),
        ("figure_mismatch", SUMMARY, "line 3"),
    ]
    orders, average = report.findings
    assert orders.details == {
        "line": 3,
        "column": 1,
        "stated": "4",
        "expected": "3",
        "figure": "orders",
        "value": 3,
        "exact": "3",
        "rule": "rounded half up",
    }
    assert average.details["expected"] == "21.7"
    assert "which is 3" in orders.message
    assert report.error_message == (
        "figure mismatch: 4 should be 3 (orders, line 3), 21.5 should be 21.7 (average: "
        f"21.666667…, rounded half up to 1 decimal, line 3) in {SUMMARY}"
    )
    assert report.artifacts == {ORDERS: "validated", SUMMARY: "rejected"}


def test_an_invented_figure_is_unsupported(orders_workspace: Path) -> None:
    plugin = orders_plugin()
    write(orders_workspace, SUMMARY, "## Summary\n\n3 orders.\n\n42% of customers churned.\n")
    report = validate_workspace(orders_workspace, plugin.contracts, plugin=plugin)
    (finding,) = report.findings
    assert (finding.code, finding.path, finding.details["line"]) == (
        "unsupported_figure",
        "line 5",
        5,
    )
    assert report.error_message == f"unsupported figures: 42% (line 5) in {SUMMARY}"


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(lambda root: (root / ORDERS).unlink(), id="source-missing"),
        pytest.param(lambda root: write(root, ORDERS, "{not json"), id="source-unreadable"),
        pytest.param(
            lambda root: (root / "runtime" / "evidence_index.json").unlink(), id="no-index"
        ),
    ],
)
def test_a_rule_without_its_data_reports_nothing(orders_workspace: Path, breaks: Any) -> None:
    plugin = orders_plugin()
    write(orders_workspace, SUMMARY, "## Summary\n\n4 orders.\n")
    breaks(orders_workspace)
    report = validate_workspace(orders_workspace, plugin.contracts, plugin=plugin)
    assert not {f.code for f in report.findings} & {"figure_mismatch", "unsupported_figure"}


def test_a_plugin_without_figure_rules_gets_no_figure_check() -> None:
    import dataclasses

    plugin = dataclasses.replace(orders_plugin(), figure_rules=())
    assert "FigureValidationHook" not in [
        v.name for v in stop_validators(plugin, entry_points=False)
    ]


def test_a_figure_is_written_as_a_report_should_write_it() -> None:
    assert [ROWS.text, BILLING_SHARE.text, Figure("n", 1234, "count", ()).text] == [
        "89",
        "11.2%",
        "1,234",
    ]
    assert BILLING_SHARE.written(0) == "11%"
