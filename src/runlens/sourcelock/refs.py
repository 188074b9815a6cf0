"""Where an input file comes from, when something versions it: a git work tree, DVC.

Both are read from the original file the user named (never the workspace's copy), cheaply
and without a network: git through its own CLI (no shell, a timeout, no prompt), DVC from
the YAML it writes (`<file>.dvc` beside the file, or a `dvc.lock` in a folder above it).
Neither can fail a run: a missing `git`, a folder that is no work tree, a damaged `.dvc`
file all mean "no reference".
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

#: Seconds any one git command may take before the reference is given up.
GIT_TIMEOUT: Final = 5.0
#: How many bytes DVC (2.x) looks at to decide whether a file is text (`istextfile`).
_TEXT_SAMPLE: Final = 512
_MD5_CHUNK: Final = 1 << 20


def git_ref(path: Path) -> dict[str, Any] | None:
    """`{remote, commit, path, blob, dirty}` when `path` lies in a git work tree, else None.

    `path` is the file's path from the work tree's top (`/`-separated); `blob` the git blob
    id of its bytes as they are now (as `git add` would store them); `commit` HEAD (None in a
    repository without commits); `dirty` whether the file differs from HEAD's version or is
    not in HEAD at all; `remote` the URL of `origin` with any credentials taken out, None
    when there is no `origin`.
    """
    real = path.resolve()
    folder = real.parent
    if not _may_be_in_work_tree(folder):
        return None  # no git process for the common case of a file in no repository
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    try:
        relative = real.relative_to(Path(top).resolve()).as_posix()
    except ValueError:  # a git folder that does not hold the file (should not happen)
        return None
    blob = _git(folder, "hash-object", "--", str(real))
    if blob is None:
        return None
    commit = _git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    head_blob = _git(folder, "rev-parse", "--verify", "--quiet", f"HEAD:{relative}")
    remote = _git(folder, "config", "--get", "remote.origin.url")
    return {
        "remote": strip_credentials(remote) if remote else None,
        "commit": commit,
        "path": relative,
        "blob": blob,
        "dirty": head_blob != blob,
    }


def _may_be_in_work_tree(folder: Path) -> bool:
    """Whether git could find a repository for `folder`: a `.git` in it or a folder above
    it, or the environment naming one (`GIT_DIR`)."""
    if os.environ.get("GIT_DIR"):
        return True
    return any((candidate / ".git").exists() for candidate in (folder, *folder.parents))


def _git(folder: Path, *args: str) -> str | None:
    """The stripped output of `git -C folder args`, None when git is missing, fails or
    takes longer than `GIT_TIMEOUT`."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(  # a fixed argv, no shell
            ["git", "-C", str(folder), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    output = done.stdout.decode("utf-8", "replace").strip()
    return output or None


def strip_credentials(url: str) -> str:
    """`url` without a user's password or token (`https://user:token@host/x` ->
    `https://host/x`). An scp-like address (`git@host:org/repo.git`) names a login, not a
    secret, and is kept as it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def dvc_ref(path: Path) -> dict[str, Any] | None:
    """`{path, md5, md5_matches, tracked_by}` when DVC tracks `path`, else None.

    Looked for, in this order: `<file>.dvc` beside it (what `dvc add` writes), then a
    `dvc.lock` in its folder or any folder above it (up to the work tree's top, or the
    filesystem's root) naming it among a stage's outputs or dependencies. `path` is as the
    DVC file records it (relative to that file's folder), `md5` the recorded hash,
    `md5_matches` whether it is the hash of the file's bytes now, `tracked_by` the DVC file's
    name.
    """
    real = path.resolve()
    beside = real.with_name(real.name + ".dvc")
    if beside.is_file():
        found = _from_dvc_file(beside, real)
        if found is not None:
            return found
    for folder in real.parents:
        lock = folder / "dvc.lock"
        if lock.is_file():
            found = _from_dvc_lock(lock, real)
            if found is not None:
                return found
        if (folder / ".git").exists() or (folder / ".dvc").is_dir():
            break  # the top of the project: a dvc.lock above it is another project's
    return None


def _from_dvc_file(dvc_file: Path, real: Path) -> dict[str, Any] | None:
    document = _yaml(dvc_file)
    outs = document.get("outs") if isinstance(document, dict) else None
    return _match(outs, dvc_file, real)


def _from_dvc_lock(lock: Path, real: Path) -> dict[str, Any] | None:
    document = _yaml(lock)
    stages = document.get("stages") if isinstance(document, dict) else None
    if not isinstance(stages, dict):
        return None
    for stage in stages.values():
        if not isinstance(stage, dict):
            continue
        for section in ("outs", "deps"):
            found = _match(stage.get(section), lock, real)
            if found is not None:
                return found
    return None


def _match(entries: Any, dvc_file: Path, real: Path) -> dict[str, Any] | None:
    """The entry of `entries` (a DVC file's `outs`/`deps` list) that names `real`."""
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        recorded, md5 = entry.get("path"), entry.get("md5")
        if not isinstance(recorded, str) or not isinstance(md5, str):
            continue
        if (dvc_file.parent / recorded).resolve() != real:
            continue
        # DVC 3 (`hash: md5`) hashes a file's bytes; DVC 2 (no `hash` key) hashed a text
        # file with its CRLF line ends made LF.
        legacy = entry.get("hash") != "md5"
        return {
            "path": recorded,
            "md5": md5,
            "md5_matches": md5.lower() in _md5s(real, legacy=legacy),
            "tracked_by": dvc_file.name,
        }
    return None


def _md5s(path: Path, *, legacy: bool) -> set[str]:
    """The hex MD5 of the file's bytes, and for `legacy` DVC of its text with LF ends."""
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    found = {hashlib.md5(data, usedforsecurity=False).hexdigest()}
    if legacy and b"\x00" not in data[:_TEXT_SAMPLE]:
        lf = data.replace(b"\r\n", b"\n")
        found.add(hashlib.md5(lf, usedforsecurity=False).hexdigest())
    return found


def _yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
