"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1), Ed25519 only.

    {"payloadType": ..., "payload": base64(payload), "signatures": [{"keyid": ..., "sig": ...}]}

The signature covers the pre-authentication encoding (`pae`) of the payload type and the raw
payload bytes, never the JSON of the envelope, so any DSSE implementation can check it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from runlens.errors import RunLensError

#: The payload type of an in-toto Statement.
PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"


class VerdictError(RunLensError):
    """An envelope that does not open: `reason` says why (malformed, unknown key, bad
    signature)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Signer(Protocol):
    @property
    def keyid(self) -> str: ...

    def sign(self, message: bytes) -> bytes: ...


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSEv1 pre-authentication encoding: `DSSEv1 LEN(type) type LEN(body) body`."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def sign_envelope(payload: bytes, key: Signer, payload_type: str = PAYLOAD_TYPE) -> dict[str, Any]:
    """The envelope of `payload`, signed by `key` (a `SigningKey`)."""
    signature = key.sign(pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": key.keyid, "sig": base64.b64encode(signature).decode("ascii")}],
    }


def envelope_payload(envelope: Any) -> tuple[str, bytes, list[dict[str, Any]]]:
    """The payload type, the payload and the signatures of `envelope`, unchecked;
    `VerdictError` when it is not a DSSE envelope."""
    if not isinstance(envelope, dict):
        raise VerdictError("malformed envelope: not a JSON object")
    payload_type = envelope.get("payloadType")
    encoded = envelope.get("payload")
    signatures = envelope.get("signatures")
    if not isinstance(payload_type, str) or not isinstance(encoded, str):
        raise VerdictError("malformed envelope: payloadType and payload must be strings")
    if not isinstance(signatures, list) or not all(isinstance(s, dict) for s in signatures):
        raise VerdictError("malformed envelope: signatures must be a list of objects")
    return payload_type, _b64(encoded, "payload"), signatures


def open_envelope(
    envelope: Any, keys: Mapping[str, Ed25519PublicKey], payload_type: str = PAYLOAD_TYPE
) -> tuple[bytes, str]:
    """The payload and the id of the key whose signature on it holds; `VerdictError` naming
    why none does. A signature is checked against the key its `keyid` names, else (DSSE's
    key ids are hints) against every key given."""
    found_type, payload, signatures = envelope_payload(envelope)
    if found_type != payload_type:
        raise VerdictError(f"malformed envelope: payloadType {found_type!r}, not {payload_type!r}")
    if not signatures:
        raise VerdictError("unsigned: the envelope has no signature")
    if not keys:
        raise VerdictError("no public key to check the signature with (runlens keys show)")
    message = pae(found_type, payload)
    named: list[str] = []
    for signature in signatures:
        keyid = signature.get("keyid")
        raw = signature.get("sig")
        if not isinstance(raw, str):
            raise VerdictError("malformed envelope: a signature's sig is not a string")
        sig = _b64(raw, "sig")
        named.append(keyid if isinstance(keyid, str) else "")
        candidates = [keyid] if isinstance(keyid, str) and keyid in keys else list(keys)
        for candidate in candidates:
            if _holds(keys[candidate], sig, message):
                return payload, candidate
    shown = ", ".join(k or "(none)" for k in named)
    if not any(k in keys for k in named):
        raise VerdictError(f"unknown key: signed by key id {shown}, not one of the keys given")
    raise VerdictError(f"bad signature: the signature by key id {shown} does not match the payload")


def _holds(key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def _b64(text: str, field: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        try:  # DSSE allows URL-safe base64 too
            return base64.b64decode(text, altchars=b"-_", validate=True)
        except (binascii.Error, ValueError) as error:
            raise VerdictError(f"malformed envelope: {field} is not base64") from error


__all__ = [
    "PAYLOAD_TYPE",
    "VerdictError",
    "envelope_payload",
    "open_envelope",
    "pae",
    "sign_envelope",
]
