"""The import graph of `runlens` and `runlens_feedback`: no cycles, no import that runs back up.

Every module under `src/` is parsed with `ast`; every `import` counts, at module level, inside
a function or under `if TYPE_CHECKING:` (a lazy import that hides a cycle is still a cycle).
An import names the deepest module it reaches: `from runlens.evidence import _ids` depends on
`runlens.evidence._ids`, `from runlens.evidence import EvidenceIndex` on `runlens.evidence`.
The parent packages Python runs first are not counted as dependencies.

The layers of `runlens`, lowest first. A module may import from its own layer and the layers
below it, never from a layer above:

 1. base         `_text`, `_entry_points`, `_lazy`, `errors`, `atomic`, `schema`, `cancellation`,
                 `secrets`, `contracts`: text helpers, the installed entry points, the error
                 tree, atomic writes, JSON Schema, the artifact contracts
 2. models       the provider interface, messages, the registry, the built-in providers and
                 the scripted and function models
 3. sources      `tools`, `evidence`, `inputs`, the source lock (`sourcelock` and its
                 `lock` and `refs`): the workspace and its tools, the Evidence Index, the
                 declared input, which data a run read
 4. validation   the validators and their one runner
 5. records      what a run writes: events, manifest, run record, trace, metrics
 6. plugins      `plugins`, `hooks`, `batching` and the public facade `runlens` itself
 7. verdict      signing keys, the signed verdict of a run, `runlens verify`'s checks; the
                 review ledger (`review`: signed decisions and marks, review state)
 8. runtime      one run: its state, loop, journal, recovery
 9. drift        `sourcelock.compare`, `.drift`, `.render`: what a newer file changes of a
                 finished run
10. kit          the plugin kit: scaffold, declaration checks, the conformance suite
11. testing      `runlens.testing`, what a plugin's tests import (models and the suite)
12. store        the run store and its mirror of workspaces
13. start        `runlens.start`: the one way to start a run (options, model check, open)
14. workers      the queue and the processes that run it
15. ui           the web app
16. cli          the `runlens` command

`runlens_feedback` (the first plugin) imports from RunLens only its public API, `runlens`
itself; RunLens never imports the plugin.

`KNOWN` lists the edges that still break these rules, each with why; the list only shrinks,
and an entry whose import is gone fails the test until it is removed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("runlens", "runlens_feedback")

#: Layers of `runlens`, lowest first: each a name and the modules (with their submodules)
#: it holds. The root `runlens` is only the facade module itself.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "runlens._text",
            "runlens._entry_points",
            "runlens._lazy",
            "runlens.errors",
            "runlens.atomic",
            "runlens.digests",
            "runlens.idle_threads",
            "runlens.schema",
            "runlens.cancellation",
            "runlens.secrets",
            "runlens.contracts",
        ),
    ),
    ("models", ("runlens.models",)),
    (
        "sources",
        (
            "runlens.tools",
            "runlens.evidence",
            "runlens.inputs",
            "runlens.sourcelock",
        ),
    ),
    ("validation", ("runlens.validation",)),
    ("records", ("runlens.records",)),
    (
        "plugins",
        (
            "runlens.plugins",
            "runlens.hooks",
            "runlens.batching",
            "runlens.batch_protocol",
            "runlens",
        ),
    ),
    ("verdict", ("runlens.verdict", "runlens.review")),
    ("runtime", ("runlens.runtime",)),
    (
        "drift",
        ("runlens.sourcelock.compare", "runlens.sourcelock.drift", "runlens.sourcelock.render"),
    ),
    ("kit", ("runlens.kit",)),
    ("testing", ("runlens.testing",)),
    ("store", ("runlens.store",)),
    ("start", ("runlens.start", "runlens.review.record")),
    ("workers", ("runlens.workers",)),
    ("ui", ("runlens.ui",)),
    ("cli", ("runlens.cli", "runlens.__main__")),
)
#: What a plugin may import from RunLens.
PUBLIC = frozenset({"runlens"})

#: Edges (importer, imported) that still break the rules, owned by work in progress
#: elsewhere; each goes when its import does.
KNOWN: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((SRC / package).rglob("*.py")):
            parts = list(path.relative_to(SRC).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _deepest(name: str) -> str | None:
    """The deepest module of ours that `name` (a module or a name in one) lies in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    source = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1])
        source = f"{base}.{source}" if source else base
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        yield submodule if submodule in MODULES else source


def _imports_of(module: str, source: str) -> Iterator[Import]:
    for node in ast.walk(ast.parse(source, module)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, module):
                imported = _deepest(target)
                if imported is not None and imported != module:
                    yield Import(module, imported, node.lineno)


def _imports() -> list[Import]:
    return [
        found
        for module, path in MODULES.items()
        for found in _imports_of(module, path.read_text(encoding="utf-8"))
    ]


IMPORTS = _imports()


def _layer(module: str) -> int | None:
    """The index of the layer holding `module` (the longest prefix that names it)."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (prefix != "runlens" and module.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for edge in IMPORTS:
        if (edge.importer, edge.imported) not in KNOWN:
            graph[edge.importer].add(edge.imported)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """The shortest cycle from the component's first module back to it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & component):
                if successor == start:
                    return [*paths[node], start]
                if successor not in paths:
                    paths[successor] = [*paths[node], successor]
                    following.append(successor)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def test_every_runlens_module_is_in_a_layer() -> None:
    unplaced = [m for m in MODULES if m.split(".")[0] == "runlens" and _layer(m) is None]
    assert unplaced == []


def test_no_import_cycles() -> None:
    cycles = [" -> ".join(cycle) for cycle in _cycles(_graph())]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_import_runs_up_a_layer() -> None:
    upward = []
    for edge in IMPORTS:
        if (edge.importer, edge.imported) in KNOWN or edge.importer.split(".")[0] != "runlens":
            continue
        if edge.imported.split(".")[0] != "runlens":
            upward.append(f"{edge.importer}:{edge.line} imports the plugin {edge.imported}")
            continue
        here, there = _layer(edge.importer), _layer(edge.imported)
        assert here is not None and there is not None
        if there > here:
            upward.append(
                f"{edge.importer}:{edge.line} ({LAYERS[here][0]}) imports "
                f"{edge.imported} ({LAYERS[there][0]})"
            )
    assert not upward, "imports that run up a layer:\n" + "\n".join(upward)


def test_the_plugin_imports_only_the_public_api() -> None:
    private = [
        f"{edge.importer}:{edge.line} imports {edge.imported}"
        for edge in IMPORTS
        if edge.importer.split(".")[0] == "runlens_feedback"
        and edge.imported.split(".")[0] == "runlens"
        and edge.imported not in PUBLIC
    ]
    assert not private, "private RunLens modules imported:\n" + "\n".join(private)


def test_known_exceptions_still_exist() -> None:
    edges = {(edge.importer, edge.imported) for edge in IMPORTS}
    assert [edge for edge in KNOWN if edge not in edges] == []


def test_the_walk_sees_lazy_and_type_only_imports() -> None:
    """The checks above are only as good as the walk: it sees imports inside functions and
    under TYPE_CHECKING, resolves relative ones and names the deepest module reached."""
    source = """
from typing import TYPE_CHECKING
from . import run
from .common import console
if TYPE_CHECKING:
    from runlens.plugins.base import Plugin
def later():
    import runlens.records.events
    from runlens.evidence import EvidenceIndex
"""
    found = {edge.imported for edge in _imports_of("runlens.cli.validate", source)}
    assert found == {
        "runlens.cli.run",
        "runlens.cli.common",
        "runlens.plugins.base",
        "runlens.records.events",
        "runlens.evidence",
    }
