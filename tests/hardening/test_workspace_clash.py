"""A copied workspace (`cp -r` of a run folder, then an edit) never takes the run's store row
over: it is a clash, named by `runlens runs` and `runlens reindex` and kept in the run's
`clashes`; a workspace moved (`mv`) is still the run's (real processes, real PostgreSQL)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runlens.store import open_store

from .conftest import SAMPLE, runlens
from .test_store_values import postgres_url  # noqa: F401 (a fixture)

RUN = "run_20261201T100000Z_aaaaaa"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    made = runlens("run", "feedback-analysis", SAMPLE, "--workspace", home / RUN, home=home)
    assert made.returncode == 0, made.stderr
    return home


def test_a_copied_workspace_is_a_clash_never_a_takeover(
    home: Path,
    postgres_url: str,  # noqa: F811
) -> None:
    original = (home / RUN).resolve()
    first = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)[0]["workspace"] == str(original)
    copy = home / "copy_of_run"
    shutil.copytree(original, copy)
    report = copy / "artifacts" / "insight_report.md"
    report.write_text(report.read_text(encoding="utf-8") + "\nEdited in the copy.\n")

    listed = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert run["workspace"] == str(original) and run["status"] == "completed"
    assert run["clashes"] == [str(copy.resolve())]
    assert f"clash {copy.resolve()} names run" in " ".join(listed.stderr.split())

    table = runlens("runs", "--database-url", postgres_url, home=home)
    assert table.returncode == 0 and "clash" in table.stdout

    again = runlens("reindex", "--database-url", postgres_url, home=home)
    assert again.returncode == 0, again.stderr
    assert "1 clash(es)" in again.stdout and "copy_of_run" in again.stdout
    store = open_store(postgres_url)
    try:
        detail = store.get_run(run["run_id"])
        assert detail is not None and detail.workspace == str(original)
        assert detail.clashes == [str(copy.resolve())]
    finally:
        store.close()

    named = runlens("reindex", copy, "--database-url", postgres_url, home=home)
    assert named.returncode == 0 and "clash" in named.stdout
    shown = runlens("show", copy, "--json", "--database-url", postgres_url, home=home)
    assert shown.returncode == 0, shown.stderr  # the folder as it is, the store left alone
    problems = json.loads(shown.stdout)["problems"]
    assert any(p.startswith("clash:") and str(original) in p for p in problems)
    after = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    assert json.loads(after.stdout)[0]["workspace"] == str(original)

    shutil.rmtree(copy)  # the copy gone: no clash left
    cleared = runlens("runs", "--json", "--database-url", postgres_url, home=home)
    [run] = json.loads(cleared.stdout)
    assert "clashes" not in run and run["workspace"] == str(original)


def test_a_moved_workspace_is_still_the_run(home: Path) -> None:
    first = runlens("runs", "--json", home=home)
    [run] = json.loads(first.stdout)
    moved = home / "moved_run"
    shutil.move(home / RUN, moved)
    listed = runlens("runs", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    [after] = json.loads(listed.stdout)
    assert after["run_id"] == run["run_id"] and after["workspace"] == str(moved.resolve())
    assert "clash" not in listed.stderr
