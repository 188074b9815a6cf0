"""What a command's imports cost, by the packages behind them, beside the command's own CPU.

    python benchmarks/bench_imports.py [--rounds 5] [--command run|show|runs|help ...]

1. Makes a runs home in a temporary folder with one short scripted run (`feedback-analysis`
   on `examples/sample_feedback.csv` with `examples/scripts/passing.json`), its store made.
2. For each command (`run`: that scripted run again; `show`: `runlens show RUN`; `runs`;
   `help`: `runlens --help`), in rounds of new processes:
   - the command's CPU (user and system, the process and its children);
   - its imports by family (`-X importtime`, each module's own time summed by the family it
     belongs to; a RunLens module that builds pydantic models counts as RunLens's, so a
     family's figure is what its own modules cost, not everything it causes);
   - the SQLAlchemy part exactly: CPU of importing everything the command loaded except
     SQLAlchemy, Alembic and the modules that cannot be imported without them (found by
     importing each with those two refused), then those: what keeping them off the command
     would save.

Medians over the rounds. Every process runs with its bytecode cached (the first, untimed
round writes it, whatever PYTHONDONTWRITEBYTECODE says). `-X importtime` measures wall time
and adds its own overhead, so its families are printed as shares of its total; the CPU
figures are the ones to compare with the command. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
PASSING = ROOT / "examples" / "scripts" / "passing.json"

#: Family name -> whether a module belongs to it; the first that claims a module has it
#: (the SQLAlchemy family is the modules `_PROBE` finds for each command).
FAMILIES: dict[str, Callable[[str], bool]] = {
    "RunLens and its plugin (own modules)": lambda name: (
        name.split(".")[0] in ("runlens", "runlens_feedback")
    ),
    "pydantic": lambda name: (
        name.split(".")[0] in ("pydantic", "pydantic_core", "annotated_types", "typing_inspection")
    ),
    "jsonschema, fastjsonschema": lambda name: (
        name.split(".")[0]
        in ("jsonschema", "jsonschema_specifications", "referencing", "rpds", "attrs", "attr")
        or name.split(".")[0] == "fastjsonschema"
    ),
    "cryptography": lambda name: name.split(".")[0] in ("cryptography", "_cffi_backend"),
    "rich, click": lambda name: (
        name.split(".")[0] in ("rich", "pygments", "markdown_it", "mdurl", "click")
    ),
    "the standard library and the rest": lambda name: True,
}
SQLALCHEMY = "SQLAlchemy, Alembic and the modules that import them"

#: Runs `runlens ARGS` and writes the modules the process holds to the file named first.
_LIST = """
import json, sys
out = sys.argv.pop(1)
from runlens.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
json.dump([name for name in sys.modules if name != "__main__"], open(out, "w"))
"""

#: Prints which of the modules listed in a file cannot be imported without SQLAlchemy and
#: Alembic: those two and every module that imports them when it is imported.
_PROBE = """
import importlib, json, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("sqlalchemy", "alembic"):
            raise ImportError(name)
sys.meta_path.insert(0, Refuse())
needing = []
for name in json.load(open(sys.argv[1])):
    try:
        importlib.import_module(name)
    except Exception:
        needing.append(name)
print(json.dumps(needing))
"""

#: Imports the modules listed in the first file, those listed in the second last; prints
#: the CPU of each part.
_IMPORT = """
import importlib, json, sys, time
names = json.load(open(sys.argv[1]))
last = set(json.load(open(sys.argv[2])))
def load(which):
    start = time.process_time()
    for name in which:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    return time.process_time() - start
first = load([name for name in names if name not in last])
print(json.dumps([first, load([name for name in names if name in last])]))
"""


def importtime_by_family(stderr: str, sqlalchemy: set[str]) -> dict[str, float]:
    """Seconds of `-X importtime` self time by family."""
    spent = dict.fromkeys([SQLALCHEMY, *FAMILIES], 0.0)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = (part.strip() for part in line[len("import time:") :].split("|"))
        family = SQLALCHEMY if name in sqlalchemy else None
        family = family or next(f for f, member in FAMILIES.items() if member(name))
        spent[family] += int(own) / 1e6
    return spent


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "RUNLENS_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("RUNLENS_DATABASE_URL", None)
    return env


def _cpu(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """The CPU of the process `args` and its children, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return used, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--command", action="append", choices=("run", "show", "runs", "help"), default=None
    )
    options = parser.parse_args()
    commands = options.command or ["run", "show", "runs", "help"]
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as folder:
        home = Path(folder) / "home"
        env = _env(home)
        run = ["run", "feedback-analysis", str(SAMPLE), "--model", f"scripted:{PASSING}"]
        _, out = _cpu([python, "-m", "runlens", *run, "--json"], env)
        run_id = json.loads(out)["run_id"]
        argv = {"run": run, "show": ["show", run_id], "runs": ["runs"], "help": ["--help"]}
        for command in commands:
            listed = Path(folder) / f"{command}.json"
            _cpu([python, "-c", _LIST, str(listed), *argv[command]], env)
            names = json.loads(listed.read_text())
            _, out = _cpu([python, "-c", _PROBE, str(listed)], env)
            needing = Path(folder) / f"{command}-sqlalchemy.json"
            needing.write_text(out)
            sqlalchemy_modules = set(json.loads(out))
            whole: list[float] = []
            exact: list[float] = []
            families: dict[str, list[float]] = {f: [] for f in [SQLALCHEMY, *FAMILIES]}
            for round_ in range(options.rounds + 1):  # the first round caches bytecode
                spent, _ = _cpu([python, "-m", "runlens", *argv[command]], env)
                _, out = _cpu([python, "-c", _IMPORT, str(listed), str(needing)], env)
                traced = subprocess.run(
                    [python, "-X", "importtime", "-m", "runlens", *argv[command]],
                    env=env, cwd=ROOT, capture_output=True, text=True, check=True,
                )  # fmt: skip
                if round_:
                    whole.append(spent)
                    exact.append(json.loads(out)[1])
                    for family, seconds in importtime_by_family(
                        traced.stderr, sqlalchemy_modules
                    ).items():
                        families[family].append(seconds)
            total = statistics.median(whole)
            print(f"\nrunlens {argv[command][0]}: {len(names)} modules")
            print(f"  {'the command (CPU of its process)':54} {total * 1000:7.0f} ms")
            sqlalchemy = statistics.median(exact)
            label = "importing SQLAlchemy, Alembic and what needs them"
            print(f"  {label:54} {sqlalchemy * 1000:7.0f} ms  {sqlalchemy / total:4.0%}")
            medians = {family: statistics.median(seconds) for family, seconds in families.items()}
            traced_total = sum(medians.values())
            print("  share of each family in the imports (-X importtime, own time of its modules):")
            for family, seconds in medians.items():
                if seconds:
                    print(f"    {family:52} {seconds / traced_total:7.0%}")


if __name__ == "__main__":
    main()
