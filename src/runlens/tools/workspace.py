"""The run's workspace and the sandbox rules of model-facing file tools (SPEC section 3).

Every model-supplied path is resolved against the workspace root. Reads may go anywhere inside
the workspace; writes only under `artifacts/`. Anything that resolves outside the workspace
(`..`, absolute paths, symlinks that lead out) is refused, and so is a write to `runtime/` or
`input/`. Refusals are `ToolError`s: the model sees them, the events record them, the run goes on.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Final, overload

from runlens.errors import ToolError

ARTIFACTS: Final = "artifacts"
RUNTIME: Final = "runtime"
INPUT: Final = "input"


class _Under:
    """A path of a workspace: `relative` under its root, made on first use and then kept in
    the instance's `__dict__`, where later reads find it without calling here."""

    __slots__ = ("name", "relative")

    def __init__(self, relative: str) -> None:
        self.relative = relative
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, workspace: None, owner: type | None = None) -> _Under: ...

    @overload
    def __get__(self, workspace: Workspace, owner: type | None = None) -> Path: ...

    def __get__(self, workspace: Workspace | None, owner: type | None = None) -> Path | _Under:
        if workspace is None:
            return self
        path = workspace.__dict__[self.name] = workspace.root / self.relative
        return path


class Workspace:
    """A run's folder: `input/`, `artifacts/`, `runtime/` and `manifest.json`.

    The one place the layout is written down: the class constants are the workspace-relative
    names (for messages and for readers holding only a root), the attributes the paths of
    this workspace. The paths are computed once, on first use, rather than on each access:
    the runtime touches them on every record write, and building a `Path` costs more than
    the write's syscalls.
    """

    RUN_RECORD: Final = f"{RUNTIME}/run.json"
    EVENTS: Final = f"{RUNTIME}/events.jsonl"
    TRACE: Final = f"{RUNTIME}/trace.json"
    EVIDENCE_INDEX: Final = f"{RUNTIME}/evidence_index.json"
    #: Where `runlens validate --source` writes the index it builds, beside the run's own.
    REBUILT_INDEX: Final = f"{RUNTIME}/evidence_index.source.json"
    SYSTEM_PROMPT: Final = f"{RUNTIME}/system_prompt.md"
    LOCK: Final = f"{RUNTIME}/lock.json"
    #: Every citation the validators verified (artifact, location, row, quote, offsets).
    CITATIONS: Final = f"{RUNTIME}/citations.json"
    #: The run's signed verdict: a DSSE envelope around an in-toto Statement (SPEC 16).
    VERDICT: Final = f"{RUNTIME}/verdict.dsse.json"
    MANIFEST: Final = "manifest.json"

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    # Each path is made on first use, then kept in the instance (`_Under`): a reader of one
    # workspace (a store mirror, a sync) uses a few of them.
    artifacts = _Under(ARTIFACTS)
    runtime = _Under(RUNTIME)
    input = _Under(INPUT)
    evidence_index = _Under(EVIDENCE_INDEX)
    run_record = _Under(RUN_RECORD)
    events = _Under(EVENTS)
    trace = _Under(TRACE)
    system_prompt = _Under(SYSTEM_PROMPT)
    lock = _Under(LOCK)
    citations = _Under(CITATIONS)
    manifest = _Under(MANIFEST)

    def create(self) -> None:
        """Make the workspace's folders, as `Path.mkdir(exist_ok=True)` would (the root with
        its parents), one `mkdir` each when they are new. A root that is there but no
        folder fails at `runtime/` (`NotADirectoryError`), as the workspace's lock would."""
        try:
            os.mkdir(self.root)
        except FileNotFoundError:  # its parent is missing too
            self.root.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            pass  # a folder, or not: `runtime/` says
        except OSError:
            if not self.root.is_dir():
                raise
        for folder in (self.runtime, self.input, self.artifacts):
            try:
                os.mkdir(folder)
            except OSError:
                if not folder.is_dir():
                    raise

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
