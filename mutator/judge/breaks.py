"""Where a program asks Dynamo to treat graph breaks as errors, or to allow them again.

`torch.compile(fullgraph=True)`, `optimize(nopython=True)` and
`torch._dynamo.error_on_graph_break(True)` (a context manager or a decorator, around the
compiled call or inside the compiled code) all ask for no graph breaks; an `Unsupported`
escaping from there is what the program asked for (a low-severity finding). A nested
`error_on_graph_break(False)` region, or a function wrapped in `torch._dynamo.disable`
/ `torch.compiler.disable` (never traced), allows them again: a break there must not
escape. `fullgraph=True` takes precedence over both, as Dynamo documents.

Pure and torch-free: the setting at a line is read off the program's syntax tree.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from mutator.core import parsing
from mutator.core.program import terminal_name
from mutator.core.values import FrameInfo

_SETTER = "error_on_graph_break"
_DISABLERS = ("disable",)  # torch._dynamo.disable, torch.compiler.disable, and `from ... import disable`


@dataclass(frozen=True, slots=True)
class _Region:
    start: int
    end: int
    allows_breaks: bool  # error_on_graph_break(False) or disable: True; error_on_graph_break(True): False
    owner: int  # first line of the function whose frame the region belongs to (0: module level)
    line: int  # where the setting is written


@dataclass(frozen=True, slots=True)
class BreakMode:
    """Whether graph breaks were errors where a graph break happened, and why."""

    errors: bool
    why: str  # "fullgraph=True", "error_on_graph_break(True) at prog.py:12", ...
    allowed_again: bool = False  # a region that allows graph breaks was innermost (only when errors is False)


class BreakRegions:
    """The program's explicit graph-break settings, by line."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self._regions, self._functions = _collect(source)

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def of(name: str, source: str) -> BreakRegions:
        return BreakRegions(name, source)

    def setting_at(self, lineno: int) -> _Region | None:
        """The innermost explicit setting in force at `lineno` within its own function, if any."""
        owner = max((start for start, end in self._functions if start < lineno <= end), default=0)
        inside = [r for r in self._regions if r.owner == owner and r.start <= lineno <= r.end]
        return max(inside, key=lambda r: (r.start, -r.end), default=None)

    def mode(self, *, fullgraph: bool, at_call: bool, user_stack: tuple[FrameInfo, ...],
             dynamo_says: bool | None) -> BreakMode:
        """The setting at a graph break: `fullgraph`, then the setting when the compiled call
        began (`at_call`), overridden frame by frame (outermost first) by the program's
        explicit settings around the lines Dynamo was tracing. Without any explicit setting
        on the stack, Dynamo's own view (`dynamo_says`) counts."""
        if fullgraph:
            return BreakMode(True, "fullgraph=True")
        errors, why = at_call, "error_on_graph_break(True) around the compiled call"
        explicit = False
        for frame in user_stack:
            region = self.setting_at(frame.lineno) if frame.filename == self.name else None
            if region is not None:
                explicit = True
                errors = not region.allows_breaks
                setting = "error_on_graph_break(True)" if errors else "a region that allows graph breaks"
                why = f"{setting} at {self.name}:{region.line}"
        if not explicit and not at_call and dynamo_says:
            return BreakMode(True, "error_on_graph_break(True), as Dynamo reports")
        if errors:
            return BreakMode(True, why)
        return BreakMode(False, why if explicit else "graph breaks allowed", allowed_again=explicit)


def _collect(source: str) -> tuple[list[_Region], list[tuple[int, int]]]:
    try:
        tree = parsing.parse(source)
    except SyntaxError:
        return [], []
    disablers = _aliases(tree, _DISABLERS)
    setters = _aliases(tree, (_SETTER,))
    regions: list[_Region] = []
    functions: list[tuple[int, int]] = []

    def visit(node: ast.AST, owner: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start, end = child.lineno, child.end_lineno or child.lineno
                functions.append((start, end))
                for decorator in child.decorator_list:
                    allows = _setting(decorator, setters, disablers)
                    if allows is not None:
                        regions.append(_Region(start, end, allows, start, decorator.lineno))
                visit(child, start)
                continue
            if isinstance(child, (ast.With, ast.AsyncWith)):
                for item in child.items:
                    allows = _setting(item.context_expr, setters, disablers=frozenset())
                    if allows is not None:
                        regions.append(_Region(child.lineno, child.end_lineno or child.lineno, allows, owner,
                                               child.lineno))
            visit(child, owner)

    visit(tree, 0)
    return regions, functions


def _setting(node: ast.expr, setters: frozenset[str], disablers: frozenset[str]) -> bool | None:
    """True (breaks allowed) for error_on_graph_break(False) and disable; False for
    error_on_graph_break(True); None for anything else."""
    name = terminal_name(node.func if isinstance(node, ast.Call) else node)
    if isinstance(node, ast.Call) and name in setters:
        values = [*node.args, *(k.value for k in node.keywords if k.arg == _SETTER)]
        if values and isinstance(values[0], ast.Constant) and isinstance(values[0].value, bool):
            return not values[0].value
        return None
    if name in disablers:
        return True
    return None


def _aliases(tree: ast.Module, names: tuple[str, ...]) -> frozenset[str]:
    found = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update(alias.asname for alias in node.names if alias.name in names and alias.asname)
    return frozenset(found)
