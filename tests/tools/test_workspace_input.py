"""The input's copy in a workspace: its bytes, read-only; the input itself never changed."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

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


def test_the_input_copied_onto_itself_is_refused(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    inside = workspace.input / "rows.csv"
    inside.write_bytes(_DATA)
    with pytest.raises(shutil.SameFileError):
        workspace.copy_input(inside)
    assert inside.read_bytes() == _DATA


def test_a_missing_input_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _workspace(tmp_path).copy_input(tmp_path / "missing.csv")
