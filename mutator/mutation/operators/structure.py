"""X: generic structural operators (graph breaks, helpers, repeated and stacked calls, compile options).

The tree queries at the end of this module (`RegionMap`, `names`, `bound_names`, `pure`, ...)
are shared with `others.py`: they answer "which names does this code read or bind" and
"where does this node sit in the compiled region", which several operators need to stay
correct when they move code around.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Iterator
from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.tree import children as _children
from mutator.mutation.tree import nodes


class InsertGraphBreak(Operator):
    family = "X"
    name = "insert_graph_break"
    DESCRIPTION = "Insert torch._dynamo.graph_break() between two statements of the compiled region."

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not self.is_site(original_node):
            return updated_node
        body = list(updated_node.body)
        first = 1 if _is_docstring(body[0]) else 0
        at = self.rng.randint(first, max(first, len(body) - 1))
        self.add_import("torch")
        body.insert(at, cst.parse_statement("torch._dynamo.graph_break()\n"))
        return updated_node.with_changes(body=body)


class InlineHelper(Operator):
    family = "X"
    name = "inline_helper"
    DESCRIPTION = "Inline a call of a small helper function or method of the region (return expression, straight-line body)."

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.map = RegionMap.of(ctx)
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


class OutlineHelper(Operator):
    family = "X"
    name = "outline_helper"
    DESCRIPTION = "Move a run of statements or an expression of the region into a new module-level helper function."

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.map = RegionMap.of(ctx)

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
                    plain = _target_names(target.target)
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


class DuplicateCall(Operator):
    family = "X"
    name = "duplicate_call"
    DESCRIPTION = "Evaluate a side-effect-free-looking call or arithmetic of the region twice; use the second result."

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.map = RegionMap.of(ctx)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self._candidate(original_node) or not self.is_site(original_node):
            return updated_node
        forms = ["twice"] + (["tuple", "lambda"] if pure(original_node) else [])
        form = self.rng.choice(forms)
        if form == "twice":
            helper = self.fresh("call_twice")
            self.add_helper(f"""
                def {helper}(callee, /, *args, **kwargs):
                    callee(*args, **kwargs)
                    return callee(*args, **kwargs)
            """)
            args = [cst.Arg(original_node.func), *(a.with_changes(value=paren(a.value)) for a in original_node.args)]
            return cst.Call(cst.Name(helper), args=args, lpar=original_node.lpar, rpar=original_node.rpar)
        return self._twice(original_node, form)

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation,
                              updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        if not (self.map.in_body(original_node) and pure(original_node)) or not self.is_site(original_node):
            return updated_node
        return self._twice(original_node, self.rng.choice(["tuple", "lambda"]))

    def _candidate(self, call: cst.Call) -> bool:
        parent = self.map.parent.get(id(call))
        return (self.map.in_body(call) and not isinstance(parent, (cst.Expr, cst.WithItem))
                and pure(call.func) and not _effectful(call) and not any(_one_shot(a.value) for a in call.args))

    def _twice(self, expr: cst.BaseExpression, form: str) -> cst.BaseExpression:
        text = code(expr.with_changes(lpar=[], rpar=[]))
        if form == "tuple":
            return cst.parse_expression(f"({text}, {text})[1]")
        return cst.parse_expression(f"(lambda first, second: second)({text}, {text})")


class StackCompiledCall(Operator):
    family = "X"
    name = "stack_compiled_call"
    DESCRIPTION = "Call the compiled function once more in the driver; include the result in what it returns or prints."
    TARGET = "anywhere"  # the driver, or the module itself when a harness has no drive()

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        drive = ctx.top_level("drive") if ctx.is_harness else None
        self.drive = drive if isinstance(drive, cst.FunctionDef) and drive.params.params else None
        self.drive_blocks = _own_blocks(self.drive) if self.drive is not None else set()
        self.compiled = set() if ctx.is_harness else _compiled_names(ctx.module)
        self.extras: str | None = None

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self.ctx.is_harness and self.drive is None and self.ctx.top_level("drive") is None \
                and self.is_site(original_node):
            self.append_to_module("""
                def drive(f):
                    first = f(*inputs())
                    return first, f(*inputs())
            """)
        return updated_node

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if id(original_node) not in self.drive_blocks or not self.is_site(original_node):
            return updated_node
        assert self.drive is not None
        f = self.drive.params.params[0].name.value
        self.extras = self.fresh("extra_calls")
        body = list(updated_node.body)
        first = 1 if _is_docstring(body[0]) else 0
        last = next((k for k, s in enumerate(body) if _terminal(s)), len(body))
        at = self.rng.randint(first, max(first, last))
        call = f"{f}(*inputs())"
        previous = body[at - 1] if at > first else None
        earlier = _calls_to(previous, {f}) if isinstance(previous, cst.SimpleStatementLine) else []
        if earlier and self.rng.random() < 0.5:
            call = code(self.rng.choice(earlier))
        body.insert(at, cst.parse_statement(f"{self.extras}.append({call})\n"))
        return updated_node.with_changes(body=body)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node is not self.drive or self.extras is None:
            return updated_node
        body = updated_node.body.visit(_ReturnAlso(self.extras))
        stmts = list(body.body)  # type: ignore[attr-defined]
        at = 1 if _is_docstring(stmts[0]) else 0
        while at < len(stmts) and m.matches(stmts[at], m.SimpleStatementLine(body=[m.Global()])):
            at += 1
        stmts.insert(at, cst.parse_statement(f"{self.extras} = []\n"))
        if not _terminal(stmts[-1]):
            stmts.append(cst.parse_statement(f"return {self.extras}\n"))
        return updated_node.with_changes(body=body.with_changes(body=stmts))  # type: ignore[attr-defined]

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        if self.ctx.is_harness or not self.ctx.in_target(original_node, "driver"):
            return updated_node
        calls = _calls_to(original_node, self.compiled)
        if not calls or not self.is_site(original_node):
            return updated_node
        if self.rng.random() < 0.5:
            again = cst.parse_statement(f"print({code(self.rng.choice(calls))})\n")
        else:
            again = updated_node.with_changes(leading_lines=[])
        return cst.FlattenSentinel([updated_node, again])


class _ToggleCompileOption(Operator):
    """Flip or add one torch.compile option: COMPILE_KWARGS in a harness, the call or decorator in a script."""

    TARGET = "anywhere"  # COMPILE_KWARGS and compile decorators are neither region nor driver
    KEY: ClassVar[str]
    OPTIMIZE_KEY: ClassVar[str]  # the same option for torch._dynamo.optimize
    DEFAULT: ClassVar[str]
    CHOICES: ClassVar[tuple[str, ...]]

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.kwargs = _compile_kwargs(ctx) if ctx.is_harness else None

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self.ctx.is_harness and self.ctx.top_level("COMPILE_KWARGS") is None and self.is_site(original_node):
            self.append_to_module(f'COMPILE_KWARGS = {{"{self.KEY}": {self._new(self.DEFAULT)}}}')
        return updated_node

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.Dict:
        if original_node is not self.kwargs or not self.is_site(original_node):
            return updated_node
        elements = list(updated_node.elements)
        for k, element in enumerate(elements):
            if isinstance(element, cst.DictElement) and m.matches(element.key, m.SimpleString()) \
                    and element.key.evaluated_value == self.KEY:  # type: ignore[attr-defined]
                elements[k] = element.with_changes(value=cst.Name(self._new(code(element.value))))
                return updated_node.with_changes(elements=elements)
        elements.append(cst.DictElement(cst.SimpleString(f'"{self.KEY}"'), cst.Name(self._new(self.DEFAULT))))
        return updated_node.with_changes(elements=elements)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        key = _compile_key(original_node.func, self.KEY, self.OPTIMIZE_KEY)
        if self.ctx.is_harness or key is None or not self.is_site(original_node):
            return updated_node
        args = list(updated_node.args)
        for k, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == key:
                args[k] = arg.with_changes(value=cst.Name(self._new(code(arg.value))))
                return updated_node.with_changes(args=args)
        return updated_node.with_changes(args=[*args, _keyword(key, self._new(self.DEFAULT))])

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator) -> cst.Decorator:
        if self.ctx.is_harness or not m.matches(original_node.decorator, _TORCH_COMPILE) \
                or not self.is_site(original_node):
            return updated_node
        return updated_node.with_changes(
            decorator=cst.Call(updated_node.decorator, args=[_keyword(self.KEY, self._new(self.DEFAULT))]))

    def _new(self, current: str) -> str:
        return self.rng.choice([v for v in self.CHOICES if v != current] or list(self.CHOICES))


class ToggleFullgraph(_ToggleCompileOption):
    family = "X"
    name = "toggle_fullgraph"
    DESCRIPTION = "Flip or add fullgraph=True/False in COMPILE_KWARGS (harness) or torch.compile (script)."
    KEY, OPTIMIZE_KEY, DEFAULT, CHOICES = "fullgraph", "nopython", "False", ("True", "False")


class ToggleDynamic(_ToggleCompileOption):
    family = "X"
    name = "toggle_dynamic"
    DESCRIPTION = "Set dynamic=True/False/None anew in COMPILE_KWARGS (harness) or torch.compile (script)."
    KEY, OPTIMIZE_KEY, DEFAULT, CHOICES = "dynamic", "dynamic", "None", ("True", "False", "None")


# -- helpers of the operators above --------------------------------------------------------------

_TORCH_COMPILE = m.Attribute(value=m.Name("torch"), attr=m.Name("compile"))
_OPTIMIZE = m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("_dynamo")), attr=m.Name("optimize"))
_FORBIDDEN_NAMES = frozenset({"super", "__class__", "locals", "vars", "dir", "eval", "exec", "globals"})


def _compile_key(func: cst.BaseExpression, key: str, optimize_key: str) -> str | None:
    if m.matches(func, _TORCH_COMPILE):
        return key
    return optimize_key if m.matches(func, _OPTIMIZE) else None


def _keyword(key: str, value: str) -> cst.Arg:
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(cst.Name(value), keyword=cst.Name(key), equal=cst.AssignEqual(no_space, no_space))


def _compile_kwargs(ctx: MutationContext) -> cst.Dict | None:
    stmt = ctx.top_level("COMPILE_KWARGS")
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Dict):
                return small.value
    return None


def _compiled_names(module: cst.Module) -> set[str]:
    """Names a script binds to compiled callables: decorated functions and torch.compile(...) results."""
    found: set[str] = set()
    for node in nodes(module):
        compiled = _TORCH_COMPILE | m.Call(func=_TORCH_COMPILE | _OPTIMIZE)
        if isinstance(node, cst.FunctionDef) and any(m.matches(d.decorator, compiled) for d in node.decorators):
            found.add(node.name.value)
        elif isinstance(node, cst.Assign) and m.matches(
                node.value, m.Call(func=_TORCH_COMPILE) | m.Call(func=m.Call(func=_OPTIMIZE))):
            found |= {n.value for t in node.targets for n in _target_names(t.target) or []}
    return found


def _calls_to(node: cst.CSTNode, callees: set[str]) -> list[cst.Call]:
    """Calls of `callees` in node, outside lambdas and comprehensions (their arguments are bound here)."""
    scoped = {id(n) for s in nodes(node) if isinstance(s, _SCOPES) for n in nodes(s)}
    return [n for n in nodes(node) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
            and n.func.value in callees and id(n) not in scoped]


class _ReturnAlso(cst.CSTTransformer):
    """`return X` -> `return X, extras` in one function body (not in nested functions)."""

    def __init__(self, extras: str) -> None:
        super().__init__()
        self.extras = extras

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        value = f"{code(paren(original_node.value))}, {self.extras}" if original_node.value else self.extras
        return updated_node.with_changes(value=cst.parse_expression(value))


def _own_blocks(fn: cst.FunctionDef) -> set[int]:
    """ids of the indented blocks of fn's body, not those of functions nested in it."""
    nested = {id(b) for d in nodes(fn.body) if isinstance(d, cst.FunctionDef) for b in nodes(d.body)}
    return {id(b) for b in nodes(fn.body) if isinstance(b, cst.IndentedBlock) and id(b) not in nested}


def _terminal(stmt: cst.BaseStatement) -> bool:
    return m.matches(stmt, m.SimpleStatementLine(body=[m.Return() | m.Raise() | m.Break() | m.Continue()]))


def _effectful(call: cst.Call) -> bool:
    """Calls that look like they mutate, consume or draw randomness: not repeated."""
    dotted = code(call.func)
    tail = dotted.rsplit(".", 1)[-1]
    return (tail in _EFFECTFUL or (tail.endswith("_") and not tail.endswith("__"))
            or tail.startswith(("rand", "set_", "register_", "manual_seed", "__")) or "random" in dotted)


_EFFECTFUL = frozenset({
    "next", "iter", "print", "input", "open", "setattr", "delattr", "exec", "eval", "super", "globals", "locals",
    "vars", "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
    "discard", "send", "throw", "close", "write", "sort", "reverse", "backward", "step", "zero_grad", "seed",
    "enter_context", "push", "callback", "graph_break", "mark_dynamic", "normal", "bernoulli", "multinomial",
    "dropout", "uniform", "store", "apply", "record", "islice",
})


def _one_shot(expr: cst.BaseExpression) -> bool:
    """An argument that the first of two calls would use up: a generator or an iterator."""
    if isinstance(expr, cst.GeneratorExp):
        return True
    if not isinstance(expr, cst.Call):
        return False
    func = code(expr.func)
    return func in {"zip", "map", "filter", "enumerate", "iter", "reversed"} or func.startswith("itertools.")


def _movable(stmt: cst.BaseStatement) -> bool:
    """A statement that can move into a helper: no escaping control flow, no scope tricks."""
    if _is_docstring(stmt) or _has(stmt, cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Del,
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
    return all(_loops_contain_jumps(c, inner) for c in _children(stmt))


def _runs(block: cst.IndentedBlock) -> list[tuple[int, int]]:
    first = 1 if _is_docstring(block.body[0]) else 0
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
    body = body[1:] if body and _is_docstring(body[0]) else body
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


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString))


# -- tree queries, shared with others.py -----------------------------------------------------------

_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_ATOMS = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Call, cst.Subscript,
          cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp,
          cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis)


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


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


def bound_names(node: cst.CSTNode | list, *, scopes: bool = True) -> set[str]:  # type: ignore[type-arg]
    """Names that `node` binds; with scopes=False, not those of nested lambdas, comprehensions or functions."""
    found: set[str] = set()
    hidden: set[int] = set()
    for n in nodes(node):
        if id(n) in hidden:
            continue
        found |= binds(n)
        if not scopes and isinstance(n, (*_SCOPES, cst.FunctionDef, cst.ClassDef)):
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
    return {t.value for target in targets for t in (_target_names(target) or [])}


_BINDERS = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName,
                      cst.Param, cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal, cst.ImportAlias})


def _target_names(target: cst.BaseExpression) -> list[cst.Name] | None:
    """The names an assignment target binds; None when it also stores into attributes or items."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        found: list[cst.Name] = []
        for element in target.elements:
            inner = _target_names(element.value)
            if inner is None:
                return None
            found += inner
        return found
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return None


def _has(node: cst.CSTNode | list, *types: type) -> bool:  # type: ignore[type-arg]
    return any(isinstance(n, types) for n in nodes(node))


def paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr`, parenthesised unless it is an atom (safe to substitute anywhere)."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _atom(expr: cst.BaseExpression) -> bool:
    """Cheap, effect-free and safe to evaluate twice: a name, a constant, an attribute chain on a name."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Attribute):
        return _atom(expr.value)
    return isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString))


_PURE = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
         cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.Tuple,
         cst.List, cst.Set, cst.Dict, cst.Call, cst.Ellipsis, cst.IfExp)


def pure(expr: cst.BaseExpression) -> bool:
    """Looks free of side effects: only reads, arithmetic and calls that do not look like mutation."""
    return all(isinstance(n, _PURE) and not (isinstance(n, cst.Call) and _effectful(n))
               for n in nodes(expr) if isinstance(n, cst.BaseExpression))


class RegionMap:
    """Where nodes of the compiled region sit: parents, the region function, function bodies.

    Built once per context and shared (both passes of `apply`, and every operator using it),
    with per-function caches of the names a region function binds and reads.
    """

    _cache: ClassVar[dict[int, tuple[MutationContext, RegionMap]]] = {}
    _CACHE_SIZE: ClassVar[int] = 16
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def of(cls, ctx: MutationContext) -> RegionMap:
        with cls._lock:
            hit = cls._cache.get(id(ctx))
            if hit is not None and hit[0] is ctx:
                return hit[1]
            if len(cls._cache) >= cls._CACHE_SIZE:
                cls._cache.pop(next(iter(cls._cache)))
            made = cls(ctx)
            cls._cache[id(ctx)] = (ctx, made)  # holding ctx keeps its id from being reused
            return made

    def __init__(self, ctx: MutationContext) -> None:
        self.parent: dict[int, cst.CSTNode] = {}
        self.owner: dict[int, cst.FunctionDef] = {}
        self.body: set[int] = set()
        self._bound: dict[int, set[str]] = {}
        self._names: dict[int, list[cst.Name]] = {}
        for fn in ctx.region:
            for n in nodes(fn):
                self.owner.setdefault(id(n), fn)
                for child in _children(n):
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
            if isinstance(a, (*_SCOPES, cst.IfExp, cst.BooleanOperation)):
                return None
            if isinstance(a, cst.SimpleStatementLine):
                ok = len(a.body) == 1 and isinstance(self.parent.get(id(a)), cst.IndentedBlock)
                return a if ok else None
            if isinstance(a, (cst.BaseCompoundStatement, cst.IndentedBlock)):
                return None
        return None
