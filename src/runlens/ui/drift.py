"""A newer copy of a run's input, uploaded to the run page: which rows changed and which of
the run's claims that makes stale (`runlens drift`, SPEC section 16, shown in place).

The upload passes the checks of every input upload (`runlens.ui.uploads`: the size limit,
the file type by extension and by content) and is kept under
`<home>/drift/<run_id>/<upload_id>/<name>`, never in the run's workspace: the run's record
stays what its verdict signed. `upload_id` is 16 random hex digits; the pages name an upload
by it (`/runs/{run_id}?drift=<upload_id>`), and the comparison
(`runlens.sourcelock.drift.find_drift`) is made once per upload and kept in memory (made
again from the saved file after a restart).
"""

from __future__ import annotations

import re
import secrets
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from starlette.datastructures import UploadFile
from starlette.requests import Request

from runlens.errors import RunLensError
from runlens.ui.uploads import LaunchError, check_length, read_form, save_input_file

#: The folder of the runs home where uploaded newer inputs are kept.
DRIFT_FOLDER: Final = "drift"
#: How many uploads of one run are kept (the newest): older ones are deleted as a new one
#: arrives, so that the uploads of a long-lived server do not fill its disk.
KEPT_UPLOADS: Final = 5
#: What names one upload of a run.
UPLOAD_ID: Final = re.compile(r"[0-9a-f]{16}")
#: The form's text fields besides `file`.
DRIFT_FIELDS: Final = {"encoding": "the file's encoding, instead of detecting it"}
#: Comparisons kept in memory.
_CACHED: Final = 64

Change = Literal["added", "removed", "changed"]


class DriftUnavailable(Exception):
    """No comparison to show: the upload is gone, or the run cannot be compared with it."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True)
class StaleView:
    """One claim of the run that cites a row the newer file added, removed or changed."""

    artifact: str
    location: str
    line: int | None
    row_id: str
    change: str
    kind: str
    #: Where exactly the row is cited (an item's field, a quote), or a figure's key.
    detail: str = ""

    @property
    def why(self) -> str:
        return f"row {self.row_id} {self.change} in the newer file"


@dataclass(frozen=True)
class DriftView:
    """The comparison of the run's input with an uploaded newer file, and its stale claims."""

    run_id: str
    upload_id: str
    file_name: str
    result: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    stale: tuple[StaleView, ...]
    #: Deliverables changed since the run judged them: their claims are read as it judged.
    changed_since_run: tuple[str, ...] = ()

    def stale_rows(self, artifact: str) -> dict[str, str]:
        """Row id -> change, for the quotes and items of `artifact` that cite a changed row
        (a figure rests on many rows: it is listed, not marked on each)."""
        return {
            claim.row_id: claim.change
            for claim in self.stale
            if claim.artifact == artifact and claim.kind in ("quote", "item")
        }

    def stale_of(self, *kinds: str) -> list[StaleView]:
        return [claim for claim in self.stale if claim.kind in kinds]

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "upload_id": self.upload_id,
            "file": self.file_name,
            "result": self.result,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "stale": [
                {
                    "artifact": claim.artifact,
                    "location": claim.location,
                    "line": claim.line,
                    "row_id": claim.row_id,
                    "change": claim.change,
                    "kind": claim.kind,
                    "detail": claim.detail,
                }
                for claim in self.stale
            ],
            "changed_since_run": list(self.changed_since_run),
        }


def upload_folder(home: Path, run_id: str, upload_id: str) -> Path:
    """Where the upload `upload_id` of run `run_id` is kept (both checked to be one name)."""
    if not UPLOAD_ID.fullmatch(upload_id):
        raise DriftUnavailable(f"{upload_id!r} is not an upload id", missing=True)
    if not run_id or "/" in run_id or "\\" in run_id or run_id in {".", ".."}:
        raise DriftUnavailable(f"{run_id!r} is not a run id", missing=True)
    return home.absolute() / DRIFT_FOLDER / run_id / upload_id


async def receive_upload(
    request: Request, home: Path, run_id: str, max_upload_bytes: int, *, what: str
) -> tuple[str, Path]:
    """Read the multipart form of `request` (a `file`, an optional `encoding`), check and
    save its file: (the upload id, the saved file). LaunchError naming what is wrong."""
    from starlette.concurrency import run_in_threadpool

    check_length(request, max_upload_bytes, what=what)
    form = await read_form(request, max_upload_bytes, max_fields=len(DRIFT_FIELDS))
    try:
        unknown = sorted(set(form) - {*DRIFT_FIELDS, "file"})
        if unknown:
            raise LaunchError(422, f"unknown form field {unknown[0]!r} (known: file, encoding)")
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise LaunchError(422, "the form has no file: send the newer input as 'file'")
        encoding = _encoding(form.get("encoding"))
        upload_id = secrets.token_hex(8)
        folder = upload_folder(home, run_id, upload_id)
        try:
            saved = await run_in_threadpool(
                lambda: save_input_file(upload, folder, max_upload_bytes, encoding=encoding)
            )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        await run_in_threadpool(prune_uploads, folder.parent, KEPT_UPLOADS)
    finally:
        await form.close()
    return upload_id, saved


def prune_uploads(run_folder: Path, keep: int) -> list[str]:
    """Delete all but the `keep` newest uploads of one run (their folders under `run_folder`);
    return the upload ids deleted. The pages link to an upload by its id: one pruned since
    answers that it is not here."""
    try:
        uploads = [
            (entry.stat().st_mtime_ns, entry)
            for entry in run_folder.iterdir()
            if entry.is_dir() and not entry.is_symlink() and UPLOAD_ID.fullmatch(entry.name)
        ]
    except OSError:
        return []
    uploads.sort(key=lambda pair: (pair[0], pair[1].name))
    deleted = []
    for _, entry in uploads[: max(0, len(uploads) - keep)]:
        shutil.rmtree(entry, ignore_errors=True)
        deleted.append(entry.name)
    return deleted


def _encoding(value: object) -> str | None:
    from runlens.errors import UserError
    from runlens.evidence import check_encoding_name

    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise LaunchError(422, "form field 'encoding' must be text, not a file")
    try:
        return check_encoding_name(value.strip())
    except UserError as error:
        raise LaunchError(422, f"encoding: {error}") from None


def saved_file(folder: Path) -> Path:
    """The one file an upload folder holds."""
    try:
        files = [p for p in folder.iterdir() if p.is_file() and not p.is_symlink()]
    except OSError:
        files = []
    if len(files) != 1:
        raise DriftUnavailable(f"upload {folder.name} of this run is not here", missing=True)
    return files[0]


class DriftComparisons:
    """The comparisons made for uploads, by (run id, upload id), the latest kept in memory."""

    def __init__(self) -> None:
        self._made: OrderedDict[tuple[str, str], DriftView] = OrderedDict()
        self._lock = threading.Lock()

    def compare(self, home: Path, run_id: str, workspace: Path, upload_id: str) -> DriftView:
        """The comparison of the run's input with upload `upload_id`; DriftUnavailable naming
        why there is none. Synchronous and possibly slow: call it from a thread."""
        key = (run_id, upload_id)
        with self._lock:
            if key in self._made:
                self._made.move_to_end(key)
                return self._made[key]
        view = make_view(run_id, upload_id, workspace, saved_file(upload_folder(home, *key)))
        with self._lock:
            self._made[key] = view
            while len(self._made) > _CACHED:
                self._made.popitem(last=False)
        return view


def make_view(run_id: str, upload_id: str, workspace: Path, file: Path) -> DriftView:
    """`runlens drift` of the run in `workspace` against `file`, as the pages show it."""
    from runlens.sourcelock.drift import find_drift

    try:
        report = find_drift(workspace, file)
    except (RunLensError, ValueError, OSError) as error:
        why = f"run {run_id} cannot be compared with {file.name}: {error}"
        raise DriftUnavailable(why) from None
    comparison = report.comparison
    return DriftView(
        run_id=run_id,
        upload_id=upload_id,
        file_name=file.name,
        result=str(comparison.result),
        added=_ids(comparison.added),
        removed=_ids(comparison.removed),
        changed=_ids(comparison.changed),
        stale=tuple(
            StaleView(
                artifact=str(claim.artifact),
                location=str(claim.location),
                line=claim.line,
                row_id=str(claim.row_id),
                change=str(claim.change),
                kind=str(claim.kind),
                detail=str(getattr(claim, "detail", "") or ""),
            )
            for claim in report.stale
        ),
        changed_since_run=_ids(getattr(report, "changed_since_run", ())),
    )


def _ids(values: Iterable[object]) -> tuple[str, ...]:
    return tuple(str(value) for value in values)


__all__ = [
    "DRIFT_FIELDS",
    "DRIFT_FOLDER",
    "UPLOAD_ID",
    "DriftComparisons",
    "DriftUnavailable",
    "DriftView",
    "StaleView",
    "make_view",
    "receive_upload",
    "saved_file",
    "upload_folder",
]
