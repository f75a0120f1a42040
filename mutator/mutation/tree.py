"""Fast queries over libcst trees, shared by the framework and the operators.

libcst's `node.children` runs a visitor to find a node's children; reading the dataclass
fields directly is many times faster, which matters when every mutation walks a module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst


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
    """node.children, read straight from the dataclass fields (libcst's property runs a visitor: slow).

    Syntax nodes come in source order; whitespace and bracket tokens may not, which no query here minds.
    """
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


def _is_node(value: object) -> bool:
    """isinstance(value, cst.CSTNode), memoised per type (CSTNode is an ABC: isinstance is slow)."""
    kind = type(value)
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known
