"""One self-contained HTML file of a run (SPEC section 18): `runlens export RUN --html FILE`,
the run page's download and `GET /api/runs/{run_id}/export.html`.

`build_export` reads what the run signed from the folder its files are in (`run.workspace`,
as `UIContext.files_of` gives it): the verdict envelope, the user-audience deliverables
(exact bytes, each checked against the statement before it is embedded), the cited rows of
the Evidence Index, the review ledger. It renders the view with the UI's own renderers
(`markdown`, `json_view`: every string of a deliverable escaped), every citation an in-page
link to its row (`#row-N`), images as data: URLs, and writes the page of
`runlens.verdict.exportfile`: the view, the bundle signed by the home's key, the inline
script (`static/export.js`, which shows the view and checks the file) and style
(`static/export.css`), under a Content-Security-Policy that forbids every request.

Nothing but `exported_at` varies between two exports of the same run by the same key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from runlens.errors import EvidenceIndexError, UserError
from runlens.evidence import EvidenceIndex
from runlens.review.entries import REVIEWS_PATH
from runlens.sourcelock.lock import index_row_lines
from runlens.store.rows import ArtifactRow, CitationRow, FindingRow, RunDetail
from runlens.tools.workspace import Workspace
from runlens.ui.files import WorkspaceFileError, open_in_workspace
from runlens.ui.markdown import is_relative
from runlens.ui.verdicts import RecordUnavailable, read_verdict
from runlens.ui.views import (
    VERDICT_TEXTS,
    finding_location,
    marked_segments,
    reader_artifacts,
    render_text,
    view_kind,
)
from runlens.verdict.dsse import VerdictError, open_envelope
from runlens.verdict.exportfile import (
    BUNDLE_OPEN,
    CHECK_ID,
    EXPORT_FORMAT,
    VIEW_ID,
    bundle_script,
    file_entry,
    raw_public_key_b64,
    row_values_sha256,
    sign_export,
    text_sha256,
)
from runlens.verdict.keys import key_id, load_public_keys, signing_key
from runlens.verdict.statement import decode_statement, subject_digests

#: The largest `row_list` a file embeds (bytes); a bigger input's cited rows go unchecked
#: against the locked source in the page.
ROW_LIST_LIMIT: Final = 1_000_000
#: The largest deliverable a file embeds (bytes).
FILE_LIMIT: Final = 8 * 1024 * 1024
MEDIA_TYPES: Final = {
    "markdown": "text/markdown; charset=utf-8",
    "json": "application/json",
    "image": "image/svg+xml",
    "text": "text/plain; charset=utf-8",
}
_UNSAFE_IN_NAME: Final = re.compile(r"[^A-Za-z0-9._-]")
#: Where a link to a row the file does not hold goes.
NO_ROW: Final = "#cited-rows"

_PAGE: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">\
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style>
</head><body>
<div id="{check_id}" class="check check-pending" role="status">Checking this file…</div>
<noscript><p class="check check-off">Scripts are off: this file cannot check itself and \
shows nothing it has not checked. Run <code>runlens verify FILE.html</code>.</p></noscript>
<main id="{view_id}" hidden></main>
{bundle_open}{bundle}</script>
<script>{script}</script>
</body></html>
"""


@dataclass(frozen=True)
class ExportedPage:
    """The file, and what it holds."""

    html: bytes
    size: int
    rows_embedded: int
    row_list_embedded: bool
    files_embedded: list[str]
    omitted: dict[str, str]
    #: The key that signed the run's verdict and the key that signed this file.
    verdict_key_id: str = ""
    export_key_id: str = ""


@dataclass(frozen=True)
class _Embedded:
    """A deliverable the file carries: its artifact row, bytes and how it is shown."""

    row: ArtifactRow
    data: bytes
    kind: str


@dataclass
class _CitedRow:
    row_id: str
    citations: list[CitationRow] = field(default_factory=list)


def build_export(
    run: RunDetail,
    citations: Sequence[CitationRow],
    *,
    home: Path | None,
    exported_at: str | None = None,
) -> ExportedPage:
    """The exported page of `run` (its files in `run.workspace`) with `citations` (the
    store's rows of the run); `UserError` naming the run when there is nothing signed to
    export or what is on disk is not what the run signed."""
    workspace = Path(run.workspace)
    envelope, statement = _signed_verdict(run, workspace)
    predicate = statement["predicate"]
    exporter = signing_key(home)
    verdict_key = _verdict_key(run, envelope, predicate, home, exporter.public_key)
    subjects = subject_digests(statement)
    embedded = _embedded_files(run, workspace, subjects)
    omitted = _omitted(run, subjects, embedded)
    index = _evidence_index(run, workspace)
    cited = _cited_rows(embedded, citations)
    # A cited id the index lacks (a failed citation, named by its finding) is shown in the
    # view, but has no row to carry or check.
    rows = [_row_entry(index, item) for item in cited if index is not None and item.row_id in index]
    row_list = _row_list(index)
    reviews = _reviews_text(run, workspace)
    when = exported_at or datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    view = _view(
        run,
        predicate=predicate,
        statement=statement,
        embedded=embedded,
        omitted=omitted,
        citations=citations,
        cited=cited,
        index=index,
        row_list_embedded=row_list is not None,
        reviews=reviews,
        exported_at=when,
        verdict_key_id=key_id(verdict_key),
        export_key_id=exporter.keyid,
    )
    bundle: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "run_id": run.run_id,
        "exported_at": when,
        "verdict": envelope,
        "verdict_key": raw_public_key_b64(verdict_key),
        "files": {
            item.row.name: file_entry(item.data, MEDIA_TYPES.get(item.kind, "text/plain"))
            for item in embedded
        },
        "omitted": omitted,
        "rows": json.dumps(rows, ensure_ascii=False, separators=(",", ":")),
        "row_list": row_list,
        "reviews": reviews,
        "view": view,
    }
    title = f"RunLens · {run.run_id} · {predicate.get('status')}"
    bundle["page_sha256"] = text_sha256(_page(title, ""))
    signed = sign_export(bundle, exporter)
    html = page_html(signed, title).encode("utf-8")
    return ExportedPage(
        html=html,
        size=len(html),
        rows_embedded=len(rows),
        row_list_embedded=row_list is not None,
        files_embedded=[item.row.name for item in embedded],
        omitted=omitted,
        verdict_key_id=key_id(verdict_key),
        export_key_id=exporter.keyid,
    )


def page_html(bundle: Mapping[str, Any], title: str) -> str:
    """The file around a signed bundle: the one inline script's hash in its policy."""
    return _page(title, bundle_script(bundle))


def _page(title: str, bundle_text: str) -> str:
    """The page with `bundle_text` in its data script; with "" it is the page's shell, whose
    hash the bundle's `page_sha256` carries (`runlens.verdict.exportfile.page_shell`)."""
    script = _static("export.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return _PAGE.format(
        csp=csp,
        title=escape(title),
        style=(_static("tokens.css") + _static("export.css")).replace("</", "<\\/"),
        check_id=CHECK_ID,
        view_id=VIEW_ID,
        bundle_open=BUNDLE_OPEN,
        bundle=bundle_text,
        script=script,
    )


def export_filename(run_id: str) -> str:
    """`runlens-<run_id>.html`, any character a file name or a header should not hold as `_`."""
    return "runlens-" + _UNSAFE_IN_NAME.sub("_", run_id) + ".html"


# -- what the run signed ----------------------------------------------------------------------


def _signed_verdict(run: RunDetail, workspace: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    if not run.is_terminal:
        raise UserError(
            f"run {run.run_id} is {run.status}: it has no signed verdict yet, nothing to export"
        )
    try:
        envelope = read_verdict(workspace)
    except RecordUnavailable as error:
        if error.missing:
            raise UserError(
                f"run {run.run_id} has no signed verdict (it ended {run.status} before "
                "validating): nothing to export"
            ) from None
        raise UserError(f"run {run.run_id}: its verdict cannot be read ({error})") from None
    try:
        statement = decode_statement(envelope)
    except VerdictError as error:
        raise UserError(f"run {run.run_id}: its verdict cannot be read ({error})") from None
    if statement["predicate"].get("run_id") != run.run_id:
        raise UserError(f"run {run.run_id}: its verdict names another run")
    return envelope, statement


def _verdict_key(
    run: RunDetail,
    envelope: Mapping[str, Any],
    predicate: Mapping[str, Any],
    home: Path | None,
    exporter_public: Any,
) -> Any:
    """The public key whose signature on the verdict holds: one of the home's keys (or the
    key this export is signed with), and the one the predicate names as its signer."""
    keys = {**load_public_keys((), home), key_id(exporter_public): exporter_public}
    try:
        _, keyid = open_envelope(dict(envelope), keys)
    except VerdictError as error:
        raise UserError(
            f"run {run.run_id}: its verdict does not verify with this home's keys ({error}); "
            f"runlens verify {run.run_id} says more"
        ) from None
    signer = predicate.get("signer")
    named = signer.get("keyid") if isinstance(signer, dict) else None
    if named != keyid:
        raise UserError(
            f"run {run.run_id}: its verdict is signed by key id {keyid} but names {named} as "
            "its signer"
        )
    return keys[keyid]


def _embedded_files(
    run: RunDetail, workspace: Path, subjects: Mapping[str, str]
) -> list[_Embedded]:
    """The reader's deliverables the statement lists, read once, each the bytes it signed."""
    embedded: list[_Embedded] = []
    for row in reader_artifacts(run):
        if row.name not in subjects:
            continue
        data = _read(workspace, row.name)
        if data is None:
            continue
        if hashlib.sha256(data).hexdigest() != subjects[row.name]:
            raise UserError(
                f"run {run.run_id}: {row.name} changed since the run signed it; an export "
                f"carries only what was signed (runlens verify {run.run_id} names the change)"
            )
        embedded.append(_Embedded(row, data, view_kind(row.name)))
    return embedded


def _read(workspace: Path, name: str) -> bytes | None:
    try:
        opened = open_in_workspace(workspace, name)
    except WorkspaceFileError:
        return None
    if opened.size > FILE_LIMIT:
        opened.close()
        return None
    return b"".join(opened.chunks())


def _omitted(
    run: RunDetail, subjects: Mapping[str, str], embedded: Sequence[_Embedded]
) -> dict[str, str]:
    """Every subject of the statement the file does not carry, with why, for the reader."""
    carried = {item.row.name for item in embedded}
    rows = {row.name: row for row in run.artifacts}
    reasons: dict[str, str] = {}
    for name in sorted(subjects):
        if name in carried:
            continue
        row = rows.get(name)
        if name == Workspace.EVIDENCE_INDEX:
            reasons[name] = "the run's Evidence Index: the cited rows are embedded instead"
        elif name.startswith("input/"):
            reasons[name] = "the input file: its cited rows are embedded, each with its hash"
        elif row is None:
            reasons[name] = "a file of the run that no contract names"
        elif row.audience != "user":
            reasons[name] = f"written for the {row.audience} audience, not for readers"
        elif row.sensitivity == "confidential":
            reasons[name] = "confidential"
        else:
            reasons[name] = f"larger than {FILE_LIMIT} bytes or unreadable: not embedded"
    return reasons


def _evidence_index(run: RunDetail, workspace: Path) -> EvidenceIndex | None:
    try:
        open_in_workspace(workspace, Workspace.EVIDENCE_INDEX).close()
        return EvidenceIndex.load(workspace / Workspace.EVIDENCE_INDEX)
    except WorkspaceFileError:
        return None
    except EvidenceIndexError as error:
        raise UserError(f"run {run.run_id}: its Evidence Index cannot be read ({error})") from None


def _cited_rows(embedded: Sequence[_Embedded], citations: Sequence[CitationRow]) -> list[_CitedRow]:
    """The rows the embedded deliverables cite, in first-citation order (deliverable by
    deliverable as shown, then by citation)."""
    order = {item.row.name: number for number, item in enumerate(embedded)}
    shown = sorted(
        (c for c in citations if c.artifact in order), key=lambda c: (order[c.artifact], c.ordinal)
    )
    cited: dict[str, _CitedRow] = {}
    for citation in shown:
        cited.setdefault(citation.row_id, _CitedRow(citation.row_id)).citations.append(citation)
    return list(cited.values())


def _quote_spans(item: _CitedRow) -> list[tuple[int, int]]:
    spans = {
        (c.start, c.end)
        for c in item.citations
        if c.status == "verified" and c.start is not None and c.end is not None
    }
    return sorted(spans)


def _source_row(index: EvidenceIndex | None, row_id: str) -> dict[str, str] | None:
    """The row as SPEC 5's row hash takes it (every column, id and text included), or None
    when the index cannot give it back exactly."""
    if index is None or row_id not in index:
        return None
    values = {**index.metadata(row_id), index.text_column: index.text(row_id)}
    if index.id_column in index.columns:
        values[index.id_column] = row_id
    row = {name: values[name] for name in index.columns if name in values}
    if row_values_sha256(row) != index.row_hash(row_id):
        return None
    return row


def _row_entry(index: EvidenceIndex, item: _CitedRow) -> dict[str, Any]:
    return {
        "id": item.row_id,
        "row": _source_row(index, item.row_id),
        "row_hash": index.row_hash(item.row_id),
        "text_column": index.text_column,
        "quotes": [list(span) for span in _quote_spans(item)],
    }


def _row_list(index: EvidenceIndex | None) -> str | None:
    """The index's lines as the rows digest hashes them (`index_row_lines`), when small."""
    if index is None or len(index) * 80 > 4 * ROW_LIST_LIMIT:
        return None
    text = "".join(f"{line}\n" for line in index_row_lines(index))
    return text if len(text.encode("utf-8")) <= ROW_LIST_LIMIT else None


def _reviews_text(run: RunDetail, workspace: Path) -> str:
    try:
        opened = open_in_workspace(workspace, REVIEWS_PATH)
    except WorkspaceFileError:
        return ""
    data = b"".join(opened.chunks())
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"run {run.run_id}: {REVIEWS_PATH} is not UTF-8 text") from None


# -- the view ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shown:
    name: str
    label: str
    description: str
    status: str
    kind: str
    html: Markup | None = None
    image: str | None = None
    problem: str | None = None


def _view(
    run: RunDetail,
    *,
    predicate: Mapping[str, Any],
    statement: Mapping[str, Any],
    embedded: Sequence[_Embedded],
    omitted: Mapping[str, str],
    citations: Sequence[CitationRow],
    cited: Sequence[_CitedRow],
    index: EvidenceIndex | None,
    row_list_embedded: bool,
    reviews: str,
    exported_at: str,
    verdict_key_id: str,
    export_key_id: str,
) -> str:
    row_numbers = {item.row_id: number for number, item in enumerate(cited)}
    file_numbers = {item.row.name: number for number, item in enumerate(embedded, 1)}
    images = {item.row.name: _data_url(item) for item in embedded if item.kind == "image"}
    by_artifact: dict[str, list[CitationRow]] = {}
    for citation in citations:
        by_artifact.setdefault(citation.artifact, []).append(citation)

    def to_row(row_id: str) -> str:
        number = row_numbers.get(row_id)
        return f"#row-{number}" if number is not None else NO_ROW

    shown = [
        _render(run, item, by_artifact.get(item.row.name, []), to_row, file_numbers, images)
        for item in embedded  # the order reader_artifacts gives: Markdown first
    ]
    lock = predicate.get("source_lock")
    return _TEMPLATES.get_template("export.html").render(
        run_id=run.run_id,
        plugin=_plugin_label(predicate.get("plugin")),
        predicate=predicate,
        verdict_line=predicate.get("error_message") or _status_line(predicate.get("status")),
        findings=[_finding(f) for f in run.findings],
        citations=_mapping(predicate.get("citations")),
        coverage=_mapping(predicate.get("coverage")),
        shown=shown,
        omitted=omitted,
        row_list_embedded=row_list_embedded,
        source_rows=_mapping(lock).get("rows", len(index) if index is not None else "?"),
        rows=[_row_view(index, item) for item in cited],
        file_numbers=file_numbers,
        source_lock=[(name, _text(value)) for name, value in _mapping(lock).items()],
        reviews=[_review_view(entry) for entry in _entries(predicate.get("reviews"))],
        ledger_lines=sum(1 for line in reviews.splitlines() if line.strip()),
        statement=json.dumps(statement, indent=2, ensure_ascii=False, sort_keys=True),
        exported_at=exported_at,
        verdict_key_id=verdict_key_id,
        export_key_id=export_key_id,
    )


def _render(
    run: RunDetail,
    item: _Embedded,
    citations: Sequence[CitationRow],
    to_row: Callable[[str], str],
    file_numbers: Mapping[str, int],
    images: Mapping[str, str],
) -> _Shown:
    row = item.row
    base = _Shown(row.name, row.label or row.name, row.description, row.status, item.kind)
    if item.kind == "image":
        return replace(base, image=images[row.name])
    try:
        text = item.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return replace(base, problem=f"{row.name} is not UTF-8 text: embedded, not shown")
    html, problem = render_text(
        run,
        row.name,
        item.kind,
        text,
        citations,
        evidence_href=to_row,
        link_href=lambda href: _beside(row.name, href, file_numbers),
        image_href=lambda href: _image_beside(row.name, href, images),
        readable=True,
    )
    return replace(base, html=html, problem=problem)


def _beside(name: str, href: str, file_numbers: Mapping[str, int]) -> str:
    """A relative link in a deliverable: to the embedded file it names, else nowhere."""
    path, _, _ = href.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), path.split("?")[0]))
    number = file_numbers.get(target)
    return f"#file-{number}" if number is not None else "#"


def _image_beside(name: str, href: str, images: Mapping[str, str]) -> str | None:
    """An image a document beside it links: the embedded image's data: URL, else none."""
    if not is_relative(href):
        return None
    target = posixpath.normpath(
        posixpath.join(posixpath.dirname(name), href.split("#")[0].split("?")[0])
    )
    return images.get(target)


def _data_url(item: _Embedded) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(item.data).decode("ascii")


def _row_view(index: EvidenceIndex | None, item: _CitedRow) -> dict[str, Any]:
    if index is None or item.row_id not in index:
        return {
            "row_id": item.row_id,
            "problem": f"row {item.row_id!r} is not in the run's Evidence Index",
            "citations": item.citations,
        }
    text = index.text(item.row_id)
    columns = [
        (index.id_column, item.row_id),
        (index.text_column, text),
        *index.metadata(item.row_id).items(),
    ]
    return {
        "row_id": item.row_id,
        "problem": None,
        "segments": marked_segments(text, _quote_spans(item)),
        "columns": columns,
        "row_hash": index.row_hash(item.row_id),
        "citations": item.citations,
    }


def _finding(finding: FindingRow) -> dict[str, Any]:
    return {
        "artifact": finding.artifact,
        "where": finding_location(finding) or "—",
        "code": finding.code,
        "message": finding.message,
        "validator": finding.validator,
    }


_VERBS: Final = {
    "approve": "Approved",
    "request-changes": "Changes requested",
    "reject": "Rejected",
}


def _review_view(entry: Mapping[str, Any]) -> dict[str, str]:
    reviewer = _mapping(entry.get("reviewer"))
    artifact = entry.get("artifact")
    if entry.get("kind") == "mark":
        verb = f"Marked {entry.get('mark')}"
        target = f"{artifact} · {entry.get('location')} (row {entry.get('row_id')})"
    else:
        verb = _VERBS.get(str(entry.get("decision")), str(entry.get("decision")))
        target = str(artifact) if artifact else "the whole run"
    return {
        "kind": str(entry.get("kind")),
        "verb": verb,
        "reviewer": str(reviewer.get("name", "?")),
        "keyid": str(reviewer.get("keyid", "?")),
        "target": target,
        "created_at": str(entry.get("created_at", "")),
        "note": str(entry.get("note") or ""),
    }


def _status_line(status: Any) -> str:
    return VERDICT_TEXTS.get(str(status), f"The run ended {status}.")


def _plugin_label(plugin: Any) -> str:
    described = _mapping(plugin)
    version = described.get("version")
    return f"{described.get('name', '?')}{f' {version}' if version else ''}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _entries(value: Any) -> list[Mapping[str, Any]]:
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _static(name: str) -> str:
    return (files("runlens.ui") / "static" / name).read_text(encoding="utf-8")


_TEMPLATES: Final = Environment(
    loader=PackageLoader("runlens.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)

__all__ = ["ExportedPage", "build_export", "export_filename", "page_html"]
