"""`runlens ui`: serve the pages and the HTTP API over the run store."""

from __future__ import annotations

import errno
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from runlens.cli.common import UsageFailure

if TYPE_CHECKING:
    from runlens.ui.context import UIConfig

TOKEN_VARIABLE = "RUNLENS_UI_TOKEN"


@click.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port; the URL printed says which).",
)
@click.option(
    "--database-url",
    default=None,
    metavar="URL",
    help="Run store (default: $RUNLENS_DATABASE_URL, else SQLite in the runs folder).",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Runs folder (default: $RUNLENS_HOME or ./runlens-runs).",
)
@click.option(
    "--max-upload-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=50,
    show_default=True,
    help="Largest input file POST /api/runs accepts, in MiB.",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=1),
    default=None,
    envvar="RUNLENS_UI_MAX_RUNS",
    help="Runs started from the pages and the API that may go at once (default: one per "
    "core); one more is refused with 429 and Retry-After.",
)
@click.option(
    "--allow-scripted-models",
    is_flag=True,
    hidden=True,
    help="For tests: accept scripted:PATH model specs from uploads (they name server files).",
)
def ui_command(
    host: str,
    port: int,
    database_url: str | None,
    home: Path | None,
    max_upload_mb: float,
    max_runs: int | None,
    allow_scripted_models: bool,
) -> None:
    """Serve the RunLens pages and HTTP API (OpenAPI at /openapi.json).

    Listens on 127.0.0.1 unless told otherwise. Any other address needs RUNLENS_UI_TOKEN,
    which every request must then carry (Authorization: Bearer TOKEN, or ?token=TOKEN once
    in the browser, which sets a cookie); when the variable is set it is asked for on
    loopback too. Runs started from the pages keep going when the server stops.
    """
    from runlens.cli.common import usage_errors
    from runlens.records.io import runs_home
    from runlens.store.db import store_url
    from runlens.ui.app import create_app
    from runlens.ui.context import UIConfig
    from runlens.ui.security import is_loopback

    token = os.environ.get(TOKEN_VARIABLE) or None
    if token is None and not is_loopback(host):
        raise UsageFailure(
            f"refusing to listen on {host} without a token: set {TOKEN_VARIABLE} (every "
            "request must then carry it), or listen on 127.0.0.1"
        )
    folder = runs_home(home).resolve()
    config = UIConfig(
        store_url=store_url(database_url, folder),
        home=folder,
        host=host,
        port=port,
        token=token,
        max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        allow_scripted_models=allow_scripted_models,
        max_running_runs=max_runs,
    )
    sock = _bind(host, port)
    try:
        with usage_errors():
            app = create_app(config)
        _serve(app, sock, config)
    finally:
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port`; exit 2 naming the problem (port taken, bad host)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise UsageFailure(f"cannot listen on {host!r}: {error.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise UsageFailure(
                f"port {port} on {host} is already in use: stop what listens there or choose "
                "another with --port"
            ) from None
        raise UsageFailure(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.set_inheritable(False)
    return sock


def _serve(app: Any, sock: socket.socket, config: UIConfig) -> None:
    import uvicorn

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.should_exit:
                click.echo(f"RunLens UI: {url}")
                click.echo(f"Run store: {_shown_store(config.store_url)}", err=True)
                sys.stdout.flush()

    server = Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            server_header=False,
            proxy_headers=False,
            timeout_graceful_shutdown=3,
        )
    )
    server.run(sockets=[sock])


def _shown_store(url: str) -> str:
    from runlens.store.db import display_url

    return display_url(url)
