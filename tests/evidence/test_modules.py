"""The evidence package's modules import one another without a cycle, at module level."""

from __future__ import annotations

import ast
from pathlib import Path

import runlens.evidence

PACKAGE = Path(runlens.evidence.__file__).parent


def imports_of(path: Path) -> tuple[set[str], list[str]]:
    """(evidence modules `path` imports at module level, those it imports in a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    nested: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if node.module == "runlens.evidence":
            names = {f"runlens.evidence.{alias.name}" for alias in node.names}
        elif node.module.startswith("runlens.evidence."):
            names = {node.module}
        else:
            continue
        if node in tree.body:
            top |= names
        else:
            nested += sorted(names)
    return top, nested


def test_no_import_cycle_and_no_import_inside_a_function() -> None:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        if path.stem == "__init__":
            continue
        top, nested = imports_of(path)
        assert nested == [], f"{path.name} imports {nested} inside a function"
        graph[f"runlens.evidence.{path.stem}"] = top
    assert "runlens.evidence._storage" in graph["runlens.evidence.index"]
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for imported in graph.get(module, set()):
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())
