"""Starting a run from an upload (`POST /api/runs`) and cancelling one.

A start request is checked whole before anything runs (`runlens.ui.uploads`: the form becomes
the run's `RunOptions`, its model passes the one model check, the file is saved and checked).
Then the store gets a pending run (`created`) and the run starts as a child process,
`python -m runlens run PLUGIN INPUT ...` with the arguments `RunOptions.run_arguments` gives:
exactly the command line's start (`runlens.start.open_run`), with its own process group and
session, the run's process writing its events and results to the store itself.

Why a child process rather than the run in the server: an analysis is CPU-bound (it would
stall every page of a server running it on its own threads), a crash in it must not take the
UI down, a cancel must reach it within a second in every phase (the child's signal handlers),
and a run must outlive the server that started it. The queue (`runlens submit`) is the other
way to run elsewhere; the UI does not require workers.

What is left to supervise is what only the server can know: how many of its children are
still going (`--max-runs`, 429 beyond), and how a child ended. The child's stdout and stderr
go to files beside the upload; a watcher thread waits for it, and if it ends without the run
reaching a terminal status (it failed before the run started: a bad option, an unreadable
file), the run is ended `failed` with the last line the child wrote on stderr, or
`cancelled` when a cancel was asked for.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from starlette.requests import Request

from runlens.records.io import new_run_id
from runlens.store.rows import Origin, RunSummary
from runlens.ui.uploads import (
    FIELDS,
    LaunchError,
    check_length,
    checked_form,
    read_form,
    safe_file_name,
    save_upload,
)

if TYPE_CHECKING:
    from runlens.start import RunOptions
    from runlens.store.db import RunStore

logger = logging.getLogger(__name__)

UPLOADS: Final = "uploads"
#: Seconds a client refused for too many runs going is asked to wait (`Retry-After`).
RETRY_AFTER_SECONDS: Final = 5


def default_max_running() -> int:
    """How many runs a server starts at once unless told: one per core (each run is one
    process; more only queue for the CPU and slow every page)."""
    return max(os.cpu_count() or 1, 1)


@dataclass(frozen=True, slots=True)
class _Child:
    process: subprocess.Popen[bytes]
    stderr_path: Path


class Launcher:
    """Starts runs as child processes and ends the ones that never got going."""

    def __init__(
        self,
        store: RunStore,
        home: Path,
        store_url: str,
        *,
        max_upload_bytes: int,
        allow_scripted_models: bool = False,
        max_running: int | None = None,
    ) -> None:
        self.store = store
        self.home = home
        self.store_url = store_url
        self.max_upload_bytes = max_upload_bytes
        self.allow_scripted_models = allow_scripted_models
        self.max_running = default_max_running() if max_running is None else max_running
        self._children: dict[str, _Child] = {}
        #: Start requests past the slot check whose process is not started yet.
        self._starting = 0
        self._lock = threading.Lock()

    # -- starting ----------------------------------------------------------------------------

    async def start(self, request: Request, origin: Origin) -> str:
        """Check and save the upload in `request`, record the pending run, start it; its id.

        Raises LaunchError (413, 415, 422) naming what is wrong, 429 with `Retry-After` when
        `max_running` runs this server started are still going; nothing is left behind then.
        """

        check_length(request, self.max_upload_bytes)
        self._reserve_slot()
        try:
            return await self._start(request, origin)
        finally:
            with self._lock:
                self._starting -= 1

    def _reserve_slot(self) -> None:
        """Count this request among the runs going, or refuse it (429) at the limit."""
        with self._lock:
            going = sum(1 for c in self._children.values() if c.process.poll() is None)
            if going + self._starting >= self.max_running:
                raise LaunchError(
                    429,
                    f"{going + self._starting} runs started here are still going, the most "
                    f"this server starts at once (runlens ui --max-runs {self.max_running}): "
                    f"try again in {RETRY_AFTER_SECONDS} s",
                    {"retry-after": str(RETRY_AFTER_SECONDS)},
                )
            self._starting += 1

    async def _start(self, request: Request, origin: Origin) -> str:
        from starlette.concurrency import run_in_threadpool

        form = await read_form(request, self.max_upload_bytes)
        try:
            # Loading a plugin the first time imports it: not on the event loop.
            options, upload = await run_in_threadpool(
                lambda: checked_form(form, allow_scripted_models=self.allow_scripted_models)
            )
            run_id = new_run_id()
            folder = self.home / UPLOADS / run_id
            try:
                saved = await run_in_threadpool(
                    save_upload, upload, folder, options, self.max_upload_bytes
                )
                await run_in_threadpool(self._launch, run_id, options, saved, origin)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
        finally:
            await form.close()
        return run_id

    def _launch(self, run_id: str, options: RunOptions, upload: Path, origin: Origin) -> None:
        workspace = self.home / run_id
        self.store.create_pending(
            run_id,
            plugin=options.plugin,
            model=options.model,
            input_name=upload.name,
            workspace=str(workspace),
            origin=origin,
        )
        arguments = [
            "run",
            options.plugin,
            str(upload),
            *options.run_arguments(),
            f"--workspace={workspace}",
            f"--run-id={run_id}",
            f"--origin={origin}",
        ]
        self._spawn(run_id, arguments, upload.parent)

    def _spawn(self, run_id: str, arguments: list[str], logs: Path) -> None:
        """Start `python -m runlens ARGUMENTS` for the pending run `run_id`, its output in
        `logs`, and watch it (LaunchError 500, the run ended `failed`, if it cannot start)."""
        command = [sys.executable, "-m", "runlens", *arguments]
        # The store URL goes by environment, not argv, so a password in it stays out of `ps`.
        env = {**os.environ, "RUNLENS_HOME": str(self.home), "RUNLENS_DATABASE_URL": self.store_url}
        stdout_path, stderr_path = logs / "stdout.log", logs / "stderr.log"
        try:
            with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=env,
                    start_new_session=True,
                )
        except OSError as error:
            message = f"the run process could not be started: {error.strerror or error}"
            self.store.end_unstarted(run_id, "failed", message)
            raise LaunchError(500, message) from None
        child = _Child(process, stderr_path)
        watcher = threading.Thread(
            target=self._watch, args=(run_id, child), name=f"runlens-ui-watch-{run_id}", daemon=True
        )
        with self._lock:
            self._children[run_id] = child
        watcher.start()

    # -- re-running with a review ------------------------------------------------------------

    def rerun(self, run: RunSummary, *, submitted_by: str, model: str | None = None) -> str:
        """Start `runlens rerun RUN --with-review` as a child process: a new run of `run`'s
        input whose model is given the review's notes and marks as findings; its id.
        LaunchError 409 when the review gives it nothing to address (or the run cannot be
        re-run), 429 at the limit of runs going. Synchronous."""
        from runlens.errors import UserError, one_line
        from runlens.start import rerun_settings

        try:
            rerun_settings(self.store, run.run_id, home=self.home)
        except UserError as error:
            raise LaunchError(
                409, f"run {run.run_id} cannot be re-run: {one_line(error)}"
            ) from None
        self._reserve_slot()
        try:
            run_id = new_run_id()
            folder = self.home / UPLOADS / run_id
            folder.mkdir(parents=True, exist_ok=True)
            workspace = self.home / run_id
            self.store.create_pending(
                run_id,
                plugin=run.plugin,
                model=model or run.model,
                input_name=run.input_name,
                workspace=str(workspace),
                origin="ui",
            )
            arguments = [
                "rerun",
                run.run_id,
                "--with-review",
                f"--as={submitted_by}",
                *([f"--model={model}"] if model else []),
                f"--workspace={workspace}",
                f"--run-id={run_id}",
                "--origin=ui",
            ]
            self._spawn(run_id, arguments, folder)
            return run_id
        finally:
            with self._lock:
                self._starting -= 1

    def _watch(self, run_id: str, child: _Child) -> None:
        """Wait for the child; end its run if the child left it unfinished."""
        code = child.process.wait()
        with self._lock:
            self._children.pop(run_id, None)
        try:
            self._settle(run_id, code, child.stderr_path)
        except Exception:
            logger.warning("run %s: could not record how its process ended", run_id, exc_info=True)

    def _settle(self, run_id: str, code: int, stderr_path: Path) -> None:
        from runlens.store.sync import sync_workspace

        run = self.store.get_run(run_id)
        if run is None or run.is_terminal:
            return
        workspace = Path(run.workspace)
        if (workspace / "runtime").is_dir():
            sync_workspace(self.store, workspace, origin=run.origin)
            run = self.store.get_run(run_id)
            if run is None or run.is_terminal:
                return
        if run.status != "created":
            return  # the run started: its own records (or `refresh_live`) settle it
        if run.cancel_requested:
            self.store.end_unstarted(run_id, "cancelled", "cancelled before the run started")
            return
        last = _last_line(stderr_path)
        message = f"the run process exited with code {code} before the run started"
        self.store.end_unstarted(run_id, "failed", f"{message}: {last}" if last else message)

    # -- cancelling --------------------------------------------------------------------------

    def cancel(self, run_id: str) -> RunSummary:
        """Ask the run to stop (its process acts within a second); a pending run whose
        process is not running is ended `cancelled` here. A run of the workers (queued, or
        held by a worker) is cancelled as `runlens cancel` does
        (`runlens.workers.control.cancel_run`): a queued one leaves the queue, ended at once.
        LaunchError 404 / 409."""
        run = self.store.get_run(run_id)
        if run is None:
            raise LaunchError(404, f"no run {run_id!r}")
        if run.is_terminal:
            raise LaunchError(409, f"run {run_id} is already {run.status}: nothing to cancel")
        if run.status == "queued" or run.worker is not None:
            return self._cancel_durable(run_id)
        summary = self.store.request_cancel(run_id)
        if summary is None:
            raise LaunchError(404, f"no run {run_id!r}")
        if summary.is_terminal:
            raise LaunchError(409, f"run {run_id} is already {summary.status}: nothing to cancel")
        if summary.status == "created" and summary.origin != "cli" and not self.running(run_id):
            self.store.end_unstarted(run_id, "cancelled", "cancelled before the run started")
            # A run that has ended comes back unchanged.
            return self.store.request_cancel(run_id) or summary
        return summary

    def _cancel_durable(self, run_id: str) -> RunSummary:
        """Cancel a run of the workers; 409 once it has ended (a UserError, such as a queue
        that cannot be reached, is the app's 422)."""
        from runlens.workers.control import RunEnded, cancel_run

        try:
            return cancel_run(self.store, run_id, self.store_url)
        except RunEnded as error:
            raise LaunchError(409, f"{error}: nothing to cancel") from None

    def running(self, run_id: str) -> bool:
        """Whether this server started `run_id` and its process is still running."""
        with self._lock:
            child = self._children.get(run_id)
        return child is not None and child.process.poll() is None


def _last_line(path: Path) -> str:
    """The last non-empty line of a log file (its last 8 KiB), at most 500 characters."""
    try:
        with path.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            stream.seek(max(0, stream.tell() - 8192))
            tail = stream.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""


__all__ = [
    "FIELDS",
    "RETRY_AFTER_SECONDS",
    "LaunchError",
    "Launcher",
    "default_max_running",
    "safe_file_name",
]
