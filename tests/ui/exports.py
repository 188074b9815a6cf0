"""Exported pages of real runs for the browser tests, and the ways a test alters one.

`export_page` writes a run's page with `runlens.ui.export.build_export`, from the run's
store and workspace as `runlens export` does; `tamper` rewrites one part of a page's bundle
and leaves every other byte of the file as it was, as someone editing the file would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from runlens.store.db import open_store, store_url
from runlens.ui.export import ExportedPage, build_export
from runlens.verdict.exportfile import bundle_script, extract_bundle

REPORT = "artifacts/insight_report.md"


def export_page(run_id: str, home: Path, target: Path) -> ExportedPage:
    """Write the exported page of run `run_id` of `home` (signed by the home's key) to
    `target`."""
    with open_store(store_url(None, home)) as store:
        detail = store.get_run(run_id)
        assert detail is not None, run_id
        exported = build_export(detail, store.citations(run_id), home=home)
    target.write_bytes(exported.html)
    return exported


def tamper(path: Path, change: Callable[[dict[str, Any]], None], target: Path) -> Path:
    """Write to `target` the page at `path` with its bundle changed by `change` (the bundle's
    JSON object, changed in place) and every other byte as it was."""
    html = path.read_text("utf-8")
    bundle = extract_bundle(html)
    before = bundle_script(bundle)
    assert html.count(before) == 1, "the bundle is not written as bundle_script writes it"
    change(bundle)
    target.write_text(html.replace(before, bundle_script(bundle)), encoding="utf-8")
    return target
