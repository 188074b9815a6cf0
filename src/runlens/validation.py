"""Run every Stop validator on a workspace and aggregate their results into one verdict.

    report = validate_workspace(workspace, plugin.contracts, expected_index_sha256=sha)
    report.passed, report.error_message, report.artifacts["artifacts/product_backlog.json"]

Every validator runs: none is skipped because an earlier one blocked, so one verdict shows
missing files, bad enums and fabricated evidence at once (SPEC section 2).

Validator plugins
-----------------
A package adds validators through the `runlens.validators` entry point group. The entry point
names a factory that takes no arguments and returns an object with a `name` and a
`validate(context: ValidationContext) -> ValidatorResult` method (see
`runlens.hooks.validators.Validator`). `context.contracts` holds every contract of the run,
`context.workspace` the folder to read. In the plugin's `pyproject.toml`:

    [project.entry-points."runlens.validators"]
    backlog-metrics = "my_package.validators:BacklogMetricsValidator"

A finding is attributed to the artifact it names in `Finding.artifact` (use the contract name;
"" for a finding about the run as a whole).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points
from pathlib import Path

from pydantic import BaseModel, Field

from runlens.contracts import ArtifactContract
from runlens.errors import ContractError, UserError
from runlens.hooks.findings import ArtifactStatus, Finding
from runlens.hooks.validators import (
    EvidenceCitationValidator,
    JsonOutputValidator,
    MarkdownSectionValidator,
    QuoteLocation,
    RequiredOutputValidator,
    ValidationContext,
    Validator,
    ValidatorResult,
)

VALIDATOR_GROUP = "runlens.validators"


class ValidationReport(BaseModel):
    """The aggregated verdict of every Stop validator on one workspace.

    `artifacts` maps each contract name to `missing` (no usable file), `rejected` (some finding
    names it) or `validated`. `error_message` joins the blocked validators' summary lines with
    `; ` and is None exactly when the report passed.
    """

    passed: bool
    findings: list[Finding]
    artifacts: dict[str, ArtifactStatus]
    error_message: str | None
    summaries: list[str] = Field(default_factory=list)
    quotes: list[QuoteLocation] = Field(default_factory=list)
    blocked_validators: list[str] = Field(default_factory=list)

    def findings_for(self, artifact_name: str) -> list[Finding]:
        """The findings attributed to one artifact."""
        return [f for f in self.findings if f.artifact == artifact_name]


def builtin_validators(contracts: Iterable[ArtifactContract]) -> list[Validator]:
    """The four built-in validators in SPEC order, each given the contracts it applies to.

    Raises `ContractError` when a contract cannot be used (e.g. an invalid `json_schema`).
    """
    contracts = tuple(contracts)
    return [
        RequiredOutputValidator(contracts),
        JsonOutputValidator(contracts),
        MarkdownSectionValidator(contracts),
        EvidenceCitationValidator(contracts),
    ]


def load_validator_plugins() -> list[Validator]:
    """Instantiate every validator registered under the `runlens.validators` entry point group.

    Sorted by entry point name so the order of findings does not depend on install order.
    A factory that fails or returns something that is not a validator raises `ContractError`
    naming the entry point: a misconfigured plugin must not silently skip its checks.
    """
    validators: list[Validator] = []
    for entry in sorted(entry_points(group=VALIDATOR_GROUP), key=lambda e: e.name):
        try:
            validator = entry.load()()
        except Exception as error:
            raise ContractError(
                f"validator plugin {entry.name!r} ({entry.value}) could not be loaded: {error}"
            ) from error
        if not isinstance(validator, Validator):
            raise ContractError(
                f"validator plugin {entry.name!r} ({entry.value}) did not return a validator "
                "(an object with `name` and `validate(context)`)"
            )
        validators.append(validator)
    return validators


def plugin_validators(declared: Iterable[object]) -> list[Validator]:
    """Check the validators a plugin declares itself (`Plugin.extra_validators`)."""
    validators: list[Validator] = []
    for candidate in declared:
        if not isinstance(candidate, Validator):
            raise ContractError(f"{candidate!r} is not a validator (needs `name` and `validate`)")
        validators.append(candidate)
    return validators


def extra_validators(declared: Iterable[object], *, entry_points: bool = True) -> list[Validator]:
    """The Stop validators beyond the built-ins: a plugin's own, then installed ones.

    One list for `runlens run` and `runlens validate`, so both judge a workspace alike.
    """
    validators = plugin_validators(declared)
    if entry_points:
        validators.extend(load_validator_plugins())
    return validators


def run_validator(validator: Validator, context: ValidationContext) -> ValidatorResult:
    """Run one validator; a crash becomes a blocking `hook_error` finding, not a crashed run."""
    name = str(getattr(validator, "name", type(validator).__name__))
    try:
        return validator.validate(context)
    except UserError:
        raise
    except Exception as error:
        reason = f"{type(error).__name__}: {error}"
        finding = Finding(
            validator=name, artifact="", code="hook_error", message=f"{name} failed: {reason}"
        )
        return ValidatorResult(name, (finding,), f"validator {name} failed: {reason}")


def _status(
    context: ValidationContext, contract: ArtifactContract, named: set[str]
) -> ArtifactStatus:
    if context.artifact_file(contract.name) is None:
        return "missing"
    return "rejected" if contract.name in named else "validated"


def aggregate(
    results: Sequence[ValidatorResult],
    contracts: Iterable[ArtifactContract],
    workspace: Path | ValidationContext,
) -> ValidationReport:
    """Combine validator results into one report.

    `workspace` is the folder validated, or better the round's `ValidationContext`, whose
    file checks the validators have already made.

    An artifact's status comes only from the findings that name it, whichever validator
    produced them, so a cross-artifact evidence error rejects every artifact that cites the
    bad id and no other.
    """
    contracts = tuple(contracts)
    findings = [finding for result in results for finding in result.findings]
    named = {finding.artifact for finding in findings}
    blocked = [result for result in results if result.blocked]
    context = (
        workspace
        if isinstance(workspace, ValidationContext)
        else ValidationContext(Path(workspace), contracts)
    )
    summaries = [
        result.summary or f"{result.validator}: {len(result.findings)} findings"
        for result in blocked
    ]
    return ValidationReport(
        passed=not blocked,
        findings=findings,
        artifacts={c.name: _status(context, c, named) for c in contracts},
        error_message="; ".join(summaries) if summaries else None,
        summaries=summaries,
        quotes=[quote for result in results for quote in result.quotes],
        blocked_validators=[result.validator for result in blocked],
    )


def validate_workspace(
    workspace: Path,
    contracts: Iterable[ArtifactContract],
    *,
    expected_index_sha256: str | None = None,
    extra: Iterable[Validator] = (),
) -> ValidationReport:
    """Run the built-in validators, then `extra` ones, on `workspace`, and aggregate.

    `expected_index_sha256` is the Evidence Index hash recorded when the run wrote it; None
    skips the tamper check.
    """
    contracts = tuple(contracts)
    workspace = Path(workspace)
    context = ValidationContext(workspace, contracts, expected_index_sha256)
    validators = [*builtin_validators(contracts), *extra]
    results = [run_validator(validator, context) for validator in validators]
    return aggregate(results, contracts, context)
