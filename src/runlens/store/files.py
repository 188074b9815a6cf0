"""A run's workspace files as the store keeps them (`StoredFiles`: `put_files`, `materialize`).

Runs submitted to the workers (`runlens submit`, `runlens worker`) keep their workspace files
in the store: any machine can read them, and a worker that resumes a run starts from them.

A stored file is named by its workspace-relative POSIX path (`input/tickets.csv`,
`artifacts/report.md`), checked here once for every way in and out: never absolute, no
empty, `.` or `..` part, no backslash or NUL. Its bytes come from a model, a user's file or
another machine, so they are written back under a folder one folder at a time from that
folder (`openat` with `O_NOFOLLOW`, as `runlens.ui.files` reads them): a symbolic link on
the way is refused, and each file goes to a temporary name first, then is renamed in place
(a reader sees the old file or the new one, never part of either).

`workspace_files` lists what a worker uploads of its workspace: every regular file but the
workspace lock, its settling claim and the temporary files of unfinished atomic writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import sqlalchemy as sa

from runlens.records.io import utc_now
from runlens.store import tables as t
from runlens.store.engine import StoreBase
from runlens.tools.workspace import RUNTIME, Workspace

#: The longest stored path (`files.path`), in characters.
MAX_PATH: Final = 1000
_DIR_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0)
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_TEMP_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: Workspace files that are the live run's machinery, not its record: never uploaded.
_NOT_UPLOADED: Final = frozenset({Workspace.LOCK, f"{Workspace.LOCK}.settling"})
#: Temporary files of `runlens.atomic` writes (and of `write_under`): `.<name>.<12 hex>.tmp`.
_TEMP_FILE: Final = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")


def check_file_path(path: str) -> tuple[str, ...]:
    """The parts of a stored file's workspace-relative POSIX path (`input/x.csv` gives
    `("input", "x.csv")`); ValueError naming the path when it is empty, absolute, longer than
    `MAX_PATH`, has an empty, `.` or `..` part, a backslash, a NUL or is not UTF-8 text."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"{path!r} is not a workspace file path")
    if "\x00" in path or "\\" in path:
        raise ValueError(f"{path!r} has a NUL or a backslash: not a workspace file path")
    if path.startswith("/"):
        raise ValueError(f"{path!r} is absolute: only workspace-relative paths are stored")
    if len(path) > MAX_PATH:
        raise ValueError(f"{path[:60]!r}... is longer than {MAX_PATH} characters")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{path!r} is not UTF-8 text: not a workspace file path") from None
    parts = tuple(path.split("/"))
    if any(part in {"", ".", ".."} for part in parts):
        raise ValueError(f"{path!r} has an empty, '.' or '..' part: refused")
    return parts


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def local_digest(root: Path, parts: tuple[str, ...]) -> tuple[str, int] | None:
    """`(sha256, size)` of the regular file `parts` under `root`, reached without following
    a link; None when there is none (or a link, or something else, is in its place)."""
    try:
        folder = _open_root(root, create=False)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, 1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
        return digest.hexdigest(), size
    finally:
        os.close(fd)


def write_under(root: Path, parts: tuple[str, ...], data: bytes) -> Path:
    """Write `data` to `root/<parts>` atomically, creating `root` and the folders on the way;
    ValueError when a link, or a file, stands where a folder should be, or a folder where the
    file should be. A link in the file's own place is replaced, never followed."""
    shown = "/".join(parts)
    folder = _open_root(root, create=True)
    try:
        for index, part in enumerate(parts[:-1]):
            inner = _enter(folder, part, "/".join(parts[: index + 1]), root)
            os.close(folder)
            folder = inner
        name = parts[-1]
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(name, dir_fd=folder).st_mode):
                raise ValueError(f"{shown} under {root} is a folder: refused")
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=folder)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
    finally:
        os.close(folder)
    return root.joinpath(*parts)


def workspace_files(root: Path) -> Iterator[tuple[str, Path]]:
    """`(stored path, file)` for every regular file of the workspace at `root`, sorted by
    path: links (to files or folders) are left out, and so are the workspace lock, its
    settling claim, temporary files and names that cannot be stored (`check_file_path`)."""
    found: list[tuple[str, Path]] = []
    for folder, folders, names in os.walk(root, followlinks=False):
        here = Path(folder)
        # os.walk lists links to folders among the folders; it does not descend into them.
        folders[:] = sorted(f for f in folders if not (here / f).is_symlink())
        for name in names:
            file = here / name
            relative = file.relative_to(root).as_posix()
            if relative in _NOT_UPLOADED or _TEMP_FILE.match(name) or _is_lock(relative):
                continue
            try:
                check_file_path(relative)
                if not stat.S_ISREG(os.lstat(file).st_mode):
                    continue
            except (ValueError, OSError):
                continue
            found.append((relative, file))
    yield from sorted(found)


def _is_lock(relative: str) -> bool:
    """A lock file of the run's machinery (`runtime/<name>.lock`)."""
    return relative.startswith(f"{RUNTIME}/") and relative.endswith(".lock")


def read_regular(path: Path) -> bytes | None:
    """The bytes of the regular file `path` (not through a link in its own place); None
    when it is gone, a link or not a regular file."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        chunks = []
        while chunk := os.read(fd, 1024 * 1024):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_root(root: Path, *, create: bool) -> int:
    """Open `root` (which may itself be reached through a link: a home on a linked disk)."""
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return os.open(root, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))


def _enter(folder: int, part: str, so_far: str, root: Path) -> int:
    """Open (creating it if missing) the sub-folder `part` of `folder`, never through a link."""
    for _ in range(2):
        try:
            return os.open(part, _DIR_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=folder)
        except OSError:
            break
    try:
        info = os.lstat(part, dir_fd=folder)
    except OSError:
        info = None
    what = "a symbolic link" if info is not None and stat.S_ISLNK(info.st_mode) else "not a folder"
    raise ValueError(f"{so_far} under {root} is {what}: refused")


class StoredFiles(StoreBase):
    """The store's copies of runs' workspace files."""

    def put_files(self, run_id: str, files: Mapping[str, bytes]) -> int:
        """Keep workspace files of the run (`{"input/tickets.csv": b"..."}`), replacing what
        the store holds at those paths; a file the store holds with the same sha256 is not
        written again. How many were written. The run must be in the store. ValueError,
        before anything is written, for a path that is not a workspace-relative POSIX path
        (`runlens.store.files.check_file_path`)."""
        for path in files:
            check_file_path(path)
        if not files:
            return 0
        digests = {path: sha256_hex(data) for path, data in files.items()}
        now = utc_now()
        with self._write() as connection:
            held: dict[str, str] = {}
            paths = list(digests)
            for start in range(0, len(paths), 500):
                found = connection.execute(
                    sa.select(t.files.c.path, t.files.c.sha256).where(
                        t.files.c.run_id == run_id,
                        t.files.c.path.in_(paths[start : start + 500]),
                    )
                )
                held.update((row.path, row.sha256) for row in found)
            rows = [
                {
                    "run_id": run_id,
                    "path": path,
                    "sha256": digest,
                    "size": len(files[path]),
                    "content": files[path],
                    "updated_at": now,
                }
                for path, digest in digests.items()
                if held.get(path) != digest
            ]
            if rows:
                statement = self._insert(t.files)
                connection.execute(
                    statement.on_conflict_do_update(
                        index_elements=[t.files.c.run_id, t.files.c.path],
                        set_={
                            column: statement.excluded[column]
                            for column in ("sha256", "size", "content", "updated_at")
                        },
                    ),
                    rows,
                )
        return len(rows)

    def file_index(self, run_id: str) -> dict[str, tuple[str, int]]:
        """The run's stored files: path -> (sha256, size), by path."""
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.files.c.path, t.files.c.sha256, t.files.c.size)
                .where(t.files.c.run_id == run_id)
                .order_by(t.files.c.path)
            ).all()
        return {row.path: (row.sha256, int(row.size)) for row in rows}

    def read_file(self, run_id: str, path: str) -> bytes | None:
        """The bytes of one stored file of the run; None when the store holds none there.
        ValueError for a path no file can have (`check_file_path`)."""
        check_file_path(path)
        with self._read() as connection:
            content = connection.execute(
                sa.select(t.files.c.content).where(
                    t.files.c.run_id == run_id, t.files.c.path == path
                )
            ).scalar()
        return bytes(content) if content is not None else None

    def materialize(
        self, run_id: str, root: Path, *, paths: Sequence[str] | None = None
    ) -> list[Path]:
        """Write the run's stored files (all, or those of `paths` the store holds) under
        `root`, creating it; a file whose bytes on disk already have the stored sha256 is
        left alone. The files written, by path.

        Each write is atomic and stays under `root`: a folder on the way that is a symbolic
        link (or a file) is refused with ValueError, never followed."""
        index = self.file_index(run_id)
        wanted = sorted(index) if paths is None else sorted(set(paths) & set(index))
        written: list[Path] = []
        for path in wanted:
            parts = check_file_path(path)
            if local_digest(root, parts) == index[path]:
                continue
            data = self.read_file(run_id, path)
            if data is not None:  # None: deleted since the index was read
                written.append(write_under(root, parts, data))
        return written
