"""X: generic structural operators (graph breaks, repeated and stacked calls, compile options).

Inlining and outlining helpers live in inlining.py.
"""

from __future__ import annotations

import random
from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.operators._region import RegionOperator
from mutator.mutation.operators._templates import keyword_arg, paren, rewrite_returns
from mutator.mutation.tree import SCOPES, after_docstring, code, nodes


class InsertGraphBreak(Operator):
    family = "X"
    name = "insert_graph_break"
    DESCRIPTION = "Insert torch._dynamo.graph_break() between two statements of the compiled region."

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not self.is_site(original_node):
            return updated_node
        body = list(updated_node.body)
        first = after_docstring(body, concatenated=False)
        at = self.rng.randint(first, max(first, len(body) - 1))
        self.add_import("torch")
        body.insert(at, cst.parse_statement("torch._dynamo.graph_break()\n"))
        return updated_node.with_changes(body=body)


class DuplicateCall(RegionOperator):
    family = "X"
    name = "duplicate_call"
    DESCRIPTION = "Evaluate a side-effect-free-looking call or arithmetic of the region twice; use the second result."

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
        self.compiled = set() if ctx.is_harness else set(ctx.compiled_names)
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
        first = after_docstring(body, concatenated=False)
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
        extras = self.extras  # `return X` -> `return X, extras`
        body = rewrite_returns(updated_node.body, lambda ret: cst.parse_expression(
            f"{code(paren(ret.value))}, {extras}" if ret.value else extras))
        stmts = list(body.body)  # type: ignore[attr-defined]
        at = after_docstring(stmts, concatenated=False)
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
        return updated_node.with_changes(args=[*args, keyword_arg(key, cst.Name(self._new(self.DEFAULT)))])

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator) -> cst.Decorator:
        if self.ctx.is_harness or not m.matches(original_node.decorator, _TORCH_COMPILE) \
                or not self.is_site(original_node):
            return updated_node
        return updated_node.with_changes(
            decorator=cst.Call(updated_node.decorator, args=[keyword_arg(self.KEY, cst.Name(self._new(self.DEFAULT)))]))

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
def _compile_key(func: cst.BaseExpression, key: str, optimize_key: str) -> str | None:
    if m.matches(func, _TORCH_COMPILE):
        return key
    return optimize_key if m.matches(func, _OPTIMIZE) else None


def _compile_kwargs(ctx: MutationContext) -> cst.Dict | None:
    stmt = ctx.top_level("COMPILE_KWARGS")
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Dict):
                return small.value
    return None


def _calls_to(node: cst.CSTNode, callees: set[str]) -> list[cst.Call]:
    """Calls of `callees` in node, outside lambdas and comprehensions (their arguments are bound here)."""
    scoped = {id(n) for s in nodes(node) if isinstance(s, SCOPES) for n in nodes(s)}
    return [n for n in nodes(node) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
            and n.func.value in callees and id(n) not in scoped]


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


_PURE = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
         cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.Tuple,
         cst.List, cst.Set, cst.Dict, cst.Call, cst.Ellipsis, cst.IfExp)


def pure(expr: cst.BaseExpression) -> bool:
    """Looks free of side effects: only reads, arithmetic and calls that do not look like mutation."""
    return all(isinstance(n, _PURE) and not (isinstance(n, cst.Call) and _effectful(n))
               for n in nodes(expr) if isinstance(n, cst.BaseExpression))
