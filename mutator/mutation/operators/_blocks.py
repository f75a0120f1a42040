"""Bases for operators whose sites are blocks and statements of the region's functions (the E families).

`BlockOperator` knows which blocks belong to functions that can host inserted code;
`WrapRun` puts a short run of a block's statements under a new construct; `ValueOperator`
rewrites one value statement (`t = e`, `return e`, ...) into several. Each operator then
states only its rewrite.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.operators._templates import build
from mutator.mutation.tree import after_docstring, children, code, names_in_target, nodes

MAX_RUN = 4  # statements moved under one new construct; short runs keep mutants readable


def is_declaration(stmt: cst.BaseStatement) -> bool:
    """`global`/`nonlocal` lines stay where they are: moving them is legal but pointless."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Global, cst.Nonlocal)) for s in stmt.body)


def movable_indices(body: Sequence[cst.BaseStatement]) -> list[int]:
    first = after_docstring(body)
    return [i for i in range(first, len(body)) if not is_declaration(body[i])]


def pick_run(rng: random.Random, body: Sequence[cst.BaseStatement]) -> tuple[int, int] | None:
    """A short contiguous run [start, stop) of movable statements, or None."""
    movable = movable_indices(body)
    if not movable:
        return None
    start = rng.choice(movable)
    stop = start + 1
    limit = rng.randint(1, MAX_RUN)
    while stop < len(body) and stop - start < limit and stop in movable:
        stop += 1
    return start, stop


# builtins and modules the operators' templates and helpers refer to by name: a program that
# rebinds one of them (a parameter called `len` or `type`, say) would change what they mean
TEMPLATE_NAMES = frozenset({
    "len", "type", "isinstance", "float", "iter", "next", "getattr", "super", "Exception", "ValueError",
    "KeyError", "RuntimeError", "LookupError", "StopIteration", "AttributeError", "TypeError", "IndexError",
    "torch", "functools", "contextlib", "os",
})


TORCH_HANDLERS = frozenset({"__torch_function__", "__torch_dispatch__"})


_BINDERS = (cst.Param, cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem,
            cst.ExceptHandler, cst.NamedExpr, cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom)


def shadowing_names(node: cst.CSTNode) -> set[str]:
    """Every name `node` binds anywhere inside it: parameters, assignment, loop, with, except and
    import targets, definitions (an over-approximation of its scopes' bindings, which is what a
    check for shadowed builtins wants). `import os` binds os to os itself: only `as` renames count."""
    found: set[str] = set()
    for binder in nodes(node):
        if not isinstance(binder, _BINDERS):
            continue
        if isinstance(binder, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            found.add(binder.name.value)
        elif isinstance(binder, cst.Import):
            found.update(n for alias in binder.names for n in names_in_target(alias.asname))
        elif isinstance(binder, cst.ImportFrom):
            if not isinstance(binder.names, cst.ImportStar):
                found.update(n for alias in binder.names
                             for n in (names_in_target(alias.asname) or [code(alias.name)]))
        elif isinstance(binder, cst.WithItem):
            found.update(names_in_target(binder.asname))
        elif isinstance(binder, cst.ExceptHandler):
            found.update(names_in_target(binder.name))
        else:
            found.update(names_in_target(binder.target))  # type: ignore[attr-defined]
    return found


@dataclass
class FunctionScopes:
    """Which blocks and statements belong to functions (not class bodies), and which function owns
    each, so operators can insert code that runs in a function's frame."""

    blocks: dict[int, cst.FunctionDef]  # id(IndentedBlock) -> nearest enclosing function
    statements: dict[int, cst.FunctionDef]  # id(statement directly in such a block) -> that function

    @classmethod
    def of(cls, module: cst.Module) -> FunctionScopes:
        blocks: dict[int, cst.FunctionDef] = {}
        statements: dict[int, cst.FunctionDef] = {}
        stack: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(module, None)]
        while stack:
            node, owner = stack.pop()
            if isinstance(node, cst.FunctionDef):
                owner = node
            elif isinstance(node, cst.ClassDef):
                owner = None
            elif isinstance(node, cst.IndentedBlock) and owner is not None:
                blocks[id(node)] = owner
                statements.update((id(s), owner) for s in node.body)
            stack.extend((child, owner) for child in children(node))
        return cls(blocks, statements)


@dataclass(frozen=True)
class ValueStatement:
    """A one-statement line computing a value: `t = e`, `t += e`, `t: T = e` or `return e`."""

    line: cst.SimpleStatementLine
    value: cst.BaseExpression

    @property
    def written(self) -> cst.BaseExpression:
        """The value as written (`value` adds parentheses to a bare tuple)."""
        return self.line.body[0].value  # type: ignore[attr-defined]

    def with_value(self, value: cst.BaseExpression) -> cst.SimpleStatementLine:
        small = self.line.body[0]
        return self.line.with_changes(body=[small.with_changes(value=value)])

    def with_code(self, source: str) -> cst.SimpleStatementLine:
        """This statement with its value replaced by the expression `source`, for use inside a new
        block (its leading comments stay at the site: see ValueOperator)."""
        return self.with_value(cst.parse_expression(source)).with_changes(leading_lines=())


_PRESENT = m.MatchIfTrue(lambda v: v is not None)
VALUE_LINE = m.SimpleStatementLine(body=[
    m.Assign() | m.AugAssign() | m.AnnAssign(value=_PRESENT) | m.Return(value=_PRESENT)])
TRIVIAL_VALUE = m.Name("None") | m.Ellipsis()


def value_statement(stmt: cst.CSTNode) -> ValueStatement | None:
    """The value statement `stmt` is, if it is one whose value is worth routing somewhere."""
    if not m.matches(stmt, VALUE_LINE):
        return None
    value = stmt.body[0].value  # type: ignore[attr-defined]
    if m.matches(value, TRIVIAL_VALUE):
        return None
    return ValueStatement(stmt, parenthesized(value))  # type: ignore[arg-type]


def parenthesized(value: cst.BaseExpression) -> cst.BaseExpression:
    """`a, b` -> `(a, b)` (likewise yield and walrus), so the value stays one value in any new position."""
    if m.matches(value, m.Tuple() | m.Yield() | m.NamedExpr()) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


def _module_bound(ctx: MutationContext) -> set[str]:
    """Every name the module binds at its top level (and inside its statements)."""
    return {n for stmt in ctx.module.body for n in (
        {stmt.name.value} if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else shadowing_names(stmt))}


class BlockOperator(Operator):
    """Base for operators whose sites are blocks, or statements of blocks, of functions in the region."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._scopes = self.ctx.fact(FunctionScopes, lambda ctx: FunctionScopes.of(ctx.module))
        self._module_bound = self.ctx.fact(_module_bound, _module_bound)
        self._clean: dict[int, bool] = self.ctx.fact(BlockOperator.hosts_code, lambda ctx: {})

    def in_function_block(self, block: cst.CSTNode) -> bool:
        """Is `block` a block of a function that can host inserted code (see `hosts_code`)?"""
        owner = self._scopes.blocks.get(id(block))
        return owner is not None and self.hosts_code(owner)

    def in_function_body(self, stmt: cst.CSTNode) -> bool:
        """Is `stmt` directly inside a (possibly nested) block of such a function?"""
        owner = self._scopes.statements.get(id(stmt))
        return owner is not None and self.hosts_code(owner)

    def hosts_code(self, function: cst.FunctionDef) -> bool:
        """Can our code run in `function`? Not if it or the module rebinds a name our templates rely
        on, nor in a __torch_function__/__torch_dispatch__ handler of a tensor subclass, where one
        more tensor operation would dispatch back into the handler."""
        if id(function) not in self._clean:
            self._clean[id(function)] = function.name.value not in TORCH_HANDLERS and not (
                (shadowing_names(function) | self._module_bound) & TEMPLATE_NAMES)
        return self._clean[id(function)]


class ValueOperator(BlockOperator):
    """Base for operators rewriting one value statement of a region function into several statements."""

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        site = value_statement(original_node)
        if site is None or not self.in_function_body(original_node) or not self.accepts(site):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        new = self.rewrite(value_statement(updated_node))  # type: ignore[arg-type]
        if not new:
            return updated_node
        new[0] = new[0].with_changes(leading_lines=updated_node.leading_lines)  # comments stay on top
        return cst.FlattenSentinel(new)

    def accepts(self, site: ValueStatement) -> bool:
        """Applicability beyond being a value statement (checked while counting)."""
        return True

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        raise NotImplementedError


class WrapRun(BlockOperator):
    """Base: wrap a short run of statements of a region block in `with <self.header()>:`."""

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
                            ) -> cst.IndentedBlock:
        if not (self.in_function_block(original_node) and movable_indices(original_node.body)):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        body = list(updated_node.body)
        start, stop = pick_run(self.rng, body)  # type: ignore[misc]
        return updated_node.with_changes(body=[*body[:start], *self.wrap(body[start:stop]), *body[stop:]])

    def wrap(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        self.add_import("torch")
        return build(f"with {self.header()}:\n    RUN", RUN=run)

    def header(self) -> str:
        raise NotImplementedError
