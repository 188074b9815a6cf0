"""The `runlens ui` application: pages, HTTP API and static files over one run store.

`create_app(UIConfig(...))` builds it; `runlens ui` (`runlens.cli.ui`) serves it with
uvicorn. Everything the handlers share is the `UIContext` at `app.state.ui`: the store, the
runs home, the settings, the launcher of runs and the Evidence Index cache. Every request
passes `runlens.ui.security.SecurityMiddleware` first (Host allow-list, token, cross-site
writes, response headers), static files included.

A run's files are read from its workspace when that is on this machine; a worker's run done
on another machine is read from the copy of its files in the store, written under
`<home>/.store-cache/<run_id>/` (`UIContext.files_of`) and opened there by the same rules.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from runlens.errors import UserError
from runlens.ui.analysed import AnalysedTables
from runlens.ui.evidence import EvidenceRows
from runlens.ui.launcher import Launcher, LaunchError
from runlens.ui.security import SecurityMiddleware, SecuritySettings, allowed_hosts

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.rows import RunDetail

logger = logging.getLogger(__name__)

DEFAULT_PORT: Final = 8765
DEFAULT_MAX_UPLOAD_BYTES: Final = 50 * 1024 * 1024
#: The pages' stylesheet and script (`/static/...`).
STATIC: Final = Path(__file__).parent / "static"
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


def create_app(config: UIConfig, *, store: RunStore | None = None) -> FastAPI:
    """The application for `config`; opens the store at `config.store_url` unless given one
    (UserError naming the URL when it cannot be opened). The store is closed on shutdown
    when it was opened here."""
    from runlens.store.db import open_store
    from runlens.ui import api, pages

    owned = store is None
    run_store = open_store(config.store_url) if store is None else store
    context = UIContext(
        config=config,
        store=run_store,
        launcher=Launcher(
            run_store,
            config.home,
            config.store_url,
            max_upload_bytes=config.max_upload_bytes,
            allow_scripted_models=config.allow_scripted_models,
            max_running=config.max_running_runs,
        ),
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        # Runs this server started keep going: they are independent processes.
        if owned:
            run_store.close()

    app = _App(
        SecuritySettings(token=config.token, hosts=allowed_hosts(config.host)),
        title="RunLens",
        version=_package_version(),
        description="Runs, their deliverables, findings and evidence (SPEC section 14).",
        docs_url=None,  # Swagger UI needs inline scripts the pages' policy forbids
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.ui = context
    app.add_exception_handler(LaunchError, _launch_error)
    app.add_exception_handler(UserError, _user_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(Exception, _internal_error)
    return app


class _App(FastAPI):
    """FastAPI with `SecurityMiddleware` outside everything, error pages included."""

    def __init__(self, security: SecuritySettings, **options: Any) -> None:
        self.security = security
        super().__init__(**options)

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityMiddleware(super().build_middleware_stack(), self.security)


def _package_version() -> str:
    try:
        return version("runlens")
    except PackageNotFoundError:
        return "0"


async def _launch_error(_request: Request, error: Exception) -> JSONResponse:
    if not isinstance(error, LaunchError):
        return JSONResponse({"detail": str(error)}, status_code=500)
    return JSONResponse(
        {"detail": str(error)}, status_code=error.status_code, headers=error.headers
    )


async def _internal_error(_request: Request, _error: Exception) -> JSONResponse:
    return JSONResponse(
        {"detail": "internal server error (the server's log has the details)"}, status_code=500
    )


async def _user_error(_request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": " ".join(str(error).split())}, status_code=422)


async def _validation_error(_request: Request, error: Exception) -> JSONResponse:
    """Request validation errors as one sentence per problem, naming the parameter."""
    problems = error.errors() if isinstance(error, RequestValidationError) else []
    parts = []
    for problem in problems:
        where = [str(part) for part in problem.get("loc", ()) if part != "body"]
        place = f"{where[0]} parameter {'.'.join(where[1:])!r}" if len(where) > 1 else "request"
        parts.append(f"{place}: {problem.get('msg', 'invalid')}")
    return JSONResponse({"detail": "; ".join(parts) or "invalid request"}, status_code=422)


__all__ = [
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_PORT",
    "UIConfig",
    "UIContext",
    "create_app",
    "ui_context",
]
