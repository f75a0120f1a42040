"""Fast queries over libcst trees, shared by the framework and the operators.

libcst's `node.children` runs a visitor to find a node's children; reading the dataclass
fields directly is many times faster, which matters when every mutation walks a module.
The queries below the walker answer what operators ask of any tree: the source text of a
node, docstrings, the names code reads and binds. They read trees and never change them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from functools import lru_cache

import libcst as cst
import libcst.matchers as m


def nodes(node: cst.CSTNode | list) -> Iterator[cst.CSTNode]:  # type: ignore[type-arg]
    """Every node under `node` (or a list of nodes), in source order."""
    stack = list(reversed(node)) if isinstance(node, (list, tuple)) else [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


_FIELDS: dict[type, tuple[str, ...]] = {}
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {  # where declaration order is not source order
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Arg: ("keyword", "value"),
}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """node.children without layout and punctuation (whitespace, newlines, comments, commas,
    dots, brackets), read straight from the dataclass fields (libcst's property runs a
    visitor: slow), in source order."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        first = _SOURCE_ORDER.get(type(node), ())
        fields = (*first, *(f.name for f in dataclasses.fields(node) if f.name not in first))  # type: ignore[arg-type]
        _FIELDS[type(node)] = fields
    found: list[cst.CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        if _is_node(value):
            found.append(value)
        elif type(value) is tuple or type(value) is list:
            found.extend(v for v in value if _is_node(v))
    return found


_NODE_TYPES: dict[type, bool] = {}
# Nodes of layout and punctuation: three in five of a module's nodes, and nothing an operator
# rewrites, hooks or asks about (they are reached through their owner's fields when needed)
_LAYOUT = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.Newline, cst.TrailingWhitespace, cst.EmptyLine,
           cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen,
           cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace)


def _is_node(value: object) -> bool:
    """Whether `value` is a syntax node (a `cst.CSTNode` but no layout or punctuation), memoised
    per type (CSTNode is an ABC: isinstance is slow)."""
    kind = type(value)
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode) and not issubclass(kind, _LAYOUT)
    return known


# -- source text ---------------------------------------------------------------------------------

def code(node: cst.CSTNode) -> str:
    """The source text of one node."""
    return cst.Module([]).code_for_node(node)


def dotted(expr: cst.BaseExpression) -> str | None:
    """'torch.nn.functional.relu' for an attribute chain of names, else None."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


# -- expressions ---------------------------------------------------------------------------------

DISPLAY_KINDS = {cst.List: "list", cst.ListComp: "list", cst.Tuple: "tuple", cst.Set: "set", cst.SetComp: "set",
                 cst.Dict: "dict", cst.DictComp: "dict"}  # the builtin each display or comprehension builds


def is_stable(node: cst.CSTNode) -> bool:
    """A name, a literal, or an attribute chain on a name: evaluating it twice is harmless."""
    if isinstance(node, cst.Attribute):
        return is_stable(node.value)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float))


# -- statements and definitions -----------------------------------------------------------------

def is_docstring(stmt: cst.CSTNode, *, concatenated: bool = True) -> bool:
    """A line holding just a string literal. `concatenated`: implicitly concatenated literals
    ("a" "b") count too; the X and D operators have only ever counted a single literal."""
    kinds = (cst.SimpleString, cst.ConcatenatedString) if concatenated else cst.SimpleString
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, kinds))


def is_import(stmt: cst.CSTNode) -> bool:
    """A line of imports only."""
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def after_docstring(body: Sequence[cst.CSTNode], *, concatenated: bool = True) -> int:
    """The index of the first statement of `body` after its docstring, if it has one."""
    return 1 if body and is_docstring(body[0], concatenated=concatenated) else 0


@lru_cache(maxsize=2048)  # nodes hash by identity; walking a body again costs
def body_nodes(fn: cst.FunctionDef) -> tuple[cst.CSTNode, ...]:
    """Every node of `fn`'s body, nested defs, classes and lambdas excluded (not in source order)."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = children(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        found.append(node)
        stack.extend(children(node))
    return tuple(found)


def method_of(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    """The def `name` directly in the body of `cls`."""
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def class_body_names(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds with defs, classes and plain assignment lines."""
    bound = {s.name.value for s in cls.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            bound.update(n.value for t in m.findall(stmt, m.AssignTarget()) for n in m.findall(t, m.Name()))
    return bound


# -- names ---------------------------------------------------------------------------------------

SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)  # expressions with their own scope


def names(node: cst.CSTNode | list) -> list[cst.Name]:  # type: ignore[type-arg]
    """The Name nodes that stand for variables: not attribute names, not keyword-argument labels."""
    skip: set[int] = set()
    found: list[cst.Name] = []
    for n in nodes(node):
        if isinstance(n, cst.Attribute):
            skip.add(id(n.attr))
        elif isinstance(n, cst.Arg) and n.keyword is not None:
            skip.add(id(n.keyword))
        elif isinstance(n, cst.Name) and id(n) not in skip:
            found.append(n)
    return found


def mentions(node: cst.CSTNode, *spellings: str) -> bool:
    """Does `node` contain a Name spelled as one of `spellings`?"""
    wanted = frozenset(spellings)
    return bool(m.findall(node, m.Name(value=m.MatchIfTrue(lambda v: v in wanted))))


def attribute_reads(fn: cst.FunctionDef, receiver: str) -> set[str]:
    """The attributes `fn`'s own body reads (or writes) on the name `receiver`."""
    return {n.attr.value for n in body_nodes(fn) if m.matches(n, m.Attribute(m.Name(receiver), m.Name()))}


def bound_names(node: cst.CSTNode | list, *, scopes: bool = True) -> set[str]:  # type: ignore[type-arg]
    """Names that `node` binds; with scopes=False, not those of nested lambdas, comprehensions or functions."""
    found: set[str] = set()
    hidden: set[int] = set()
    for n in nodes(node):
        if id(n) in hidden:
            continue
        found |= binds(n)
        if not scopes and isinstance(n, (*SCOPES, cst.FunctionDef, cst.ClassDef)):
            hidden |= {id(c) for c in nodes(n)} - {id(n)}
    return found


def binds(n: cst.CSTNode) -> set[str]:
    """The names that node `n` itself binds (not its descendants)."""
    if type(n) not in _BINDERS:
        return set()
    targets: list[cst.BaseExpression] = []
    if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        targets.append(n.target)
    elif isinstance(n, cst.AsName):
        targets.append(n.name)  # type: ignore[arg-type]
    elif isinstance(n, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        targets.append(n.name)
    elif isinstance(n, (cst.Global, cst.Nonlocal)):
        targets.extend(item.name for item in n.names)
    elif isinstance(n, cst.ImportAlias) and n.asname is None:
        return {code(n.name).split(".")[0]}
    return {t.value for target in targets for t in (target_names(target) or [])}


_BINDERS = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName,
                      cst.Param, cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal, cst.ImportAlias})


def target_names(target: cst.BaseExpression) -> list[cst.Name] | None:
    """The names an assignment target binds; None when it also stores into attributes or items."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        found: list[cst.Name] = []
        for element in target.elements:
            inner = target_names(element.value)
            if inner is None:
                return None
            found += inner
        return found
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return None


def names_in_target(target: cst.CSTNode | None) -> list[str]:
    """The names a binding target (or `as` clause) binds, passing over the attributes and items it stores into."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in names_in_target(e.value)]
    if isinstance(target, cst.StarredElement):
        return names_in_target(target.value)
    if isinstance(target, cst.AsName):
        return names_in_target(target.name)
    return []
