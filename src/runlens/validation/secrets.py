"""SecretValidationHook: no deliverable holds a provider key RunLens knows (`secret_in_artifact`).

A model that echoes its own bearer token into a quote, a report or a file name would hand the
key to everyone the deliverables reach. Every file under `artifacts/` is read as bytes (its
content and its name); the finding names the file and where the key sits, never the key. The
finding, like everything RunLens records or prints, has the key blanked out
(`runlens.secrets`).
"""

from __future__ import annotations

import os
from pathlib import Path

from runlens.secrets import REDACTED, redactor, usable
from runlens.tools.workspace import ARTIFACTS
from runlens.validation.base import Collector, Problem, ValidationContext, ValidatorResult


class SecretValidator:
    """Reports every artifact file whose content or name contains a known secret."""

    name = "SecretValidationHook"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        secrets = usable(context.secrets)
        if not secrets:
            return collector.result()
        redact = redactor(secrets)
        assert redact is not None
        contracts = {contract.name for contract in context.contracts}
        for path in _artifact_files(context.workspace):
            relative = path.relative_to(context.workspace).as_posix()
            where = _where(path, relative, secrets)
            if where is None:
                continue
            shown = redact(relative)
            collector.add(
                relative if relative in contracts else shown,
                "secret_in_artifact",
                f"{shown} contains a provider key RunLens knows ({where}); it is shown as "
                f"{REDACTED} in every record",
                Problem("secret in artifact", shown),
                details={"where": where},
            )
        return collector.result()


def _artifact_files(workspace: Path) -> list[Path]:
    """Every regular file under `artifacts/` (not following links out), in name order."""
    root = workspace / ARTIFACTS
    found: list[Path] = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return sorted(found)


def _where(path: Path, relative: str, secrets: tuple[str, ...]) -> str | None:
    """Where a secret sits in the file (`file name`, `line N`), or None."""
    if any(secret in relative for secret in secrets):
        return "file name"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    for secret in secrets:
        position = data.find(secret.encode("utf-8"))
        if position >= 0:
            line = data.count(b"\n", 0, position) + 1
            return f"line {line}"
    return None
