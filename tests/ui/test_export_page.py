"""The exported page checks itself, in a real browser with every request blocked.

Debian's Chromium, driven by Playwright, opens a run's exported HTML file from `file://`;
every request other than the file itself is aborted and recorded, and none may be made. The
untouched page shows `verified` with the key id; a claim clicked shows its row with the quote
marked; a page altered by one byte (a deliverable, the statement's payload or signature, the
view) names what was altered; a browser that cannot verify Ed25519 says it cannot check; the
row hashes are recomputed in the page exactly as Python's canonical JSON makes them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page, Route, expect
from tests.ui.conftest import server_env
from tests.ui.exports import REPORT, export_page, tamper
from tests.ui.runs import SCRIPT_TAG, completed_run, hostile_run

from runlens.verdict.exportfile import extract_bundle, sign_export
from runlens.verdict.keys import load_public_keys, signing_key

#: How long an `expect` waits for the page (milliseconds).
TIMEOUT_MS = 20_000

#: Make every Ed25519 key import fail, as in a browser without Ed25519 in WebCrypto.
NO_ED25519 = """
(() => {
  const importKey = SubtleCrypto.prototype.importKey;
  SubtleCrypto.prototype.importKey = function (format, data, algorithm, ...rest) {
    const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
    if (String(name).toLowerCase() === "ed25519") {
      return Promise.reject(new DOMException("Unrecognized algorithm name", "NotSupportedError"));
    }
    return importKey.call(this, format, data, algorithm, ...rest);
  };
})();
"""
#: The positions, among the view's in-page claim links, of those whose target marks a quote.
QUOTE_LINKS = """
Array.from(document.querySelectorAll("#runlens-view a.cite[href^='#']"))
  .map((link, at) => [at, document.getElementById(link.getAttribute("href").slice(1))])
  .filter(([, target]) => target && target.querySelector("mark"))
  .map(([at]) => at)
"""
#: Take WebCrypto away altogether.
NO_SUBTLE = 'Object.defineProperty(Crypto.prototype, "subtle", { get: () => undefined });'


@dataclass(frozen=True)
class Exported:
    page: Path
    home: Path
    key_id: str
    bundle: dict[str, Any]


@dataclass
class Opened:
    page: Page
    result: dict[str, Any]
    blocked: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @property
    def banner(self) -> str:
        return self.page.locator("#runlens-check .check-headline").inner_text()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Exported:
    home = tmp_path_factory.mktemp("export-home")
    run = completed_run(home)
    page = home / f"runlens-{run.run_id}.html"
    made = export_page(run.run_id, home, page)
    [key_id] = load_public_keys((), home)
    assert made.verdict_key_id == made.export_key_id == key_id
    return Exported(page, home, key_id, extract_bundle(page.read_text("utf-8")))


@pytest.fixture
def open_file(browser: Browser) -> Iterator[Callable[..., Opened]]:
    contexts = []

    def opener(path: Path, *, init_script: str | None = None, height: int = 720) -> Opened:
        context = browser.new_context(viewport={"width": 1280, "height": height})
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        if init_script is not None:
            context.add_init_script(init_script)
        own = path.as_uri()
        blocked: list[str] = []
        dialogs: list[str] = []

        def route(route: Route) -> None:
            if route.request.url.split("#")[0] == own:
                route.continue_()
            else:
                blocked.append(route.request.url)
                route.abort()

        def on_dialog(dialog: Dialog) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        context.route("**/*", route)
        page = context.new_page()
        page.on("dialog", on_dialog)
        page.on(
            "request",
            lambda request: (
                None
                if request.url.split("#")[0] == own or request.url.startswith("data:")
                else blocked.append(request.url)
            ),
        )
        page.goto(own)
        result = page.evaluate("window.runlensCheck")
        return Opened(page, result, blocked, dialogs)

    yield opener
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("export-hostile-home")
    run = hostile_run(home)
    page = home / f"runlens-{run.run_id}.html"
    export_page(run.run_id, home, page)
    return page


def runlens_verify(path: Path, home: Path) -> tuple[int, dict[str, Any]]:
    """`runlens verify FILE --json` with `home`'s keys: its exit code and report."""
    result = subprocess.run(
        [sys.executable, "-m", "runlens", "verify", str(path), "--json"],
        env=server_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return result.returncode, report


def failed_checks(opened: Opened) -> list[str]:
    return [check["check"] for check in opened.result["checks"] if check["ok"] is False]


def test_the_untouched_page_shows_verified_with_the_key_id(
    exported: Exported, open_file: Callable[..., Opened]
) -> None:
    opened = open_file(exported.page)

    assert opened.result["verified"] is True, opened.result
    banner = opened.page.locator("#runlens-check")
    expect(banner).to_have_class("check check-verified")
    assert opened.banner.startswith("verified: this file is the run's signed verdict (completed)")
    assert exported.key_id in opened.banner
    names = [check["check"] for check in opened.result["checks"]]
    assert names[:2] == ["signature", "statement"]
    assert {"export", "rows", f"file:{REPORT}"} <= set(names)
    assert all(check["ok"] is True for check in opened.result["checks"])
    # each check has its line in the list under the banner
    assert banner.locator(".check-list li").count() == len(names)
    expect(opened.page.locator("#runlens-view")).to_be_visible()
    assert opened.page.evaluate("document.body.dataset.check") == "verified"
    assert opened.blocked == [] and opened.dialogs == []
    code, report = runlens_verify(exported.page, exported.home)
    assert (code, report["verified"]) == (0, True), report
    shown = {check["check"] for check in opened.result["checks"]}
    assert shown <= {check["check"] for check in report["checks"]}


def test_a_claim_clicked_shows_its_row_with_the_quote_marked(
    exported: Exported, open_file: Callable[..., Opened]
) -> None:
    opened = open_file(exported.page, height=360)
    page = opened.page
    rows = json.loads(exported.bundle["rows"])
    quotes = {
        row["id"]: [row["row"][row["text_column"]][start:end] for start, end in row["quotes"]]
        for row in rows
    }
    links = page.locator("#runlens-view a.cite[href^='#']")
    quoting = page.evaluate(QUOTE_LINKS)
    assert quoting, "no claim of the view links to a row with a marked quote"
    claim = links.nth(quoting[-1])
    target_id = (claim.get_attribute("href") or "#")[1:]
    target = page.locator(f"[id='{target_id}']")
    expect(target).not_to_be_in_viewport()

    claim.click()

    expect(target).to_be_in_viewport()
    assert page.evaluate("document.querySelector(':target').id") == target_id
    mark = target.locator("mark").first
    cited = [row["id"] for row in rows if row["id"] in target.inner_text()]
    assert cited, f"the row shown at #{target_id} is none of the cited rows"
    assert mark.inner_text() in quotes[cited[0]]
    assert opened.blocked == [] and opened.dialogs == []


def change_report(bundle: dict[str, Any]) -> None:
    entry = bundle["files"][REPORT]
    text: str = entry["data"]
    at = text.index("# ") + 2  # the report's title: one ASCII byte becomes another
    entry["data"] = text[:at] + ("x" if text[at] != "x" else "y") + text[at + 1 :]


def change_verdict_payload(bundle: dict[str, Any]) -> None:
    envelope = bundle["verdict"]
    payload = base64.b64decode(envelope["payload"])
    assert payload.count(b'"status":"completed"') == 1
    changed = payload.replace(b'"status":"completed"', b'"status":"completes"')
    envelope["payload"] = base64.b64encode(changed).decode("ascii")


def change_verdict_signature(bundle: dict[str, Any]) -> None:
    signature = bundle["verdict"]["signatures"][0]
    raw = bytearray(base64.b64decode(signature["sig"]))
    raw[10] ^= 0x01
    signature["sig"] = base64.b64encode(bytes(raw)).decode("ascii")


def change_view(bundle: dict[str, Any]) -> None:
    view: str = bundle["view"]
    at = view.index(bundle["run_id"]) + len(bundle["run_id"]) - 1  # the run id's last digit
    bundle["view"] = view[:at] + ("0" if view[at] != "0" else "1") + view[at + 1 :]


@pytest.mark.parametrize(
    ("change", "named", "failing"),
    [
        (change_report, f"{REPORT} — its SHA-256 is not the signed one", f"file:{REPORT}"),
        (change_verdict_payload, "signature", "signature"),
        (change_verdict_signature, "signature", "signature"),
        (change_view, "the view", "export"),
    ],
    ids=["deliverable", "statement-payload", "statement-signature", "view"],
)
def test_one_byte_changed_names_what_was_altered(
    exported: Exported,
    open_file: Callable[..., Opened],
    tmp_path: Path,
    change: Callable[[dict[str, Any]], None],
    named: str,
    failing: str,
) -> None:
    altered = tamper(exported.page, change, tmp_path / "altered.html")
    assert len(altered.read_bytes()) - len(exported.page.read_bytes()) in (0, 1, -1)

    opened = open_file(altered)

    assert opened.result["verified"] is False
    expect(opened.page.locator("#runlens-check")).to_have_class("check check-altered")
    assert opened.banner.startswith("altered: ")
    assert named in opened.banner
    assert failing in failed_checks(opened)
    assert opened.blocked == []
    warning = opened.page.evaluate(
        "getComputedStyle(document.getElementById('runlens-view'), '::before').content"
    )
    assert "not what the run signed" in warning
    code, report = runlens_verify(altered, exported.home)
    assert code == 1 and report["verified"] is False
    assert failing in [check["check"] for check in report["checks"] if not check["ok"]]


@pytest.mark.parametrize("script", [NO_ED25519, NO_SUBTLE], ids=["no-ed25519", "no-webcrypto"])
def test_a_browser_that_cannot_verify_ed25519_never_says_verified(
    exported: Exported, open_file: Callable[..., Opened], script: str
) -> None:
    opened = open_file(exported.page, init_script=script)

    assert opened.result["verified"] is False
    assert opened.result["outcome"] == "unavailable"
    expect(opened.page.locator("#runlens-check")).to_have_class("check check-unavailable")
    assert opened.banner.startswith("this browser cannot check Ed25519 signatures: not checked")
    assert "runlens verify FILE.html" in opened.banner
    assert "verified" not in opened.banner.replace("runlens verify", "")
    expect(opened.page.locator("#runlens-view")).to_be_visible()
    assert opened.blocked == []


def test_a_file_whose_bundle_is_not_json_is_altered(
    exported: Exported, open_file: Callable[..., Opened], tmp_path: Path
) -> None:
    html = exported.page.read_text("utf-8")
    start = html.index('id="runlens-export">') + len('id="runlens-export">')
    broken = tmp_path / "broken.html"
    broken.write_text(html[:start] + "{" + html[start + 1 :].replace("{", "[", 1), "utf-8")

    opened = open_file(broken)

    assert opened.result["verified"] is False
    expect(opened.page.locator("#runlens-check")).to_have_class("check check-altered")
    assert "not JSON" in opened.banner
    expect(opened.page.locator("#runlens-view")).to_be_hidden()


#: A row whose canonical JSON needs every rule: escapes, DEL and U+2028 kept, keys sorted by
#: code point (U+E000 before an astral character, the reverse of UTF-16 order).
TRICKY_ROW: dict[str, str] = {
    "text": 'quote " back \\ nl \n cr \r tab \t bs \b ff \f ctl \x01\x1f del \x7f ls \u2028 😀',
    "\ue000": "private use",
    "😀": "astral key",
    "é": "accented",
    "Z": "",
    "a": "ascii",
}


def with_rows(exported: Exported, rows: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
    def change(bundle: dict[str, Any]) -> None:
        bundle["rows"] = json.dumps(rows, ensure_ascii=False)
        bundle["row_list"] = None
        bundle.update(sign_export(bundle, signing_key(exported.home)))

    return change


def row_hash(row: dict[str, str]) -> str:
    text = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_row_hashes_are_recomputed_as_python_makes_them(
    exported: Exported, open_file: Callable[..., Opened], tmp_path: Path
) -> None:
    good: dict[str, Any] = {"id": "tricky", "row": TRICKY_ROW, "row_hash": row_hash(TRICKY_ROW)}
    row: dict[str, Any] = {**good, "text_column": "text", "quotes": [[0, 5]]}
    page = tamper(exported.page, with_rows(exported, [row]), tmp_path / "tricky.html")

    opened = open_file(page)

    assert opened.result["verified"] is True, opened.result
    [rows] = [check for check in opened.result["checks"] if check["check"] == "rows"]
    assert "not checked against the locked source here (1 rows)" in rows["detail"]
    note = opened.page.locator("#runlens-check .check-note")
    expect(note).to_contain_text("not checked against the locked source here")

    wrong = {**row, "row": {**TRICKY_ROW, "a": "ascii!"}}
    page = tamper(exported.page, with_rows(exported, [row, wrong]), tmp_path / "wrong.html")
    opened = open_file(page)

    assert opened.result["verified"] is False
    assert failed_checks(opened) == ["rows"]
    assert "tricky" in opened.banner


def test_what_the_model_wrote_runs_nothing_in_the_file(
    hostile: Path, open_file: Callable[..., Opened]
) -> None:
    opened = open_file(hostile)
    page = opened.page

    assert opened.result["verified"] is True, opened.result
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert SCRIPT_TAG in page.locator("#runlens-view").inner_text()
    assert page.locator("#runlens-view script, #runlens-view iframe").count() == 0
    assert (
        page.evaluate(
            "() => Array.from(document.querySelectorAll('#runlens-view *'))"
            ".some((el) => Array.from(el.attributes).some((a) => a.name.startsWith('on')))"
        )
        is False
    )
    assert opened.blocked == [] and opened.dialogs == []
