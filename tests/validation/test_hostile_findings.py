"""The whole verdict on a hostile Feedback Analysis workspace stays exactly what it was.

The workspace is built here, deterministically, from generated rows: quotes of every kind
(whole rows, padded, fragments, cuts inside a word, weak, of another row, blank, not a
string), unknown and malformed ids, backlog items citing rows of other themes, and a report
whose sections state right, wrong and unsupported figures and whose evidence cites good and
bad quotes. Every validator of the plugin judges it; the findings (codes, messages, details,
order), the summaries, the verified quotes and id citations are compared with
`data/hostile_findings.json`, written by the validators as they were before they were made
faster. A change to any of them that changes the verdict fails here.

To write the file again after an intended change of behaviour:

    PYTHONPATH=src python -m tests.validation.test_hostile_findings
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.feedback.helpers import generated_rows, write_csv

from runlens.evidence import build_evidence_index
from runlens.validation import validate_workspace
from runlens_feedback import plugin
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

GOLDEN = Path(__file__).parent / "data" / "hostile_findings.json"
_SENTIMENTS = ("negative", "negative", "mixed", "neutral", "positive")
_SEVERITIES = ("high", "medium", "critical", "low")
_THEMES = ("export_speed", "login", "billing", "Dashboard Praise", "")


def _quote(number: int, text: str, other: str) -> Any:
    """The quote an item gives for its row: one of the kinds a model gets wrong, or right."""
    words = text.split()
    kind = number % 13
    if kind == 1:
        return f"  {text}  "  # padded whole row
    if kind == 2 and len(words) > 3:
        return " ".join(words[1:3])  # whole words from the middle
    if kind == 3 and len(text) > 8:
        return text[1:8]  # starts (and perhaps ends) inside a word
    if kind == 4:
        return text[:2]  # weak: too short
    if kind == 5:
        return other  # another row's text
    if kind == 6:
        return "   "  # blank
    if kind == 7:
        return 42  # not a string
    if kind == 8:
        return text.replace("e", "é", 1)  # not verbatim
    if kind == 9:
        return "，。"  # no letter or digit
    return text


def _analysis(rows: list[dict[str, str]]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for number, row in enumerate(rows):
        other = rows[(number + 7) % len(rows)]["text"]
        item: dict[str, Any] = {
            "feedback_id": row["feedback_id"],
            "sentiment": _SENTIMENTS[number % len(_SENTIMENTS)],
            "severity": _SEVERITIES[number % len(_SEVERITIES)],
            "pain_point": f"pain {number % 6}",
            "evidence_text": _quote(number, row["text"], other),
            "theme": _THEMES[number % len(_THEMES)],
            "suggested_action": "Look into it.",
            "language": "zh" if "，" in row["text"] else "en",
            "sentiment_score": -1.5 if number % 2 else 2.0,
        }
        if number % 17 == 11:
            item["feedback_id"] = f"{row['feedback_id']}x"  # unknown id
        if number % 29 == 13:
            item["feedback_id"] = 7  # not an id
        items.append(item)
    items.append(dict(items[0]))  # a row analysed twice, quoted the same way
    return {"items": items, "failed_batches": []}


def _backlog(rows: list[dict[str, str]]) -> dict[str, Any]:
    ids = [row["feedback_id"] for row in rows]
    return {
        "items": [
            {
                "title": "Speed up the export",
                "theme": "export_speed",
                "priority": "P1",
                "evidence_feedback_ids": [ids[0], ids[1], "nope_1", ids[5]],
                "acceptance_criteria": ["Export in 10 s"],
                "metric": "p95 export time",
            },
            {
                "title": "Fix login",
                "theme": "login",
                "priority": "P0",
                "evidence_feedback_ids": [ids[1], 5, ids[6]],
                "acceptance_criteria": ["Login works"],
                "metric": "login errors/day",
            },
            {
                "title": "Billing",
                "theme": "billing",
                "priority": "P9",
                "evidence_feedback_ids": ids[2:40:5],
                "acceptance_criteria": ["No double charges"],
                "metric": "refunds",
            },
        ]
    }


def _report(rows: list[dict[str, str]]) -> str:
    first, second = rows[0], rows[10]
    cut = second["text"][2:12]
    return "\n".join(
        [
            "# FeedbackLens Insight Report",
            "",
            "## Product Context",
            "",
            f"The file has {len(rows)} rows; {len(rows) - 3} rows were analysed (12.5%).",
            "",
            "## Executive Summary",
            "",
            "- Negative: 48 rows (40.0%), 30 negative rows about login.",
            "- Billing has 24 rows, 9 negative, 6 high.",
            "- 7 widgets broke and 33.3% of rows are mixed; 2 themes.",
            "- Severity: 31 high, 29 critical, 58 high or critical rows (48.3%).",
            "",
            "## Top Pain Points",
            "",
            "| Theme | Rows | Share | Problem rows |",
            "| --- | --- | --- | --- |",
            "| export_speed | 24 | 20.0% | 19 |",
            "| login | 25 | 21% | 20 |",
            "| billing | 24 | 19.9% | 99 |",
            "",
            "## Evidence",
            "",
            f"> “{first['text']}” — {first['feedback_id']}",
            "",
            f"> “{cut}” — {second['feedback_id']}",
            "",
            f"> “{first['text']}” — g999999",
            "",
            "> “An unsourced quotation.”",
            "",
            "## Recommended Actions",
            "",
            "Fix the 12 crashes first, then 40% of the login errors (see G000003 and P1).",
            "",
        ]
    )


def hostile_workspace(root: Path) -> tuple[Path, str]:
    """The hostile workspace under `root` and the index hash its run recorded."""
    rows = generated_rows(120, seed=28)
    rows[3]["text"] = "  Café naïve e\u0301 👍🏽 " + rows[3]["text"]
    rows[4]["text"] = rows[8]["text"]  # two rows with the same text
    workspace = root / "workspace"
    (workspace / "input").mkdir(parents=True)
    source = write_csv(workspace / "input" / "feedback.csv", rows)
    index = build_evidence_index(source, id_column="feedback_id", text_column="text")
    (workspace / "runtime").mkdir(parents=True)
    sha = index.write(workspace / "runtime" / "evidence_index.json")
    (workspace / "runtime" / "run.json").write_text(json.dumps({"evidence_index_sha256": sha}))
    for name, text in (
        (ANALYSIS, json.dumps(_analysis(rows), ensure_ascii=False, indent=2)),
        (BACKLOG, json.dumps(_backlog(rows), ensure_ascii=False, indent=2)),
        (REPORT, _report(rows)),
    ):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return workspace, sha


def verdict(root: Path) -> dict[str, Any]:
    """Everything the validators say about the hostile workspace, as JSON."""
    workspace, sha = hostile_workspace(root)
    report = validate_workspace(
        workspace, plugin.contracts, expected_index_sha256=sha, plugin=plugin
    )
    document: dict[str, Any] = json.loads(report.model_dump_json())
    return document


def test_the_verdict_on_a_hostile_workspace_is_unchanged(tmp_path: Path) -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    actual = verdict(tmp_path)
    assert actual["findings"] == expected["findings"]
    assert actual == expected


def test_the_hostile_workspace_is_hostile(tmp_path: Path) -> None:
    """The golden verdict is worth comparing: it blocks, with findings of every kind."""
    codes = {finding["code"] for finding in verdict(tmp_path)["findings"]}
    assert {
        "unknown_evidence_id",
        "evidence_text_mismatch",
        "empty_evidence_text",
        "weak_evidence_quote",
        "figure_mismatch",
        "unsupported_figure",
        "evidence_theme_mismatch",
        "unsourced_quote",
        "invalid_enum",
    } <= codes


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        found = verdict(Path(scratch))
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(found, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {GOLDEN}: {len(found['findings'])} findings\n")
