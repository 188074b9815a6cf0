"""Fixtures for the Evidence Index tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

CsvWriter = Callable[..., Path]


@pytest.fixture
def write_csv(tmp_path: Path) -> CsvWriter:
    """`write_csv(text_or_bytes, name="sample.csv", encoding="utf-8")` -> path of the file."""

    def write(content: str | bytes, name: str = "sample.csv", encoding: str = "utf-8") -> Path:
        path = tmp_path / name
        data = content if isinstance(content, bytes) else content.encode(encoding)
        path.write_bytes(data)
        return path

    return write
