"""The provider keys RunLens knows, and blanking them out of anything it writes or prints.

A key can reach a deliverable through a model that echoes its own bearer token; from there it
would travel into findings, records, `--json` output and file names. Every such path goes
through `redactor(secrets)`, and the Stop validator `SecretValidationHook` rejects the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping

REDACTED = "[REDACTED]"

#: Environment variables that hold provider keys or tokens RunLens uses.
SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "RUNLENS_OPENAI_API_KEY",
    "RUNLENS_ANTHROPIC_API_KEY",
    "RUNLENS_UI_TOKEN",
)

#: Shorter values are not treated as secrets: masking "abc" everywhere would shred the text
#: around it, and a value that short is not a credential anyone can use.
MIN_SECRET_LENGTH = 6


def known_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of `SECRET_VARIABLES` (and any other `*_API_KEY`) set in the environment."""
    environ = os.environ if environ is None else environ
    names = {*SECRET_VARIABLES, *(name for name in environ if name.endswith("_API_KEY"))}
    values = {environ.get(name, "") for name in names}
    return tuple(sorted(v for v in values if len(v) >= MIN_SECRET_LENGTH))


def usable(secrets: Iterable[str]) -> tuple[str, ...]:
    """The secrets long enough to look for, longest first (a key may contain another)."""
    return tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True))


def redactor(secrets: Iterable[str]) -> Callable[[str], str] | None:
    """A function that blanks every secret out of a text, or None when there are none."""
    wanted = usable(secrets)
    if not wanted:
        return None

    def redact(text: str) -> str:
        for secret in wanted:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    return redact
