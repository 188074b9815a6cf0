"""Showing a validation verdict: a header, the artifacts, the findings (rich), or JSON.

Shared by `runlens validate` and `runlens run`: everything takes a report-like object (a
`ValidationReport`, or anything with the same read-only fields) and a rich `Console`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from runlens.cli.common import terminal_safe

if TYPE_CHECKING:
    from runlens.contracts import ArtifactContract
    from runlens.validation.findings import Finding

#: Findings shown per artifact before "... and N more" (all of them are in `--json`).
FINDINGS_SHOWN = 20

_STATUS_STYLE = {"validated": "green", "rejected": "red", "missing": "yellow"}


class ReportLike(Protocol):
    """The read-only view of a verdict that rendering needs."""

    @property
    def passed(self) -> bool: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def artifacts(self) -> Mapping[str, str]: ...
    @property
    def error_message(self) -> str | None: ...
    @property
    def quotes(self) -> Sequence[Any]: ...


def verdict_payload(
    report: ReportLike, status: str | None = None, defect: str | None = None
) -> dict[str, Any]:
    """The `--json` object: `status`, `error_message`, `findings`, `artifacts`, and `defect`
    (the notice that the findings are RunLens's own defect, or null).

    `status` defaults to `passed`/`failed`; `runlens run` passes the run's status and adds its
    own keys (`run_id`, `workspace`, `metrics`) to the returned dict.
    """
    return {
        "status": status or ("passed" if report.passed else "failed"),
        "error_message": report.error_message,
        "findings": [finding.model_dump(mode="json") for finding in report.findings],
        "artifacts": dict(report.artifacts),
        "defect": defect,
    }


def quote_counts(quotes: Sequence[Any]) -> str:
    """`12 evidence quote(s) traced (10 in a.json, 2 in report.md)`: per artifact, so a reader
    sees that the report's own quotes were checked, not only the JSON's."""
    per_artifact: dict[str, int] = {}
    for quote in quotes:
        name = str(getattr(quote, "artifact", ""))
        per_artifact[name] = per_artifact.get(name, 0) + 1
    line = f"{len(quotes)} evidence quote(s) traced"
    if per_artifact:
        line += " (" + ", ".join(f"{n} in {name}" for name, n in per_artifact.items()) + ")"
    return line


def render_header(console: Console, report: ReportLike, verdict: str | None = None) -> None:
    """`PASSED`/`FAILED` (or `verdict`), with the summary line when there is one."""
    word = verdict or ("PASSED" if report.passed else "FAILED")
    style = "bold green" if report.passed else "bold red"
    counts = f"{len(report.findings)} finding(s), {quote_counts(report.quotes)}"
    console.print(Text.assemble((word, style), "  ", terminal_safe(counts)))
    if report.error_message:
        console.print(Text(terminal_safe(report.error_message), style="red"))


def artifact_table(
    artifacts: Mapping[str, str],
    findings: Iterable[Finding],
    contracts: Iterable[ArtifactContract] = (),
) -> Table:
    """One row per artifact: label, name, status, number of findings.

    An optional artifact the run did not write, and nothing asked for, reads
    `missing (optional)`: listed, so the reader knows it was looked for, but not a problem.
    """
    contracts = tuple(contracts)
    labels = {contract.name: contract.display_name for contract in contracts}
    optional = {contract.name for contract in contracts if not contract.required}
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.artifact] = counts.get(finding.artifact, 0) + 1
    table = Table(title="Artifacts", title_justify="left")
    table.add_column("Label")
    table.add_column("Artifact", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Findings", justify="right", no_wrap=True)
    for name, status in artifacts.items():
        shown = Text(terminal_safe(status), style=_STATUS_STYLE.get(status, ""))
        if status == "missing" and name in optional and not counts.get(name):
            shown = Text(terminal_safe(f"{status} (optional)"), style="dim")
        table.add_row(
            Text(terminal_safe(labels.get(name, name))),
            Text(terminal_safe(name)),
            shown,
            str(counts.get(name, 0)),
        )
    return table


def findings_table(title: str, findings: Sequence[Finding], limit: int = FINDINGS_SHOWN) -> Table:
    """The findings of one artifact: where (path), what (code) and why (message). `title` is
    text, shown as it is (no markup)."""
    table = Table(title=escape(terminal_safe(title)), title_justify="left")
    table.add_column("Path", overflow="fold")
    table.add_column("Code", no_wrap=True)
    table.add_column("Message", overflow="fold")
    for finding in findings[:limit]:
        table.add_row(
            Text(terminal_safe(finding.path or "-")),
            Text(terminal_safe(finding.code)),
            Text(terminal_safe(finding.message)),
        )
    if len(findings) > limit:
        more = f"... and {len(findings) - limit} more (all of them with --json)"
        table.add_row("", "", Text(more, style="dim"))
    return table


def render_findings(
    console: Console, findings: Sequence[Finding], order: Iterable[str] = ()
) -> None:
    """The findings grouped by the artifact they are attributed to, artifacts in `order` first."""
    by_artifact: dict[str, list[Finding]] = {name: [] for name in order}
    for finding in findings:
        by_artifact.setdefault(finding.artifact, []).append(finding)
    for artifact, group in by_artifact.items():
        if group:
            console.print(findings_table(f"Findings: {artifact or '(run)'}", group))


def render_verdict(
    console: Console,
    report: ReportLike,
    contracts: Iterable[ArtifactContract] = (),
    *,
    verdict: str | None = None,
) -> None:
    """The whole human-readable verdict: header, artifacts table, findings by artifact."""
    render_header(console, report, verdict)
    console.print(artifact_table(report.artifacts, report.findings, contracts))
    render_findings(console, report.findings, report.artifacts)


class RunResultLike(ReportLike, Protocol):
    """A finished run as `runlens run` shows it: a verdict plus the run's status."""

    @property
    def status(self) -> Any: ...
    @property
    def defect(self) -> str | None: ...


class HasContracts(Protocol):
    @property
    def contracts(self) -> Sequence[ArtifactContract]: ...


def render_defect(console: Console, notice: str | None) -> None:
    """The notice that the findings are RunLens's own defect (`validation.defects`)."""
    if notice:
        console.print(
            Text.assemble(("RunLens defect: ", "bold magenta"), (terminal_safe(notice), "magenta"))
        )


def render_warnings(console: Console, warnings: Iterable[str]) -> None:
    """One yellow `Warning:` line each: what the user must know even of a completed run."""
    for warning in warnings:
        console.print(
            Text.assemble(("Warning: ", "bold yellow"), (terminal_safe(warning), "yellow"))
        )


def render_run_verdict(console: Console, result: RunResultLike, plugin: HasContracts) -> None:
    """The verdict of a run: its status (`COMPLETED`, `FAILED`, ...) instead of PASSED/FAILED,
    then the run's warnings (rows not analysed, ids derived from row numbers, ...)."""
    status = str(getattr(result.status, "value", result.status))
    warnings = tuple(getattr(result, "warnings", ()))
    if result.findings or any(
        state not in ("missing", "not_validated") for state in result.artifacts.values()
    ):
        render_verdict(console, result, plugin.contracts, verdict=status.upper())
        render_defect(console, result.defect)
        render_warnings(console, warnings)
        return
    # The run stopped before validation (an input error, a provider error, a cancellation):
    # the error is the news, not a table of deliverables that were never going to exist.
    render_header(console, result, status.upper())
    written = [name for name, state in result.artifacts.items() if state == "not_validated"]
    if written:
        shown = terminal_safe(", ".join(written))
        console.print(Text(f"Written but not validated: {shown}", style="yellow"))
    else:
        console.print(Text("No deliverable was written.", style="dim"))
    render_defect(console, result.defect)
    render_warnings(console, warnings)
