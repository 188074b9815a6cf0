"""Large inputs are hashed, and large indexes hashed and written, in a thread beside the
parsing: the bytes and hashes are the same as without the thread, and errors still surface."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from runlens.atomic import AtomicFile
from runlens.evidence import EvidenceIndex, _encoding, _storage, build_evidence_index, file_sha256

from .conftest import CsvWriter
from .helpers import csv_text


def _rows(count: int) -> str:
    rows = [
        [f"fb_{n:05d}", f'第{n}行：导出太慢了，"引号"\n换行 {n}', ("web", "app")[n % 2]]
        for n in range(count)
    ]
    return csv_text([["feedback_id", "text", "channel"], *rows])


def _build(path: Path) -> EvidenceIndex:
    return build_evidence_index(path, id_column="feedback_id", text_column="text")


def test_threaded_source_hash_is_the_file_hash(
    write_csv: CsvWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_csv(_rows(3000))
    unthreaded = _build(path)
    monkeypatch.setattr(_encoding, "THREADED_HASH_BYTES", 1)
    monkeypatch.setattr(_encoding, "READ_CHUNK", 4096)  # many buffers through the queue
    threaded = _build(path)
    assert threaded.source_hash == unthreaded.source_hash == file_sha256(path)
    assert [threaded.items[i].row_hash for i in threaded.items] == [
        unthreaded.items[i].row_hash for i in unthreaded.items
    ]


def test_background_hash_matches_hashlib_and_closes_twice() -> None:
    chunks = [bytes([n]) * (n * 97 + 1) for n in range(50)]
    background = _encoding.BackgroundHash(threaded=True)
    for chunk in chunks:
        background.update(chunk)
    assert background.hexdigest() == hashlib.sha256(b"".join(chunks)).hexdigest()
    background.close()  # already closed: nothing to do


def test_threaded_write_gives_the_same_bytes(
    write_csv: CsvWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _build(write_csv(_rows(3000)))
    plain, threaded = tmp_path / "plain.json", tmp_path / "threaded.json"
    plain_hash = index.write(plain)
    monkeypatch.setattr(_storage, "_THREADED_ROWS", 1)
    monkeypatch.setattr(_storage, "_QUEUED", 1)
    monkeypatch.setattr(_storage, "_HANDOFF", 1000)  # many handovers, and a rest at the end
    threaded_hash = index.write(threaded)
    assert threaded.read_bytes() == plain.read_bytes()
    assert threaded_hash == plain_hash == hashlib.sha256(plain.read_bytes()).hexdigest()


@pytest.mark.parametrize("threaded_rows", [1, 10**9])
def test_a_failing_write_raises_and_leaves_no_file(
    write_csv: CsvWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threaded_rows: int
) -> None:
    index = _build(write_csv(_rows(3000)))
    monkeypatch.setattr(_storage, "_THREADED_ROWS", threaded_rows)
    monkeypatch.setattr(_storage, "_HANDOFF", 1000)

    def full_disk(self: object, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(AtomicFile, "write", full_disk)
    folder = tmp_path / "runtime"
    folder.mkdir()
    with pytest.raises(OSError, match="No space left"):
        index.write(folder / "index.json")
    assert list(folder.iterdir()) == []
