"""SHA-256 of files, taken once per version of a file.

A long-lived process (the UI's server, a worker) shows and re-checks the same deliverables
many times: a reader view of a 100,000-row run would otherwise hash its 40 MB analysis on
every request. Digests are cached by the file's identity and stat (device, inode, size,
modification and change times): any write to the file changes its stat (the change time
cannot be set back by a user), so its digest is taken again.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Final

#: How many file digests the cache keeps.
_CACHE_SIZE: Final = 512
_CHUNK: Final = 1024 * 1024

_cache: OrderedDict[tuple[int, ...], str] = OrderedDict()
_cache_lock = threading.Lock()


def fd_sha256(fd: int) -> str:
    """The digest of the open file `fd`, from the cache when its stat is unchanged; the
    file's position is back at its start afterwards."""
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, _CHUNK):
        digest.update(chunk)
    os.lseek(fd, 0, os.SEEK_SET)
    value = digest.hexdigest()
    with _cache_lock:
        _cache[key] = value
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return value


def path_sha256(path: Path) -> str:
    """The digest of the file at `path` (`fd_sha256`); `OSError` when it cannot be read."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return fd_sha256(fd)
    finally:
        os.close(fd)
