"""Ed25519 signing keys: where they live and how a run finds its own.

Keys live under `$RUNLENS_HOME/keys/` (the runs home, `runlens.records.io.runs_home`):
`NAME.pem` is the private key (PKCS#8 PEM, mode 0600 from the moment it exists) and
`NAME.pub.pem` its public key (SubjectPublicKeyInfo PEM). A key's id is the hex SHA-256 of
its raw 32-byte public key, the `keyid` of the DSSE signatures it makes.

A run signs with the private key file `RUNLENS_SIGNING_KEY` names, else with the home's
`default` key, made on first use (with a one-line notice on stderr). The private key never
enters a record, an event, a log line or the store. A process keeps the keys it has parsed,
by the SHA-256 of their files' bytes (`_PARSED`; the PEM text itself is not kept): each run
still reads its key file, so a key replaced on disk is the one the next run signs with, but
parsing the PEM is done once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from runlens.errors import UserError
from runlens.records.io import runs_home

#: The environment variable naming the private key file a run signs with.
SIGNING_KEY_ENV: Final = "RUNLENS_SIGNING_KEY"
DEFAULT_NAME: Final = "default"
KEYS_FOLDER: Final = "keys"
PRIVATE_SUFFIX: Final = ".pem"
PUBLIC_SUFFIX: Final = ".pub.pem"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: The default key's file name in `keys/`.
_DEFAULT_FILE: Final = f"{DEFAULT_NAME}{PRIVATE_SUFFIX}"


class SigningKeyError(UserError):
    """A key that cannot be made, found or read; the message names the file."""


class KeyExists(SigningKeyError):
    """`runlens keys init` refuses to overwrite a key."""


@dataclass(frozen=True)
class SigningKey:
    """A private key ready to sign, with its id and a label that says which key it is
    (a name: never a path, which may say more about a machine than the verdict should)."""

    private_key: Ed25519PrivateKey = field(repr=False)
    keyid: str
    label: str
    #: `home` (the runs home's key NAME) or `env` (the file RUNLENS_SIGNING_KEY names).
    source: str

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message)

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    def signer(self) -> dict[str, str]:
        """The predicate's `signer` entry."""
        return {"keyid": self.keyid, "name": self.label, "source": self.source}


def key_id(public_key: Ed25519PublicKey) -> str:
    """Hex SHA-256 of the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def keys_folder(home: Path | None = None) -> Path:
    return runs_home(home) / KEYS_FOLDER


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or name.endswith(".pub"):
        raise SigningKeyError(
            f"key name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (and not ending in '.pub')"
        )
    return name


def private_path(name: str, home: Path | None = None) -> Path:
    return keys_folder(home) / f"{check_name(name)}{PRIVATE_SUFFIX}"


def public_path(name: str, home: Path | None = None) -> Path:
    return keys_folder(home) / f"{check_name(name)}{PUBLIC_SUFFIX}"


def public_pem(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def init_key(name: str = DEFAULT_NAME, home: Path | None = None) -> SigningKey:
    """Make the key pair NAME under the home's `keys/`; `KeyExists` if NAME is taken.

    The private key is written to a file created 0600 (never readable by others, not even
    for a moment) and published by a hard link, which fails rather than replace a key that
    appeared meanwhile: of two runs making the default key at once, one makes it and the
    other finds it."""
    target = private_path(name, home)
    if target.exists():
        raise KeyExists(f"{target} exists: a key is never overwritten (choose another --name)")
    return write_key_pair(target, public_path(name, home), name, "home")


def write_key_pair(private: Path, public: Path, label: str, source: str) -> SigningKey:
    """A new key pair written to `private` (0600, never replacing a file there: `KeyExists`)
    and `public`, in one folder made 0700 when missing."""
    folder = private.parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise SigningKeyError(f"cannot create {folder}: {error.strerror or error}") from error
    private_key = Ed25519PrivateKey.generate()
    encoded = private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _publish(folder, private, encoded, mode=0o600, exclusive=True)
    _publish(public.parent, public, public_pem(private_key.public_key()).encode(), mode=0o644)
    return SigningKey(private_key, key_id(private_key.public_key()), label, source)


def _publish(
    folder: Path, target: Path, data: bytes, *, mode: int, exclusive: bool = False
) -> None:
    temp = folder / f".{target.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(temp, flags, mode)
        try:
            os.fchmod(descriptor, mode)  # the umask may have taken bits a public key needs
            os.write(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if exclusive:
            os.link(temp, target)
        else:
            os.replace(temp, target)
    except FileExistsError as error:
        raise KeyExists(f"{target} exists: a key is never overwritten") from error
    except OSError as error:
        raise SigningKeyError(f"cannot write {target}: {error.strerror or error}") from error
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def load_private_key(path: Path, label: str, source: str) -> SigningKey:
    """The Ed25519 private key in the PEM file `path`; `SigningKeyError` naming the file."""
    try:
        data = _read(path)
    except OSError as error:
        raise SigningKeyError(
            f"signing key {path} cannot be read: {error.strerror or error}"
        ) from error
    return _private_key(path, data, label, source)


def _read(path: Path) -> bytes:
    """The bytes of a key file: `Path.read_bytes` without its buffered file's extra calls."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while chunk := os.read(handle, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


#: The keys parsed in this process, by the SHA-256 of their PEM files' bytes: a run signs
#: with the key it has just read, parsed once (a key file's bytes say everything its key is).
_PARSED: dict[bytes, tuple[Ed25519PrivateKey, str]] = {}
#: How many parsed keys are kept (a home's key, `RUNLENS_SIGNING_KEY`'s, reviewers').
_PARSED_LIMIT: Final = 16


def _private_key(path: Path, data: bytes, label: str, source: str) -> SigningKey:
    """The Ed25519 private key in `data`, read from `path`."""
    digest = hashlib.sha256(data).digest()
    parsed = _PARSED.get(digest)
    if parsed is not None:
        return SigningKey(parsed[0], parsed[1], label, source)
    try:
        private_key = serialization.load_pem_private_key(data, password=None)
    except TypeError as error:  # encrypted: no way to ask for its password here
        raise SigningKeyError(
            f"signing key {path} is encrypted: give an unencrypted PKCS#8 Ed25519 key"
        ) from error
    except (ValueError, UnsupportedAlgorithm) as error:
        raise SigningKeyError(f"signing key {path} is not a PEM private key") from error
    if not isinstance(private_key, Ed25519PrivateKey):
        kind = type(private_key).__name__.lstrip("_").removesuffix("PrivateKey") or "other"
        raise SigningKeyError(f"signing key {path} is a {kind} key, not an Ed25519 key")
    keyid = key_id(private_key.public_key())
    if len(_PARSED) >= _PARSED_LIMIT:
        _PARSED.clear()
    _PARSED[digest] = (private_key, keyid)
    return SigningKey(private_key, keyid, label, source)


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in the PEM file `path`; `SigningKeyError` naming the file."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SigningKeyError(
            f"public key {path} cannot be read: {error.strerror or error}"
        ) from error
    if b"PRIVATE KEY" in data:
        raise SigningKeyError(
            f"{path} holds a private key: give its public key (runlens keys show NAME)"
        )
    try:
        public_key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as error:
        raise SigningKeyError(f"{path} is not a PEM public key") from error
    if not isinstance(public_key, Ed25519PublicKey):
        raise SigningKeyError(f"{path} is not an Ed25519 public key")
    return public_key


def load_public_keys(
    paths: Sequence[Path], home: Path | None = None
) -> dict[str, Ed25519PublicKey]:
    """The public keys by key id: those in `paths`, else every `*.pub.pem` of the home."""
    files = list(paths) or sorted(keys_folder(home).glob(f"*{PUBLIC_SUFFIX}"))
    return {key_id(key): key for key in map(load_public_key, files)}


def key_names(home: Path | None = None) -> Mapping[str, str]:
    """Key id -> key name, for the public keys of the home (to say which key signed)."""
    named: dict[str, str] = {}
    for path in sorted(keys_folder(home).glob(f"*{PUBLIC_SUFFIX}")):
        with contextlib.suppress(SigningKeyError):
            named[key_id(load_public_key(path))] = path.name.removesuffix(PUBLIC_SUFFIX)
    return named


def signing_key(
    home: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    notice: Callable[[str], None] | None = None,
) -> SigningKey:
    """The key a run signs with: `RUNLENS_SIGNING_KEY`, else the home's default key, made on
    first use (`notice`, by default a line on stderr, says where and its key id)."""
    configured = (os.environ if environ is None else environ).get(SIGNING_KEY_ENV, "").strip()
    if configured:
        path = Path(configured).expanduser()
        return load_private_key(path, _label(path), "env")
    path = runs_home(home).joinpath(KEYS_FOLDER, _DEFAULT_FILE)  # `private_path`'s
    try:
        # The usual case in one read; a key that cannot be read goes the way below, which
        # says why (or makes the key).
        return _private_key(path, _read(path), DEFAULT_NAME, "home")
    except OSError:
        pass
    if not path.exists():
        try:
            made = init_key(DEFAULT_NAME, home)
        except KeyExists:
            pass  # another run made it first
        else:
            (notice or _stderr)(
                f"RunLens: made signing key {path} (key id {made.keyid}); runs here sign "
                f"their verdicts with it"
            )
            return made
    return load_private_key(path, DEFAULT_NAME, "home")


def _label(path: Path) -> str:
    """A key file's name without its folders and PEM suffixes (`team.pem` -> `team`)."""
    name = path.name
    for suffix in (PUBLIC_SUFFIX, PRIVATE_SUFFIX, ".key"):
        name = name.removesuffix(suffix)
    return name or "key"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = [
    "DEFAULT_NAME",
    "SIGNING_KEY_ENV",
    "KeyExists",
    "SigningKey",
    "SigningKeyError",
    "init_key",
    "key_id",
    "key_names",
    "keys_folder",
    "load_private_key",
    "load_public_key",
    "load_public_keys",
    "public_pem",
    "signing_key",
    "write_key_pair",
]
