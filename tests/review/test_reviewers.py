"""Reviewers' keys in a home, UI tokens, and the plugin's review declarations."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from runlens.errors import ContractError, UserError
from runlens.plugins import Correction, ReviewPolicy
from runlens.review.reviewers import (
    home_reviewer_keys,
    local_reviewers,
    new_reviewer_key,
    new_token,
    reviewer_key,
    reviewers_folder,
    token_digest,
)
from runlens.verdict.keys import key_id


def test_a_reviewer_key_is_made_once_and_only_its_owner_can_read_it(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        made = new_reviewer_key("alice", tmp_path)
    finally:
        os.umask(previous)
    private = reviewers_folder(tmp_path) / "alice.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert (reviewers_folder(tmp_path) / "alice.pub.pem").is_file()
    assert reviewer_key("alice", tmp_path).keyid == made.keyid == key_id(made.public_key)
    with pytest.raises(UserError, match="alice already has a key"):
        new_reviewer_key("alice", tmp_path)
    assert reviewer_key("alice", tmp_path).keyid == made.keyid  # never replaced


def test_home_reviewer_keys_and_local_reviewers(tmp_path: Path) -> None:
    alice, bob = new_reviewer_key("alice", tmp_path), new_reviewer_key("bob", tmp_path)
    (reviewers_folder(tmp_path) / "junk.pub.pem").write_text("not a key", encoding="utf-8")

    found = home_reviewer_keys(tmp_path)

    assert {keyid: name for keyid, (name, _) in found.items()} == {
        alice.keyid: "alice",
        bob.keyid: "bob",
    }
    assert local_reviewers(tmp_path) == ["alice", "bob"]
    assert home_reviewer_keys(tmp_path / "empty") == {}


def test_an_unknown_or_unsafe_reviewer_has_no_key(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no key for reviewer carol"):
        reviewer_key("carol", tmp_path)
    for name in ("../keys/default", "..", "a/b"):
        with pytest.raises(UserError, match="reviewer name"):
            new_reviewer_key(name, tmp_path)
    assert not (tmp_path / "keys").exists()


def test_tokens_are_random_and_kept_as_digests() -> None:
    first, second = new_token(), new_token()
    assert first != second and len(first) >= 40
    assert token_digest(first) != token_digest(second)
    assert len(token_digest(first)) == 64 and first not in token_digest(first)


def test_review_declarations_are_checked() -> None:
    assert ReviewPolicy(approvals=2).describe() == "2 approvals; the submitter may not approve"
    assert (
        ReviewPolicy(submitter_may_approve=True).describe()
        == "1 approval; the submitter may approve"
    )
    for approvals in (0, -1, True, 1.5):
        with pytest.raises(ContractError, match="approvals"):
            ReviewPolicy(approvals=approvals)  # type: ignore[arg-type]
    with pytest.raises(ContractError, match="Correction name"):
        Correction(name="The Theme", label="x")
    with pytest.raises(ContractError, match="needs a label"):
        Correction(name="theme", label=" ")
    only = Correction("theme", "Theme", artifacts=("artifacts/a.json",))
    assert only.applies_to("artifacts/a.json") and not only.applies_to("artifacts/b.md")
    assert only.options(Path(".")) is None  # free text


def test_a_correction_whose_choices_fail_falls_back_to_free_text(tmp_path: Path) -> None:
    def broken(root: Path) -> list[str]:
        raise OSError("unreadable")

    assert Correction("theme", "Theme", choices=broken).options(tmp_path) is None
    listed = Correction("theme", "Theme", choices=lambda root: ["b", "a", "b"])
    assert listed.options(tmp_path) == ("b", "a")
