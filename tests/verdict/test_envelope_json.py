"""The verdict's envelope file: orjson's bytes where they are json's, json's otherwise."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runlens.verdict.dsse import sign_envelope
from runlens.verdict.keys import SigningKey, init_key
from runlens.verdict.statement import envelope_json


def _before(envelope: Any) -> bytes:
    """How the envelope was written before: `json.dumps(indent=2)` in ASCII."""
    return json.dumps(envelope, indent=2).encode("ascii") + b"\n"


class _Kind(StrEnum):
    A = "a"


_scalars = st.one_of(
    st.text(),  # any code point: non-ASCII, DEL, controls, lone surrogates
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F)),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.just(_Kind.A),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_any_value_is_written_as_json_dumps_wrote_it(value: Any) -> None:
    try:
        expected = _before(value)
    except (ValueError, TypeError, RecursionError) as error:  # what json refused, refused
        try:
            envelope_json(value)
        except type(error):
            return
        raise AssertionError("json refused it, envelope_json did not") from None
    assert envelope_json(value) == expected


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return init_key("default", tmp_path_factory.mktemp("home"))


@settings(max_examples=50, deadline=None)
@given(payload=st.binary(max_size=3000), payload_type=st.text(max_size=40))
def test_a_signed_envelope_is_written_as_before(
    key: SigningKey, payload: bytes, payload_type: str
) -> None:
    envelope = sign_envelope(payload, key, payload_type or "application/vnd.in-toto+json")
    assert envelope_json(envelope) == _before(envelope)
    assert json.loads(envelope_json(envelope)) == envelope
