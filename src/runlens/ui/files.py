"""Opening a file inside a run's workspace for the server, without ever leaving it.

Everything in a workspace's `artifacts/` was written by a model, and a workspace on disk may
have been tampered with, so a name is opened one folder at a time from the workspace root
with `O_NOFOLLOW` (`openat`): a symbolic link anywhere on the way, `..`, an absolute name or
anything that is not a regular file is refused. Opening relative to the already-open parent
leaves no window between checking a path and opening it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 64 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)


class WorkspaceFileError(Exception):
    """A workspace file that cannot be served; the message says why (for a 404)."""


@dataclass(frozen=True, slots=True)
class OpenedFile:
    """A regular file opened for reading: its descriptor, size and modification time."""

    fd: int
    size: int
    mtime_ns: int

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes in chunks; closes the descriptor when done (or abandoned)."""
        try:
            while chunk := os.read(self.fd, _CHUNK):
                yield chunk
        finally:
            os.close(self.fd)

    def close(self) -> None:
        os.close(self.fd)


def open_in_workspace(workspace: Path, name: str) -> OpenedFile:
    """Open the workspace-relative `name` (`artifacts/report.md`) for reading.

    Raises WorkspaceFileError naming the problem: an unsafe name, a symbolic link on the way,
    a file that does not exist or is not a regular file.
    """
    parts = _parts(name)
    try:
        # The root itself may be reached through a link (a home on a linked disk); what is
        # inside it may not.
        folder = os.open(workspace, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        raise WorkspaceFileError(f"the run's workspace cannot be opened ({_why(error)})") from None
    try:
        for index, part in enumerate(parts[:-1]):
            inner = _open_folder(folder, part, "/".join(parts[: index + 1]))
            os.close(folder)
            folder = inner
        return _open_file(folder, parts[-1], name)
    finally:
        os.close(folder)


def _parts(name: str) -> list[str]:
    if not name or "\x00" in name or "\\" in name:
        raise WorkspaceFileError(f"{name!r} is not a workspace file name")
    if name.startswith("/"):
        raise WorkspaceFileError(f"{name!r} is absolute: only workspace-relative names are served")
    parts = name.split("/")
    if any(part in {"", ".", ".."} for part in parts):
        raise WorkspaceFileError(f"{name!r} has an empty, '.' or '..' part: refused")
    return parts


def _open_folder(folder: int, part: str, so_far: str) -> int:
    """Open the sub-folder `part` of `folder`, never through a link."""
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=folder)
    except OSError as error:
        raise WorkspaceFileError(_refusal(folder, part, so_far, error)) from None


def _open_file(folder: int, part: str, name: str) -> OpenedFile:
    try:
        fd = os.open(part, _FILE_FLAGS, dir_fd=folder)
    except OSError as error:
        raise WorkspaceFileError(_refusal(folder, part, name, error)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise WorkspaceFileError(f"{name} is not a regular file: refused")
    with contextlib.suppress(OSError):  # back to blocking reads (O_NONBLOCK only guards FIFOs)
        os.set_blocking(fd, True)
    return OpenedFile(fd, info.st_size, info.st_mtime_ns)


def _refusal(folder: int, part: str, so_far: str, error: OSError) -> str:
    try:
        info = os.lstat(part, dir_fd=folder)
    except OSError:
        return f"{so_far} does not exist in the run's workspace"
    if stat.S_ISLNK(info.st_mode):
        return f"{so_far} is a symbolic link: refused (only files inside the workspace are served)"
    return f"{so_far} cannot be opened ({_why(error)})"


def _why(error: OSError) -> str:
    return error.strerror or type(error).__name__


__all__ = ["OpenedFile", "WorkspaceFileError", "open_in_workspace"]
