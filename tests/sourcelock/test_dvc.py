"""A run on a file tracked by a real `dvc add` in a git repository records DVC's own hash of
it, as DVC wrote it, beside the git reference of the repository that tracks the `.dvc` file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import run, run_record
from tests.sourcelock.conftest import SAMPLE_CSV

#: DVC sends no usage reports and finds no user or system config from the test's machine.
DVC_ENV = {"DVC_NO_ANALYTICS": "1", "DVC_GLOBAL_CONFIG_DIR": "", "DVC_SYSTEM_CONFIG_DIR": ""}


def command(folder: Path, *args: str) -> str:
    done = subprocess.run(
        list(args),
        cwd=folder,
        capture_output=True,
        check=True,
        text=True,
        env={
            **os.environ,
            **DVC_ENV,
            "GIT_AUTHOR_NAME": "T",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
        timeout=120,
    )
    return done.stdout.strip()


def dvc(folder: Path, *args: str) -> str:
    return command(folder, sys.executable, "-m", "dvc", *args)


def test_a_file_added_with_dvc_records_dvcs_hash(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    (repository / "data").mkdir(parents=True)
    data = repository / "data" / "feedback.csv"
    data.write_bytes(SAMPLE_CSV.read_bytes())
    command(repository, "git", "init", "-q")
    dvc(repository, "init", "-q")
    dvc(repository, "add", "-q", "data/feedback.csv")
    command(repository, "git", "add", ".")
    command(repository, "git", "commit", "-qm", "track the export with DVC")
    written = (repository / "data" / "feedback.csv.dvc").read_text(encoding="utf-8")
    md5 = hashlib.md5(data.read_bytes()).hexdigest()
    assert f"md5: {md5}" in written  # what DVC itself wrote, read back below

    result, payload = run(data, tmp_path / "ws")
    assert result.exit_code == 0, result.output
    assert payload["status"] == "completed"
    ref = run_record(tmp_path / "ws")["source_lock"]["ref"]
    assert ref["dvc"] == {
        "path": "feedback.csv",
        "md5": md5,
        "md5_matches": True,
        "tracked_by": "feedback.csv.dvc",
    }
    # DVC has git ignore the data file itself: git holds its `.dvc` file, not its bytes.
    git = ref["git"]
    assert git["path"] == "data/feedback.csv"
    assert git["commit"] == command(repository, "git", "rev-parse", "HEAD")
    assert git["blob"] == command(repository, "git", "hash-object", "data/feedback.csv")
    assert git["dirty"] is True

    data.write_bytes(data.read_bytes() + b"fb_999,late row,app,2026-07-01,3,smb\n")
    result, _ = run(data, tmp_path / "ws2")
    assert result.exit_code == 0, result.output
    changed = run_record(tmp_path / "ws2")["source_lock"]["ref"]["dvc"]
    assert changed["md5"] == md5 and changed["md5_matches"] is False
