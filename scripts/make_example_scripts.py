"""Write `examples/scripts/*.json`: scripted models that each replay one delivery.

    python scripts/make_example_scripts.py

Every script reads the shipped sample through `read_feedback_csv` and writes the three
deliverables with `write_file`, as a model would. The passing delivery analyses every row of
`examples/sample_feedback.csv` (so coverage holds): six rows in a model's own words (HAND_ITEMS
below), the rest as the offline analyst analyses them; its backlog and report are written by
hand in the style of an LLM. Each failure script changes exactly one thing of it (FAILURES),
so `runlens run ... --model scripted:examples/scripts/NAME.json` shows that one failure.
Run it again after changing the sample, the contracts or the offline analyst.
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runlens.runtime.run import run_plugin
from runlens_feedback import plugin
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT
from runlens_feedback.offline import OfflineAnalyst

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
SCRIPTS = ROOT / "examples" / "scripts"

Documents = dict[str, Any]

HAND_ITEMS = [
    {"feedback_id": "fb_001", "sentiment": "negative", "severity": "high",
     "pain_point": "周报导出太慢", "evidence_text": "导出周报太慢了"},
    {"feedback_id": "fb_002", "sentiment": "negative", "severity": "high",
     "pain_point": "Excel export takes minutes",
     "evidence_text": "takes forever, sometimes over five minutes"},
    {"feedback_id": "fb_003", "sentiment": "negative", "severity": "high",
     "pain_point": "登录验证码误报", "evidence_text": "登录经常失败，提示验证码错误"},
    {"feedback_id": "fb_004", "sentiment": "positive", "severity": "low",
     "pain_point": "仪表盘美观", "evidence_text": "仪表盘做得很漂亮"},
    {"feedback_id": "fb_005", "sentiment": "negative", "severity": "critical",
     "pain_point": "账单多扣席位费", "evidence_text": "这个月为什么多扣了两个席位的钱？"},
    {"feedback_id": "fb_011", "sentiment": "negative", "severity": "critical",
     "pain_point": "duplicate annual charge",
     "evidence_text": "We were charged twice for the annual plan."},
]  # fmt: skip

BACKLOG_ITEMS = [
    {
        "title": "Stop duplicate and unexplained charges",
        "priority": "P0",
        "evidence_feedback_ids": ["fb_005", "fb_011"],
        "acceptance_criteria": [
            "An invoice lists every seat charged with its date",
            "A renewal can never charge the same plan twice",
        ],
        "metric": "Billing tickets per month, target: half of today's",
    },
    {
        "title": "Make report exports finish in seconds",
        "priority": "P1",
        "evidence_feedback_ids": ["fb_001", "fb_002"],
        "acceptance_criteria": [
            "A weekly report with 50k rows exports in under 10 s",
            "Large exports continue in the background with a notification",
        ],
        "metric": "p95 export time, target: under 10 s",
    },
    {
        "title": "Fix false captcha errors at login",
        "priority": "P1",
        "evidence_feedback_ids": ["fb_003"],
        "acceptance_criteria": ["A correct captcha is always accepted"],
        "metric": "Login failure rate, target: under 1%",
    },
]

REPORT_TEXT = """\
# FeedbackLens Insight Report

Source: examples/sample_feedback.csv (a hand-written example of what a model might deliver).

## Product Context

ReportHub is a B2B reporting product; this sample covers support tickets, app store reviews and
survey answers: 89 rows in the file, all of them analysed.

## Executive Summary

Billing errors are the most severe problem; slow exports are the most frequent one; login
failures block users outright.

## Top Pain Points

1. Duplicate or unexplained charges (P0)
2. Slow report exports (P1)
3. False captcha errors at login (P1)

## Evidence

> “这个月为什么多扣了两个席位的钱？” — fb_005

> “We were charged twice for the annual plan.” — fb_011

> “导出周报太慢了” — fb_001

## Recommended Actions

Fix billing first, then export speed, then login.

## Risks And Unknowns

The report quotes six rows; the analysis covers every row, but its themes come from keywords
and may split one problem in two.
"""

PARAPHRASE = "每周导出报告需要等待很长时间，影响团队协作效率。"


def offline_items() -> list[dict[str, Any]]:
    """The offline analyst's analysis of the sample, item by item."""
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "run"
        result = asyncio.run(run_plugin(plugin, SAMPLE, OfflineAnalyst(), workspace=workspace))
        if not result.passed:
            raise SystemExit(f"the offline run failed: {result.error_message}")
        analysis = json.loads((workspace / ANALYSIS).read_text(encoding="utf-8"))
    items: list[dict[str, Any]] = analysis["items"]
    return items


def passing_documents() -> Documents:
    hand = {item["feedback_id"]: item for item in HAND_ITEMS}
    items = [hand.get(item["feedback_id"], item) for item in offline_items()]
    return {
        ANALYSIS: {"items": items, "failed_batches": []},
        BACKLOG: {"items": BACKLOG_ITEMS},
        REPORT: REPORT_TEXT,
    }


def _bad_priority(documents: Documents, value: str = "high") -> None:
    documents[BACKLOG]["items"][0]["priority"] = value


def _fabricated_id(documents: Documents) -> None:
    documents[ANALYSIS]["items"][0]["feedback_id"] = "fb_999"
    documents[BACKLOG]["items"][1]["evidence_feedback_ids"][0] = "fb_999"


def _missing_heading(documents: Documents) -> None:
    report = documents[REPORT]
    documents[REPORT] = report[: report.index("## Risks And Unknowns")].rstrip() + "\n"


def _missing_report(documents: Documents) -> None:
    del documents[REPORT]


def _paraphrased(documents: Documents) -> None:
    documents[ANALYSIS]["items"][0]["evidence_text"] = PARAPHRASE


def _report_quotes(documents: Documents) -> None:
    """Two citations a reader cannot check by eye: words the row never said, and a row that
    does not exist."""
    evidence = "## Evidence\n\n"
    invented = "> “Exports are instant and we love them” — fb_001\n\n> “全部都很好” — fb_999\n\n"
    documents[REPORT] = documents[REPORT].replace(evidence, evidence + invented)


def _report_figure(documents: Documents) -> None:
    documents[REPORT] = documents[REPORT].replace("89 rows in the file", "88 rows in the file")


FAILURES: dict[str, Callable[[Documents], None]] = {
    "bad_priority": _bad_priority,
    "fabricated_id": _fabricated_id,
    "missing_heading": _missing_heading,
    "missing_report": _missing_report,
    "paraphrased_evidence": _paraphrased,
    "fabricated_report_quotes": _report_quotes,
    "wrong_report_figure": _report_figure,
}


def _content(document: Any) -> str:
    if isinstance(document, str):
        return document
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def delivery(documents: Documents) -> list[dict[str, Any]]:
    writes = [
        {"name": "write_file", "arguments": {"path": name, "content": _content(document)}}
        for name, document in documents.items()
    ]
    return [
        {
            "content": "I'll read the feedback first.",
            "tool_calls": [{"name": "read_feedback_csv", "arguments": {"offset": 0, "limit": 100}}],
        },
        {"content": "Writing the deliverables.", "tool_calls": writes},
        {"content": "All deliverables are written."},
    ]


def write_script(name: str, turns: list[dict[str, Any]]) -> None:
    path = SCRIPTS / f"{name}.json"
    path.write_text(json.dumps({"turns": turns}, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    passing = passing_documents()
    write_script("passing", delivery(passing))
    for name, breaks in FAILURES.items():
        documents = copy.deepcopy(passing)
        breaks(documents)
        write_script(name, delivery(documents))
    # A repair round: the first delivery has an invalid priority, the fix rewrites the backlog.
    broken = copy.deepcopy(passing)
    _bad_priority(broken, "urgent")
    fix = {
        "content": "Fixing the priority the validator rejected.",
        "tool_calls": [
            {
                "name": "write_file",
                "arguments": {"path": BACKLOG, "content": _content(passing[BACKLOG])},
            }
        ],
    }
    write_script("repaired_priority", [*delivery(broken), fix, {"content": "Fixed."}])


if __name__ == "__main__":
    main()
