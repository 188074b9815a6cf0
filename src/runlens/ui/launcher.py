"""Starting a run from an upload (`POST /api/runs`) and cancelling one.

A start request is checked whole before anything runs: the plugin is installed, the model
spec names a provider the registry knows (never `scripted:`, whose argument names a file on
the server, unless the server was started for tests with `--allow-scripted-models`), the
options are well formed, and the file is streamed to `<home>/uploads/<run_id>/<name>` under
the size limit, then checked by extension and by content (a workbook must be an .xlsx
workbook, a text file must read as a CSV text file, as the run's own input step would
decide). Then the store gets a pending run (`created`) and the run starts as a child process,
`python -m runlens run ...`, exactly as from the command line, with its own process group and
session: the run's process writes its events and results to the store itself.

The child's stdout and stderr go to files beside the upload. A watcher thread waits for the
child; if it ends without the run reaching a terminal status (it failed before the run
started: a bad option, an unreadable file), the run is ended `failed` with the last line
the child wrote on stderr, or `cancelled` when a cancel was asked for.

Children are independent runs: stopping the server does not stop them, and they finish and
record their results on their own.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import unicodedata
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from runlens.errors import InputError, UserError, one_line
from runlens.records.io import new_run_id
from runlens.store.rows import Origin, RunSummary

if TYPE_CHECKING:
    from runlens.plugins.base import Plugin
    from runlens.store.db import RunStore

logger = logging.getLogger(__name__)

UPLOADS: Final = "uploads"
TEXT_SUFFIXES: Final = frozenset({".csv", ".tsv", ".tab", ".txt"})
WORKBOOK_SUFFIX: Final = ".xlsx"
#: Form fields besides `file`, with what they are.
FIELDS: Final[Mapping[str, str]] = {
    "plugin": "the plugin to run (required)",
    "model": "the model spec (default offline)",
    "repair_turns": "rounds in which findings go back to the model (0 to 20)",
    "id_column": "the column holding each row's id",
    "text_column": "the column holding the text",
    "encoding": "the text file's encoding, instead of detecting it",
    "sheet": "the .xlsx sheet to read",
}
_MAX_REPAIR_TURNS = 20
#: Bytes of the request beyond the file itself (boundaries, headers, the small fields).
_FORM_OVERHEAD = 64 * 1024
_MAX_NAME_BYTES = 200
#: Seconds a client refused for too many runs going is asked to wait (`Retry-After`).
RETRY_AFTER_SECONDS: Final = 5
_COPY_CHUNK = 1024 * 1024


class LaunchError(Exception):
    """A start or cancel request refused: `status_code` for the HTTP answer, the message
    naming the problem, `headers` to send with it (`Retry-After` on a 429)."""

    def __init__(
        self, status_code: int, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers or {})


def default_max_running() -> int:
    """How many runs a server starts at once unless told: one per core (each run is one
    process; more only queue for the CPU and slow every page)."""
    return max(os.cpu_count() or 1, 1)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A checked start request."""

    plugin: str
    model: str
    repair_turns: int = 0
    id_column: str | None = None
    text_column: str | None = None
    encoding: str | None = None
    sheet: str | None = None

    def options(self) -> list[str]:
        """The `runlens run` options these settings become, each one `--flag=value` token so
        a value that starts with a dash is never read as another option."""
        args = [f"--model={self.model}", f"--repair-turns={self.repair_turns}"]
        for flag, value in (
            ("--id-column", self.id_column),
            ("--text-column", self.text_column),
            ("--encoding", self.encoding),
            ("--sheet", self.sheet),
        ):
            if value is not None:
                args.append(f"{flag}={value}")
        return args


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

        self._check_length(request)
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

        form = await self._read_form(request)
        try:
            # Loading a plugin the first time imports it: not on the event loop.
            run_request, upload = await run_in_threadpool(self._checked_form, form)
            run_id = new_run_id()
            folder = self.home / UPLOADS / run_id
            try:
                saved = await run_in_threadpool(self._save, upload, folder, run_request)
                await run_in_threadpool(self._launch, run_id, run_request, saved, origin)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
        finally:
            await form.close()
        return run_id

    def _check_length(self, request: Request) -> None:
        content_type = request.headers.get("content-type", "")
        if not content_type.lower().startswith("multipart/form-data"):
            raise LaunchError(
                415, f"POST /api/runs takes multipart/form-data, not {content_type or 'nothing'}"
            )
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self._form_limit():
            raise LaunchError(413, self._too_large())

    def _form_limit(self) -> int:
        return self.max_upload_bytes + _FORM_OVERHEAD

    def _too_large(self) -> str:
        return f"the upload is larger than the limit of {_size(self.max_upload_bytes)}"

    async def _read_form(self, request: Request) -> FormData:
        limit = self._form_limit()

        async def limited() -> AsyncGenerator[bytes, None]:
            seen = 0
            async for chunk in request.stream():
                seen += len(chunk)
                if seen > limit:
                    raise LaunchError(413, self._too_large())
                yield chunk

        parser = MultiPartParser(
            request.headers, limited(), max_files=1, max_fields=len(FIELDS), max_part_size=4096
        )
        try:
            return await parser.parse()
        except MultiPartException as error:
            raise LaunchError(422, f"the form cannot be read: {error.message}") from None

    def _checked_form(self, form: FormData) -> tuple[RunRequest, UploadFile]:
        unknown = sorted(set(form) - {*FIELDS, "file"})
        if unknown:
            raise LaunchError(
                422, f"unknown form field {unknown[0]!r} (known: file, {', '.join(FIELDS)})"
            )
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise LaunchError(422, "the form has no file: send the input as the 'file' field")
        values: dict[str, str] = {}
        for name in FIELDS:
            value = form.get(name)
            if isinstance(value, UploadFile):
                raise LaunchError(422, f"form field {name!r} must be text, not a file")
            if value is not None and value.strip():
                values[name] = value.strip() if name != "sheet" else value
        plugin_name = values.get("plugin")
        if plugin_name is None:
            raise LaunchError(422, "the form has no plugin: send the plugin's name as 'plugin'")
        plugin = _plugin(plugin_name)
        model = self._checked_model(values.get("model", "offline"), plugin)
        return RunRequest(
            plugin=plugin_name,
            model=model,
            repair_turns=_repair_turns(values.get("repair_turns")),
            id_column=values.get("id_column"),
            text_column=values.get("text_column"),
            encoding=_encoding(values.get("encoding")),
            sheet=values.get("sheet"),
        ), upload

    def _checked_model(self, spec: str, plugin: Plugin) -> str:
        from runlens.models.registry import known_providers

        provider = spec.partition(":")[0].strip()
        if provider == "scripted" and not self.allow_scripted_models:
            raise LaunchError(
                422,
                "model 'scripted:PATH' is refused: it names a file on the server (choose "
                "offline, openai:MODEL, anthropic:MODEL, ...)",
            )
        providers = known_providers()
        if provider not in providers:
            raise LaunchError(
                422, f"unknown model provider {provider!r} (available: {', '.join(providers)})"
            )
        if provider == "offline" and plugin.offline_model is None:
            raise LaunchError(
                422, f"plugin {plugin.name} has no offline model: choose another model"
            )
        if provider != "offline" and not spec.partition(":")[2].strip():
            raise LaunchError(422, f"model {spec!r} names no model: write {provider}:NAME")
        if provider not in {"offline", "scripted"}:
            _check_model_settings(spec.strip(), plugin)
        return spec.strip()

    def _save(self, upload: UploadFile, folder: Path, run_request: RunRequest) -> Path:
        """Copy the upload into `folder` under its sanitised name and check its content."""
        name = safe_file_name(upload.filename)
        suffix = Path(name).suffix.lower()
        if suffix not in TEXT_SUFFIXES and suffix != WORKBOOK_SUFFIX:
            allowed = ", ".join(sorted({*TEXT_SUFFIXES, WORKBOOK_SUFFIX}))
            raise LaunchError(
                415, f"{name}: files of type {suffix or '(none)'!r} are not accepted ({allowed})"
            )
        folder.mkdir(parents=True, exist_ok=False)
        target = folder / name
        size = _copy(upload.file, target, self.max_upload_bytes)
        if size is None:
            raise LaunchError(413, self._too_large())
        if size == 0:
            raise LaunchError(422, f"{name} is empty")
        _check_content(target, name, suffix, run_request.encoding)
        return target

    def _launch(self, run_id: str, run_request: RunRequest, upload: Path, origin: Origin) -> None:
        workspace = self.home / run_id
        self.store.create_pending(
            run_id,
            plugin=run_request.plugin,
            model=run_request.model,
            input_name=upload.name,
            workspace=str(workspace),
            origin=origin,
        )
        command = [
            sys.executable,
            "-m",
            "runlens",
            "run",
            run_request.plugin,
            str(upload),
            *run_request.options(),
            f"--workspace={workspace}",
            f"--run-id={run_id}",
            f"--origin={origin}",
        ]
        # The store URL goes by environment, not argv, so a password in it stays out of `ps`.
        env = {**os.environ, "RUNLENS_HOME": str(self.home), "RUNLENS_DATABASE_URL": self.store_url}
        stdout_path, stderr_path = upload.parent / "stdout.log", upload.parent / "stderr.log"
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
            self.store.finish_unstarted(run_id, "failed", message)
            raise LaunchError(500, message) from None
        child = _Child(process, stderr_path)
        watcher = threading.Thread(
            target=self._watch, args=(run_id, child), name=f"runlens-ui-watch-{run_id}", daemon=True
        )
        with self._lock:
            self._children[run_id] = child
        watcher.start()

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
            self.store.finish_unstarted(run_id, "cancelled", "cancelled before the run started")
            return
        last = _last_line(stderr_path)
        message = f"the run process exited with code {code} before the run started"
        self.store.finish_unstarted(run_id, "failed", f"{message}: {last}" if last else message)

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
            self.store.finish_unstarted(run_id, "cancelled", "cancelled before the run started")
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


def safe_file_name(raw: str | None) -> str:
    """The upload's file name as it is saved: its last path part, without control or format
    characters (bidi overrides included), without leading dots, at most 200 bytes (the
    extension kept). LaunchError 422 when nothing usable is left."""
    name = unicodedata.normalize("NFC", (raw or "").replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(char for char in name if unicodedata.category(char)[0] != "C")
    name = name.strip().lstrip(".").strip()
    stem, suffix = os.path.splitext(name)
    while len((stem + suffix).encode("utf-8")) > _MAX_NAME_BYTES and stem:
        stem = stem[:-1]
    name = (stem.rstrip() + suffix) if stem else ""
    if not name or name.startswith("."):
        raise LaunchError(422, f"the upload's file name {raw!r} has no usable name left")
    return name


@lru_cache(maxsize=32)
def _loaded_plugin(name: str) -> Plugin:
    from runlens.plugins import load_plugin

    return load_plugin(name)


def _plugin(name: str) -> Plugin:
    try:
        return _loaded_plugin(name)
    except UserError as error:
        raise LaunchError(422, str(error)) from None
    except Exception as error:
        raise LaunchError(422, f"plugin {name!r} cannot be loaded: {error}") from None


def _check_model_settings(spec: str, plugin: Plugin) -> None:
    """Build the model as the run's process will (`runlens run` resolves it the same way,
    with the same environment): a missing API key or a bad base URL is refused now, 422
    naming it, instead of a run started only to fail at its first model call."""
    import asyncio

    from runlens.models.registry import ModelContext, resolve_model

    try:
        model = resolve_model(spec, ModelContext(plugin=plugin))
    except UserError as error:
        raise LaunchError(422, f"model {spec!r} cannot be used here: {error}") from None
    except Exception as error:
        reason = one_line(error, 300)
        raise LaunchError(422, f"model {spec!r} cannot be used here: {reason}") from None
    asyncio.run(model.aclose())  # a worker thread: no event loop of its own


def _repair_turns(value: str | None) -> int:
    if value is None:
        return 0
    if not value.isdigit() or int(value) > _MAX_REPAIR_TURNS:
        raise LaunchError(
            422, f"repair_turns must be a whole number from 0 to {_MAX_REPAIR_TURNS}, not {value!r}"
        )
    return int(value)


def _encoding(value: str | None) -> str | None:
    from runlens.evidence import check_encoding_name

    if value is None:
        return None
    try:
        return check_encoding_name(value)
    except UserError as error:
        raise LaunchError(422, f"encoding: {error}") from None


def _copy(source: BinaryIO, target: Path, limit: int) -> int | None:
    """Copy `source` to a new file `target`; its size, or None past `limit` bytes."""
    source.seek(0)
    size = 0
    with target.open("xb") as out:
        while chunk := source.read(_COPY_CHUNK):
            size += len(chunk)
            if size > limit:
                return None
            out.write(chunk)
    return size


def _check_content(path: Path, name: str, suffix: str, encoding: str | None) -> None:
    """The file is what its extension says: an .xlsx workbook, or a CSV text file."""
    from runlens.evidence import WorkbookTooLarge, check_workbook, is_workbook
    from runlens.evidence._detect import sniff_format

    workbook = is_workbook(path)
    if suffix == WORKBOOK_SUFFIX:
        if not workbook:
            raise LaunchError(415, f"{name} is not an .xlsx workbook (no workbook inside)")
        try:  # within the limits a run reads a workbook by (a zip bomb is refused here)
            check_workbook(path, name)
        except WorkbookTooLarge as error:
            raise LaunchError(413, str(error)) from None
        except InputError as error:
            raise LaunchError(415, str(error)) from None
        return
    if workbook:
        raise LaunchError(415, f"{name} is an .xlsx workbook: upload it with the .xlsx extension")
    try:
        sniff_format(path, name, encoding=encoding)
    except (InputError, UserError) as error:
        raise LaunchError(415, str(error)) from None


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


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"


__all__ = [
    "FIELDS",
    "RETRY_AFTER_SECONDS",
    "LaunchError",
    "Launcher",
    "RunRequest",
    "default_max_running",
    "safe_file_name",
]
