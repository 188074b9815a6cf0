"""The run's workspace and the sandbox rules of model-facing file tools (SPEC section 3).

Every model-supplied path is resolved against the workspace root. Reads may go anywhere inside
the workspace; writes only under `artifacts/`. Anything that resolves outside the workspace
(`..`, absolute paths, symlinks that lead out) is refused, and so is a write to `runtime/` or
`input/`. Refusals are `ToolError`s: the model sees them, the events record them, the run goes on.
"""

from __future__ import annotations

import os
import secrets
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


#: The temporary file is created exclusively (never follows or reuses an existing name) and
#: private (0600, as `tempfile.mkstemp` made it) until the rename publishes it.
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
for _flag in ("O_CLOEXEC", "O_NOFOLLOW", "O_BINARY"):  # where the platform has them
    _TEMP_FLAGS |= getattr(os, _flag, 0)


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename, so readers never see half.

    A run writes several records this way, so it is kept to four syscalls (open, write, close,
    rename): the temporary name comes from 48 random bits rather than `tempfile.mkstemp`, and
    the parent folder is created only when the open finds it missing.
    """
    temp_name = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        handle = os.open(temp_name, _TEMP_FLAGS, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(temp_name, _TEMP_FLAGS, 0o600)
    try:
        try:
            _write_all(handle, data)
        finally:
            os.close(handle)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _write_all(handle: int, data: bytes) -> None:
    """`os.write` until every byte is written (a write may be partial, e.g. on a signal)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]
