"""What every page and API handler of `runlens ui` shares: the `UIContext` at
`app.state.ui` (the store, the runs home, the settings, the launcher of runs and the Evidence
Index cache), and the server's settings, `UIConfig`.

A run's files are read from its workspace when that is on this machine; a worker's run done
on another machine is read from the copy of its files in the store, written under
`<home>/.store-cache/<run_id>/` (`UIContext.files_of`) and opened there by the same rules.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from fastapi import Request

from runlens.ui.analysed import AnalysedTables
from runlens.ui.drift import DriftComparisons
from runlens.ui.evidence import EvidenceRows
from runlens.ui.launcher import Launcher
from runlens.ui.security import ReviewerSessions
from runlens.ui.verdicts import OnePerRun

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.rows import RunDetail

logger = logging.getLogger(__name__)

DEFAULT_PORT: Final = 8765
DEFAULT_MAX_UPLOAD_BYTES: Final = 50 * 1024 * 1024
#: Seconds between two re-syncs of the live runs (a dead process shows `interrupted`).
REFRESH_SECONDS: Final = 2.0
#: The folder of the runs home where runs' files are written from the store.
STORE_CACHE: Final = ".store-cache"


@dataclass(frozen=True, slots=True)
class UIConfig:
    """The server's settings, explicit (nothing is read from the environment here).

    `token` None serves without one (loopback only: `runlens ui` refuses otherwise). Model
    specs accepted from uploads name any provider the registry knows except `scripted`,
    which names a file on the server: `allow_scripted_models` lets tests use it anyway.
    """

    store_url: str
    home: Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    allow_scripted_models: bool = False
    #: Runs started from the pages and the API that may go at once (None: one per core);
    #: a start past it is refused with 429 and `Retry-After`.
    max_running_runs: int | None = None


@dataclass
class UIContext:
    """What every page and API handler works with (`request.app.state.ui`)."""

    config: UIConfig
    store: RunStore
    launcher: Launcher
    evidence: EvidenceRows = field(default_factory=EvidenceRows)
    analysed: AnalysedTables = field(default_factory=AnalysedTables)
    #: The comparisons of runs' inputs with newer files uploaded to their pages.
    drift: DriftComparisons = field(default_factory=DriftComparisons)
    #: The runs being verified (`POST /api/runs/{run_id}/verify`), one check per run at once.
    verifying: OnePerRun = field(default_factory=OnePerRun)
    #: The reviewers' sign-in cookies this server issues (`/reviews/sign-in`).
    reviewer_sessions: ReviewerSessions = field(default_factory=ReviewerSessions)
    _refreshed_at: float = field(default=0.0, repr=False)
    _refreshing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Per run, the store's file index as last written under the cache.
    _materialized: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict, repr=False)
    _materializing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def home(self) -> Path:
        return self.config.home

    def refresh_live(self) -> None:
        """Bring the store in step with the runs still going on this machine, at most once
        per `REFRESH_SECONDS` (a run whose process died becomes `interrupted`). Synchronous:
        call it from a thread-pool handler. A failure is logged, never an error page."""
        from runlens.store.sync import refresh_live

        if time.monotonic() - self._refreshed_at < REFRESH_SECONDS:
            return
        if not self._refreshing.acquire(blocking=False):
            return  # another request is refreshing right now
        try:
            self._refreshed_at = time.monotonic()
            refresh_live(self.store)
        except Exception:
            logger.warning("could not refresh the live runs", exc_info=True)
        finally:
            self._refreshing.release()

    def files_of(self, run: RunDetail) -> RunDetail:
        """The run as the views of its files read it: `workspace` is where its files are on
        this machine. That is its own workspace when it is here
        (`runlens.store.sync.local_workspace`); else, when the store holds the run's files (a
        worker's run), `<home>/.store-cache/<run_id>/`, written from the store and brought up
        to date when the store's files change. Otherwise the run as it is: its views say the
        workspace cannot be read. Synchronous: call it from a thread-pool handler."""
        from runlens.store.files import check_file_path
        from runlens.store.sync import local_workspace

        if local_workspace(self.store, run) is not None:
            return run
        try:
            one_folder = len(check_file_path(run.run_id)) == 1
        except ValueError:
            one_folder = False
        if not one_folder:
            return run  # not a name a folder can have: nothing is written for it
        index = self.store.file_index(run.run_id)
        if not index:
            return run
        cache = self.home.absolute() / STORE_CACHE / run.run_id
        with self._materializing:
            if self._materialized.get(run.run_id) != index or not cache.is_dir():
                try:
                    self.store.materialize(run.run_id, cache)
                except (ValueError, OSError):
                    logger.warning("could not write run %s's files", run.run_id, exc_info=True)
                    return run
                self._materialized[run.run_id] = index
        return run.model_copy(update={"workspace": str(cache)})


def ui_context(request: Request) -> UIContext:
    """The `UIContext` of the app serving `request`."""
    return cast(UIContext, request.app.state.ui)


__all__ = [
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_PORT",
    "REFRESH_SECONDS",
    "STORE_CACHE",
    "UIConfig",
    "UIContext",
    "ui_context",
]
