"""Shared fixtures: a small feedback CSV and a Feedback Analysis workspace that passes.

`feedback_workspace` builds the workspace the way a run leaves it: the CSV under `input/`, the
Evidence Index built from it by the real builder, `runtime/run.json` recording the plugin and
the index hash, and three deliverables that pass every validator. Tests change the documents
(`ws.analysis`, `ws.backlog`, `ws.report`) and call `ws.write()` to break one thing at a time.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.slow import is_slow, is_timed

from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT, REPORT_HEADINGS

# fb_001 is the design article's example row.
FB_001_TEXT = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
FEEDBACK_CSV = f"""feedback_id,text,channel,rating
fb_001,{FB_001_TEXT},app_store,2
fb_002,"Login fails with ""invalid token"" after the update, every single time.",email,1
fb_003,希望仪表盘可以自定义指标顺序。,survey,4
"""

_ANALYSIS: dict[str, Any] = {
    "items": [
        {"feedback_id": "fb_001", "sentiment": "negative", "severity": "high",
         "pain_point": "周报导出慢", "evidence_text": "等三分钟很影响效率"},
        {"feedback_id": "fb_002", "sentiment": "negative", "severity": "critical",
         "pain_point": "login token errors", "evidence_text": 'Login fails with "invalid token"'},
        {"feedback_id": "fb_003", "sentiment": "neutral", "severity": "low",
         "pain_point": "仪表盘不可定制", "evidence_text": "自定义指标顺序"},
    ],
    "failed_batches": [],
}  # fmt: skip
_BACKLOG: dict[str, Any] = {
    "items": [
        {"title": "Fix invalid token on login", "priority": "P0",
         "evidence_feedback_ids": ["fb_002"],
         "acceptance_criteria": ["Login succeeds after an update"], "metric": "login errors/day"},
        {"title": "Speed up weekly report export", "priority": "P1",
         "evidence_feedback_ids": ["fb_001", "fb_003"],
         "acceptance_criteria": ["Export finishes in 10 s"], "metric": "p95 export time"},
    ]
}  # fmt: skip
REPORT_TEXT = "".join(f"{h}\n\nAbout {h.lstrip('# ')}.\n\n" for h in REPORT_HEADINGS)


@dataclass
class FeedbackWorkspace:
    """A workspace on disk plus the documents its artifacts are written from."""

    root: Path
    csv: Path
    analysis: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(_ANALYSIS))
    backlog: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(_BACKLOG))
    report: str = REPORT_TEXT
    #: The index hash recorded in runtime/run.json when the fixture wrote the index.
    index_sha256: str = ""

    def write(self) -> FeedbackWorkspace:
        """(Re)write the three artifacts from the documents."""
        self.write_text(ANALYSIS, json.dumps(self.analysis, ensure_ascii=False, indent=2))
        self.write_text(BACKLOG, json.dumps(self.backlog, ensure_ascii=False, indent=2))
        self.write_text(REPORT, self.report)
        return self

    def write_text(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def remove(self, name: str) -> None:
        (self.root / name).unlink()

    @property
    def index_path(self) -> Path:
        return self.root / "runtime" / "evidence_index.json"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests listed in tests/slow.py `slow` or `timed` before `-m` selects by
    marker."""
    for item in items:
        if is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)
        if is_timed(item.nodeid):
            item.add_marker(pytest.mark.timed)


@pytest.fixture(scope="session", autouse=True)
def _session_runs_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Runs made by session- and module-scoped fixtures land in a temporary runs home, and
    so in its run store: never in the repository's ./runlens-runs, never in a store the
    environment names."""
    home = tmp_path_factory.mktemp("runlens-home")
    patch = pytest.MonkeyPatch()
    patch.setenv("RUNLENS_HOME", str(home))
    patch.delenv("RUNLENS_DATABASE_URL", raising=False)
    yield home
    patch.undo()


@pytest.fixture(autouse=True)
def runs_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own runs home (`RUNLENS_HOME`), holding the runs and the run store of every
    `runlens run` it starts without naming one. Outside `tmp_path`, which some tests list."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("RUNLENS_HOME", str(home))
    return home


@pytest.fixture
def feedback_csv(tmp_path: Path) -> Path:
    path = tmp_path / "sample_feedback.csv"
    path.write_text(FEEDBACK_CSV, encoding="utf-8")
    return path


@pytest.fixture
def feedback_workspace(tmp_path: Path, feedback_csv: Path) -> FeedbackWorkspace:
    from runlens.evidence import build_evidence_index

    ws = FeedbackWorkspace(root=tmp_path / "workspace", csv=feedback_csv)
    ws.write_text(f"input/{feedback_csv.name}", FEEDBACK_CSV)
    index = build_evidence_index(feedback_csv, id_column="feedback_id", text_column="text")
    (ws.root / "runtime").mkdir(parents=True, exist_ok=True)
    ws.index_sha256 = index.write(ws.index_path)
    run_record = {"plugin": "feedback-analysis", "evidence_index_sha256": ws.index_sha256}
    ws.write_text("runtime/run.json", json.dumps(run_record))
    return ws.write()


@pytest.fixture
def good_documents() -> tuple[dict[str, Any], dict[str, Any], str]:
    """Analysis, backlog and report for FEEDBACK_CSV that pass every validator."""
    return copy.deepcopy(_ANALYSIS), copy.deepcopy(_BACKLOG), REPORT_TEXT
