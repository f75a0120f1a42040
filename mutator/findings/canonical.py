"""The canonical form of a reduced program: what two findings of one bug have in common.

Identifiers the program defines are renamed in order of first appearance (`v0`, `v1`,
...), literals become their type, docstrings go; names it imports or takes from
builtins, the harness's names, and attribute and method names (`forward`, `keys`,
`__torch_function__`: what Dynamo reacts to), stay. Two reduced programs with the same canonical form are the same
trigger, whatever the seed and the operators that led to them.
"""

from __future__ import annotations

import ast
import builtins
import hashlib

from mutator.core import parsing

_BUILTINS = frozenset(dir(builtins))


class _Canonical(ast.NodeTransformer):
    def __init__(self, keep: frozenset[str]) -> None:
        self._keep = keep
        self._names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        if name in self._keep or name in _BUILTINS or name.startswith("__"):
            return name
        return self._names.setdefault(name, f"v{len(self._names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(self._rename(node.id), node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if not getattr(node, "_method", False):  # a method's name is an attribute name: kept
            node.name = self._rename(node.name)
        _drop_docstring(node)
        return self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._rename(node.name)
        _drop_docstring(node)
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                statement._method = True  # type: ignore[attr-defined]
        return self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        self.generic_visit(node)
        return node  # keyword names belong to the callee: kept

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, bool) or node.value is None or node.value is Ellipsis:
            return node
        return ast.copy_location(ast.Constant(type(node.value).__name__), node)


def _drop_docstring(node: ast.FunctionDef | ast.ClassDef | ast.Module) -> None:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        node.body = body[1:] or [ast.Pass()]


def canonical_form(source: str) -> str:
    tree = parsing.parse(source)
    _drop_docstring(tree)
    keep: set[str] = {"fn", "inputs", "drive", "state", "COMPILE_KWARGS"}  # the harness's names mean something
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            keep.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            keep.update(alias.asname or alias.name for alias in node.names)
    return ast.unparse(_Canonical(frozenset(keep)).visit(tree))


def canonical_digest(source: str) -> str:
    try:
        form = canonical_form(source)
    except SyntaxError:
        form = source
    return hashlib.sha1(form.encode()).hexdigest()[:16]
