"""The `runlens ui` application: pages, HTTP API and static files over one run store.

`create_app(UIConfig(...))` builds it; `runlens ui` (`runlens.cli.ui`) serves it with
uvicorn. Everything the handlers share is the `UIContext` at `app.state.ui`
(`runlens.ui.context`). Every request passes `runlens.ui.security.SecurityMiddleware` first
(Host allow-list, token, cross-site writes, response headers), static files included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from runlens.errors import UserError, one_line
from runlens.ui import api, pages, review_api, reviews, verdict_api
from runlens.ui.context import UIConfig, UIContext
from runlens.ui.launcher import Launcher, LaunchError
from runlens.ui.security import SecurityMiddleware, SecuritySettings, allowed_hosts

if TYPE_CHECKING:
    from runlens.store.db import RunStore

#: The pages' stylesheet and script (`/static/...`).
STATIC: Final = Path(__file__).parent / "static"


def create_app(config: UIConfig, *, store: RunStore | None = None) -> FastAPI:
    """The application for `config`; opens the store at `config.store_url` unless given one
    (UserError naming the URL when it cannot be opened). The store is closed on shutdown
    when it was opened here."""
    from runlens.store.db import open_store

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
    app.include_router(verdict_api.router)
    app.include_router(review_api.router)
    app.include_router(reviews.router)
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
    return JSONResponse({"detail": one_line(error)}, status_code=422)


async def _validation_error(_request: Request, error: Exception) -> JSONResponse:
    """Request validation errors as one sentence per problem, naming the parameter."""
    problems = error.errors() if isinstance(error, RequestValidationError) else []
    parts = []
    for problem in problems:
        where = [str(part) for part in problem.get("loc", ()) if part != "body"]
        place = f"{where[0]} parameter {'.'.join(where[1:])!r}" if len(where) > 1 else "request"
        parts.append(f"{place}: {problem.get('msg', 'invalid')}")
    return JSONResponse({"detail": "; ".join(parts) or "invalid request"}, status_code=422)


__all__ = ["create_app"]
