"""The run's workspace and the sandbox rules of model-facing file tools (SPEC section 3).

Every model-supplied path is resolved against the workspace root. Reads may go anywhere inside
the workspace; writes only under `artifacts/`. Anything that resolves outside the workspace
(`..`, absolute paths, symlinks that lead out) is refused, and so is a write to `runtime/` or
`input/`. Refusals are `ToolError`s: the model sees them, the events record them, the run goes on.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from runlens.errors import ToolError

ARTIFACTS = "artifacts"
RUNTIME = "runtime"
INPUT = "input"


class Workspace:
    """A run's folder: `input/`, `artifacts/`, `runtime/` and `manifest.json`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    @property
    def artifacts(self) -> Path:
        return self.root / ARTIFACTS

    @property
    def runtime(self) -> Path:
        return self.root / RUNTIME

    @property
    def input(self) -> Path:
        return self.root / INPUT

    @property
    def evidence_index(self) -> Path:
        return self.runtime / "evidence_index.json"

    @property
    def run_record(self) -> Path:
        return self.runtime / "run.json"

    @property
    def events(self) -> Path:
        return self.runtime / "events.jsonl"

    @property
    def trace(self) -> Path:
        return self.runtime / "trace.json"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    def create(self) -> None:
        for folder in (self.input, self.artifacts, self.runtime):
            folder.mkdir(parents=True, exist_ok=True)

    def copy_input(self, source: Path) -> Path:
        """Copy the input file into `input/`, read-only, keeping its name."""
        target = self.input / source.name
        shutil.copyfile(source, target)
        target.chmod(0o444)
        return target

    def resolve_read(self, path: str) -> Path:
        """Resolve a model-supplied path for reading; refuse anything outside the workspace."""
        return self._resolve(path)

    def resolve_write(self, path: str) -> Path:
        """Resolve a model-supplied path for writing; only `artifacts/` is writable."""
        resolved = self._resolve(path)
        relative = resolved.relative_to(self.root)
        if not relative.parts or relative.parts[0] != ARTIFACTS or len(relative.parts) < 2:
            raise ToolError(
                f"write refused: {path!r} is outside artifacts/ (only artifacts/ is writable; "
                f"runtime/ and input/ are read-only)"
            )
        return resolved

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _resolve(self, path: str) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string")
        if "\x00" in path:
            raise ToolError("path must not contain NUL characters")
        posix = PurePosixPath(path.replace("\\", "/"))
        if posix.is_absolute() or Path(path).is_absolute():
            raise ToolError(f"path refused: {path!r} is absolute; use a path inside the workspace")
        # resolve() follows every symlink, so a link that leads out is caught here too.
        resolved = (self.root / posix).resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"path refused: {path!r} resolves outside the workspace")
        return resolved


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename, so readers never see half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
