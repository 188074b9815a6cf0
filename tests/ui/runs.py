"""Real runs for the UI tests, made by the real CLI into a RunLens home.

Each helper runs `python -m runlens run feedback-analysis ...` in a subprocess with
`RUNLENS_HOME=<home>` (and `RUNLENS_DATABASE_URL` when a store URL is given), so the run lands
in the home's workspace folder and in its store exactly as a user's run does. The helpers
check that the run came out the way it is meant to (status, findings), so a test built on
one never passes on a run that silently lost what it was made to show.

- `completed_run`: the offline model on examples/sample_feedback.csv; every deliverable passes.
- `failed_run`: a scripted model whose deliverables cite an invented id, quote words that are
  not in their row, and whose report has an unsourced quote and a misattributed citation, next
  to one good citation; `FailedRun` says which findings sit where.
- `hostile_run`: a scripted model whose deliverables, input file name and rows carry script
  tags, event handlers, `javascript:` links, a raw HTML block and template syntax; pages must
  show them as text and run none of it.
- `revised_run`: the failed run done right on the same rows (completed), with one backlog item
  added, one removed and one changed, for the compare page.

All take `database_url=` for a store other than the home's SQLite file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT, REPORT_HEADINGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAMPLE_CSV = EXAMPLES / "sample_feedback.csv"
PLUGIN = "feedback-analysis"
#: Seconds one helper run may take before the helper gives up on it.
RUN_TIMEOUT = 180.0


@dataclass(frozen=True)
class MadeRun:
    """A finished run: its id, its workspace and the verdict `runlens run --json` printed."""

    run_id: str
    workspace: Path
    status: str
    verdict: dict[str, Any]
    #: The input file's name, as the run recorded it.
    input_name: str

    @property
    def findings(self) -> list[dict[str, Any]]:
        findings: list[dict[str, Any]] = self.verdict.get("findings") or []
        return findings

    @property
    def error_message(self) -> str | None:
        message = self.verdict.get("error_message")
        return message if isinstance(message, str) else None


@dataclass(frozen=True)
class Citation:
    """A report citation: the quote, the row it names, the report line it is on."""

    quote: str
    row_id: str
    line: int


@dataclass(frozen=True)
class FailedRun(MadeRun):
    """`failed_run`: the run plus where its deliberate mistakes are."""

    #: (code, artifact, path) of every finding the run was made to have.
    expected: list[tuple[str, str, str]] = field(default_factory=list)
    #: The report's one good citation (verified), for the evidence page.
    good_citation: Citation | None = None


@dataclass(frozen=True)
class HostileRun(MadeRun):
    """`hostile_run`: the run plus the hostile strings it carries."""

    #: A verified report citation whose row holds hostile markup (the evidence page shows it).
    hostile_citation: Citation | None = None


# -- running the CLI --------------------------------------------------------------------------


def run_cli(
    home: Path,
    input_path: Path,
    *options: str,
    model: str = "offline",
    database_url: str | None = None,
) -> MadeRun:
    """`runlens run feedback-analysis INPUT --model MODEL --json OPTIONS` into `home`."""
    env = {**os.environ, "RUNLENS_HOME": str(home)}
    if database_url is not None:
        env["RUNLENS_DATABASE_URL"] = database_url
    command = [sys.executable, "-m", "runlens", "run", PLUGIN, str(input_path)]
    command += ["--model", model, "--json", *options]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    if result.returncode not in (0, 1):
        raise AssertionError(
            f"runlens run exited {result.returncode}:\n{result.stderr}\n{result.stdout}"
        )
    verdict: dict[str, Any] = json.loads(result.stdout)
    return MadeRun(
        run_id=str(verdict["run_id"]),
        workspace=Path(verdict["workspace"]),
        status=str(verdict["status"]),
        verdict=verdict,
        input_name=input_path.name,
    )


def scripted_run(
    home: Path,
    csv_name: str,
    csv_text: str,
    documents: dict[str, str],
    *,
    database_url: str | None = None,
) -> MadeRun:
    """A scripted run on a CSV: read the input, write `documents` (name -> text), finish."""
    with tempfile.TemporaryDirectory(prefix="runlens-ui-input-") as scratch:
        folder = Path(scratch)
        source = folder / csv_name
        source.write_text(csv_text, encoding="utf-8")
        script = folder / "script.json"
        script.write_text(json.dumps({"turns": turns(documents)}, ensure_ascii=False), "utf-8")
        return run_cli(home, source, model=f"scripted:{script}", database_url=database_url)


def turns(documents: dict[str, str]) -> list[dict[str, Any]]:
    """The scripted model's turns: read the rows, write every document, say it is done."""
    writes = [
        {"name": "write_file", "arguments": {"path": name, "content": text}}
        for name, text in documents.items()
    ]
    return [
        {"tool_calls": [{"name": "read_feedback_csv", "arguments": {"offset": 0}}]},
        {"content": "Writing the deliverables.", "tool_calls": writes},
        {"content": "Done: all deliverables written."},
    ]


def report(sections: dict[str, list[str]]) -> str:
    """A report with every required heading, in order; `sections` adds paragraphs under some."""
    parts: list[str] = []
    for heading in REPORT_HEADINGS:
        parts.append(heading)
        parts.extend(sections.get(heading, [f"About {heading.lstrip('# ')}."]))
    return "\n\n".join(parts) + "\n"


def line_of(text: str, fragment: str) -> int:
    """The 1-based line of `text` on which `fragment` first appears."""
    for number, line in enumerate(text.splitlines(), start=1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} is not in the text")


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


# -- a completed run --------------------------------------------------------------------------


def completed_run(home: Path, *, database_url: str | None = None) -> MadeRun:
    """The offline model on examples/sample_feedback.csv: completed, no findings."""
    made = run_cli(home, SAMPLE_CSV, database_url=database_url)
    assert made.status == "completed", made.verdict
    assert made.findings == [], made.findings
    return made


# -- a failed run -----------------------------------------------------------------------------

FAILED_CSV = """feedback_id,text,channel,rating
fb_001,"Exporting the weekly report takes three minutes, which hurts the team.",support_ticket,2
fb_002,"Login fails with ""invalid token"" after the update, every single time.",email,1
fb_003,I would love to reorder the dashboard metrics myself.,survey,4
"""
#: The report's one good citation, and its mistakes.
GOOD_QUOTE = ("takes three minutes", "fb_001")
MISATTRIBUTED = ("The dashboard is perfect as it is", "fb_003")
UNSOURCED = "Nobody on the team reads the weekly report"
INVENTED_ID = "fb_404"
INVENTED_BACKLOG_ID = "fb_777"
WRONG_QUOTE = "Login never works on Sundays"


def failed_documents() -> dict[str, str]:
    analysis = {
        "items": [
            {"feedback_id": "fb_001", "sentiment": "negative", "severity": "high",
             "pain_point": "slow weekly export", "evidence_text": "takes three minutes"},
            {"feedback_id": "fb_002", "sentiment": "negative", "severity": "critical",
             "pain_point": "login token errors", "evidence_text": WRONG_QUOTE},
            {"feedback_id": "fb_003", "sentiment": "positive", "severity": "low",
             "pain_point": "dashboard metric order", "evidence_text": "reorder the dashboard"},
            {"feedback_id": INVENTED_ID, "sentiment": "negative", "severity": "medium",
             "pain_point": "invented complaint", "evidence_text": "this row does not exist"},
        ],
        "failed_batches": [],
    }  # fmt: skip
    backlog = {
        "items": [
            {"title": "Speed up the weekly export", "priority": "P1",
             "evidence_feedback_ids": ["fb_001"],
             "acceptance_criteria": ["Export finishes in 10 s"], "metric": "p95 export time"},
            {"title": "Fix the invented complaint", "priority": "P2",
             "evidence_feedback_ids": [INVENTED_BACKLOG_ID],
             "acceptance_criteria": ["Nobody complains"], "metric": "complaints per week"},
        ]
    }  # fmt: skip
    text = report(
        {
            "## Evidence": [
                f"> “{GOOD_QUOTE[0]}” — {GOOD_QUOTE[1]}",
                f"> “{MISATTRIBUTED[0]}” — {MISATTRIBUTED[1]}",
                f"> “{UNSOURCED}”",
            ]
        }
    )
    return {ANALYSIS: as_json(analysis), BACKLOG: as_json(backlog), REPORT: text}


def failed_run(home: Path, *, database_url: str | None = None) -> FailedRun:
    """A scripted run that fails with findings in both JSON files and in the report."""
    documents = failed_documents()
    made = scripted_run(
        home, "failed_feedback.csv", FAILED_CSV, documents, database_url=database_url
    )
    text = documents[REPORT]
    misattributed = f"line {line_of(text, MISATTRIBUTED[0])}"
    unsourced = f"line {line_of(text, UNSOURCED)}"
    expected = [
        ("evidence_text_mismatch", ANALYSIS, "items[1].evidence_text"),
        ("unknown_evidence_id", ANALYSIS, "items[3].feedback_id"),
        ("unknown_evidence_id", BACKLOG, "items[1].evidence_feedback_ids[0]"),
        ("evidence_text_mismatch", REPORT, misattributed),
        ("unsourced_quote", REPORT, unsourced),
    ]
    found = {(f["code"], f["artifact"], f["path"]) for f in made.findings}
    missing = [finding for finding in expected if finding not in found]
    assert made.status == "failed", made.verdict
    assert not missing, f"the failed run lacks {missing}; it has {sorted(found)}"
    good = Citation(GOOD_QUOTE[0], GOOD_QUOTE[1], line_of(text, GOOD_QUOTE[0]))
    return FailedRun(**vars(made), expected=expected, good_citation=good)


# -- a hostile run ----------------------------------------------------------------------------

SCRIPT_TAG = "<script>window.__pwned=1</script>"
IMG_ONERROR = '<img src=x onerror="window.__pwned=1">'
JAVASCRIPT_LINK = "[click me](javascript:window.__pwned=1)"
ONCLICK_LINK = '<a href="https://example.com/" onclick="window.__pwned=1">harmless link</a>'
RAW_HTML_BLOCK = '<div class="owned">\n<iframe src="javascript:window.__pwned=1"></iframe>\n</div>'
TEMPLATE = "{{7*7}} {% raw %}"
#: The hostile input file's name: markup in a name the runs list shows.
HOSTILE_CSV_NAME = "hostile <img src=x onerror=window.__pwned=1> feedback.csv"
HOSTILE_ROW = f"Login fails {SCRIPT_TAG} and then {IMG_ONERROR} shows up, every time."
HOSTILE_CSV = (
    "feedback_id,text,channel,rating\n"
    '"fb_001","Exporting the weekly report takes three minutes {{7*7}}.",support_ticket,2\n'
    f'"fb_002","{HOSTILE_ROW.replace(chr(34), chr(34) * 2)}",email,1\n'
)
#: A quote of the hostile row that carries a whole script tag; the report cites it with the
#: angle brackets escaped (`\<`), so the text a reader sees is the row's.
HOSTILE_QUOTE = f"Login fails {SCRIPT_TAG}"
ESCAPED_QUOTE = HOSTILE_QUOTE.replace("<", "\\<")
#: Every hostile string a page of the run may show; none may run.
HOSTILE_STRINGS = (SCRIPT_TAG, IMG_ONERROR, JAVASCRIPT_LINK, ONCLICK_LINK, TEMPLATE)


def hostile_documents() -> dict[str, str]:
    analysis = {
        "items": [
            {"feedback_id": "fb_001", "sentiment": "negative", "severity": "high",
             "pain_point": f"slow export {TEMPLATE}", "evidence_text": "takes three minutes",
             "theme": SCRIPT_TAG, "suggested_action": JAVASCRIPT_LINK},
            {"feedback_id": "fb_002", "sentiment": "negative", "severity": "critical",
             "pain_point": IMG_ONERROR, "evidence_text": HOSTILE_QUOTE,
             "theme": ONCLICK_LINK},
        ],
        "failed_batches": [],
    }  # fmt: skip
    backlog = {
        "items": [
            {"title": SCRIPT_TAG, "priority": "P0", "evidence_feedback_ids": ["fb_002"],
             "acceptance_criteria": [IMG_ONERROR, "javascript:window.__pwned=1"],
             "metric": TEMPLATE},
            {"title": f"Speed up exports {ONCLICK_LINK}", "priority": "P1",
             "evidence_feedback_ids": ["fb_001"],
             "acceptance_criteria": ["Export finishes in 10 s"], "metric": "p95 export time"},
        ]
    }  # fmt: skip
    text = report(
        {
            "## Executive Summary": [
                f"Script: {SCRIPT_TAG}",
                f"Image: {IMG_ONERROR}",
                f"Link: {JAVASCRIPT_LINK} and <javascript:window.__pwned=1>",
                f"Anchor: {ONCLICK_LINK}",
                f"Template: {TEMPLATE}",
            ],
            "## Top Pain Points": [RAW_HTML_BLOCK, "![pwned](javascript:window.__pwned=1)"],
            "## Evidence": [
                "> “takes three minutes” — fb_001",
                f"> “{ESCAPED_QUOTE}” — fb_002",
            ],
        }
    )
    return {ANALYSIS: as_json(analysis), BACKLOG: as_json(backlog), REPORT: text}


def hostile_run(home: Path, *, database_url: str | None = None) -> HostileRun:
    """A scripted run whose every deliverable, row and name carries hostile markup."""
    documents = hostile_documents()
    made = scripted_run(home, HOSTILE_CSV_NAME, HOSTILE_CSV, documents, database_url=database_url)
    assert made.status in ("completed", "failed"), made.verdict
    stored = (made.workspace / REPORT).read_text(encoding="utf-8")
    assert SCRIPT_TAG in stored and JAVASCRIPT_LINK in stored, "the hostile report was not kept"
    cited = Citation(HOSTILE_QUOTE, "fb_002", line_of(documents[REPORT], ESCAPED_QUOTE))
    at_quote = [f for f in made.findings if f["path"] == f"line {cited.line}"]
    assert not at_quote, f"the hostile citation was not verified: {at_quote}"
    return HostileRun(**vars(made), hostile_citation=cited)


# -- a revised run, to compare with the failed one ------------------------------------------

#: What `revised_run` changed in the failed run's backlog.
ADDED_TITLE = "Fix invalid token errors at login"
REMOVED_TITLE = "Fix the invented complaint"
CHANGED_TITLE = "Speed up the weekly export"


def revised_documents() -> dict[str, str]:
    """The failed run's deliverables with every mistake fixed: the invented item and the
    invented backlog entry gone, a new backlog item, one item's priority changed."""
    analysis = json.loads(failed_documents()[ANALYSIS])
    analysis["items"] = analysis["items"][:3]
    analysis["items"][1]["evidence_text"] = 'Login fails with "invalid token"'
    backlog = {
        "items": [
            {"title": CHANGED_TITLE, "priority": "P0", "evidence_feedback_ids": ["fb_001"],
             "acceptance_criteria": ["Export finishes in 10 s"], "metric": "p95 export time"},
            {"title": ADDED_TITLE, "priority": "P1", "evidence_feedback_ids": ["fb_002"],
             "acceptance_criteria": ["Login succeeds after an update"],
             "metric": "login errors per day"},
        ]
    }  # fmt: skip
    text = report({"## Evidence": [f"> “{GOOD_QUOTE[0]}” — {GOOD_QUOTE[1]}"]})
    return {ANALYSIS: as_json(analysis), BACKLOG: as_json(backlog), REPORT: text}


def revised_run(home: Path, *, database_url: str | None = None) -> MadeRun:
    """The failed run done right, on the same rows: completed, no findings."""
    made = scripted_run(
        home, "failed_feedback.csv", FAILED_CSV, revised_documents(), database_url=database_url
    )
    assert made.status == "completed", made.verdict
    assert made.findings == [], made.findings
    return made
