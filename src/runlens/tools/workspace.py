"""The run's workspace and the sandbox rules of model-facing file tools (SPEC section 3).

Every model-supplied path is resolved against the workspace root. Reads may go anywhere inside
the workspace; writes only under `artifacts/`. Anything that resolves outside the workspace
(`..`, absolute paths, symlinks that lead out) is refused, and so is a write to `runtime/` or
`input/`. Refusals are `ToolError`s: the model sees them, the events record them, the run goes on.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

from runlens.errors import ToolError

ARTIFACTS = "artifacts"
RUNTIME = "runtime"
INPUT = "input"


class Workspace:
    """A run's folder: `input/`, `artifacts/`, `runtime/` and `manifest.json`.

    The record paths are computed once here rather than on each access: the runtime touches
    them on every record write, and building a `Path` costs more than the write's syscalls.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.artifacts = self.root / ARTIFACTS
        self.runtime = self.root / RUNTIME
        self.input = self.root / INPUT
        self.evidence_index = self.runtime / "evidence_index.json"
        self.run_record = self.runtime / "run.json"
        self.events = self.runtime / "events.jsonl"
        self.trace = self.runtime / "trace.json"
        self.manifest = self.root / "manifest.json"

    def create(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in (self.input, self.artifacts, self.runtime):
            folder.mkdir(exist_ok=True)

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
        if not resolved.is_relative_to(self.root):  # the root itself, or anything under it
            raise ToolError(f"path refused: {path!r} resolves outside the workspace")
        return resolved
