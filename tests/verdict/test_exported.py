"""`runlens verify FILE.html` on an export of a real signed run: what holds, each way the file
stops holding (a changed byte in every part, a file added, a key swapped, the whole file
re-signed by a stranger) and what is no export at all; `--source` checks the cited rows of a
file that carries no row list."""

from __future__ import annotations

import base64
import csv
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.review.conftest import append_decision, append_mark, reviewer
from tests.verdict.conftest import SAMPLE, SignedRun, invoke
from tests.verdict.test_reviews import resign

from runlens.evidence import EvidenceIndex
from runlens.plugins import load_plugin
from runlens.review.entries import REVIEWS_PATH
from runlens.verdict.dsse import sign_envelope
from runlens.verdict.exportfile import (
    BUNDLE_ID,
    BUNDLE_OPEN,
    EXPORT_FORMAT,
    bundle_script,
    file_entry,
    raw_public_key_b64,
    sign_export,
    text_sha256,
)
from runlens.verdict.keys import SigningKey, init_key, load_private_key, private_path, public_path
from runlens.verdict.statement import canonical_json, decode_statement, subject_digests

REPORT = "artifacts/insight_report.md"
_CITED = re.compile(r"\bfb_\d{3}\b")


def home_key(home: Path) -> SigningKey:
    return load_private_key(private_path("default", home), "default", "home")


def cited_rows(run: SignedRun, files: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample's rows the embedded deliverables name, whole, in first-citation order."""
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        source = {row["feedback_id"]: row for row in csv.DictReader(handle)}
    index = EvidenceIndex.load(run.workspace / "runtime" / "evidence_index.json")
    ids = dict.fromkeys(_CITED.findall("".join(entry["data"] for entry in files.values())))
    assert ids, "the deliverables cite no row"
    return [
        {
            "id": row_id,
            "row": source[row_id],
            "row_hash": index.row_hash(row_id),
            "text_column": "text",
            "quotes": [[0, 4]],
        }
        for row_id in ids
    ]


def bundle_of(run: SignedRun, *, row_list: bool = True) -> dict[str, Any]:
    """The bundle of the run as an export carries it, unsigned."""
    statement = decode_statement(run.envelope)
    user = [c.name for c in load_plugin("feedback-analysis").contracts if c.audience == "user"]
    files = {
        name: file_entry((run.workspace / name).read_bytes(), "text/plain")
        for name in user
        if (run.workspace / name).is_file()
    }
    omitted = {
        name: "not for the reader" for name in subject_digests(statement) if name not in files
    }
    index = EvidenceIndex.load(run.workspace / "runtime" / "evidence_index.json")
    lines = sorted(f"{row_id}\t{row_hash}" for row_id, row_hash, _ in index.rows())
    ledger = run.workspace / REVIEWS_PATH
    return {
        "format": EXPORT_FORMAT,
        "run_id": run.record["run_id"],
        "exported_at": "2026-12-05T12:00:00Z",
        "verdict": run.envelope,
        "verdict_key": raw_public_key_b64(home_key(run.home).public_key),
        "files": files,
        "omitted": omitted,
        "rows": json.dumps(cited_rows(run, files), ensure_ascii=False),
        "row_list": "".join(f"{line}\n" for line in lines) if row_list else None,
        "reviews": ledger.read_text(encoding="utf-8") if ledger.is_file() else "",
        "view": "<main><h1>Verdict</h1><p>completed</p></main>",
        "page_sha256": text_sha256(PAGE_HEAD + PAGE_TAIL),
    }


#: The page around a test bundle: what `page_sha256` covers.
PAGE_HEAD = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>RunLens</title>'
    f'</head><body><main id="runlens-view" hidden></main>{BUNDLE_OPEN}'
)
PAGE_TAIL = "</script><script>/* export.js */</script></body></html>"


def write_page(path: Path, bundle: dict[str, Any], *, tail: str = PAGE_TAIL) -> Path:
    """The page of `bundle` as it is (signed or not, tampered or not)."""
    path.write_text(PAGE_HEAD + bundle_script(bundle) + tail, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reviewed_run(passing_run: SignedRun, tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    """A copy of the passing run with a decision and a mark, its statement re-signed."""
    run = passing_run.copy(tmp_path_factory.mktemp("reviewed"))
    run_id = run.record["run_id"]
    append_decision(run.workspace, run_id, reviewer(run.home, "alice"), note="<b>fine</b>")
    append_mark(run.workspace, run_id, reviewer(run.home, "bob"), judged="wrong", note="no")
    assert resign(run)
    return run


@pytest.fixture(scope="module")
def exported(reviewed_run: SignedRun) -> dict[str, Any]:
    bundle = sign_export(bundle_of(reviewed_run), home_key(reviewed_run.home))
    assert bundle["reviews"].count("\n") == 2
    return bundle


def verify(
    page: Path, *args: object, home: Path, code: int | None = None
) -> tuple[int, dict[str, Any]]:
    result = invoke("verify", page, "--json", *args, home=home)
    assert "Traceback" not in result.output
    if code is not None:
        assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, document


def failed(document: dict[str, Any]) -> dict[str, str]:
    return {c["check"]: c["detail"] for c in document["checks"] if not c["ok"]}


def detail(document: dict[str, Any], name: str) -> str:
    (found,) = [c["detail"] for c in document["checks"] if c["check"] == name]
    return str(found)


def tampered(
    exported: dict[str, Any], tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> Path:
    bundle = json.loads(json.dumps(exported))
    change(bundle)
    return write_page(tmp_path / "tampered.html", bundle)


def test_an_export_verifies_with_the_home_keys(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    page = write_page(tmp_path / "run.html", exported)

    _, document = verify(page, home=reviewed_run.home, code=0)

    assert document["verified"] is True
    names = [check["check"] for check in document["checks"]]
    assert names == [
        "signature",
        "statement",
        "file:artifacts/insight_report.md",
        "file:artifacts/product_backlog.json",
        "export",
        "rows",
        "reviews",
    ]
    keyid = home_key(reviewed_run.home).keyid
    assert detail(document, "signature") == f"signed by key {keyid} (default)"
    assert "every part as exported" in detail(document, "export")
    assert "each in the locked source's 89 rows" in detail(document, "rows")
    assert detail(document, "reviews") == (
        "2 review(s), signed, chained and bound to the current hashes"
    )
    human = invoke("verify", page, home=reviewed_run.home)
    assert human.exit_code == 0 and human.output.startswith("VERIFIED")


def test_with_no_key_and_no_home_the_embedded_key_is_used_and_named(
    exported: dict[str, Any], tmp_path: Path
) -> None:
    page = write_page(tmp_path / "run.html", exported)

    _, document = verify(page, "--home", tmp_path / "nowhere", home=tmp_path, code=0)

    assert "the key embedded in the file" in detail(document, "signature")
    assert "pin it with --key" in detail(document, "signature")
    assert detail(document, "reviews").startswith("2 review(s), signed")


def flip(text: str, at: int | None = None) -> str:
    """`text` with one character changed (its middle one by default)."""
    at = len(text) // 2 if at is None else at
    return text[:at] + ("x" if text[at] != "x" else "y") + text[at + 1 :]


def test_one_byte_in_an_embedded_deliverable(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        bundle["files"][REPORT]["data"] = flip(bundle["files"][REPORT]["data"])

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert re.fullmatch(
        rf"{REPORT} changed: expected sha256 [0-9a-f]{{64}}, actual [0-9a-f]{{64}}",
        problems[f"file:{REPORT}"],
    )
    assert f"file {REPORT}: signed sha256" in problems["export"]
    assert f"bound to {REPORT} sha256" in problems["reviews"]
    assert "signature" not in problems


def test_one_byte_in_the_verdict_payload(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        payload = base64.b64decode(bundle["verdict"]["payload"]).decode("utf-8")
        changed = payload.replace('"status":"completed"', '"status":"complete_"', 1)
        assert changed != payload
        bundle["verdict"]["payload"] = base64.b64encode(changed.encode()).decode("ascii")

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert problems["signature"].startswith("bad signature")
    assert "the verdict's statement: signed sha256" in problems["export"]


def test_one_byte_in_the_verdict_signature(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        signature = bundle["verdict"]["signatures"][0]
        raw = bytearray(base64.b64decode(signature["sig"]))
        raw[10] ^= 0x01
        signature["sig"] = base64.b64encode(bytes(raw)).decode("ascii")

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    assert set(failed(document)) == {"signature"}
    assert failed(document)["signature"].startswith("bad signature")


def test_one_byte_in_the_view(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        bundle["view"] = bundle["view"].replace("completed", "approved")

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    assert set(failed(document)) == {"export"}
    assert re.search(r"the view: signed sha256 [0-9a-f]{64}, actual", failed(document)["export"])


def test_a_rows_text_changed(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    rows = json.loads(exported["rows"])
    first = rows[0]["id"]

    def change(bundle: dict[str, Any]) -> None:
        changed = json.loads(bundle["rows"])
        changed[0]["row"]["text"] = flip(changed[0]["row"]["text"])
        bundle["rows"] = json.dumps(changed, ensure_ascii=False)

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert set(problems) == {"rows", "export"}
    assert problems["rows"].startswith(f"row {first} changed: its values hash to sha256 ")
    assert "the rows: signed sha256" in problems["export"]


def test_a_row_hash_made_to_match_a_changed_row_is_not_the_locked_one(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    from runlens.verdict.exportfile import sha256

    def change(bundle: dict[str, Any]) -> None:
        changed = json.loads(bundle["rows"])
        changed[0]["row"]["text"] = "something else"
        changed[0]["row_hash"] = sha256(canonical_json(changed[0]["row"]))
        bundle["rows"] = json.dumps(changed, ensure_ascii=False)

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    row_id = json.loads(exported["rows"])[0]["id"]
    assert f"row(s) {row_id} not in the locked source as cited" == failed(document)["rows"]


def test_a_row_list_line_changed(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        lines = bundle["row_list"].split("\n")
        lines[3] = flip(lines[3], at=len(lines[3]) - 1)
        bundle["row_list"] = "\n".join(lines)

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert set(problems) == {"rows", "export"}
    assert problems["rows"].startswith("the row list is not the locked source's: sha256 ")
    assert "the row list: signed sha256" in problems["export"]


def test_a_review_line_changed(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        first, rest = bundle["reviews"].split("\n", 1)
        envelope = json.loads(first)
        payload = json.loads(base64.b64decode(envelope["payload"]))
        payload["note"] = "<b>rejected</b>"
        envelope["payload"] = base64.b64encode(canonical_json(payload)).decode("ascii")
        bundle["reviews"] = json.dumps(envelope, sort_keys=True, separators=(",", ":")) + "\n"
        bundle["reviews"] += rest

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert set(problems) == {"reviews", "export"}
    assert "line 1 (decision by alice): bad signature" in problems["reviews"]
    assert "the reviews: signed sha256" in problems["export"]


def test_a_file_added(exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path) -> None:
    def change(bundle: dict[str, Any]) -> None:
        bundle["files"]["artifacts/addendum.md"] = file_entry(b"# All good\n", "text/markdown")

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    problems = failed(document)
    assert set(problems) == {"file:artifacts/addendum.md", "export"}
    assert problems["file:artifacts/addendum.md"].startswith(
        "artifacts/addendum.md is embedded but not in the statement (sha256 "
    )
    assert "file artifacts/addendum.md added (sha256 " in problems["export"]


def test_the_verdict_key_swapped(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    other = init_key("other", tmp_path / "other-home")

    def change(bundle: dict[str, Any]) -> None:
        bundle["verdict_key"] = raw_public_key_b64(other.public_key)

    page = tampered(exported, tmp_path, change)
    _, at_home = verify(page, home=reviewed_run.home, code=1)
    _, elsewhere = verify(page, "--home", tmp_path / "nowhere", home=tmp_path, code=1)

    real = home_key(reviewed_run.home).keyid
    assert failed(at_home)["signature"] == (
        f"the signature holds for key {real}, but the file's verdict_key is key {other.keyid}: "
        "the key was swapped"
    )
    assert f"the file's verdict_key is key {other.keyid}" in failed(elsewhere)["signature"]
    assert "verdict_key" in failed(at_home)["export"]


def attacker_export(run: SignedRun, bundle: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """The bundle's statement signed again, whole, by `key`, and the file exported by it."""
    statement = decode_statement(bundle["verdict"])
    statement["predicate"]["signer"] = key.signer()
    forged = dict(bundle)
    forged["verdict"] = sign_envelope(canonical_json(statement), key)
    forged["verdict_key"] = raw_public_key_b64(key.public_key)
    return sign_export(forged, key)


def test_a_file_re_signed_by_a_stranger_fails_against_the_pinned_key(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    stranger = init_key("mallory", tmp_path / "mallory-home")
    page = write_page(tmp_path / "forged.html", attacker_export(reviewed_run, exported, stranger))
    real = public_path("default", reviewed_run.home)

    _, pinned = verify(page, "--key", real, home=reviewed_run.home, code=1)
    _, unpinned = verify(page, "--home", tmp_path / "nowhere", home=tmp_path, code=0)

    assert set(failed(pinned)) == {"signature", "export"}
    assert failed(pinned)["signature"].startswith(
        f"unknown key: signed by key id {stranger.keyid}, not one of the keys given"
    )
    assert f"signed by key {stranger.keyid}, the key embedded in the file" in detail(
        unpinned, "signature"
    )


def test_a_page_re_signed_by_a_stranger_beside_an_intact_verdict_fails_against_the_pinned_key(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    stranger = init_key("mallory", tmp_path / "mallory-home")
    forged = dict(exported)
    forged["view"] = exported["view"].replace("</h1>", " (all quotes approved by legal)</h1>", 1)
    page = write_page(tmp_path / "forged-view.html", sign_export(forged, stranger))
    real = public_path("default", reviewed_run.home)

    _, pinned = verify(page, "--key", real, home=reviewed_run.home, code=1)
    _, at_home = verify(page, home=reviewed_run.home, code=1)
    _, nowhere = verify(page, "--home", tmp_path / "nowhere", home=tmp_path, code=0)

    assert set(failed(pinned)) == {"export"}
    assert failed(pinned)["export"].startswith(
        f"the page is signed by key {stranger.keyid}, not one of the keys given (--key)"
    )
    assert failed(at_home)["export"].startswith(
        f"the page is signed by key {stranger.keyid}, not one of this home's keys"
    )
    home_id = home_key(reviewed_run.home).keyid
    assert detail(nowhere, "export").endswith(
        f"(the key embedded in the file: pin it with --key), not the verdict's key {home_id}: "
        "every part as exported"
    )


def test_the_page_around_the_bundle_changed(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    extra = PAGE_TAIL.replace("</body>", "<p>Approved by the board.</p></body>")
    page = write_page(tmp_path / "shell.html", exported, tail=extra)

    _, document = verify(page, home=reviewed_run.home, code=1)

    assert set(failed(document)) == {"export"}
    assert (
        "the page around the bundle (its script, style, policy or markup)"
        in (failed(document)["export"])
    )


def test_a_second_bundle_hidden_from_one_parser_is_named(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    """A browser ends a comment at `--!>`, Python's HTML parser does not: a forged bundle
    placed there is the one a browser finds first, while the standard library sees only the
    genuine one. The page around the bundle is signed, so the file fails all the same."""
    stranger = init_key("mallory", tmp_path / "mallory-home")
    forged = attacker_export(reviewed_run, exported, stranger)
    hidden = f"<!-- --!>{BUNDLE_OPEN}{bundle_script(forged)}</script><!-- -->"
    page = tmp_path / "two-bundles.html"
    page.write_text(
        PAGE_HEAD.replace(BUNDLE_OPEN, hidden + BUNDLE_OPEN) + bundle_script(exported) + PAGE_TAIL,
        encoding="utf-8",
    )

    _, document = verify(page, home=reviewed_run.home, code=1)

    assert set(failed(document)) == {"export"}
    assert "the page around the bundle" in failed(document)["export"]
    assert "2 bundle scripts" in failed(document)["export"]


def test_a_part_no_export_writes(
    exported: dict[str, Any], reviewed_run: SignedRun, tmp_path: Path
) -> None:
    def change(bundle: dict[str, Any]) -> None:
        bundle["note"] = "reviewed and approved"

    _, document = verify(tampered(exported, tmp_path, change), home=reviewed_run.home, code=1)

    assert failed(document) == {
        "export": "changed since it was exported: parts no export writes: 'note'"
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("just text\n", "no RunLens export: the file has no <script"),
        ("<!doctype html><html><body><p>hello</p></body></html>", "no RunLens export"),
        (
            f'<html><body><script type="application/json" id="{BUNDLE_ID}">{{"format": </script>',
            "malformed export: its bundle is not JSON",
        ),
        (
            f'<html><body><script type="application/json" id="{BUNDLE_ID}">{{}}</script>',
            "not a RunLens export this version reads",
        ),
    ],
)
def test_a_file_that_is_no_export_is_a_usage_error(
    tmp_path: Path, content: str, message: str
) -> None:
    page = tmp_path / "page.html"
    page.write_text(content, encoding="utf-8")

    result = invoke("verify", page, home=tmp_path)

    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert f"{page}: {message}" in result.output


def test_without_a_row_list_the_rows_are_not_checked_against_the_source_here(
    reviewed_run: SignedRun, tmp_path: Path
) -> None:
    bundle = sign_export(bundle_of(reviewed_run, row_list=False), home_key(reviewed_run.home))
    page = write_page(tmp_path / "big.html", bundle)

    _, document = verify(page, home=reviewed_run.home, code=0)

    assert "not checked against the locked source here (89 rows)" in detail(document, "rows")
    assert "--source FILE" in detail(document, "rows")


def test_source_checks_the_cited_rows_of_a_file_without_a_row_list(
    reviewed_run: SignedRun, tmp_path: Path
) -> None:
    bundle = sign_export(bundle_of(reviewed_run, row_list=False), home_key(reviewed_run.home))
    page = write_page(tmp_path / "big.html", bundle)
    cited = json.loads(bundle["rows"])[0]
    changed = tmp_path / "changed.csv"
    text = SAMPLE.read_text(encoding="utf-8")
    assert cited["row"]["text"] in text
    changed.write_text(text.replace(cited["row"]["text"], cited["row"]["text"] + "!"), "utf-8")
    copy = tmp_path / "copy.csv"
    with SAMPLE.open(encoding="utf-8", newline="") as source, copy.open("w", newline="") as out:
        csv.writer(out, delimiter=";", quoting=csv.QUOTE_ALL).writerows(csv.reader(source))

    _, same = verify(page, "--source", SAMPLE, home=reviewed_run.home, code=0)
    _, other_bytes = verify(page, "--source", copy, home=reviewed_run.home, code=0)
    _, differ = verify(page, "--source", changed, home=reviewed_run.home, code=1)

    assert "sample_feedback.csv holds the locked 89 rows and each cited row" in detail(same, "rows")
    assert "copy.csv holds the locked 89 rows" in detail(other_bytes, "rows")
    problems = failed(differ)
    assert set(problems) == {"rows"}
    assert "changed.csv's rows are not the locked ones" in problems["rows"]
    assert f"cited row(s) {cited['id']} differ in changed.csv" in problems["rows"]


def test_a_missing_exported_file_is_named(tmp_path: Path) -> None:
    result = invoke("verify", tmp_path / "sent-by-mail.html", home=tmp_path)
    assert result.exit_code == 2
    assert "sent-by-mail.html: no such file" in result.output
    assert "Traceback" not in result.output


def test_a_missing_source_is_a_usage_error(exported: dict[str, Any], tmp_path: Path) -> None:
    page = write_page(tmp_path / "run.html", exported)

    result = invoke("verify", page, "--source", tmp_path / "gone.csv", home=tmp_path)

    assert result.exit_code == 2 and "gone.csv: no such file" in result.output


def test_the_page_runlens_export_writes_verifies_and_one_byte_changed_in_it_is_named(
    passing_run: SignedRun, tmp_path: Path
) -> None:
    page = tmp_path / "run.html"
    written = invoke("export", passing_run.record["run_id"], "--html", page, home=passing_run.home)
    assert written.exit_code == 0, written.output
    html = page.read_text(encoding="utf-8")
    start = html.index(f'"{REPORT}":{{"encoding":"utf-8","data":"') + len(REPORT) + 40
    at = next(i for i in range(start, len(html)) if html[i].isascii() and html[i].isalpha())
    altered = tmp_path / "altered.html"
    altered.write_text(html[:at] + html[at].swapcase() + html[at + 1 :], encoding="utf-8")

    _, document = verify(page, home=passing_run.home, code=0)
    _, changed = verify(altered, home=passing_run.home, code=1)
    _, sourced = verify(page, "--source", SAMPLE, home=passing_run.home, code=0)

    assert "each in the locked source's 89 rows" in detail(document, "rows")
    assert "sample_feedback.csv holds the locked 89 rows and each cited row" in detail(
        sourced, "rows"
    )
    assert set(failed(changed)) == {f"file:{REPORT}", "export"}
    assert failed(changed)[f"file:{REPORT}"].startswith(f"{REPORT} changed: expected sha256 ")


def test_a_row_carried_without_its_values_is_checked_by_id_and_hash(
    reviewed_run: SignedRun, tmp_path: Path
) -> None:
    bundle = bundle_of(reviewed_run)
    rows = json.loads(bundle["rows"])
    rows[0]["row"] = None
    bundle["rows"] = json.dumps(rows, ensure_ascii=False)
    page = write_page(tmp_path / "run.html", sign_export(bundle, home_key(reviewed_run.home)))
    rows[0]["row_hash"] = "0" * 64
    bundle["rows"] = json.dumps(rows, ensure_ascii=False)
    forged = write_page(tmp_path / "forged.html", sign_export(bundle, home_key(reviewed_run.home)))

    _, document = verify(page, home=reviewed_run.home, code=0)
    _, wrong = verify(forged, home=reviewed_run.home, code=1)

    assert "1 carried without their values (checked by id and hash only)" in detail(
        document, "rows"
    )
    assert failed(wrong) == {"rows": f"row(s) {rows[0]['id']} not in the locked source as cited"}
