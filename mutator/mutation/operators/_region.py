"""Where nodes of the compiled region sit: `RegionMap`, and `RegionOperator`, the base of the operators that ask.

The map holds each region node's parent and region function, which nodes are in a
function body, and per-function caches of the names a function binds and reads. The
operators that move or repeat region code (inline, outline, duplicate, the O family)
use it to stay correct.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import libcst as cst

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.tree import SCOPES, bound_names, children, names, nodes


class RegionMap:
    """Where nodes of the compiled region sit: parents, the region function, function bodies.

    Built once per context and shared (both passes of `apply`, and every operator using it),
    with per-function caches of the names a region function binds and reads.
    """

    @classmethod
    def of(cls, ctx: MutationContext) -> RegionMap:
        return ctx.fact(cls, cls)

    def __init__(self, ctx: MutationContext) -> None:
        self.parent: dict[int, cst.CSTNode] = {}
        self.owner: dict[int, cst.FunctionDef] = {}
        self.body: set[int] = set()
        self._bound: dict[int, set[str]] = {}
        self._names: dict[int, list[cst.Name]] = {}
        for fn in ctx.region:
            for n in nodes(fn):
                self.owner.setdefault(id(n), fn)
                for child in children(n):
                    self.parent.setdefault(id(child), n)
            self.body |= {id(n) for n in nodes(fn.body)}

    def bound(self, fn: cst.FunctionDef) -> set[str]:
        """Every name `fn` binds: parameters, locals, and those of its lambdas and comprehensions."""
        if id(fn) not in self._bound:
            self._bound[id(fn)] = bound_names(fn.params) | bound_names(fn.body)
        return self._bound[id(fn)]

    def names(self, fn: cst.FunctionDef) -> list[cst.Name]:
        """The variable names in fn's body, in source order."""
        if id(fn) not in self._names:
            self._names[id(fn)] = names(fn.body)
        return self._names[id(fn)]

    def owner_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return self.owner.get(id(node))

    def in_body(self, node: cst.CSTNode) -> bool:
        return id(node) in self.body

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while id(node) in self.parent:
            node = self.parent[id(node)]
            yield node

    def stored(self, node: cst.CSTNode) -> bool:
        """True when `node` is (part of) an assignment, deletion or loop target."""
        child = node
        for a in self.ancestors(node):
            if isinstance(a, (cst.AssignTarget, cst.Del, cst.AsName)):
                return True
            if isinstance(a, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
                return child is a.target
            if isinstance(a, (cst.BaseSmallStatement, cst.BaseStatement)):
                return False
            child = a
        return False

    def in_fstring(self, node: cst.CSTNode) -> bool:
        return any(isinstance(a, cst.FormattedString) for a in self.ancestors(node))

    def block_of(self, node: cst.CSTNode) -> cst.IndentedBlock | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.IndentedBlock)), None)

    def hoist_point(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The statement line before which code evaluated by `node` can run instead, if any.

        None when `node` is evaluated conditionally or in another scope (inside a lambda,
        comprehension, conditional expression or boolean operator), or in a compound header.
        """
        for a in self.ancestors(node):
            if isinstance(a, (*SCOPES, cst.IfExp, cst.BooleanOperation)):
                return None
            if isinstance(a, cst.SimpleStatementLine):
                ok = len(a.body) == 1 and isinstance(self.parent.get(id(a)), cst.IndentedBlock)
                return a if ok else None
            if isinstance(a, (cst.BaseCompoundStatement, cst.IndentedBlock)):
                return None
        return None


class RegionOperator(Operator):
    """Base for operators that ask where nodes of the region sit (`self.map`)."""

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.map = RegionMap.of(ctx)
