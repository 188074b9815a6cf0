"""Signed verdicts (SPEC section 16): Ed25519 keys, DSSE envelopes around in-toto Statements,
and `runlens verify`, which re-checks a run's verdict anywhere.

    keys.py       where keys live, `SigningKey`, `key_id`, `load_public_keys`, `signing_key`
    dsse.py       DSSE's pre-authentication encoding, `sign_envelope`, `open_envelope`
    statement.py  the in-toto Statement of a run, `write_verdict`, `read_envelope`,
                  `resign_with_reviews` (the statement again, with the run's reviews)
    checks.py     `Check`, `VerifyReport` and the checks both targets share (the reviews)
    verify.py     `verify_workspace` / `verify_target`: every check, each named
    exportfile.py the exported HTML file's format: its bundle, its signed manifest
    exported.py   `verify_export`: the same checks of an exported HTML file (SPEC section 18)

Names are imported on first use: a run that signs does not load the verifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runlens._lazy import lazy_names

_HOMES: dict[str, str] = {
    "Check": "runlens.verdict.checks",
    "PAYLOAD_TYPE": "runlens.verdict.dsse",
    "PREDICATE_TYPE": "runlens.verdict.statement",
    "STATEMENT_TYPE": "runlens.verdict.statement",
    "SigningKey": "runlens.verdict.keys",
    "SigningKeyError": "runlens.verdict.keys",
    "VERDICT_PATH": "runlens.verdict.statement",
    "VerdictError": "runlens.verdict.dsse",
    "VerifyReport": "runlens.verdict.checks",
    "decode_statement": "runlens.verdict.statement",
    "key_id": "runlens.verdict.keys",
    "load_public_keys": "runlens.verdict.keys",
    "open_envelope": "runlens.verdict.dsse",
    "pae": "runlens.verdict.dsse",
    "read_envelope": "runlens.verdict.statement",
    "resign_with_reviews": "runlens.verdict.statement",
    "sign_envelope": "runlens.verdict.dsse",
    "signing_key": "runlens.verdict.keys",
    "verify_export": "runlens.verdict.exported",
    "verify_target": "runlens.verdict.verify",
    "verify_workspace": "runlens.verdict.verify",
}

__all__ = [
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "VERDICT_PATH",
    "Check",
    "SigningKey",
    "SigningKeyError",
    "VerdictError",
    "VerifyReport",
    "decode_statement",
    "key_id",
    "load_public_keys",
    "open_envelope",
    "pae",
    "read_envelope",
    "resign_with_reviews",
    "sign_envelope",
    "signing_key",
    "verify_export",
    "verify_target",
    "verify_workspace",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)

if TYPE_CHECKING:
    from runlens.verdict.checks import Check, VerifyReport
    from runlens.verdict.dsse import (
        PAYLOAD_TYPE,
        VerdictError,
        open_envelope,
        pae,
        sign_envelope,
    )
    from runlens.verdict.exported import verify_export
    from runlens.verdict.keys import (
        SigningKey,
        SigningKeyError,
        key_id,
        load_public_keys,
        signing_key,
    )
    from runlens.verdict.statement import (
        PREDICATE_TYPE,
        STATEMENT_TYPE,
        VERDICT_PATH,
        decode_statement,
        read_envelope,
        resign_with_reviews,
    )
    from runlens.verdict.verify import verify_target, verify_workspace
