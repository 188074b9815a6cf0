"""Helpers for Feedback Analysis tests: deterministic feedback CSVs and CLI runs."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from runlens.cli import cli
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

_ZH_AREAS = ("导出报表", "登录", "仪表盘", "账单", "手机应用", "搜索", "通知", "权限设置")
_EN_AREAS = ("the export", "login", "the dashboard", "billing", "the mobile app", "search")
_ZH_CLAUSES = (
    "{area}太慢了，每次都要等{n}分钟",
    "{area}经常失败，提示错误",
    "{area}又崩溃了，丢了{n}条数据",
    "希望{area}能支持批量操作",
    "{area}很好用，团队都很喜欢",
    "{area}还行，但是偶尔会卡",
    "这个月{area}多扣了{n}块钱",
)
_EN_CLAUSES = (
    "{area} is so slow, it takes {n} minutes every time",
    "{area} keeps failing with an error",
    "{area} crashed again and we lost {n} records",
    "please add bulk editing to {area}",
    "I love {area}, the whole team uses it",
    "{area} is fine but sometimes freezes",
    "we were charged {n} dollars twice for {area}",
)


#: A few English feedback rows, each with a problem to quote.
ENGLISH_ROWS: list[dict[str, str]] = [
    {"feedback_id": "e1", "text": "The export to Excel takes forever, over five minutes."},
    {"feedback_id": "e2", "text": "Login fails every morning with an invalid token error."},
    {"feedback_id": "e3", "text": "Love the new dashboard, it is clean and fast."},
    {"feedback_id": "e4", "text": "We were charged twice this month, please refund us."},
]


def generated_rows(count: int, seed: int = 7) -> list[dict[str, str]]:
    """`count` feedback rows, about half Chinese and half English, the same for a given seed."""
    rng = random.Random(seed)
    rows = []
    for number in range(1, count + 1):
        zh = rng.random() < 0.5
        areas, clauses = (_ZH_AREAS, _ZH_CLAUSES) if zh else (_EN_AREAS, _EN_CLAUSES)
        parts = [
            rng.choice(clauses).format(area=rng.choice(areas), n=rng.randint(2, 90))
            for _ in range(rng.randint(1, 3))
        ]
        text = ("，".join(parts) + "。") if zh else (". ".join(parts).capitalize() + ".")
        rows.append(
            {
                "feedback_id": f"g{number:06d}",
                "text": text,
                "channel": rng.choice(("app_store", "email", "survey")),
                "rating": str(rng.randint(1, 5)),
            }
        )
    return rows


def write_csv(
    path: Path,
    rows: Sequence[Mapping[str, str]],
    *,
    encoding: str = "utf-8",
    columns: Iterable[str] | None = None,
) -> Path:
    """Write `rows` with the csv module (quoting what needs it) in `encoding`."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns or rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes(out.getvalue().encode(encoding))
    return path


@dataclass
class OfflineRun:
    """What `runlens run feedback-analysis CSV --json` left behind."""

    exit_code: int
    output: str
    workspace: Path

    @property
    def result(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.output)
        return document

    @property
    def analysis(self) -> dict[str, Any]:
        return self._json(ANALYSIS)

    @property
    def backlog(self) -> dict[str, Any]:
        return self._json(BACKLOG)

    @property
    def report(self) -> str:
        return (self.workspace / REPORT).read_text(encoding="utf-8")

    def artifact_bytes(self) -> dict[str, bytes]:
        names = (ANALYSIS, BACKLOG, REPORT, CHART)
        return {name: (self.workspace / name).read_bytes() for name in names}

    def _json(self, name: str) -> dict[str, Any]:
        document: dict[str, Any] = json.loads((self.workspace / name).read_text(encoding="utf-8"))
        return document


def run_offline(csv_path: Path, workspace: Path, *options: str) -> OfflineRun:
    """Run feedback-analysis on `csv_path` with the default (offline) model through the CLI,
    with `options` (`--id-column=review_id`, ...)."""
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "feedback-analysis",
            str(csv_path),
            "--json",
            "--workspace",
            str(workspace),
            *options,
        ],
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return OfflineRun(result.exit_code, result.stdout, workspace)
