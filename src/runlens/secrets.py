"""The provider keys RunLens knows, and blanking them out of anything it writes or prints.

This is the one redaction implementation. A key can reach a deliverable through a model that
echoes its own bearer token; from there it would travel into findings, records, `--json`
output and file names. The run's records, its report and its output go through
`redactor(secrets)`; the HTTP providers pass every text that may echo a key (a server's error
message, an exception string) through `redact(text, secrets)`, which also masks anything shaped
like a provider key. The Stop validator `SecretValidationHook` rejects a run whose deliverables
hold a known key.
"""

from __future__ import annotations

import os
import re
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

#: Shapes of well-known provider keys, masked by `redact` even when the key itself is not known.
KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
)


def known_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of `SECRET_VARIABLES` (and any other `*_API_KEY`) set in the environment."""
    environ = os.environ if environ is None else environ
    names = {*SECRET_VARIABLES, *(name for name in environ if name.endswith("_API_KEY"))}
    values = {environ.get(name, "") for name in names}
    return tuple(sorted(v for v in values if len(v) >= MIN_SECRET_LENGTH))


def usable(secrets: Iterable[str | None]) -> tuple[str, ...]:
    """The secrets long enough to look for, longest first (a key may contain another).

    None and values shorter than `MIN_SECRET_LENGTH` are left out.
    """
    wanted = {secret for secret in secrets if secret and len(secret) >= MIN_SECRET_LENGTH}
    return tuple(sorted(wanted, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every secret in `secrets` and anything shaped like a provider key masked.

    For text from outside (a server's error message, an exception string) before it reaches a
    message or a record. Mask before shortening, so a key cut in two is still masked.
    """
    return _mask(text, usable(secrets), key_shapes=True)


def redactor(secrets: Iterable[str | None]) -> Callable[[str], str] | None:
    """A function that blanks every secret in `secrets` out of a text, or None when there are
    none (so callers can skip the work). It masks the known values only, not key shapes."""
    wanted = usable(secrets)
    if not wanted:
        return None

    def redact_known(text: str) -> str:
        return _mask(text, wanted, key_shapes=False)

    return redact_known


def _mask(text: str, secrets: tuple[str, ...], *, key_shapes: bool) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if key_shapes:
        for pattern in KEY_PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text
