"""X: inlining and outlining helpers of the compiled region.

InlineHelper replaces a call of a small helper function or method by its body (return
expression, straight-line statements); OutlineHelper moves a run of statements or an
expression into a new module-level helper. Both check which names the moved code reads
and binds, so that no name is captured, shadowed or left unbound.
"""

from __future__ import annotations

import random

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operators._region import RegionOperator
from mutator.mutation.operators._templates import paren
from mutator.mutation.tree import (
    after_docstring,
    binds,
    bound_names,
    children,
    code,
    is_docstring,
    names,
    nodes,
    target_names,
)


class InlineHelper(RegionOperator):
    family = "X"
    name = "inline_helper"
    DESCRIPTION = "Inline a call of a small helper function or method of the region (return expression, straight-line body)."

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self._prelude: tuple[int, list[cst.BaseStatement]] | None = None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        plan = self._plan(original_node)
        if plan is None or not self.is_site(original_node):
            return updated_node
        helper, binding, stmt = plan
        mapping: dict[str, cst.BaseExpression] = {}
        prelude: list[cst.BaseStatement] = []
        assigned = _assigned_in(helper.body)
        for param, arg in binding:
            if _atom(arg) and param not in assigned:
                mapping[param] = arg
            else:  # evaluate once, in argument order, before the statement
                temp = self.fresh(param)
                prelude.append(cst.parse_statement(f"{temp} = {code(arg)}\n"))
                mapping[param] = cst.Name(temp)
        for local in sorted(assigned - set(mapping)):
            mapping[local] = cst.Name(self.fresh(local))
        steps, returned = _inline_parts(helper)  # type: ignore[misc]
        prelude += [s.visit(_Substitute(mapping)) for s in steps]  # type: ignore[misc]
        result = returned.visit(_Substitute(mapping))
        if prelude:
            assert stmt is not None
            self._prelude = (id(stmt), prelude)
        if original_node.lpar:
            return result.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)
        return paren(result)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        if self._prelude and self._prelude[0] == id(original_node):
            return cst.FlattenSentinel([*self._prelude[1], updated_node])
        return updated_node

    def _plan(self, call: cst.Call):  # type: ignore[no-untyped-def]
        """(helper, [(param, argument)], hoisting statement or None), or None when unsafe."""
        owner = self.map.owner_of(call)
        if owner is None or not self.map.in_body(call):
            return None
        helper, self_arg = self._callee(call, owner)
        parts = _inline_parts(helper) if helper is not None else None
        if parts is None:
            return None
        binding = _bind(helper, call, self_arg)
        if binding is None:
            return None
        assigned = _assigned_in(helper.body)
        stmt = self.map.hoist_point(call)
        needs_hoist = bool(parts[0]) or any(
            not _atom(arg) or param in assigned for param, arg in binding)
        if needs_hoist and stmt is None:
            return None
        params = {p for p, _ in binding}
        free = {n.value for n in names(helper.body)} - params - assigned
        inner = bound_names(helper.body) - assigned  # lambda and comprehension variables
        arg_names = {n.value for _, arg in binding for n in names(arg)}
        if free & self.map.bound(owner) or inner & (params | assigned | arg_names):
            return None  # a caller's local would shadow a global, or a name would be captured
        return helper, binding, stmt

    def _callee(self, call: cst.Call, owner: cst.FunctionDef):  # type: ignore[no-untyped-def]
        if isinstance(call.func, cst.Name):
            fn = self.ctx.top_level(call.func.value)
            return (fn, None) if isinstance(fn, cst.FunctionDef) and fn in self.ctx.region else (None, None)
        if m.matches(call.func, m.Attribute(value=m.Name("self"))) and owner.params.params \
                and owner.params.params[0].name.value == "self":
            method = _plain_method(self.ctx, owner, call.func.attr.value)  # type: ignore[attr-defined]
            return (method, cst.Name("self")) if method is not None else (None, None)
        return None, None


class OutlineHelper(RegionOperator):
    family = "X"
    name = "outline_helper"
    DESCRIPTION = "Move a run of statements or an expression of the region into a new module-level helper function."

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        owner = self.map.owner_of(original_node)
        if owner is None or not self.map.in_body(original_node) or _has(owner, cst.Global, cst.Nonlocal):
            return updated_node
        exprs = (e for e in self._exprs(original_node) if _outline_safe(e))
        runs = (r for r in _runs(original_node) if self._run_plan(owner, original_node, *r))
        if (next(exprs, None) is None and next(runs, None) is None) or not self.is_site(original_node):
            return updated_node
        runs = [r for r in _runs(original_node) if self._run_plan(owner, original_node, *r)]
        exprs = [e for e in self._exprs(original_node) if _outline_safe(e)]
        helper = self.fresh("helper")
        body = list(original_node.body)
        if runs and (not exprs or self.rng.random() < 0.5):
            i, j = self.rng.choice(runs)
            inputs, outputs = self._run_plan(owner, original_node, i, j)  # type: ignore[misc]
            returns = [cst.parse_statement(f"return {', '.join(outputs)}\n")] if outputs else []
            fdef = _function(helper, inputs, [*body[i:j], *returns])
            call = f"{helper}({', '.join(inputs)})"
            stmt = cst.parse_statement(f"{', '.join(outputs)} = {call}\n" if outputs else f"{call}\n")
            body[i:j] = [stmt.with_changes(leading_lines=body[i].leading_lines)]
        else:
            expr = self.rng.choice(exprs)
            local = self.map.bound(owner) - bound_names(expr)  # not the expression's own comprehension variables
            inputs = list(dict.fromkeys(n.value for n in names(expr) if n.value in local))
            returned = code(expr.with_changes(lpar=[], rpar=[]))
            fdef = _function(helper, inputs, [cst.parse_statement(f"return {returned}\n")])
            call = cst.parse_expression(f"{helper}({', '.join(inputs)})").with_changes(lpar=expr.lpar, rpar=expr.rpar)
            k = next(k for k, s in enumerate(body) if any(n is expr for n in nodes(s)))
            body[k] = body[k].deep_replace(expr, call)  # type: ignore[assignment]
        self.add_helper(cst.Module(body=[fdef]).code)
        return original_node.with_changes(body=body)

    def _exprs(self, block: cst.IndentedBlock) -> list[cst.BaseExpression]:
        return [n for s in block.body for n in nodes(s)
                if isinstance(n, (cst.BinaryOperation, cst.Call, cst.Comparison, cst.BooleanOperation, cst.IfExp,
                                  cst.ListComp, cst.DictComp, cst.SetComp))
                and self.map.block_of(n) is block and self.map.in_body(n)]

    def _run_plan(self, owner: cst.FunctionDef, block: cst.IndentedBlock, i: int,
                  j: int) -> tuple[list[str], list[str]] | None:
        """Parameters and returned names for moving block.body[i:j] out, or None when unsafe."""
        run = block.body[i:j]
        if any(not _movable(s) for s in run):
            return None
        local = self.map.bound(owner)
        definite: set[str] = set()
        reads: list[str] = []
        for stmt in run:
            if m.matches(stmt, m.SimpleStatementLine(body=[m.Assign()])):
                assign = stmt.body[0]  # type: ignore[attr-defined]
                used = [n.value for n in names(assign.value)]
                assigned: set[str] = set()
                for target in assign.targets:
                    plain = target_names(target.target)
                    if plain is None:  # stores into attributes or items read the names in the target
                        used += [n.value for n in names(target.target)]
                    else:
                        assigned |= {n.value for n in plain}
                reads += [n for n in used if n not in definite]
                definite |= assigned
            else:
                reads += [n.value for n in names(stmt) if n.value not in definite]
        before = _bound_before(owner, run[0])
        inputs = [n for n in dict.fromkeys(reads) if n in local]
        if any(n not in before for n in inputs):
            return None  # might be unbound when the helper is called (a loop-carried name, say)
        inside = {id(n) for s in run for n in names(s)}
        used_elsewhere = {n.value for n in self.map.names(owner) if id(n) not in inside}
        outputs = sorted((bound_names(run, scopes=False) & used_elsewhere) & local)
        for name in outputs:
            if name not in definite:  # maybe assigned: the helper must start from the current value
                if name not in before:
                    return None
                inputs.append(name)
        return list(dict.fromkeys(inputs)), outputs


# -- helpers of the operators above --------------------------------------------------------------

_FORBIDDEN_NAMES = frozenset({"super", "__class__", "locals", "vars", "dir", "eval", "exec", "globals"})


def _movable(stmt: cst.BaseStatement) -> bool:
    """A statement that can move into a helper: no escaping control flow, no scope tricks."""
    if is_docstring(stmt, concatenated=False) or _has(stmt, cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Del,
                                   cst.NamedExpr, cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.GeneratorExp,
                                   cst.Import, cst.ImportFrom):
        return False
    return _loops_contain_jumps(stmt) and not _scope_sensitive(stmt)


def _outline_safe(expr: cst.BaseExpression) -> bool:
    return not _has(expr, cst.Lambda, cst.GeneratorExp, cst.Yield, cst.Await, cst.NamedExpr) \
        and not _scope_sensitive(expr)


def _scope_sensitive(node: cst.CSTNode) -> bool:
    """Names that mean something else outside their function: super(), locals(), mangled __names."""
    for n in nodes(node):
        if isinstance(n, cst.Name) and (n.value in _FORBIDDEN_NAMES
                                        or (n.value.startswith("__") and not n.value.endswith("__"))):
            return True
    return False


def _loops_contain_jumps(stmt: cst.CSTNode, depth: int = 0) -> bool:
    if isinstance(stmt, (cst.Break, cst.Continue)):
        return depth > 0
    inner = depth + isinstance(stmt, (cst.For, cst.While))
    return all(_loops_contain_jumps(c, inner) for c in children(stmt))


def _runs(block: cst.IndentedBlock) -> list[tuple[int, int]]:
    first = after_docstring(block.body, concatenated=False)
    n = len(block.body)
    return [(i, j) for i in range(first, n) for j in range(i + 1, min(n, i + 3) + 1)]


def _bound_before(owner: cst.FunctionDef, stop: cst.CSTNode) -> set[str]:
    """Names bound in `owner` (its parameters included) textually before `stop`."""
    found = bound_names(owner.params)
    for n in nodes(owner.body):
        if n is stop:
            break
        found |= binds(n)
    return found


def _function(name: str, params: list[str], body: list[cst.BaseStatement]) -> cst.FunctionDef:
    return cst.FunctionDef(cst.Name(name), cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
                           cst.IndentedBlock(body))


def _inline_parts(fn: cst.FunctionDef) -> tuple[list[cst.BaseStatement], cst.BaseExpression] | None:
    """(straight-line statements, result expression) of a small helper, or None when it is not one.

    The helper takes positional parameters (literal defaults allowed); its body is simple
    statements followed by `return <expr>` or by an if/elif chain whose branches all end in
    returns, which becomes a conditional expression.
    """
    p = fn.params
    if fn.decorators or fn.asynchronous or isinstance(p.star_arg, cst.Param) or p.kwonly_params or p.star_kwarg:
        return None
    if any(q.default is not None and not _atom(q.default) for q in (*p.posonly_params, *p.params)):
        return None
    if not isinstance(fn.body, cst.IndentedBlock) or _has(fn.body, cst.Yield, cst.Await, cst.FunctionDef,
                                                          cst.ClassDef, cst.NamedExpr, cst.Global, cst.Nonlocal):
        return None
    if _scope_sensitive(fn.body) or fn.name.value in {n.value for n in names(fn.body)}:
        return None
    body = list(fn.body.body)
    body = body[after_docstring(body, concatenated=False):]
    k = 0
    while k < len(body) and m.matches(body[k], m.SimpleStatementLine(
            body=[m.Assign() | m.AugAssign(target=m.Name()) | m.Expr()])):
        k += 1
    result = _returned(body[k:])
    return (body[:k], result) if result is not None else None


def _returned(stmts: list[cst.BaseStatement]) -> cst.BaseExpression | None:
    """`return e` -> e; `if c: <returns> [else: <returns>] <returns>` -> `a if c else b`."""
    if not stmts:
        return None
    first = stmts[0]
    if m.matches(first, m.SimpleStatementLine(body=[m.Return(value=m.DoesNotMatch(None))])):
        return first.body[0].value  # type: ignore[attr-defined]
    if not isinstance(first, cst.If) or not isinstance(first.body, cst.IndentedBlock):
        return None
    then = _returned(list(first.body.body))
    if isinstance(first.orelse, cst.Else):
        otherwise = _returned(list(first.orelse.body.body))  # type: ignore[attr-defined]
    elif isinstance(first.orelse, cst.If):
        otherwise = _returned([first.orelse, *stmts[1:]])
    else:
        otherwise = _returned(stmts[1:])
    if then is None or otherwise is None:
        return None
    return cst.IfExp(test=paren(first.test), body=paren(then), orelse=paren(otherwise))


def _bind(fn: cst.FunctionDef, call: cst.Call, self_arg: cst.BaseExpression | None):  # type: ignore[no-untyped-def]
    """[(parameter, argument expression)] for this call, or None (star arguments, unknown keywords)."""
    params = [*fn.params.posonly_params, *fn.params.params]
    args: dict[str, cst.BaseExpression] = {}
    order: list[str] = []
    if self_arg is not None:
        if not params:
            return None
        args[params[0].name.value] = self_arg
        order.append(params[0].name.value)
        params = params[1:]
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > len(params):
        return None
    for param, arg in zip(params, positional):
        args[param.name.value] = arg.value
        order.append(param.name.value)
    by_name = {p.name.value: p for p in params}
    for arg in call.args:
        if arg.keyword is not None:
            key = arg.keyword.value
            if key not in by_name or key in args or key in {p.name.value for p in fn.params.posonly_params}:
                return None
            args[key] = arg.value
            order.append(key)
    for param in params:
        if param.name.value not in args:
            if param.default is None:
                return None
            args[param.name.value] = param.default
            order.append(param.name.value)
    return [(name, args[name]) for name in order]


def _plain_method(ctx: MutationContext, owner: cst.FunctionDef, attr: str) -> cst.FunctionDef | None:
    """The undecorated method `attr` of owner's class, when nothing else in the file could shadow it."""
    source = ctx.program.source
    if "setattr(" in source or "__dict__" in source or "MethodType" in source:
        return None
    found: list[cst.CSTNode] = []
    owner_class = None
    for cls in (s for s in ctx.module.body if isinstance(s, cst.ClassDef)):
        for item in cls.body.body:
            if item is owner:
                owner_class = cls
            if isinstance(item, cst.FunctionDef) and item.name.value == attr:
                found.append(item)
            elif attr in bound_names(item, scopes=False) and not isinstance(item, cst.FunctionDef):
                found.append(item)
    method = next((f for f in found if isinstance(f, cst.FunctionDef) and owner_class is not None
                   and any(i is f for i in owner_class.body.body)), None)
    if method is None or len(found) != 1 or not method.params.params:
        return None
    for n in nodes(ctx.module):  # an instance attribute of that name would shadow the method
        if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)) and m.matches(
                n.target, m.Attribute(attr=m.Name(attr))):
            return None
    return method


def _assigned_in(body: cst.CSTNode) -> set[str]:
    return bound_names(body, scopes=False)


class _Substitute(cst.CSTTransformer):
    """Replace variable names by expressions (never attribute names or keyword labels)."""

    def __init__(self, mapping: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.mapping = mapping

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        new = self.mapping.get(original_node.value)
        return paren(new) if new is not None else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword) if original_node.keyword else updated_node


def _has(node: cst.CSTNode | list, *types: type) -> bool:  # type: ignore[type-arg]
    return any(isinstance(n, types) for n in nodes(node))


def _atom(expr: cst.BaseExpression) -> bool:
    """Cheap, effect-free and safe to evaluate twice: a name, a constant, an attribute chain on a name."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Attribute):
        return _atom(expr.value)
    return isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString))
