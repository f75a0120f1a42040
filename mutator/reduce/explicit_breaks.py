"""A forced graph break written as the program's own: `torch._dynamo.graph_break()` before a return.

The forced-graph-breaks configuration (`mutator.core.configurations`) breaks the graph at the
return of every function that inlines no call, a testing setting. A user reading a reproducer
wants the break in the code, where any program can have it: under nested graph breaks alone, a
`torch._dynamo.graph_break()` just before a function's return makes the break the setting makes.
`variants` writes the candidates, every function's returns first, then one function's at a time
(the leaf whose break the bug needs); the reducer keeps the first that fails the same way under
nested graph breaks alone.
"""

from __future__ import annotations

import libcst as cst

BREAK = "torch._dynamo.graph_break()"
HOOKS = frozenset({"inputs", "state", "drive"})  # the harness's own functions, run eagerly: no breaks there
MAX_VARIANTS = 8  # checks a finding spends looking for its breaks


class _Breaks(cst.CSTTransformer):
    """A graph break before each `return` of the functions named in `only` (every function when
    None), and at the end of a body that ends without one."""

    def __init__(self, only: str | None) -> None:
        self.only = only
        self.names: list[str] = []  # every function's name, in the order met
        self._stack: list[str] = []

    def _here(self) -> bool:
        return bool(self._stack) and self._stack[-1] not in HOOKS and \
            (self.only is None or self._stack[-1] == self.only)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._stack.append(node.name.value)
        if node.name.value not in HOOKS:
            self.names.append(node.name.value)
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._stack.append("")  # a class body is no function's
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._stack.pop()
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self._here() and isinstance(updated.body[0], cst.Return):
            return cst.FlattenSentinel([cst.parse_statement(f"{BREAK}\n"), updated])
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        here = self._here()
        self._stack.pop()
        body = updated.body
        if not here or not isinstance(body, cst.IndentedBlock) or not body.body:
            return updated
        last = body.body[-1]
        ends = isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], (cst.Return, cst.Raise))
        if ends or _is_generator(original):
            return updated
        return updated.with_changes(body=body.with_changes(body=[*body.body, cst.parse_statement(f"{BREAK}\n")]))


def _is_generator(node: cst.FunctionDef) -> bool:
    """Whether the function yields (its own body, not a nested function's)."""
    found = False

    class Yields(cst.CSTVisitor):
        def visit_Yield(self, yielded: cst.Yield) -> bool:
            nonlocal found
            found = True
            return False

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

        def visit_Lambda(self, inner: cst.Lambda) -> bool:
            return False

    node.visit(Yields())
    return found


def variants(source: str) -> list[str]:
    """The program with explicit graph breaks: at the returns of every function, then of one
    function at a time (in the order they are defined); at most MAX_VARIANTS, none when the
    program does not parse or does not import torch."""
    if "import torch" not in source:
        return []
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return []
    every = _Breaks(None)
    found = [module.visit(every).code]
    for name in dict.fromkeys(every.names):
        if len(found) >= MAX_VARIANTS:
            break
        found.append(module.visit(_Breaks(name)).code)
    return [variant for variant in dict.fromkeys(found) if variant != source]
