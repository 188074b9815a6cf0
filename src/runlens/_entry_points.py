"""The installed entry points, read once per process.

Plugins, model providers and validator plugins are found through entry point groups
(`runlens.plugins`, `runlens.models`, `runlens.validators`). Reading them means reading the
metadata of every installed distribution, which costs milliseconds on each call; a run asks
several times (its plugin, its model, its validators), so the distributions are read once and
every group is answered from that reading. The reading is redone only when `sys.path`
changes (a folder of plugins put on it): a package installed while a process runs is found by
the processes started after it.
"""

from __future__ import annotations

import functools
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any


def group_entry_points(group: str) -> tuple[EntryPoint, ...]:
    """The entry points registered under `group`, in the order the installed distributions
    are found (one per distribution name, as `importlib.metadata.entry_points` gives them)."""
    return tuple(_installed(tuple(sys.path)).select(group=group))


@functools.lru_cache(maxsize=2)
def _installed(_path: tuple[str, ...]) -> Any:
    """Every installed entry point: `EntryPoints`, or on Python 3.11 the `SelectableGroups`
    holding them; both answer `select(group=...)`."""
    return entry_points()
