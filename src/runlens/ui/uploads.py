"""A start request's upload form, read and checked whole before anything runs.

The form is read within the size limit; its fields become the run's `RunOptions`
(`runlens.start`): the plugin is installed, the model passes the one model check
(`check_model`: never `scripted:`, whose argument names a file on the server, unless the
server was started for tests with `--allow-scripted-models`; a model that cannot be built
here, such as one without its API key, is refused), the options are well formed. The file is
streamed to `<home>/uploads/<run_id>/<name>` under the size limit, then checked by extension
and by content (a workbook must be an .xlsx workbook, a text file must read as a CSV text
file, as the run's own input step would decide). Every refusal is a `LaunchError` naming it.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import AsyncGenerator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from runlens.errors import InputError, UserError
from runlens.start import SCRIPTED_ON_SERVER, RunOptions, check_model

if TYPE_CHECKING:
    from runlens.plugins.base import Plugin

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


def check_length(request: Request, max_upload_bytes: int, *, what: str = "POST /api/runs") -> None:
    """A multipart form (415) not announced larger than the limit (413); `what` names the
    request in the refusal."""
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("multipart/form-data"):
        raise LaunchError(415, f"{what} takes multipart/form-data, not {content_type or 'nothing'}")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > _form_limit(max_upload_bytes):
        raise LaunchError(413, _too_large(max_upload_bytes))


async def read_form(
    request: Request, max_upload_bytes: int, *, max_fields: int = len(FIELDS)
) -> FormData:
    """The form, read within the limit (413 past it, 422 when it cannot be read), with at
    most one file and `max_fields` text fields."""
    limit = _form_limit(max_upload_bytes)

    async def limited() -> AsyncGenerator[bytes, None]:
        seen = 0
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > limit:
                raise LaunchError(413, _too_large(max_upload_bytes))
            yield chunk

    parser = MultiPartParser(
        request.headers, limited(), max_files=1, max_fields=max_fields, max_part_size=4096
    )
    try:
        return await parser.parse()
    except MultiPartException as error:
        raise LaunchError(422, f"the form cannot be read: {error.message}") from None


def checked_form(form: FormData, *, allow_scripted_models: bool) -> tuple[RunOptions, UploadFile]:
    """The run the form asks for, and its file; LaunchError 422 naming what is wrong."""
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
    return form_options(values, allow_scripted_models=allow_scripted_models), upload


def form_options(values: Mapping[str, str], *, allow_scripted_models: bool) -> RunOptions:
    """The run the form's text fields (stripped, empty ones left out) ask for, its model
    checked as the run's process will build it; LaunchError 422 naming what is wrong."""
    plugin_name = values.get("plugin")
    if plugin_name is None:
        raise LaunchError(422, "the form has no plugin: send the plugin's name as 'plugin'")
    plugin = _plugin(plugin_name)
    refuse = None if allow_scripted_models else SCRIPTED_ON_SERVER
    try:
        model = check_model(values.get("model"), plugin, refuse_scripted=refuse, build=True)
    except UserError as error:
        raise LaunchError(422, str(error)) from None
    return RunOptions(
        plugin=plugin_name,
        model=model,
        repair_turns=_repair_turns(values.get("repair_turns")),
        id_column=values.get("id_column"),
        text_column=values.get("text_column"),
        encoding=_encoding(values.get("encoding")),
        sheet=values.get("sheet"),
    )


def save_upload(
    upload: UploadFile, folder: Path, options: RunOptions, max_upload_bytes: int
) -> Path:
    """Copy the upload into `folder` under its sanitised name and check its content."""
    return save_input_file(upload, folder, max_upload_bytes, encoding=options.encoding)


def save_input_file(
    upload: UploadFile, folder: Path, max_upload_bytes: int, *, encoding: str | None = None
) -> Path:
    """Copy an uploaded input file into the new `folder` under its sanitised name, within
    `max_upload_bytes`, and check it is what its extension says (an .xlsx workbook, a CSV
    text file): the checks every upload of an input passes. LaunchError naming what is
    wrong (413, 415, 422)."""
    name = safe_file_name(upload.filename)
    suffix = Path(name).suffix.lower()
    if suffix not in TEXT_SUFFIXES and suffix != WORKBOOK_SUFFIX:
        allowed = ", ".join(sorted({*TEXT_SUFFIXES, WORKBOOK_SUFFIX}))
        raise LaunchError(
            415, f"{name}: files of type {suffix or '(none)'!r} are not accepted ({allowed})"
        )
    folder.mkdir(parents=True, exist_ok=False)
    target = folder / name
    size = _copy(upload.file, target, max_upload_bytes)
    if size is None:
        raise LaunchError(413, _too_large(max_upload_bytes))
    if size == 0:
        raise LaunchError(422, f"{name} is empty")
    _check_content(target, name, suffix, encoding)
    return target


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


def _form_limit(max_upload_bytes: int) -> int:
    return max_upload_bytes + _FORM_OVERHEAD


def _too_large(max_upload_bytes: int) -> str:
    return f"the upload is larger than the limit of {_size(max_upload_bytes)}"


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


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"


__all__ = [
    "FIELDS",
    "TEXT_SUFFIXES",
    "WORKBOOK_SUFFIX",
    "LaunchError",
    "check_length",
    "checked_form",
    "form_options",
    "read_form",
    "safe_file_name",
    "save_input_file",
    "save_upload",
]
