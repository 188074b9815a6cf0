"""The exported file's format: the data script no string can close, read back the way a browser
finds it, and the manifest the exporting key signs."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from runlens.verdict.dsse import open_envelope, sign_envelope
from runlens.verdict.exportfile import (
    BUNDLE_ID,
    EXPORT_FORMAT,
    EXPORT_PAYLOAD_TYPE,
    ExportFileError,
    bundle_script,
    export_manifest,
    extract_bundle,
    file_bytes,
    file_entry,
    public_key_from_b64,
    raw_public_key_b64,
    sign_export,
)
from runlens.verdict.keys import SigningKey, init_key, key_id

HOSTILE = "a</script><script>alert(1)</script> & <!-- \u2028 \u2029 é 漢"


def page(*scripts: str) -> str:
    body = "".join(scripts)
    return f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>"


def data_script(text: str) -> str:
    return f'<script type="application/json" id="{BUNDLE_ID}">{text}</script>'


def bundle(key: SigningKey) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "run_id": "run-1",
        "exported_at": "2026-01-01T00:00:00Z",
        "verdict": sign_envelope(b'{"x":1}', key),
        "verdict_key": raw_public_key_b64(key.public_key),
        "files": {
            "artifacts/report.md": file_entry(HOSTILE.encode(), "text/markdown"),
            "artifacts/chart.bin": file_entry(b"\xff\x00\xfe", "application/octet-stream"),
        },
        "omitted": {"input/in.csv": "the input: its cited rows are embedded"},
        "rows": json.dumps([{"id": "r1", "text": HOSTILE}], ensure_ascii=False),
        "row_list": "r1\tabc\n",
        "reviews": "",
        "view": f"<p>{HOSTILE}</p>",
    }


def test_the_data_script_round_trips_and_nothing_in_it_closes_it() -> None:
    original = {"format": EXPORT_FORMAT, "text": HOSTILE, "nested": [{"q": "</SCRIPT >"}]}
    text = bundle_script(original)

    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in text
    assert "é 漢" in text  # non-ASCII kept, not escaped
    assert extract_bundle(page(data_script(text), "<script>let x = 1;</script>")) == original


def test_a_page_with_no_bundle_or_two_is_refused() -> None:
    with pytest.raises(ExportFileError, match="no RunLens export"):
        extract_bundle(page("<script>let x = 1;</script>"))
    one = data_script(bundle_script({"format": EXPORT_FORMAT}))
    with pytest.raises(ExportFileError, match="2 elements have the id"):
        extract_bundle(page(one, one))
    # Another element taking the id first would be what a browser's getElementById finds.
    with pytest.raises(ExportFileError, match="2 elements have the id"):
        extract_bundle(page(f'<div id="{BUNDLE_ID}"></div>', one))


def test_a_bundle_that_is_not_an_exports_json_is_refused() -> None:
    with pytest.raises(ExportFileError, match="is not JSON"):
        extract_bundle(page(data_script("{not json")))
    with pytest.raises(ExportFileError, match="appears twice"):
        extract_bundle(page(data_script('{"format":"a","format":"b"}')))
    with pytest.raises(ExportFileError, match="is not JSON"):
        extract_bundle(page(data_script('{"format":NaN}')))
    with pytest.raises(ExportFileError, match="not a JSON object"):
        extract_bundle(page(data_script("[1]")))
    with pytest.raises(ExportFileError, match="format 'other/1'"):
        extract_bundle(page(data_script('{"format":"other/1"}')))
    with pytest.raises(ExportFileError, match="is not a <script"):
        extract_bundle(page(f'<script id="{BUNDLE_ID}">{{"format":"{EXPORT_FORMAT}"}}</script>'))


def test_file_entries_keep_the_exact_bytes() -> None:
    text = "\ufeffbom then é".encode()
    entry = file_entry(text, "text/markdown")
    assert entry["encoding"] == "utf-8" and entry["data"].startswith("\ufeff")
    assert file_bytes(entry) == text
    binary = file_entry(b"\xff\xfe\x00", "image/png")
    assert binary["encoding"] == "base64" and file_bytes(binary) == b"\xff\xfe\x00"

    with pytest.raises(ExportFileError, match="not base64"):
        file_bytes({"encoding": "base64", "data": "@@@"})
    with pytest.raises(ExportFileError, match="'latin-1'"):
        file_bytes({"encoding": "latin-1", "data": "x"})
    with pytest.raises(ExportFileError, match="lone surrogate"):
        file_bytes({"encoding": "utf-8", "data": "\ud800"})


def test_public_keys_travel_as_raw_base64(tmp_path: Path) -> None:
    key = init_key("a", tmp_path)
    text = raw_public_key_b64(key.public_key)
    assert len(base64.b64decode(text)) == 32
    assert key_id(public_key_from_b64(text)) == key.keyid
    for bad in ("", "@@", base64.b64encode(b"x" * 31).decode(), None):
        with pytest.raises(ExportFileError, match="public key is not"):
            public_key_from_b64(bad)


def test_the_signed_manifest_covers_every_part(tmp_path: Path) -> None:
    key = init_key("a", tmp_path)
    signed = sign_export(bundle(key), key)

    assert signed["export_key"] == raw_public_key_b64(key.public_key)
    payload, keyid = open_envelope(
        signed["export"], {key.keyid: key.public_key}, EXPORT_PAYLOAD_TYPE
    )
    assert keyid == key.keyid
    manifest = json.loads(payload)
    assert manifest == export_manifest(signed)
    assert manifest["verdict_payload_sha256"] == hashlib.sha256(b'{"x":1}').hexdigest()
    assert manifest["files"]["artifacts/report.md"] == hashlib.sha256(HOSTILE.encode()).hexdigest()
    assert manifest["files"]["artifacts/chart.bin"] == hashlib.sha256(b"\xff\x00\xfe").hexdigest()
    assert manifest["view_sha256"] == hashlib.sha256(signed["view"].encode()).hexdigest()
    assert manifest["row_list_sha256"] == hashlib.sha256(b"r1\tabc\n").hexdigest()

    # The page carries it whole, and what comes back signs the same manifest.
    back = extract_bundle(page(data_script(bundle_script(signed))))
    assert back == signed and export_manifest(back) == manifest

    altered = dict(back, view=back["view"] + " ")
    assert export_manifest(altered)["view_sha256"] != manifest["view_sha256"]
    assert export_manifest(dict(back, row_list=None))["row_list_sha256"] is None
    with pytest.raises(ExportFileError, match="rows is not a string"):
        export_manifest(dict(back, rows=None))
    with pytest.raises(ExportFileError, match="its verdict"):
        export_manifest(dict(back, verdict="nope"))
