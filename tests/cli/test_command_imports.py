"""What the quick commands load: `runlens --help`, `runlens runs` and `runlens show` import no
migration tool, HTTP client, web framework, workflow engine or analysis library they do not
call (each costs a new process tens to hundreds of milliseconds).

Each command runs in a fresh interpreter that then lists the modules it holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
PASSING = ROOT / "examples" / "scripts" / "passing.json"

#: Packages no command below calls: the migrations (the store is at its head), the HTTP
#: client of the model providers, the web app, the workers' workflow engine, the analyst's.
NOT_CALLED = ("alembic", "httpx", "starlette", "fastapi", "uvicorn", "dbos", "jieba", "numpy")
#: What reading the store's rows and a run's records does not need: the validators and what
#: they load, the Evidence Index, the pages, running a run or mirroring one, hook commands.
NOT_READING = (
    "jsonschema",
    "markdown_it",
    "psutil",
    "runlens.evidence",
    "runlens.validation.runner",
    "runlens.ui",
    "runlens.runtime.run",
    "runlens.store.mirror",
)
#: What `show` does not need for an ended run whose records are whole (`runlens.records.plain`):
#: neither the records' pydantic views and the event catalogue, nor the store's pydantic rows
#: (its row is read plain), nor the sync of a workspace the store holds as it is, nor
#: settling a dead run (its lock, asyncio for atomic writes).
NOT_SHOWING = (
    "pydantic",
    "asyncio",
    "runlens.atomic",
    "runlens.records.readers",
    "runlens.records.catalogue",
    "runlens.runtime.lock",
    "runlens.store.sync",
)
#: What `--help` does not need: no store, no records.
NOT_HELPING = ("sqlalchemy", "pydantic", "rich")
#: What a scripted run does not call: the offline analyst's theme discovery (its model writes
#: the analysis), urllib's request machinery (an XML escape does not need it), ctypes (only a
#: validator abandoned mid-round is handed an exception through it), difflib (only a
#: missing column is matched to the closest one) and jsonschema (only a schema it alone can
#: judge, or a document or tool arguments the compiled check rejects, need it).
NOT_RUNNING = (
    "runlens_feedback.discovery",
    "jsonschema",
    "urllib.request",
    "http.client",
    "xml.sax",
    "ctypes",
    "difflib",
)

#: `runlens ARGS` in the program's process, its exit status in `status`.
RUN_MAIN = """
from runlens.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    status = done.code or 0
else:
    status = 0
"""

PROGRAM = f"""
import sys
{RUN_MAIN}watched = {(*NOT_CALLED, *NOT_READING, *NOT_SHOWING, *NOT_HELPING, *NOT_RUNNING)!r}
loaded = sorted(name for name in watched if name in sys.modules)
print("\\nLOADED " + " ".join(loaded))
sys.exit(status)
"""


#: `runlens ARGS`, counting how often the installed distributions' entry points are read.
COUNTING = f"""
import sys
import runlens._entry_points as installed
readings = []
def counted(read=installed.entry_points):
    readings.append(None)
    return read()
installed.entry_points = counted
{RUN_MAIN}print(f"\\nREADINGS {{len(readings)}}")
sys.exit(status)
"""


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "RUNLENS_HOME": str(home), "COLUMNS": "200"}
    env.pop("RUNLENS_DATABASE_URL", None)
    return env


def _loaded(home: Path, *args: str) -> list[str]:
    """The watched modules a process holds after `runlens ARGS` (which must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        env=_env(home), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    marker = done.stdout.rsplit("\nLOADED", 1)[1]
    return marker.split()


@pytest.fixture(scope="module")
def home_with_a_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A runs home holding one finished scripted run, and its store already made."""
    home = tmp_path_factory.mktemp("home")
    done = subprocess.run(
        [sys.executable, "-m", "runlens", "run", "feedback-analysis", str(SAMPLE),
         "--model", f"scripted:{PASSING}", "--json"],
        env=_env(home), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    assert isinstance(run_id, str)
    return home, run_id


def test_help_loads_nothing_it_does_not_call(tmp_path: Path) -> None:
    assert _loaded(tmp_path, "--help") == []


def test_runs_loads_nothing_it_does_not_call(home_with_a_run: tuple[Path, str]) -> None:
    home, _ = home_with_a_run
    # The store in step with the home: its rows are read through sqlite3 (no SQLAlchemy) into
    # plain rows (no pydantic); the table is rich's. Nothing else watched.
    assert _loaded(home, "runs") == ["rich"]
    assert _loaded(home, "runs", "--json") == ["rich"]


def test_show_loads_nothing_it_does_not_call(home_with_a_run: tuple[Path, str]) -> None:
    home, run_id = home_with_a_run
    # The store read through sqlite3 (no SQLAlchemy) into a plain row (no pydantic); the
    # run's records, whole, read as plain objects.
    assert _loaded(home, "show", run_id) == ["rich"]
    assert _loaded(home, "show", run_id[-6:], "--no-events") == ["rich"]
    # `--json` writes each record as its view (a pydantic model) encodes it.
    loaded = _loaded(home, "show", run_id[-6:], "--json")
    assert "pydantic" in loaded
    assert [name for name in loaded if name not in NOT_SHOWING] == ["rich"]


def test_runs_in_a_new_home_makes_its_store_and_lists_nothing(tmp_path: Path) -> None:
    # A home without a store: `runs` makes the store (the migrations run), and lists no run.
    done = subprocess.run(
        [sys.executable, "-m", "runlens", "runs", "--json"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert (tmp_path / "runlens.db").is_file()
    # The store made, no migration is due any more: the next listing does not load Alembic.
    assert "alembic" not in _loaded(tmp_path, "runs")


def test_a_scripted_run_loads_no_provider_client_nor_web_app(
    home_with_a_run: tuple[Path, str],
) -> None:
    home, _ = home_with_a_run  # its store made: no migration is due
    loaded = _loaded(
        home, "run", "feedback-analysis", str(SAMPLE), "--model", f"scripted:{PASSING}"
    )
    assert [name for name in loaded if name in NOT_CALLED] == []
    # The store at its head is written through sqlite3 (`open_write_first`): no SQLAlchemy.
    assert "sqlalchemy" not in loaded
    assert "psutil" not in loaded  # no command hook ran
    # The model writes the analysis: no theme discovery; the chart is drawn without urllib.
    assert [name for name in loaded if name in NOT_RUNNING] == []
    # With --json nothing is drawn: no rich either.
    quiet = _loaded(
        home, "run", "feedback-analysis", str(SAMPLE), "--model", f"scripted:{PASSING}", "--json"
    )
    assert [name for name in quiet if name in (*NOT_CALLED, "rich", "sqlalchemy")] == []


def test_a_run_reads_the_entry_points_once(home_with_a_run: tuple[Path, str]) -> None:
    # Its plugin, its model provider, the validator plugins and the verdict's plugin version
    # are all looked up in one reading of the installed distributions.
    home, _ = home_with_a_run
    done = subprocess.run(
        [sys.executable, "-c", COUNTING, "run", "feedback-analysis", str(SAMPLE),
         "--model", f"scripted:{PASSING}", "--json"],
        env=_env(home), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rsplit("\nREADINGS", 1)[1].split() == ["1"]
