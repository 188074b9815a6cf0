"""RequiredOutputValidationHook: every required artifact exists as a regular file.

A model saying "the report is written" only ends the loop; this checks the workspace itself.
"""

from __future__ import annotations

from runlens.contracts import ArtifactContract
from runlens.validation.base import (
    Collector,
    ContractValidator,
    Problem,
    ValidationContext,
    ValidatorResult,
)


class RequiredOutputValidator(ContractValidator):
    """Reports `missing_file` for each required artifact that is not a usable file."""

    name = "RequiredOutputValidationHook"

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        return contract.required

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        for contract in self.contracts:
            reason = context.file_problem(contract.name)
            if reason is not None:
                collector.add(
                    contract.name,
                    "missing_file",
                    f"required artifact {contract.name} {reason}",
                    Problem("missing required files", contract.name),
                    details={"label": contract.display_name, "reason": reason},
                )
        return collector.result()
