"""`runlens keys init|show`, `signing_key`: where keys live and how they are protected."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from tests.verdict.conftest import invoke

from runlens.verdict.keys import (
    KeyExists,
    SigningKeyError,
    init_key,
    key_id,
    load_private_key,
    load_public_keys,
    signing_key,
)


def test_keys_init_writes_a_private_key_only_its_owner_can_read(tmp_path: Path) -> None:
    previous = os.umask(0)  # a umask that takes nothing away: the mode is the file's own
    try:
        result = invoke("keys", "init", "--name", "team", home=tmp_path)
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    private = tmp_path / "keys" / "team.pem"
    public = tmp_path / "keys" / "team.pub.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(public.stat().st_mode) == 0o644
    assert stat.S_IMODE(private.parent.stat().st_mode) == 0o700
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert str(private) in result.output and "key id:" in result.output
    assert [p.name for p in private.parent.iterdir() if p.name.startswith(".")] == []


def test_keys_init_never_overwrites_a_key(tmp_path: Path) -> None:
    assert invoke("keys", "init", home=tmp_path).exit_code == 0
    before = (tmp_path / "keys" / "default.pem").read_bytes()

    again = invoke("keys", "init", home=tmp_path)

    assert again.exit_code == 2
    assert "default.pem exists" in again.output and "Traceback" not in again.output
    assert (tmp_path / "keys" / "default.pem").read_bytes() == before
    with pytest.raises(KeyExists):
        init_key("default", tmp_path)


def test_keys_init_refuses_a_name_that_is_a_path(tmp_path: Path) -> None:
    result = invoke("keys", "init", "--name", "../escape", home=tmp_path)
    assert result.exit_code == 2
    assert "key name '../escape'" in result.output
    assert not (tmp_path / "escape.pem").exists()


def test_keys_show_prints_the_public_key_and_its_id(tmp_path: Path) -> None:
    made = init_key("ops", tmp_path)
    result = invoke("keys", "show", "ops", home=tmp_path)

    assert result.exit_code == 0
    public = serialization.load_pem_public_key(result.output.split("key id:")[0].encode())
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    expected_id = hashlib.sha256(raw).hexdigest()
    assert f"key id: {expected_id}" in result.output
    assert made.keyid == expected_id == key_id(made.public_key)
    assert "PRIVATE" not in result.output


def test_keys_show_of_an_unknown_key_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("keys", "show", "nobody", home=tmp_path)
    assert result.exit_code == 2
    assert "no key 'nobody'" in result.output and "runlens keys init" in result.output


def test_the_default_key_is_made_on_first_use_with_a_notice(tmp_path: Path) -> None:
    notices: list[str] = []
    key = signing_key(tmp_path, environ={}, notice=notices.append)
    again = signing_key(tmp_path, environ={}, notice=notices.append)

    assert key.keyid == again.keyid
    assert len(notices) == 1
    assert str(tmp_path / "keys" / "default.pem") in notices[0] and key.keyid in notices[0]
    assert key.signer() == {"keyid": key.keyid, "name": "default", "source": "home"}
    assert "private" not in repr(key).lower().replace("privatekey", "")


def test_runlens_signing_key_names_the_key_file(tmp_path: Path) -> None:
    made = init_key("ci", tmp_path / "elsewhere")
    path = tmp_path / "elsewhere" / "keys" / "ci.pem"
    key = signing_key(tmp_path, environ={"RUNLENS_SIGNING_KEY": str(path)})

    assert key.keyid == made.keyid
    assert key.signer() == {"keyid": made.keyid, "name": "ci", "source": "env"}
    assert not (tmp_path / "keys").exists()  # no default key made beside it


@pytest.mark.parametrize("problem", ["missing", "garbage", "ecdsa", "public"])
def test_an_unusable_signing_key_is_named(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "signing.pem"
    if problem == "garbage":
        path.write_text("not a key\n")
    elif problem == "ecdsa":
        other = generate_private_key(SECP256R1())
        path.write_bytes(
            other.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    elif problem == "public":
        init_key("p", tmp_path)
        path = tmp_path / "keys" / "p.pub.pem"
    with pytest.raises(SigningKeyError, match=str(path)) as raised:
        signing_key(tmp_path, environ={"RUNLENS_SIGNING_KEY": str(path)})
    if problem == "ecdsa":
        assert "not an Ed25519 key" in str(raised.value)


def test_public_keys_come_from_the_files_given_else_from_the_home(tmp_path: Path) -> None:
    first, second = init_key("a", tmp_path), init_key("b", tmp_path)
    assert set(load_public_keys([], tmp_path)) == {first.keyid, second.keyid}
    only = load_public_keys([tmp_path / "keys" / "b.pub.pem"], tmp_path)
    assert set(only) == {second.keyid}
    with pytest.raises(SigningKeyError, match="holds a private key"):
        load_public_keys([tmp_path / "keys" / "a.pem"], tmp_path)


def test_a_key_file_replaced_on_disk_is_the_one_the_next_signature_uses(tmp_path: Path) -> None:
    first = signing_key(tmp_path, environ={})
    again = signing_key(tmp_path, environ={})
    assert again.keyid == first.keyid
    message = b"DSSEv1 statement"
    first.public_key.verify(again.sign(message), message)

    path = tmp_path / "keys" / "default.pem"
    replacement = tmp_path / "other"
    other = init_key("other", replacement)
    path.chmod(0o600)
    path.write_bytes((replacement / "keys" / "other.pem").read_bytes())
    replaced = signing_key(tmp_path, environ={})

    assert replaced.keyid == other.keyid != first.keyid
    other.public_key.verify(replaced.sign(message), message)
    assert replaced.signer() == {"keyid": other.keyid, "name": "default", "source": "home"}


def test_the_same_key_file_read_under_another_name_says_that_name(tmp_path: Path) -> None:
    made = init_key("ci", tmp_path)
    path = tmp_path / "keys" / "ci.pem"
    home = signing_key(tmp_path, environ={"RUNLENS_SIGNING_KEY": str(path)})
    named = load_private_key(path, "ci-reviewer", "reviewer")

    assert home.keyid == named.keyid == made.keyid
    assert home.signer() == {"keyid": made.keyid, "name": "ci", "source": "env"}
    assert named.signer() == {"keyid": made.keyid, "name": "ci-reviewer", "source": "reviewer"}


def test_a_damaged_key_file_is_named_even_after_a_good_one_was_read(tmp_path: Path) -> None:
    signing_key(tmp_path, environ={})
    path = tmp_path / "keys" / "default.pem"
    path.chmod(0o600)
    path.write_bytes(b"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    with pytest.raises(SigningKeyError, match="is not a PEM private key"):
        signing_key(tmp_path, environ={})
