"""The package graph: imports run only downwards through the layers of `mutator/__init__.py`,
and no two modules import each other, however indirectly (a cycle cut with a function-level or
`TYPE_CHECKING` import still counts: the modules still need each other)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mutator

ROOT = Path(mutator.__file__).parent
# the layers, lowest first: a package may import its own modules and the layers before it
LAYERS = [("core",), ("runtime", "mutation"), ("llm",), ("repair",), ("judge",), ("exec",), ("findings",),
          ("reduce",), ("report",), ("harvest",), ("campaign",), ("commands",)]
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in ROOT.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module of mutator that `path` imports, wherever the import statement stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def test_every_package_has_a_layer() -> None:
    packages = {_package(name) for name in _modules()} - {""}
    assert packages <= set(RANK), f"packages without a layer in LAYERS: {sorted(packages - set(RANK))}"


def test_no_import_runs_upwards() -> None:
    upward = []
    for module, imported in _graph().items():
        here = _package(module)
        for other in imported:
            there = _package(other)
            if here and there and there != here and RANK[there] >= RANK[here]:
                upward.append(f"{module} -> {other}")
    assert not upward, "imports that run up or across the layers:\n" + "\n".join(sorted(upward))


def test_no_import_cycle() -> None:
    graph = _graph()
    # a package's __init__ that re-exports its modules is not a cycle with them
    edges = {m: {o for o in imported if not (o == m.rsplit(".", 1)[0] and _is_face(o))} for m, imported in graph.items()}
    cycles = _cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _is_face(module: str) -> bool:
    return _modules()[module].name == "__init__.py"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("cycle_edges, expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_the_cycle_finder_finds_cycles(cycle_edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(cycle_edges) == expected
