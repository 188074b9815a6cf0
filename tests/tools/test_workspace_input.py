"""The input's copy in a workspace: its bytes, read-only, by the lean path and by
`shutil.copyfile`'s."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

import pytest

from runlens.tools import workspace as workspace_module
from runlens.tools.workspace import Workspace

_DATA = bytes(range(256)) * 40 + "é,\n\r\x00".encode()


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "rows.csv"
    source.write_bytes(_DATA)
    return source


def _workspace(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    return workspace


def test_the_copy_has_the_inputs_bytes_and_is_read_only(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    copied = workspace.copy_input(_source(tmp_path))
    assert copied == workspace.input / "rows.csv"
    assert copied.read_bytes() == _DATA
    assert stat.S_IMODE(copied.stat().st_mode) == 0o444


@pytest.mark.parametrize("refusal", [errno.EINVAL, errno.ENOSYS])
def test_without_sendfile_the_bytes_are_read_and_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int
) -> None:
    def no_sendfile(*args: object) -> int:
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(os, "sendfile", no_sendfile)
    monkeypatch.setattr(workspace_module, "_COPY_CHUNK", 1000)  # several reads
    copied = _workspace(tmp_path).copy_input(_source(tmp_path))
    assert copied.read_bytes() == _DATA
    assert stat.S_IMODE(copied.stat().st_mode) == 0o444


def test_a_copy_sent_in_several_pieces_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_module, "_COPY_CHUNK", 999)
    copied = _workspace(tmp_path).copy_input(_source(tmp_path))
    assert copied.read_bytes() == _DATA


def test_another_sendfile_error_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "sendfile", full)
    with pytest.raises(OSError) as raised:
        _workspace(tmp_path).copy_input(_source(tmp_path))
    assert raised.value.errno == errno.ENOSPC


def test_a_name_taken_in_input_goes_through_copyfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _workspace(tmp_path)
    (workspace.input / "rows.csv").write_bytes(b"older")
    calls: list[tuple[object, object]] = []
    copyfile = shutil.copyfile

    def spy(source: Path, target: Path) -> object:
        calls.append((source, target))
        return copyfile(source, target)

    monkeypatch.setattr(shutil, "copyfile", spy)
    copied = workspace.copy_input(_source(tmp_path))
    assert calls == [(tmp_path / "rows.csv", copied)]
    assert copied.read_bytes() == _DATA
    assert stat.S_IMODE(copied.stat().st_mode) == 0o444


def test_the_input_copied_onto_itself_is_refused_as_copyfile_refuses_it(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    inside = workspace.input / "rows.csv"
    inside.write_bytes(_DATA)
    with pytest.raises(shutil.SameFileError):
        workspace.copy_input(inside)
    assert inside.read_bytes() == _DATA


def test_a_missing_input_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _workspace(tmp_path).copy_input(tmp_path / "missing.csv")
