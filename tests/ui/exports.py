"""Exported pages of real runs for the browser tests, and the ways a test alters one.

`export_page` writes the page of a run as `runlens.verdict.exportfile` defines it; `tamper`
rewrites one part of a page's bundle and writes the page again byte for byte otherwise, as
someone editing the file would.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from runlens.evidence import EvidenceIndex
from runlens.verdict.exportfile import (
    BUNDLE_ID,
    EXPORT_FORMAT,
    bundle_script,
    file_entry,
    raw_public_key_b64,
    sign_export,
)
from runlens.verdict.keys import load_public_keys, signing_key
from runlens.verdict.statement import decode_statement, read_envelope

STATIC = Path(__file__).resolve().parents[2] / "src" / "runlens" / "ui" / "static"
REPORT = "artifacts/insight_report.md"
CHART = "artifacts/insight_chart.svg"
MEDIA = {REPORT: "text/markdown", CHART: "image/svg+xml"}


def export_page(workspace: Path, home: Path, target: Path) -> Path:
    """Write the exported page of the run in `workspace` (signed in `home`) to `target`."""
    envelope = read_envelope(workspace)
    assert envelope is not None
    statement = decode_statement(envelope)
    [verdict_key] = load_public_keys((), home).values()
    files = {name: file_entry((workspace / name).read_bytes(), MEDIA[name]) for name in MEDIA}
    subjects = [subject["name"] for subject in statement["subject"]]
    rows = cited_rows(workspace)
    bundle: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "run_id": statement["predicate"]["run_id"],
        "exported_at": "2026-12-05T00:00:00Z",
        "verdict": envelope,
        "verdict_key": raw_public_key_b64(verdict_key),
        "files": files,
        "omitted": {name: "not for the reader" for name in subjects if name not in files},
        "rows": json.dumps(rows, ensure_ascii=False),
        "row_list": row_list(workspace),
        "reviews": "",
        "view": view(rows),
    }
    signed = sign_export(bundle, signing_key(home))
    target.write_text(page(signed), encoding="utf-8")
    return target


def cited_rows(workspace: Path) -> list[dict[str, Any]]:
    index = EvidenceIndex.load(workspace / "runtime" / "evidence_index.json")
    header = index.header
    source = workspace / "input" / str(header["source"])
    with source.open(encoding="utf-8-sig", newline="") as handle:
        by_id = {row[str(header["id_column"])]: row for row in csv.DictReader(handle)}
    citations = json.loads((workspace / "runtime" / "citations.json").read_text("utf-8"))
    rows: dict[str, dict[str, Any]] = {}
    for citation in citations["citations"]:
        if citation["artifact"] != REPORT:
            continue
        row_id = citation["row_id"]
        entry = rows.setdefault(
            row_id,
            {
                "id": row_id,
                "row": by_id[row_id],
                "row_hash": index.row_hash(row_id),
                "text_column": header["text_column"],
                "quotes": [],
            },
        )
        entry["quotes"].append([citation["start"], citation["end"]])
    return list(rows.values())


def row_list(workspace: Path) -> str:
    index = EvidenceIndex.load(workspace / "runtime" / "evidence_index.json")
    return "".join(sorted(f"{row_id}\t{row_hash}\n" for row_id, row_hash, _ in index.rows()))


def view(rows: list[dict[str, Any]]) -> str:
    claims = Markup("").join(
        Markup('<li><a class="cite" href="#row-{0}">{1}</a></li>').format(row["id"], quoted(row)[0])
        for row in rows
    )
    shown = Markup("").join(
        Markup('<li id="row-{0}" class="cited-row"><code>{0}</code> {1}</li>').format(
            row["id"], marked(row)
        )
        for row in rows
    )
    return str(
        Markup('<h1>Report</h1><ul class="claims">{0}</ul><ol>{1}</ol>').format(claims, shown)
    )


def quoted(row: dict[str, Any]) -> list[str]:
    text = row["row"][row["text_column"]]
    return [text[start:end] for start, end in row["quotes"]]


def marked(row: dict[str, Any]) -> Markup:
    text = row["row"][row["text_column"]]
    start, end = row["quotes"][0]
    return Markup("{0}<mark>{1}</mark>{2}").format(text[:start], text[start:end], text[end:])


def page(bundle: dict[str, Any]) -> str:
    script = (STATIC / "export.js").read_text("utf-8")
    style = (STATIC / "export.css").read_text("utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        f"<title>RunLens · {escape(bundle['run_id'])}</title>\n<style>{style}</style>\n"
        '</head><body>\n<div id="runlens-check" class="check check-pending" role="status">'
        'Checking this file…</div>\n<main id="runlens-view" hidden></main>\n'
        f'<script type="application/json" id="{BUNDLE_ID}">{bundle_script(bundle)}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def tamper(path: Path, change: Callable[[dict[str, Any]], None], target: Path) -> Path:
    """Write to `target` the page at `path` with its bundle changed by `change` (the bundle's
    JSON object, changed in place) and every other byte as it was."""
    from runlens.verdict.exportfile import extract_bundle

    html = path.read_text("utf-8")
    before = bundle_script(extract_bundle(html))
    assert html.count(before) == 1
    bundle = extract_bundle(html)
    change(bundle)
    target.write_text(html.replace(before, bundle_script(bundle)), encoding="utf-8")
    return target
