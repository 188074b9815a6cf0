"""The run page's verdict and source panels and the stale marks of the reader view, built
from real files: envelopes signed with real Ed25519 keys in a real runs home, run records
as runs write them, Markdown rendered by the pages' renderer. No server: these are the
default run's quick cases (the pages over HTTP and in Chromium are in
`test_verdict_api.py` and `test_browser_verdict.py`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from runlens.store.rows import CitationRow
from runlens.ui.drift import prune_uploads
from runlens.ui.markdown import render_markdown
from runlens.ui.verdicts import VERDICT_PATH, source_panel, verdict_panel
from runlens.verdict.dsse import sign_envelope
from runlens.verdict.keys import init_key
from runlens.verdict.statement import build_statement, canonical_json

HOSTILE = "<script>window.__pwned=1</script>"


def signed_workspace(tmp_path: Path, home: Path, subjects: int = 3) -> Path:
    """A workspace whose verdict is signed by `home`'s default key."""
    key = init_key(home=home)
    workspace = tmp_path / "run"
    (workspace / "runtime").mkdir(parents=True)
    statement = build_statement(
        [{"name": f"artifacts/{n}.md", "digest": {"sha256": "0" * 64}} for n in range(subjects)],
        {"run_id": "run_1"},
    )
    envelope = sign_envelope(canonical_json(statement), key)
    (workspace / VERDICT_PATH).write_text(json.dumps(envelope), encoding="utf-8")
    return workspace


def test_a_verdict_signed_by_the_homes_key_verifies(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = signed_workspace(tmp_path, home)
    panel = verdict_panel(workspace, home)
    assert panel.signed and panel.signature_problem is None
    assert panel.verified_key is not None and panel.key_ids == (panel.verified_key,)
    assert panel.subjects == 3


def test_a_verdict_checked_in_another_home_is_not_verified(tmp_path: Path) -> None:
    workspace = signed_workspace(tmp_path, tmp_path / "home")
    other = tmp_path / "other-home"
    init_key(home=other)
    panel = verdict_panel(workspace, other)
    assert panel.signed and panel.verified_key is None
    assert panel.signature_problem
    empty = verdict_panel(workspace, tmp_path / "no-keys-home")
    assert empty.signature_problem == "this home has no public keys to check it with"


def test_an_edited_statement_no_longer_verifies(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = signed_workspace(tmp_path, home)
    envelope = json.loads((workspace / VERDICT_PATH).read_text())
    other = signed_workspace(tmp_path / "again", tmp_path / "home2", subjects=5)
    envelope["payload"] = json.loads((other / VERDICT_PATH).read_text())["payload"]
    (workspace / VERDICT_PATH).write_text(json.dumps(envelope), encoding="utf-8")
    panel = verdict_panel(workspace, home)
    assert panel.verified_key is None and panel.signature_problem


def test_no_or_a_damaged_envelope_says_so(tmp_path: Path) -> None:
    workspace = tmp_path / "run"
    (workspace / "runtime").mkdir(parents=True)
    missing = verdict_panel(workspace, tmp_path)
    assert not missing.signed and "no signed verdict" in (missing.problem or "")
    (workspace / VERDICT_PATH).write_text("{not json", encoding="utf-8")
    damaged = verdict_panel(workspace, tmp_path)
    assert not damaged.signed and "not valid JSON" in (damaged.problem or "")


def test_a_link_in_place_of_the_envelope_is_not_followed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    elsewhere = signed_workspace(tmp_path, home)
    workspace = tmp_path / "linked"
    (workspace / "runtime").mkdir(parents=True)
    (workspace / VERDICT_PATH).symlink_to(elsewhere / VERDICT_PATH)
    panel = verdict_panel(workspace, home)
    assert not panel.signed and "symbolic link" in (panel.problem or "")


def test_the_source_panel_shows_the_lock_and_its_reference(tmp_path: Path) -> None:
    workspace = tmp_path / "run"
    (workspace / "runtime").mkdir(parents=True)
    lock = {
        "bytes_sha256": "a" * 64,
        "rows_digest": "b" * 64,
        "rows": 3,
        "columns": ["feedback_id", "text"],
        "format": "csv",
        "encoding": "utf-8",
        "ref": {"uri": HOSTILE},
    }
    record = {"run_id": "run_1", "source_lock": lock}
    (workspace / "runtime/run.json").write_text(json.dumps(record), encoding="utf-8")
    panel = source_panel(workspace)
    shown = dict(panel.lines)
    assert shown["bytes sha256"] == "a" * 64 and shown["rows digest"] == "b" * 64
    assert HOSTILE in shown.values()  # as text: the template escapes it
    (workspace / "runtime/run.json").write_text(json.dumps({"run_id": "r"}), encoding="utf-8")
    assert "no source lock" in (source_panel(workspace).problem or "")


def test_a_stale_citation_is_marked_with_why_and_hostile_ids_stay_text() -> None:
    text = f"# Report\n\n> “three minutes” — fb_1\n\n> “slow login” — {HOSTILE}\n"
    citations = [
        CitationRow(
            ordinal=1, artifact="r.md", location="line 3", row_id="fb_1",
            quote="three minutes", line=3, status="verified",
        ),
        CitationRow(
            ordinal=2, artifact="r.md", location="line 5", row_id=HOSTILE,
            quote="slow login", line=5, status="verified",
        ),
    ]  # fmt: skip
    html = str(
        render_markdown(
            text,
            citations=citations,
            evidence_href=lambda row_id: f"/e/{row_id}",
            stale={"fb_1": "changed", HOSTILE: "removed"},
        )
    )
    assert 'class="cite cite-verified stale"' in html
    assert "stale: row fb_1 changed in the newer file" in html
    assert "<script>" not in html
    assert "stale: row &lt;script&gt;window.__pwned=1&lt;/script&gt; removed" in html
    plain = str(render_markdown(text, citations=citations, evidence_href=lambda r: f"/e/{r}"))
    assert "stale" not in plain


def test_links_to_a_stale_row_in_a_json_deliverable_are_marked() -> None:
    from runlens.ui.json_view import render_json_readable

    document = {"items": [{"title": "Export", "ids": ["fb_1"]}, {"title": "X", "ids": ["fb_2"]}]}
    html = str(
        render_json_readable(
            document,
            evidence_href=lambda row_id: f"/e/{row_id}",
            id_paths=("items.ids",),
            stale={"fb_1": "removed"},
        )
    )
    assert 'data-stale-row="fb_1" data-stale-change="removed"' in html
    assert 'data-stale-row="fb_2"' not in html


def test_one_verification_per_run_at_a_time() -> None:
    from runlens.ui.verdicts import OnePerRun

    going = OnePerRun()
    assert going.claim("run_a") and going.claim("run_b")
    assert not going.claim("run_a")
    going.release("run_a")
    assert going.claim("run_a")


def test_only_the_newest_uploads_of_a_run_are_kept(tmp_path: Path) -> None:
    run_folder = tmp_path / "drift" / "run_1"
    names = [f"{index:016x}" for index in range(7)]
    for age, name in enumerate(names):
        upload = run_folder / name
        upload.mkdir(parents=True)
        (upload / "newer.csv").write_text("feedback_id,text\n1,x\n", encoding="utf-8")
        os.utime(upload, ns=(age * 10**9, age * 10**9))
    (run_folder / "not-an-upload").mkdir()

    deleted = prune_uploads(run_folder, keep=5)

    assert deleted == names[:2]
    assert sorted(entry.name for entry in run_folder.iterdir()) == [*names[2:], "not-an-upload"]
    assert prune_uploads(run_folder, keep=5) == []
