"""The conformance suite every plugin should pass: `runlens check-plugin NAME`.

First the declaration, checked without a model (`runlens.kit.declaration`): the contracts
are well-formed, their JSON Schemas valid draft 2020-12, every evidence and rule path a
property of the schema, the plan's criteria name declared artifacts, the tools build and the
input tool is one of them. Then two runs on the plugin's own fixture (`Plugin.conformance`):
the passing scripted model's run must complete, the fabricating one's must fail with the
expected finding codes. Last, both runs' records are read back from disk
(`runlens.kit.record_checks`).

A plugin's own tests run the same suite through `runlens.testing.check_plugin`.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from runlens.errors import UserError
from runlens.kit.declaration import (
    contract_problems,
    describe_error,
    evidence_path_problems,
    json_schema_problems,
    plan_problems,
    review_declaration_problems,
    sample_problems,
    tool_problems,
)
from runlens.kit.record_checks import RunOutcome, outcome_problems, read_json
from runlens.models.scripted import ScriptedModel
from runlens.plugins.base import Conformance, Plugin
from runlens.plugins.loader import available_plugins, load_plugin
from runlens.tools.workspace import Workspace

CheckStatus = Literal["passed", "failed", "skipped"]

#: Check id -> what it verifies, in the order the suite runs them.
CHECKS: dict[str, str] = {
    "plugin": "the plugin loads",
    "contracts": "contracts are well-formed",
    "json_schema": "JSON Schemas are valid draft 2020-12",
    "evidence_paths": "evidence and rule paths exist in the JSON Schema",
    "plan": "plan criteria name declared artifacts",
    "review": "the review policy and corrections are well-formed",
    "tools": "tools build and the input tool is one of them",
    "samples": "fixture and scripted models are declared and readable",
    "passing_run": "the passing scripted model's run completes",
    "fabricating_run": "the fabricating scripted model's run fails with the expected findings",
    "records": "both runs' records are complete and consistent",
}
#: The folders (under the suite's workspace) of its two runs.
RUN_FOLDERS = ("passing", "fabricating")
_DECLARATION: dict[str, Callable[[Plugin], list[str]]] = {
    "contracts": contract_problems,
    "json_schema": json_schema_problems,
    "evidence_paths": evidence_path_problems,
    "plan": plan_problems,
    "review": review_declaration_problems,
    "tools": tool_problems,
    "samples": sample_problems,
}


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one check; `details` say what is wrong."""

    check: str
    status: CheckStatus
    details: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return CHECKS[self.check]

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "title": self.title,
            "status": self.status,
            "details": list(self.details),
        }


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Every check's outcome for one plugin; `passed` only when every check passed."""

    plugin: str
    checks: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(check.status == "passed" for check in self.checks)

    def result(self, check: str) -> CheckResult:
        return next(result for result in self.checks if result.check == check)

    def describe(self) -> str:
        """One line per check and one per detail: for an assertion message or a log."""
        lines = [f"conformance of {self.plugin}: {'passed' if self.passed else 'failed'}"]
        for result in self.checks:
            lines.append(f"  {result.status:<7} {result.check}: {result.title}")
            lines.extend(f"          - {detail}" for detail in result.details)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "status": "passed" if self.passed else "failed",
            "checks": [result.to_json() for result in self.checks],
        }


def check_plugin(plugin: Plugin, *, workspace: Path | None = None) -> ConformanceReport:
    """Run the whole suite on `plugin`. The runs' workspaces go under `workspace` (kept for
    inspection; `UserError` if it holds an earlier check's runs), else in a temporary folder.
    Starts an event loop: call it from sync code."""
    return _suite(plugin, CheckResult("plugin", "passed"), workspace)


def check_installed_plugin(name: str, *, workspace: Path | None = None) -> ConformanceReport:
    """The suite for the plugin installed under entry point `name`. A plugin that does not
    load fails the `plugin` check and skips the rest; an unknown name is a `UserError`."""
    if name not in available_plugins():
        load_plugin(name)  # raises the UserError that names the installed plugins
    try:
        plugin = load_plugin(name)
    except Exception as error:
        return _not_loaded(name, describe_error(error))
    if plugin.name != name:
        return _not_loaded(
            name,
            f"entry point {name!r} provides a plugin named {plugin.name!r}: the records name "
            "the plugin and `runlens validate` loads it by that name, so the two must agree",
        )
    return _suite(plugin, CheckResult("plugin", "passed"), workspace)


def _not_loaded(name: str, problem: str) -> ConformanceReport:
    return ConformanceReport(name, (CheckResult("plugin", "failed", (problem,)), *_skipped(CHECKS)))


def _skipped(checks: Iterable[str]) -> tuple[CheckResult, ...]:
    return tuple(
        CheckResult(check, "skipped", ("an earlier check failed",))
        for check in checks
        if check != "plugin"
    )


def _suite(plugin: Plugin, loaded: CheckResult, workspace: Path | None) -> ConformanceReport:
    if workspace is not None:
        # A run folder left by an earlier check would still hold that run's artifacts.
        taken = [workspace / label for label in RUN_FOLDERS if (workspace / label).exists()]
        if taken:
            raise UserError(f"{taken[0]} already exists: keep the runs in a new or empty folder")
        workspace.mkdir(parents=True, exist_ok=True)
        return _Suite(plugin, workspace).run(loaded)
    with tempfile.TemporaryDirectory(prefix="runlens-conformance-") as scratch:
        return _Suite(plugin, Path(scratch)).run(loaded)


def _outcome(check: str, run_check: Callable[[], Iterable[str]]) -> CheckResult:
    """Run one check; an exception it raises is that check's failure, not the suite's."""
    try:
        problems = tuple(run_check())
    except Exception as error:
        problems = (f"the check raised {describe_error(error)}",)
    return CheckResult(check, "failed" if problems else "passed", problems)


@dataclass
class _Suite:
    plugin: Plugin
    root: Path
    runs: dict[str, RunOutcome] = field(default_factory=dict)

    def run(self, loaded: CheckResult) -> ConformanceReport:
        results = [loaded]
        for check, problems in _DECLARATION.items():
            results.append(_outcome(check, partial(problems, self.plugin)))
        remaining = ("passing_run", "fabricating_run", "records")
        if any(result.status == "failed" for result in results):
            return ConformanceReport(self.plugin.name, (*results, *_skipped(remaining)))
        assert self.plugin.conformance is not None  # the samples check passed
        samples = self.plugin.conformance
        results.append(_outcome("passing_run", lambda: self.passing_run(samples)))
        results.append(_outcome("fabricating_run", lambda: self.fabricating_run(samples)))
        results.append(_outcome("records", self.records))
        return ConformanceReport(self.plugin.name, tuple(results))

    def passing_run(self, samples: Conformance) -> list[str]:
        outcome = self.runs["passing"] = self._run("passing", samples, samples.passing_model)
        if outcome.status != "completed":
            codes = ", ".join(sorted(set(outcome.finding_codes))) or "none"
            return [
                f"the run ended {outcome.status}: {outcome.error_message}",
                f"findings: {codes}",
            ]
        problems = [
            f"{name} is {status}"
            for name, status in outcome.artifacts.items()
            if status != "validated" and _required(self.plugin, name)
        ]
        record = read_json(Workspace(outcome.workspace).run_record)
        steps = record.get("plan") if isinstance(record, dict) else None
        problems.extend(
            f"plan step {step.get('id')!r} is {step.get('status')}, not completed"
            for step in (steps if isinstance(steps, list) else [])
            if isinstance(step, dict) and step.get("status") != "completed"
        )
        return problems

    def fabricating_run(self, samples: Conformance) -> list[str]:
        outcome = self.runs["fabricating"] = self._run(
            "fabricating", samples, samples.fabricating_model
        )
        if outcome.status != "failed":
            return [f"the run ended {outcome.status}; a fabricating model's run must fail"]
        found = ", ".join(sorted(set(outcome.finding_codes))) or "none"
        return [
            f"expected finding {code} was not reported (found: {found}; "
            f"the run's error: {outcome.error_message})"
            for code in samples.expected_codes
            if code not in outcome.finding_codes
        ]

    def records(self) -> list[str]:
        return [
            f"{label} run: {problem}"
            for label, outcome in self.runs.items()
            for problem in outcome_problems(self.plugin, outcome)
        ]

    def _run(self, label: str, samples: Conformance, script: Path) -> RunOutcome:
        from runlens.runtime.run import run_plugin

        model = ScriptedModel.from_file(Path(script))
        model.spec = f"scripted:{Path(script).name}"
        run = run_plugin(self.plugin, Path(samples.fixture), model, workspace=self.root / label)
        result = asyncio.run(run)
        return RunOutcome(
            workspace=result.workspace,
            run_id=result.run_id,
            status=result.status.value,
            error_message=result.error_message,
            artifacts=dict(result.artifacts),
            finding_codes=tuple(finding.code for finding in result.findings),
        )


def _required(plugin: Plugin, artifact: str) -> bool:
    contract = plugin.contract(artifact)
    return contract is None or contract.required


__all__ = [
    "CHECKS",
    "CheckResult",
    "CheckStatus",
    "ConformanceReport",
    "check_installed_plugin",
    "check_plugin",
]
