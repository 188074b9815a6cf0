"""`runlens verify FILE.html`: the authoritative check of an exported verdict (SPEC section 18).

The page checks itself in the browser; this is the same check, with the keys the reader
trusts, the review ledger and (given `--source`) the rows against the data itself. The
checks are named as the page names them (see `exportfile` for the file's format):

    signature     the verdict envelope's signature holds for the file's `verdict_key`, the
                  statement names that key as its signer, and the key is one of `--key`
                  (else the home's); with no `--key` and a key the home does not hold, the
                  embedded key is used and the detail says to pin it
    statement     the statement is an in-toto one about the file's run, and every subject is
                  either embedded or listed as omitted
    file:<name>   each embedded file's SHA-256 is the statement's subject digest for it; a
                  file the statement does not list fails
    export        the export envelope's signature holds for `export_key`, and the manifest it
                  signs matches every part of the file (the view, the rows, the reviews ...)
    rows          each cited row's values hash to its `row_hash`; with the row list, the list
                  is the locked source's (its SHA-256 the signed rows digest) and holds every
                  cited row; with `source`, the rows read from that file are the locked ones
                  and hold every cited row
    reviews       the ledger's lines signed, chained, the statement's reviews its first lines,
                  each bound to the hashes the statement signs, the embedded files' as they are

Nothing is written: the file and `source` are only read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from runlens.errors import RunLensError, UserError
from runlens.evidence import FROM_COLUMN, FROM_ROW_NUMBER, IdRule, file_sha256
from runlens.verdict.checks import (
    SHOWN,
    Check,
    VerifyReport,
    listed,
    named_signer,
    reviews_check,
)
from runlens.verdict.dsse import PAYLOAD_TYPE, VerdictError, open_envelope
from runlens.verdict.exportfile import (
    BUNDLE_PARTS,
    EXPORT_PAYLOAD_TYPE,
    ExportFileError,
    export_manifest,
    extract_bundle,
    file_bytes,
    page_shell,
    public_key_from_b64,
    row_values_sha256,
    sha256,
    text_sha256,
)
from runlens.verdict.keys import key_id, key_names, load_public_keys
from runlens.verdict.statement import decode_statement, subject_digests

#: What each digest of the export's manifest covers, as a reader would name it.
_MANIFEST_PARTS: Final = {
    "verdict_payload_sha256": "the verdict's statement",
    "rows_sha256": "the rows",
    "row_list_sha256": "the row list",
    "reviews_sha256": "the reviews",
    "view_sha256": "the view",
    "page_sha256": "the page around the bundle (its script, style, policy or markup)",
}
_ROW_NUMBER_ID: Final = re.compile(r"row-[1-9][0-9]*")


@dataclass(frozen=True)
class CitedRow:
    """One entry of the export's `rows`: the row as the source held it (None when it could
    not be rebuilt) and the hash the Evidence Index gave it."""

    row_id: str
    row_hash: str
    values: dict[str, Any] | None
    text_column: str | None


@dataclass(frozen=True)
class SourceReading:
    """How `--source` is read: the columns and the id rule of `build_evidence_index`."""

    id_column: str
    text_column: str
    id_rule: IdRule


def verify_export(
    path: Path,
    *,
    home: Path | None = None,
    keys: Sequence[Path] = (),
    source: Path | None = None,
) -> VerifyReport:
    """Every check of the exported file `path` (see the module's docstring). `UserError` for
    a file that is no RunLens export, a key file or `source` that cannot be used."""
    if source is not None and not source.is_file():
        raise UserError(f"--source {source}: no such file")
    html, bundle = read_export(path)
    bundle = _as_read(html, bundle)
    public = load_public_keys(keys, home)
    report = VerifyReport(verified=False, run_id=str(bundle.get("run_id")))
    checks = report.checks
    envelope: Any = bundle.get("verdict")
    signature, signed_by = _signature(bundle, envelope, public, pinned=bool(keys), home=home)
    checks.append(signature)
    try:
        statement = decode_statement(envelope if isinstance(envelope, dict) else {})
    except VerdictError as error:
        checks.append(Check("statement", False, f"the verdict: {error.reason}"))
        checks.append(_export(bundle, public, pinned=bool(keys), home=home))
        return report
    predicate: dict[str, Any] = statement["predicate"]
    checks[0] = named_signer(signature, signed_by, predicate)
    digests = subject_digests(statement)
    checks.append(_statement(bundle, envelope, predicate, digests))
    embedded = dict(_embedded(bundle))
    checks.extend(_files(embedded, digests))
    checks.append(_export(bundle, public, pinned=bool(keys), home=home, verdict_signer=signed_by))
    checks.append(_rows(bundle, predicate, source))
    checks.append(_reviews(bundle, predicate, home, current={**digests, **_actual(embedded)}))
    report.verified = all(check.ok for check in checks)
    return report


def read_export(path: Path) -> tuple[str, dict[str, Any]]:
    """The text and the bundle of the exported file `path`; `UserError` naming the file when
    it cannot be read or is no RunLens export."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UserError(f"{path} cannot be read: {error.strerror or error}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"{path} is not a RunLens export: not UTF-8 text (byte {error.start})"
        ) from error
    try:
        return text, extract_bundle(text)
    except ExportFileError as error:
        raise ExportFileError(f"{path}: {error}") from error


def _as_read(html: str, bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle with `page_sha256` the hash of the page around it as the file holds it, so
    that the export check compares it with the signed one."""
    try:
        actual = text_sha256(page_shell(html))
    except ExportFileError as error:
        actual = f"none: {error}"
    return {**bundle, "page_sha256": actual}


def _signature(
    bundle: Mapping[str, Any],
    envelope: Any,
    public: Mapping[str, Any],
    *,
    pinned: bool,
    home: Path | None,
) -> tuple[Check, str | None]:
    """The signature check, and the id of the key whose signature holds: one of `public`
    (the `--key` keys when `pinned`, else the home's) or, unpinned, the file's own key."""
    try:
        embedded = public_key_from_b64(bundle.get("verdict_key"))
    except ExportFileError as error:
        return Check("signature", False, f"verdict_key: {error}"), None
    embedded_id = key_id(embedded)
    trusted = dict(public) if pinned else {**public, embedded_id: embedded}
    try:
        _, signed_by = open_envelope(envelope, trusted)
    except VerdictError as error:
        return Check(
            "signature", False, f"{error.reason} (the file's verdict_key is key {embedded_id})"
        ), None
    if signed_by != embedded_id:
        return Check(
            "signature",
            False,
            f"the signature holds for key {signed_by}, but the file's verdict_key is key "
            f"{embedded_id}: the key was swapped",
        ), None
    name = key_names(home).get(signed_by)
    if signed_by in public:
        detail = f"signed by key {signed_by}" + (f" ({name})" if name else "")
    else:
        detail = (
            f"signed by key {signed_by}, the key embedded in the file (no key given here holds "
            "it): pin it with --key"
        )
    return Check("signature", True, detail), signed_by


def _statement(
    bundle: Mapping[str, Any],
    envelope: Mapping[str, Any],
    predicate: Mapping[str, Any],
    digests: Mapping[str, str],
) -> Check:
    payload_type = envelope.get("payloadType")
    if payload_type != PAYLOAD_TYPE:
        return Check(
            "statement", False, f"the verdict's payloadType is {payload_type!r}, not {PAYLOAD_TYPE}"
        )
    run_id, signed_for = bundle.get("run_id"), predicate.get("run_id")
    if signed_for != run_id:
        return Check(
            "statement",
            False,
            f"the statement is about run {signed_for!r}, the file shows run {run_id!r}",
        )
    files, omitted = bundle.get("files"), bundle.get("omitted")
    shown = set(files if isinstance(files, dict) else ()) | set(
        omitted if isinstance(omitted, dict) else ()
    )
    unaccounted = [name for name in digests if name not in shown]
    if unaccounted:
        return Check(
            "statement",
            False,
            f"the statement's subject(s) {listed(unaccounted)} neither embedded nor listed as "
            "omitted",
        )
    status = predicate.get("status")
    return Check("statement", True, f"run {run_id}, {status}, {len(digests)} subjects")


def _embedded(bundle: Mapping[str, Any]) -> Iterator[tuple[str, bytes | ExportFileError]]:
    """Each embedded file's name and bytes (or why they cannot be read)."""
    files = bundle.get("files")
    for name, entry in sorted(files.items() if isinstance(files, dict) else ()):
        try:
            yield name, file_bytes(entry)
        except ExportFileError as error:
            yield name, error


def _actual(embedded: Mapping[str, bytes | ExportFileError]) -> dict[str, str]:
    return {name: sha256(data) for name, data in embedded.items() if isinstance(data, bytes)}


def _files(
    embedded: Mapping[str, bytes | ExportFileError], digests: Mapping[str, str]
) -> Iterator[Check]:
    for name, data in embedded.items():
        label = f"file:{name}"
        if isinstance(data, ExportFileError):
            yield Check(label, False, f"{name}: {data}")
            continue
        actual, expected = sha256(data), digests.get(name)
        if expected is None:
            yield Check(
                label,
                False,
                f"{name} is embedded but not in the statement (sha256 {actual}): added after "
                "the verdict was signed",
            )
        elif actual != expected:
            yield Check(
                label, False, f"{name} changed: expected sha256 {expected}, actual {actual}"
            )
        else:
            yield Check(label, True, f"sha256 {actual}")


def _export(
    bundle: Mapping[str, Any],
    public: Mapping[str, Any],
    *,
    pinned: bool,
    home: Path | None,
    verdict_signer: str | None = None,
) -> Check:
    """The export envelope holds for `export_key`, and its manifest is the file's. The page's
    key is held to the same keys as the verdict's: with `--key` given (`pinned`) it must be
    one of them, and when the verdict's key is one the home holds, so must the page's be: a
    stranger's key could sign a page that shows other text beside an intact verdict."""
    try:
        key = public_key_from_b64(bundle.get("export_key"))
    except ExportFileError as error:
        return Check("export", False, f"export_key: {error}")
    keyid = key_id(key)
    if keyid not in public and (pinned or verdict_signer in public):
        given = "the keys given (--key)" if pinned else "this home's keys, as the verdict's is"
        return Check(
            "export",
            False,
            f"the page is signed by key {keyid}, not one of {given}: what it shows beside the "
            "verdict is vouched for by a key you do not trust",
        )
    try:
        payload, _ = open_envelope(bundle.get("export"), {keyid: key}, EXPORT_PAYLOAD_TYPE)
        signed = json.loads(payload)
    except VerdictError as error:
        return Check("export", False, f"the export's envelope: {error.reason}")
    except ValueError:
        return Check("export", False, "the export's signed manifest is not JSON")
    try:
        actual = export_manifest(bundle)
    except ExportFileError as error:
        return Check("export", False, str(error))
    differences = _manifest_differences(signed if isinstance(signed, dict) else {}, actual)
    extra = sorted(set(bundle) - BUNDLE_PARTS)
    if extra:
        differences.append(f"parts no export writes: {', '.join(map(repr, extra))}")
    if differences:
        return Check("export", False, "changed since it was exported: " + "; ".join(differences))
    name = key_names(home).get(keyid)
    detail = f"exported {actual.get('exported_at')} and signed by key {keyid}" + (
        f" ({name})" if name else ""
    )
    if keyid not in public:
        detail += " (the key embedded in the file: pin it with --key)"
    if verdict_signer is not None and keyid != verdict_signer:
        detail += f", not the verdict's key {verdict_signer}"
    return Check("export", True, detail + ": every part as exported")


def _manifest_differences(signed: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    differences = []
    for part in sorted(set(signed) | set(actual)):
        was, now = signed.get(part), actual.get(part)
        if was == now:
            continue
        if part == "files":
            differences += _file_differences(
                was if isinstance(was, dict) else {}, now if isinstance(now, dict) else {}
            )
        elif part in _MANIFEST_PARTS:
            differences.append(f"{_MANIFEST_PARTS[part]}: signed sha256 {was}, actual {now}")
        elif part == "omitted":
            differences.append("the list of omitted files is not the signed one")
        else:
            differences.append(f"{part}: signed {was!r}, actual {now!r}")
    return differences


def _file_differences(signed: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    differences = []
    for name in sorted(set(signed) | set(actual)):
        was, now = signed.get(name), actual.get(name)
        if was == now:
            continue
        if was is None:
            differences.append(f"file {name} added (sha256 {now})")
        elif now is None:
            differences.append(f"file {name} removed (signed sha256 {was})")
        else:
            differences.append(f"file {name}: signed sha256 {was}, actual {now}")
    return differences


def _rows(bundle: Mapping[str, Any], predicate: Mapping[str, Any], source: Path | None) -> Check:
    """Each cited row hashes to its `row_hash`; the row list, and `source` when given, hold
    it as the source lock the statement signs has it."""
    try:
        rows = cited_rows(bundle.get("rows"))
    except ExportFileError as error:
        return Check("rows", False, str(error))
    lock = predicate.get("source_lock")
    lock = lock if isinstance(lock, dict) else {}
    problems = list(_row_hash_problems(rows))
    notes = [f"{len(rows)} cited row(s)"]
    bare = sum(row.values is None for row in rows)
    if bare:
        notes.append(f"{bare} carried without their values (checked by id and hash only)")
    row_list = bundle.get("row_list")
    if isinstance(row_list, str):
        found, note = _against_row_list(rows, row_list, lock)
        problems += found
        notes.append(note)
    if source is not None:
        found, note = _against_source(rows, source, lock, predicate)
        problems += found
        notes.append(note)
    if problems:
        return Check("rows", False, "; ".join(problems[:SHOWN]) + _more(problems))
    if not isinstance(row_list, str) and source is None:
        notes.append(
            f"not checked against the locked source here ({lock.get('rows', '?')} rows): the "
            "file carries no row list; runlens verify FILE.html --source FILE checks them"
        )
    return Check("rows", True, "; ".join(notes))


def cited_rows(text: Any) -> list[CitedRow]:
    """The export's `rows` (a JSON string); `ExportFileError` when it is not a list of rows."""
    malformed = ExportFileError("malformed export: rows is not a JSON list of cited rows")
    if not isinstance(text, str):
        raise malformed
    try:
        document = json.loads(text)
    except ValueError as error:
        raise malformed from error
    if not isinstance(document, list):
        raise malformed
    rows = []
    for item in document:
        if not isinstance(item, dict):
            raise malformed
        row_id, row_hash, values = item.get("id"), item.get("row_hash"), item.get("row")
        text_column = item.get("text_column")
        if not isinstance(text_column, str):
            text_column = None
        if not (isinstance(row_id, str) and isinstance(row_hash, str)):
            raise malformed
        if values is not None and not isinstance(values, dict):
            raise malformed
        rows.append(CitedRow(row_id, row_hash, values, text_column))
    return rows


def _row_hash_problems(rows: Sequence[CitedRow]) -> Iterator[str]:
    for row in rows:
        if row.values is None:
            continue
        actual = row_values_sha256(row.values)
        if actual != row.row_hash:
            yield (
                f"row {row.row_id} changed: its values hash to sha256 {actual}, its row_hash "
                f"is {row.row_hash}"
            )


def _against_row_list(
    rows: Sequence[CitedRow], row_list: str, lock: Mapping[str, Any]
) -> tuple[list[str], str]:
    locked = lock.get("rows_digest")
    actual = text_sha256(row_list)
    if actual != locked:
        return [
            f"the row list is not the locked source's: sha256 {actual}, the signed rows "
            f"digest {locked}"
        ], ""
    lines = set(row_list.split("\n"))
    missing = [row.row_id for row in rows if f"{row.row_id}\t{row.row_hash}" not in lines]
    if missing:
        return [f"row(s) {listed(missing)} not in the locked source as cited"], ""
    return [], f"each in the locked source's {lock.get('rows')} rows (rows digest {locked})"


def _against_source(
    rows: Sequence[CitedRow], source: Path, lock: Mapping[str, Any], predicate: Mapping[str, Any]
) -> tuple[list[str], str]:
    """The rows of `source`, read as the run read its input (as far as the file says how:
    `source_reading`), against the lock and the cited rows."""
    from runlens.evidence import build_evidence_index
    from runlens.sourcelock.lock import index_rows_digest

    reading = source_reading(rows, lock, predicate)
    same_bytes = file_sha256(source) == lock.get("bytes_sha256")
    try:
        index = build_evidence_index(
            source,
            id_column=reading.id_column,
            text_column=reading.text_column,
            id_rule=reading.id_rule,
            source_name=source.name,
            encoding=lock.get("encoding") if same_bytes else None,
        )
    except RunLensError as error:
        return [f"cannot read the rows of {source.name}: {error}"], ""
    problems = []
    digest, locked = index_rows_digest(index), lock.get("rows_digest")
    if digest != locked:
        problems.append(
            f"{source.name}'s rows are not the locked ones: rows digest {digest}, locked {locked}"
        )
    changed, missing = [], []
    for row in rows:
        if row.row_id not in index:
            missing.append(row.row_id)
        elif index.row_hash(row.row_id) != row.row_hash:
            changed.append(row.row_id)
    if changed:
        problems.append(f"cited row(s) {listed(changed)} differ in {source.name}")
    if missing:
        problems.append(f"cited row(s) {listed(missing)} are not in {source.name}")
    return problems, f"{source.name} holds the locked {len(index)} rows and each cited row"


def source_reading(
    rows: Sequence[CitedRow], lock: Mapping[str, Any], predicate: Mapping[str, Any]
) -> SourceReading:
    """How to read a source as the run read its input, from what the file carries: the
    text column the rows name; the id column the cited rows' ids are the values of (else
    `row-<n>` ids by row number); the plugin's columns where the rows do not tell."""
    defaults = _plugin_columns(predicate)
    texts = {row.text_column for row in rows if row.text_column}
    text_column = texts.pop() if len(texts) == 1 else defaults[1]
    whole = [row for row in rows if row.values is not None]
    columns = [str(column) for column in lock.get("columns") or ()] or sorted(
        {column for row in whole for column in row.values or {}}
    )
    holding_ids = [
        column
        for column in columns
        if whole and all((row.values or {}).get(column) == row.row_id for row in whole)
    ]
    if holding_ids:
        id_column = defaults[0] if defaults[0] in holding_ids else holding_ids[0]
        return SourceReading(id_column, text_column, FROM_COLUMN)
    if rows and all(_ROW_NUMBER_ID.fullmatch(row.row_id) for row in rows):
        return SourceReading(defaults[0], text_column, FROM_ROW_NUMBER)
    return SourceReading(defaults[0], text_column, FROM_COLUMN)


def _plugin_columns(predicate: Mapping[str, Any]) -> tuple[str, str]:
    """The id and text columns of the run's plugin, when it is installed here."""
    from runlens.plugins import load_plugin

    plugin = predicate.get("plugin")
    name = plugin.get("name") if isinstance(plugin, dict) else None
    if isinstance(name, str):
        try:
            loaded = load_plugin(name)
        except UserError:
            pass
        else:
            return loaded.id_column, loaded.text_column
    return "id", "text"


def _reviews(
    bundle: Mapping[str, Any],
    predicate: Mapping[str, Any],
    home: Path | None,
    *,
    current: Mapping[str, str],
) -> Check:
    from runlens.review.entries import ReviewError
    from runlens.review.ledger import parse_ledger

    text = bundle.get("reviews")
    if not isinstance(text, str):
        return Check("reviews", False, "malformed export: reviews is not a string")
    try:
        entries = parse_ledger(text, source="the export's reviews")
    except ReviewError as error:
        return Check("reviews", False, str(error))
    return reviews_check(
        entries,
        predicate,
        run_id=str(bundle.get("run_id")),
        home=home,
        current=current,
        later_note="in the export's reviews only",
    )


def _more(problems: Sequence[str]) -> str:
    return f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""


__all__ = [
    "CitedRow",
    "SourceReading",
    "cited_rows",
    "read_export",
    "source_reading",
    "verify_export",
]
