"""The source lock's parts on their own: the rows digest, and git and DVC references."""

from __future__ import annotations

import hashlib
import os
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.sourcelock.conftest import SAMPLE_CSV, sample_rows, write_table, write_workbook

from runlens.evidence import EvidenceIndex, build_evidence_index
from runlens.sourcelock import build_source_lock, rows_digest
from runlens.sourcelock.lock import index_rows_digest
from runlens.sourcelock.refs import dvc_ref, git_ref, strip_credentials


def index_of(path: Path) -> EvidenceIndex:
    return build_evidence_index(path, id_column="feedback_id", text_column="text")


def test_the_rows_digest_is_sha256_of_id_tab_hash_lines_sorted_by_id() -> None:
    pairs = [("b", "2" * 64), ("a", "1" * 64), ("é", "3" * 64), ("B", "4" * 64)]
    lines = f"B\t{'4' * 64}\na\t{'1' * 64}\nb\t{'2' * 64}\né\t{'3' * 64}\n"
    assert rows_digest(pairs) == hashlib.sha256(lines.encode("utf-8")).hexdigest()
    assert rows_digest(reversed(pairs)) == rows_digest(pairs)
    assert rows_digest([]) == hashlib.sha256(b"").hexdigest()
    # Ids order by code point even where a line would not ("a" before "a\x01").
    odd = [("a\x01", "5" * 64), ("a", "6" * 64)]
    lines = f"a\t{'6' * 64}\na\x01\t{'5' * 64}\n"
    assert rows_digest(odd) == hashlib.sha256(lines.encode("utf-8")).hexdigest()


def test_copies_of_the_same_rows_share_the_rows_digest_not_the_bytes(tmp_path: Path) -> None:
    rows = sample_rows()
    copies = {
        "original": SAMPLE_CSV,
        "utf-16": write_table(tmp_path / "u16.csv", rows, encoding="utf-16"),
        "tsv": write_table(tmp_path / "t.tsv", rows, delimiter="\t"),
        "xlsx": write_workbook(tmp_path / "w.xlsx", rows),
        "reordered": write_table(tmp_path / "r.csv", [rows[0], *reversed(rows[1:])]),
    }
    locks = {name: build_source_lock(path, index_of(path)) for name, path in copies.items()}
    assert len({lock["rows_digest"] for lock in locks.values()}) == 1
    assert len({lock["bytes_sha256"] for lock in locks.values()}) == len(copies)
    original = locks["original"]
    pairs = [(row_id, row_hash) for row_id, row_hash, _ in index_of(SAMPLE_CSV).rows()]
    assert original["rows_digest"] == rows_digest(pairs)
    assert original["bytes_sha256"] == hashlib.sha256(SAMPLE_CSV.read_bytes()).hexdigest()
    assert original["rows"] == len(rows) - 1
    assert original["columns"] == rows[0]
    assert (original["format"], original["encoding"]) == ("csv", "utf-8")
    assert (locks["xlsx"]["format"], locks["xlsx"]["encoding"]) == ("xlsx", None)
    assert locks["utf-16"]["encoding"] == "utf-16"
    # One changed cell of a column that is neither id nor text changes the rows.
    changed = [list(row) for row in rows]
    changed[3][2] = "web"
    other = write_table(tmp_path / "c.csv", changed)
    assert index_rows_digest(index_of(other)) != original["rows_digest"]


_TEXT = st.text(alphabet=string.ascii_letters + "äéß中文 ,;'\"", min_size=1, max_size=30).filter(
    lambda text: text.strip() == text and text.strip()
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(_TEXT, min_size=3, max_size=12),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "gb18030"]),
    delimiter=st.sampled_from([",", "\t", ";"]),
)
def test_re_encoding_or_re_delimiting_never_changes_the_rows_digest(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], encoding: str, delimiter: str
) -> None:
    folder = tmp_path_factory.mktemp("copies")
    rows = [["feedback_id", "text", "channel"]]
    rows += [[f"fb_{n:03d}", text, "app" if n % 2 else "web"] for n, text in enumerate(texts)]
    original = write_table(folder / "a.csv", rows)
    copy = write_table(folder / "b.csv", rows, delimiter=delimiter, encoding=encoding)
    # Read as written (detecting the encoding of a few short rows is the reader's business,
    # tested with it): what is at stake here is that the digest sees rows, not bytes.
    index = build_evidence_index(
        copy,
        id_column="feedback_id",
        text_column="text",
        encoding=encoding,
        delimiter=delimiter,
    )
    assert index_rows_digest(index) == index_rows_digest(index_of(original))


# -- git ------------------------------------------------------------------------------------


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        check=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "data").mkdir(parents=True)
    git(folder, "init", "-q")
    return folder


def test_a_committed_input_records_commit_path_blob_and_clean(repository: Path) -> None:
    data = repository / "data" / "feedback.csv"
    data.write_bytes(SAMPLE_CSV.read_bytes())
    git(repository, "add", ".")
    git(repository, "commit", "-qm", "data")
    git(repository, "remote", "add", "origin", "https://alice:s3cret@git.example.com/team/data.git")
    ref = git_ref(data)
    assert ref == {
        "remote": "https://git.example.com/team/data.git",
        "commit": git(repository, "rev-parse", "HEAD"),
        "path": "data/feedback.csv",
        "blob": git(repository, "hash-object", "data/feedback.csv"),
        "dirty": False,
    }
    assert "s3cret" not in str(ref)
    data.write_bytes(SAMPLE_CSV.read_bytes() + b"fb_999,new row,app,2026-01-01,3,smb\r\n")
    dirty = git_ref(data)
    assert dirty is not None and dirty["dirty"] is True
    assert dirty["blob"] == git(repository, "hash-object", "data/feedback.csv") != ref["blob"]
    assert dirty["commit"] == ref["commit"]


def test_an_untracked_input_is_dirty_and_no_origin_is_null(repository: Path) -> None:
    data = repository / "data" / "new.csv"
    data.write_text("feedback_id,text\nfb_1,hello\n", encoding="utf-8")
    ref = git_ref(data)
    assert ref is not None
    assert (ref["commit"], ref["remote"], ref["dirty"], ref["path"]) == (
        None,
        None,
        True,
        "data/new.csv",
    )


def test_a_file_outside_any_work_tree_has_no_git_ref(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A `git` first on PATH that leaves a mark: a file in no work tree starts no git at all.
    tools = tmp_path / "bin"
    tools.mkdir()
    marker = tmp_path / "git-ran"
    real_git = shutil.which("git")
    assert real_git is not None
    (tools / "git").write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{real_git}" "$@"\n')
    (tools / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    monkeypatch.delenv("GIT_DIR", raising=False)
    data = write_table(tmp_path / "plain.csv", sample_rows())
    assert git_ref(data) is None
    assert build_source_lock(data, index_of(data))["ref"] is None
    assert not marker.exists()

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert marker.exists()  # the same git is the one a work tree is asked with
    marker.unlink()
    ref = git_ref(data)
    assert ref is not None and ref["dirty"] is True and marker.exists()


@pytest.mark.parametrize(
    ("url", "stripped"),
    [
        ("https://user:token@host.example/r.git", "https://host.example/r.git"),
        ("https://token@host.example:8443/r.git", "https://host.example:8443/r.git"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        ("ssh://git@host.example/r.git", "ssh://host.example/r.git"),
        ("/srv/git/r.git", "/srv/git/r.git"),
    ],
)
def test_remote_urls_lose_their_credentials(url: str, stripped: str) -> None:
    assert strip_credentials(url) == stripped


# -- DVC ------------------------------------------------------------------------------------

#: What `dvc add data/feedback.csv` writes (DVC 3) beside the file, but for the hash and size.
DVC_FILE = """outs:
- md5: {md5}
  size: {size}
  hash: md5
  path: feedback.csv
"""
#: What `dvc repro` writes (DVC 3): a stage that prepares the file.
DVC_LOCK = """schema: '2.0'
stages:
  prepare:
    cmd: python prepare.py
    deps:
    - path: raw/export.json
      hash: md5
      md5: 0123456789abcdef0123456789abcdef
      size: 10
    outs:
    - path: data/feedback.csv
      hash: md5
      md5: {md5}
      size: {size}
"""


def test_a_dvc_file_beside_the_input_records_path_and_md5(tmp_path: Path) -> None:
    data = write_table(tmp_path / "feedback.csv", sample_rows())
    raw = data.read_bytes()
    md5 = hashlib.md5(raw).hexdigest()
    (tmp_path / "feedback.csv.dvc").write_text(DVC_FILE.format(md5=md5, size=len(raw)))
    assert dvc_ref(data) == {
        "path": "feedback.csv",
        "md5": md5,
        "md5_matches": True,
        "tracked_by": "feedback.csv.dvc",
    }
    data.write_bytes(raw + b"fb_999,x,app,2026-01-01,3,smb\r\n")
    changed = dvc_ref(data)
    assert changed is not None and changed["md5_matches"] is False
    lock = build_source_lock(data, index_of(data), source_ref="s3://bucket/feedback.csv")
    assert lock["ref"] == {"dvc": changed, "uri": "s3://bucket/feedback.csv"}


def test_a_dvc_2_file_hashes_text_with_lf_line_ends(tmp_path: Path) -> None:
    data = write_table(tmp_path / "feedback.csv", sample_rows())  # CRLF line ends
    md5 = hashlib.md5(data.read_bytes().replace(b"\r\n", b"\n")).hexdigest()
    (tmp_path / "feedback.csv.dvc").write_text(f"outs:\n- md5: {md5}\n  path: feedback.csv\n")
    ref = dvc_ref(data)
    assert ref is not None and ref["md5_matches"] is True


def test_a_dvc_lock_above_the_input_records_the_stage_output(tmp_path: Path) -> None:
    (tmp_path / ".dvc").mkdir()
    (tmp_path / "data").mkdir()
    data = write_table(tmp_path / "data" / "feedback.csv", sample_rows())
    raw = data.read_bytes()
    md5 = hashlib.md5(raw).hexdigest()
    (tmp_path / "dvc.lock").write_text(DVC_LOCK.format(md5=md5, size=len(raw)))
    assert dvc_ref(data) == {
        "path": "data/feedback.csv",
        "md5": md5,
        "md5_matches": True,
        "tracked_by": "dvc.lock",
    }
    other = write_table(tmp_path / "data" / "other.csv", sample_rows())
    assert dvc_ref(other) is None
    (tmp_path / "dvc.lock").write_text("stages: [: not yaml")
    assert dvc_ref(data) is None
