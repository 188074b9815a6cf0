"""File digests taken once per version of a file (runlens.digests)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from runlens import digests
from runlens.review.ledger import current_digests


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_file_read_twice_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.md"
    path.write_bytes(b"the report")
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        reads.append(fd)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", counting_read)
    assert digests.path_sha256(path) == _sha(b"the report")
    first = len(reads)
    assert first > 0
    assert digests.path_sha256(path) == _sha(b"the report")
    assert len(reads) == first


def test_a_rewrite_of_the_same_size_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_bytes(b"aaaa")
    assert digests.path_sha256(path) == _sha(b"aaaa")
    before = path.stat()
    path.write_bytes(b"bbbb")
    # Even with the modification time put back, the change time moves on.
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert digests.path_sha256(path) == _sha(b"bbbb")


def test_a_replaced_file_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_bytes(b"first")
    assert digests.path_sha256(path) == _sha(b"first")
    other = tmp_path / "new.md"
    other.write_bytes(b"other")
    other.replace(path)
    assert digests.path_sha256(path) == _sha(b"other")


def test_the_position_of_an_open_file_is_back_at_its_start(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_bytes(b"0123456789" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.read(fd, 5)
        assert digests.fd_sha256(fd) == _sha(b"0123456789" * 1000)
        assert os.read(fd, 3) == b"012"
    finally:
        os.close(fd)


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        digests.path_sha256(tmp_path / "gone.md")


def test_the_ledger_sees_a_changed_deliverable(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    report = artifacts / "report.md"
    report.write_bytes(b"v1")
    assert current_digests(tmp_path) == {"artifacts/report.md": _sha(b"v1")}
    report.write_bytes(b"v2")
    assert current_digests(tmp_path) == {"artifacts/report.md": _sha(b"v2")}
