"""The exported HTML file's format (SPEC section 18): the bundle it carries and its manifest.

An export is one HTML page holding one data script,

    <script type="application/json" id="runlens-export">{...bundle...}</script>

whose JSON object (the bundle) carries the run's verdict envelope, the exact bytes of the
user-audience deliverables, the cited rows, the review ledger and the HTML shown. The
exporting home signs a manifest of the bundle (`export`, a DSSE envelope of type
`EXPORT_PAYLOAD_TYPE`) so that the page and `runlens verify FILE.html` can name which part
of the file was altered.

The bundle is written so that no string in it can end the script it sits in (`<`, `>`, `&`,
U+2028 and U+2029 escaped) and read back with the standard library's HTML parser, the way a
browser finds it: exactly one element with the bundle's id, a JSON script.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any, Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from runlens.errors import UserError
from runlens.verdict.dsse import VerdictError, envelope_payload, sign_envelope
from runlens.verdict.keys import SigningKey
from runlens.verdict.statement import canonical_json

EXPORT_FORMAT: Final = "runlens-export/1"
BUNDLE_ID: Final = "runlens-export"
VIEW_ID: Final = "runlens-view"
CHECK_ID: Final = "runlens-check"
EXPORT_PAYLOAD_TYPE: Final = "application/vnd.runlens.export+json"
BUNDLE_TYPE: Final = "application/json"
#: The bundle's opening tag, exactly as an export writes it.
BUNDLE_OPEN: Final = f'<script type="{BUNDLE_TYPE}" id="{BUNDLE_ID}">'

#: What a JSON text may not carry as is inside an HTML script element.
_SCRIPT_ESCAPES: Final = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


class ExportFileError(UserError):
    """A file that is no readable RunLens export; the message says what is wrong with it."""


def bundle_script(bundle: Mapping[str, Any]) -> str:
    """The bundle as the text of its data script: compact JSON that no string can close."""
    text = json.dumps(bundle, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_SCRIPT_ESCAPES)


def extract_bundle(html: str) -> dict[str, Any]:
    """The bundle of an exported page; `ExportFileError` when the page holds none, more than
    one, or one that is not a RunLens export's JSON."""
    finder = _BundleFinder()
    finder.feed(html)
    finder.close()
    if not finder.found:
        raise ExportFileError(
            f'no RunLens export: the file has no <script type="{BUNDLE_TYPE}" id="{BUNDLE_ID}">'
        )
    if len(finder.found) > 1:
        raise ExportFileError(
            f"not a RunLens export as written: {len(finder.found)} elements have the id "
            f"{BUNDLE_ID!r} (an export has one)"
        )
    tag, attributes, text = finder.found[0]
    if tag != "script" or attributes.get("type") != BUNDLE_TYPE:
        raise ExportFileError(
            f'not a RunLens export as written: the element {BUNDLE_ID!r} is not a <script type="'
            f'{BUNDLE_TYPE}">'
        )
    bundle = _parse_json(text)
    if not isinstance(bundle, dict):
        raise ExportFileError("not a RunLens export: its bundle is not a JSON object")
    if bundle.get("format") != EXPORT_FORMAT:
        raise ExportFileError(
            f"not a RunLens export this version reads: format {bundle.get('format')!r}, "
            f"not {EXPORT_FORMAT!r}"
        )
    return bundle


def export_manifest(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """What the export envelope signs, computed from the bundle's parts as they are."""
    row_list = bundle.get("row_list")
    if row_list is not None and not isinstance(row_list, str):
        raise ExportFileError("malformed export: row_list is neither a string nor null")
    return {
        "format": bundle.get("format"),
        "run_id": bundle.get("run_id"),
        "exported_at": bundle.get("exported_at"),
        "verdict_payload_sha256": _verdict_payload_sha256(bundle.get("verdict")),
        "verdict_key": bundle.get("verdict_key"),
        "files": {name: sha256(file_bytes(entry)) for name, entry in _files(bundle).items()},
        "omitted": bundle.get("omitted"),
        "rows_sha256": text_sha256(_string(bundle, "rows")),
        "row_list_sha256": None if row_list is None else text_sha256(row_list),
        "reviews_sha256": text_sha256(_string(bundle, "reviews")),
        "view_sha256": text_sha256(_string(bundle, "view")),
        "page_sha256": bundle.get("page_sha256"),
    }


#: The parts a `runlens-export/1` bundle holds; any other is no part of an export.
BUNDLE_PARTS: Final = frozenset(
    {
        "format",
        "run_id",
        "exported_at",
        "verdict",
        "verdict_key",
        "files",
        "omitted",
        "rows",
        "row_list",
        "reviews",
        "view",
        "page_sha256",
        "export",
        "export_key",
    }
)


def page_shell(html: str) -> str:
    """The page without its bundle's text: everything a browser runs and shows around the
    data it checks (the policy, the script, the style, the markup). Its SHA-256 is the
    bundle's signed `page_sha256`, so the page around the bundle cannot change (a second
    bundle hidden where one parser sees it and another does not, another script) without
    the export check naming it. `ExportFileError` when the page does not hold the bundle's
    opening tag exactly once, as written."""
    if html.count(BUNDLE_OPEN) != 1:
        raise ExportFileError(
            f"not a RunLens export as written: {html.count(BUNDLE_OPEN)} bundle scripts "
            f"opened as {BUNDLE_OPEN} (an export has one)"
        )
    start = html.index(BUNDLE_OPEN) + len(BUNDLE_OPEN)
    end = html.find("</script>", start)
    if end < 0:
        raise ExportFileError("not a RunLens export as written: its bundle script never ends")
    return html[:start] + html[end:]


def sign_export(bundle: Mapping[str, Any], key: SigningKey) -> dict[str, Any]:
    """The bundle with `export` (its manifest signed by `key`) and `export_key` filled."""
    signed = {name: value for name, value in bundle.items() if name not in ("export", "export_key")}
    payload = canonical_json(export_manifest(signed))
    signed["export"] = sign_envelope(payload, key, EXPORT_PAYLOAD_TYPE)
    signed["export_key"] = raw_public_key_b64(key.public_key)
    return signed


def raw_public_key_b64(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def public_key_from_b64(text: Any) -> Ed25519PublicKey:
    """The Ed25519 public key of a base64 raw 32-byte key; `ExportFileError` otherwise."""
    raw = _b64decode(text, "a public key") if isinstance(text, str) else b""
    if len(raw) != 32:
        raise ExportFileError("malformed export: a public key is not 32 bytes of base64")
    return Ed25519PublicKey.from_public_bytes(raw)


def file_bytes(entry: Any) -> bytes:
    """The exact bytes a `files` entry carries; `ExportFileError` on an unknown encoding."""
    if not isinstance(entry, dict) or not isinstance(entry.get("data"), str):
        raise ExportFileError("malformed export: a file entry has no string data")
    encoding, data = entry.get("encoding"), entry["data"]
    if encoding == "utf-8":
        try:
            return str(data).encode("utf-8")
        except UnicodeEncodeError as error:
            raise ExportFileError("malformed export: a utf-8 file has a lone surrogate") from error
    if encoding == "base64":
        return _b64decode(data, "a base64 file")
    raise ExportFileError(f"malformed export: a file's encoding is {encoding!r}, not utf-8/base64")


def file_entry(data: bytes, media_type: str) -> dict[str, str]:
    """The `files` entry of `data`: the text when it is strict UTF-8, else base64."""
    try:
        return {"encoding": "utf-8", "data": data.decode("utf-8"), "media_type": media_type}
    except UnicodeDecodeError:
        encoded = base64.b64encode(data).decode("ascii")
        return {"encoding": "base64", "data": encoded, "media_type": media_type}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def row_values_sha256(values: Mapping[str, Any]) -> str:
    """A source row's hash from its values (SPEC section 5: the SHA-256 of their canonical
    JSON), as the Evidence Index records it in `row_hash`."""
    return sha256(canonical_json(values))


def text_sha256(text: str) -> str:
    try:
        return sha256(text.encode("utf-8"))
    except UnicodeEncodeError as error:
        raise ExportFileError("malformed export: a string part holds a lone surrogate") from error


class _BundleFinder(HTMLParser):
    """Every element whose id is the bundle's, with its tag, attributes and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None], str]] = []
        self._reading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id") == BUNDLE_ID:
            self._reading = [] if tag == "script" else None
            self.found.append((tag, attributes, ""))

    def handle_data(self, data: str) -> None:
        if self._reading is not None:
            self._reading.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._reading is not None:
            last_tag, attributes, _ = self.found[-1]
            self.found[-1] = (last_tag, attributes, "".join(self._reading))
            self._reading = None


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except ValueError as error:
        raise ExportFileError(f"malformed export: its bundle is not JSON ({error})") from error


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, value in pairs:
        if name in seen:
            raise ValueError(f"the key {name!r} appears twice in one object")
        seen[name] = value
    return seen


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON value")


def _verdict_payload_sha256(envelope: Any) -> str:
    try:
        _, payload, _ = envelope_payload(envelope)
    except VerdictError as error:
        raise ExportFileError(f"malformed export: its verdict: {error.reason}") from error
    return sha256(payload)


def _files(bundle: Mapping[str, Any]) -> dict[str, Any]:
    files = bundle.get("files")
    if not isinstance(files, dict):
        raise ExportFileError("malformed export: files is not an object")
    return files


def _string(bundle: Mapping[str, Any], part: str) -> str:
    value = bundle.get(part)
    if not isinstance(value, str):
        raise ExportFileError(f"malformed export: {part} is not a string")
    return value


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ExportFileError(f"malformed export: {what} is not base64") from error


__all__ = [
    "BUNDLE_ID",
    "BUNDLE_TYPE",
    "CHECK_ID",
    "EXPORT_FORMAT",
    "EXPORT_PAYLOAD_TYPE",
    "VIEW_ID",
    "ExportFileError",
    "bundle_script",
    "export_manifest",
    "extract_bundle",
    "file_bytes",
    "file_entry",
    "public_key_from_b64",
    "raw_public_key_b64",
    "row_values_sha256",
    "sha256",
    "sign_export",
    "text_sha256",
]
