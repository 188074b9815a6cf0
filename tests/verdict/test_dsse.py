"""DSSE envelopes: the pre-authentication encoding, signing, and why an envelope does not open;
a run's envelope checked by another implementation (securesystemslib)."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]
from tests.verdict.conftest import SignedRun

from runlens.verdict.dsse import PAYLOAD_TYPE, VerdictError, open_envelope, pae, sign_envelope
from runlens.verdict.keys import init_key, load_public_keys
from runlens.verdict.statement import PREDICATE_TYPE, STATEMENT_TYPE, decode_statement


def test_pae_is_dsse_v1() -> None:
    # The example of the DSSE protocol document.
    assert (
        pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"


def test_an_envelope_opens_with_its_key_only(tmp_path: Path) -> None:
    key, other = init_key("a", tmp_path), init_key("b", tmp_path / "other")
    envelope = sign_envelope(b'{"x": 1}', key)

    payload, keyid = open_envelope(envelope, {key.keyid: key.public_key})
    assert (payload, keyid) == (b'{"x": 1}', key.keyid)
    with pytest.raises(VerdictError, match="unknown key"):
        open_envelope(envelope, {other.keyid: other.public_key})


def test_a_forged_signature_or_payload_is_a_bad_signature(tmp_path: Path) -> None:
    key = init_key("a", tmp_path)
    keys = {key.keyid: key.public_key}
    envelope = sign_envelope(b'{"x": 1}', key)

    forged = copy.deepcopy(envelope)
    raw = bytearray(base64.b64decode(forged["signatures"][0]["sig"]))
    raw[0] ^= 1
    forged["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(VerdictError, match="bad signature"):
        open_envelope(forged, keys)

    swapped = dict(envelope, payload=base64.b64encode(b'{"x": 2}').decode())
    with pytest.raises(VerdictError, match="bad signature"):
        open_envelope(swapped, keys)


@pytest.mark.parametrize(
    ("envelope", "reason"),
    [
        ([], "not a JSON object"),
        ({"payloadType": PAYLOAD_TYPE, "payload": 3, "signatures": []}, "must be strings"),
        ({"payloadType": PAYLOAD_TYPE, "payload": "e30=", "signatures": "x"}, "signatures"),
        ({"payloadType": "text/plain", "payload": "e30=", "signatures": []}, "payloadType"),
        ({"payloadType": PAYLOAD_TYPE, "payload": "e30=", "signatures": []}, "unsigned"),
        ({"payloadType": PAYLOAD_TYPE, "payload": "!!", "signatures": []}, "not base64"),
    ],
)
def test_a_malformed_envelope_says_why(envelope: object, reason: str, tmp_path: Path) -> None:
    key = init_key("a", tmp_path)
    with pytest.raises(VerdictError, match=reason):
        open_envelope(envelope, {key.keyid: key.public_key})


def test_a_runs_envelope_verifies_with_securesystemslib(passing_run: SignedRun) -> None:
    """Another DSSE implementation, given only the raw public key, accepts the envelope."""
    envelope = Envelope.from_dict(passing_run.envelope)
    ((keyid, public_key),) = load_public_keys([], passing_run.home).items()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})

    accepted = envelope.verify([key], 1)

    assert list(accepted) == [keyid]
    statement = json.loads(envelope.pae()[len(b"DSSEv1 ") :].split(b" ", 3)[3])
    assert statement == decode_statement(passing_run.envelope)
    assert statement["_type"] == STATEMENT_TYPE
    assert statement["predicateType"] == PREDICATE_TYPE


def test_securesystemslib_rejects_a_changed_payload(passing_run: SignedRun) -> None:
    from securesystemslib.exceptions import VerificationError

    document = copy.deepcopy(passing_run.envelope)
    statement = decode_statement(document)
    statement["predicate"]["status"] = "failed"
    document["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    ((keyid, public_key),) = load_public_keys([], passing_run.home).items()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})

    with pytest.raises(VerificationError):
        Envelope.from_dict(document).verify([key], 1)
