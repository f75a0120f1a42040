"""E1: context managers.

Also home of the small site-finding helpers the E-family modules share (statement runs
inside function blocks, value statements), so each operator states only its rewrite.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.tree import children

MAX_RUN = 4  # statements moved under one new construct; short runs keep mutants readable


# -- shared site helpers (used by exceptions.py, closures.py, global_state.py) ---------------

class _Fill(cst.CSTTransformer):
    """Replaces placeholder names by expressions and placeholder lines by statements."""

    def __init__(self, parts: dict[str, cst.BaseExpression | Sequence[cst.BaseStatement]]) -> None:
        super().__init__()
        self.parts = parts

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        part = self.parts.get(updated_node.value)
        return part if isinstance(part, cst.BaseExpression) else updated_node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if m.matches(original_node, m.SimpleStatementLine(body=[m.Expr(m.Name())])):
            part = self.parts.get(original_node.body[0].value.value)  # type: ignore[attr-defined]
            if part is not None and not isinstance(part, cst.BaseExpression):
                return cst.FlattenSentinel(list(part))
        return updated_node


def build(code: str, **parts: cst.BaseExpression | Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Parse the template `code`; a Name spelled like a key of `parts` becomes that expression, and a
    line holding just such a name becomes those statements. Program code never goes through text,
    so its own layout (multi-line expressions, comments) cannot break the template's indentation."""
    return list(cst.parse_module(textwrap.dedent(code).strip() + "\n").visit(_Fill(parts)).body)


def is_docstring(stmt: cst.BaseStatement) -> bool:
    return m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())]))


def is_declaration(stmt: cst.BaseStatement) -> bool:
    """`global`/`nonlocal` lines stay where they are: moving them is legal but pointless."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Global, cst.Nonlocal)) for s in stmt.body)


def movable_indices(body: Sequence[cst.BaseStatement]) -> list[int]:
    first = 1 if body and is_docstring(body[0]) else 0
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


def _target_names(target: cst.CSTNode | None) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    if isinstance(target, (cst.StarredElement, cst.AsName)):
        return _target_names(target.value if isinstance(target, cst.StarredElement) else target.name)
    return set()  # attributes and subscripts bind no name


def bound_names(node: cst.CSTNode) -> set[str]:
    """Every name `node` binds anywhere inside it: parameters, assignment, loop, with, except and
    import targets, definitions (an over-approximation of its scopes' bindings, which is what a
    check for shadowed builtins wants)."""
    names: set[str] = set()
    for found in m.findall(node, m.Param() | m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For()
                           | m.CompFor() | m.WithItem() | m.ExceptHandler() | m.NamedExpr()
                           | m.FunctionDef() | m.ClassDef() | m.Import() | m.ImportFrom()):
        if isinstance(found, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            names.add(found.name.value)
        elif isinstance(found, cst.Import):  # `import os` binds os to os itself: only `as` renames count
            names |= {n for alias in found.names for n in _target_names(alias.asname)}
        elif isinstance(found, cst.ImportFrom):
            if not isinstance(found.names, cst.ImportStar):
                names |= {n for alias in found.names
                          for n in (_target_names(alias.asname) or {cst.Module([]).code_for_node(alias.name)})}
        elif isinstance(found, cst.WithItem):
            names |= _target_names(found.asname)
        elif isinstance(found, cst.ExceptHandler):
            names |= _target_names(found.name)
        else:
            names |= _target_names(found.target)  # type: ignore[attr-defined]
    return names


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


def mentions(node: cst.CSTNode, *names: str) -> bool:
    """Does `node` contain a Name spelled as one of `names`?"""
    wanted = frozenset(names)
    return bool(m.findall(node, m.Name(value=m.MatchIfTrue(lambda v: v in wanted))))


UNMOVABLE_EXPR = m.Yield() | m.Await() | m.NamedExpr()  # change meaning when moved into a new function


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

    def with_code(self, code: str) -> cst.SimpleStatementLine:
        """This statement with its value replaced by the expression `code`, for use inside a new
        block (its leading comments stay at the site: see ValueOperator)."""
        return self.with_value(cst.parse_expression(code)).with_changes(leading_lines=())


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


def record(op: Operator, base: str) -> str:
    """A fresh module-level dict the mutant records what ran in, idempotently (`LOG["finally"] = True`).

    Globals are compared after every call, so the record is observed; and because it stops
    growing after the first call, Dynamo's guards on it stay valid (a list appended to on every
    call would make every call recompile, a recompile storm of our own making)."""
    name = op.fresh(base)
    op.add_helper(f"{name} = {{}}")
    return name


class BlockOperator(Operator):
    """Base for operators whose sites are blocks, or statements of blocks, of functions in the region."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._scopes = FunctionScopes.of(self.ctx.module)
        self._module_bound = {n for stmt in self.ctx.module.body for n in (
            {stmt.name.value} if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else bound_names(stmt))}
        self._clean: dict[int, bool] = {}

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
                (bound_names(function) | self._module_bound) & TEMPLATE_NAMES)
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


# -- context managers the region can be put under ----------------------------------------------

GRAD_MODES = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)",
              "torch.set_grad_enabled(True)", "torch.inference_mode()")
AUTOCASTS = ('torch.autocast("cpu", dtype=torch.bfloat16)', 'torch.autocast("cpu", enabled=False)',
             'torch.autocast("cpu", dtype=torch.float16)', 'torch.autocast(device_type="cpu")',
             'torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False)')
NULL = "contextlib.nullcontext()"


class WrapInGradMode(WrapRun):
    family = "E1"
    name = "wrap_in_grad_mode"
    DESCRIPTION = ("Put a run of statements of the compiled region under no_grad, enable_grad, "
                   "set_grad_enabled(b) or inference_mode.")

    def header(self) -> str:
        # inference_mode makes inference tensors that later autograd ops reject: rarer on purpose
        return self.rng.choice(GRAD_MODES[:4] * 2 + GRAD_MODES[4:])


class WrapInAutocast(WrapRun):
    family = "E1"
    name = "wrap_in_autocast"
    DESCRIPTION = "Put a run of statements of the compiled region under CPU autocast (bfloat16, float16 or disabled)."

    def header(self) -> str:
        return self.rng.choice(AUTOCASTS)


class WrapInUserContext(WrapRun):
    family = "E1"
    name = "wrap_in_user_context"
    DESCRIPTION = ("Put a run of statements under a user context manager (an __enter__/__exit__ class or a "
                   "@contextlib.contextmanager generator) that records enter and exit in a module global.")

    def header(self) -> str:
        log, kind = record(self, "CONTEXT_EVENTS"), self.rng.choice(("class", "generator", "instance"))
        if kind == "generator":
            helper = self.fresh("recorded")
            self.add_import("contextlib")
            self.add_helper(f"""
                @contextlib.contextmanager
                def {helper}(tag):
                    {log}["open:" + tag] = len({log})
                    try:
                        yield len({log})
                    finally:
                        {log}["close:" + tag] = len({log})
            """)
            return f'{helper}("{self.rng.choice(("a", "b", "inner"))}")'
        cls = self.fresh("Recorder")
        self.add_helper(f"""
            class {cls}:
                def __init__(self, tag):
                    self.tag = tag
                    self.depth = 0

                def __enter__(self):
                    self.depth += 1
                    {log}["enter:" + self.tag] = self.depth
                    return self

                def __exit__(self, exc_type, exc, tb):
                    {log}["exit:" + self.tag] = (self.depth, exc_type is None)
                    self.depth -= 1
                    return False
        """)
        if kind == "class":
            return f'{cls}("local")'
        instance = self.fresh("RECORDER")  # a module-level instance: its attributes are global state too
        self.add_helper(f'{instance} = {cls}("global")')
        return instance


class WrapInExitStack(WrapRun):
    family = "E1"
    name = "wrap_in_exit_stack"
    DESCRIPTION = ("Put a run of statements under a contextlib.ExitStack that enters a grad-mode, autocast or "
                   "null context and registers a logging callback.")

    def wrap(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        self.add_import("torch")
        self.add_import("contextlib")
        stack, log = self.fresh("stack"), record(self, "EXIT_LOG")
        inner = self.rng.choice((*GRAD_MODES[:4], *AUTOCASTS[:2], NULL))
        setup = [f"{stack}.enter_context({inner})", f'{stack}.callback({log}.__setitem__, "callback", len({log}))']
        if self.rng.random() < 0.5:
            setup.reverse()  # callbacks and contexts unwind in reverse order of registration
        return build(f"with contextlib.ExitStack() as {stack}:\n    {setup[0]}\n    {setup[1]}\n    RUN", RUN=run)


class WrapInTorchFunctionMode(WrapRun):
    family = "E1"
    name = "wrap_in_torch_function_mode"
    DESCRIPTION = ("Put a run of statements under a user TorchFunctionMode that records the torch functions "
                   "it sees and optionally rescales the results of additions.")

    def header(self) -> str:
        cls, seen = self.fresh("RecordingMode"), record(self, "MODE_SEEN")
        self.add_import("torch")
        scale = self.rng.choice((None, "0.5", "2.0"))
        rescale = "" if scale is None else (
            "        if func in (torch.add, torch.Tensor.add, torch.Tensor.__add__):\n"
            f"            out = out * {scale}\n")
        self.add_helper(
            f"class {cls}(torch.overrides.TorchFunctionMode):\n"
            "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
            "        kwargs = kwargs or {}\n"
            '        name = getattr(func, "__name__", "other")\n'
            # eager modes also see tensor property reads (`__get__`), which Dynamo folds away
            '        if name != "__get__":\n'
            f"            {seen}[name] = True\n"
            "        out = func(*args, **kwargs)\n"
            f"{rescale}"
            "        return out\n")
        return f"{cls}()"


class GraphBreakInWith(Operator):
    family = "E1"
    name = "graph_break_in_with"
    DESCRIPTION = "Insert torch._dynamo.graph_break() inside the body of a with block of the compiled region."

    @m.leave(m.With(body=m.IndentedBlock()))
    def break_inside(self, original_node: cst.With, updated_node: cst.With) -> cst.With:
        if not self.is_site(original_node):
            return updated_node
        body = list(updated_node.body.body)
        at = self.rng.randint(1 if is_docstring(body[0]) else 0, len(body))
        if at == len(body) and m.matches(body[-1], m.SimpleStatementLine(body=[m.Return() | m.Raise()])):
            at -= 1  # after a return the break would be dead code
        self.add_import("torch")
        body.insert(at, cst.parse_statement("torch._dynamo.graph_break()\n"))
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


# -- siblings of a context manager the program already uses --------------------------------------

_GRAD_NAMES = {"no_grad", "enable_grad", "set_grad_enabled", "inference_mode"}
_AUTOCAST_NAMES = {"autocast"}
_NULL_NAMES = {"nullcontext"}


def _leaf_name(func: cst.BaseExpression) -> str | None:
    """`torch.no_grad` -> "no_grad"; only torch/contextlib spellings (or bare imported names)."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value in {"torch", "contextlib"}:
            return func.attr.value
    return None


def _kind(call: cst.Call) -> str | None:
    name = _leaf_name(call.func)
    for kind, names in (("grad", _GRAD_NAMES), ("autocast", _AUTOCAST_NAMES), ("null", _NULL_NAMES)):
        if name in names:
            return kind
    return None


CONTEXT_CALL = m.Call(func=m.MatchIfTrue(lambda f: _leaf_name(f) in _GRAD_NAMES | _AUTOCAST_NAMES | _NULL_NAMES))


class ContextSibling(Operator):
    family = "E1"
    name = "context_sibling"
    DESCRIPTION = ("Replace a context manager the program uses by a sibling (no_grad, enable_grad, "
                   "set_grad_enabled, inference_mode, nullcontext, autocast on/off/other dtype).")
    TARGET = "anywhere"  # the region's own contexts and those the driver calls the region under

    SIBLINGS: ClassVar[dict[str, tuple[str, ...]]] = {
        "grad": (*GRAD_MODES, NULL),
        "autocast": (*AUTOCASTS, NULL),
        "null": (*GRAD_MODES[:4], *AUTOCASTS[:2]),
    }

    # a context manager is a with item or an ExitStack.enter_context argument; `with ... as v`
    # is left alone because the siblings' __enter__ return different things
    @m.call_if_not_inside(m.Decorator())
    @m.leave(m.WithItem(item=CONTEXT_CALL, asname=None) | m.Arg(value=CONTEXT_CALL))
    def swap(self, original_node: cst.WithItem | cst.Arg, updated_node: cst.WithItem | cst.Arg
             ) -> cst.WithItem | cst.Arg:
        if isinstance(original_node, cst.Arg) and id(original_node) not in self._entered:
            return updated_node
        if not (self.ctx.in_target(original_node, "region") or self.ctx.in_target(original_node, "driver")):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        call = original_node.item if isinstance(original_node, cst.WithItem) else original_node.value
        current = cst.Module([]).code_for_node(call)
        options = [c for c in self._options(call) if c != current]
        replacement = self.rng.choice(options)
        self.add_import("torch")
        if replacement == NULL:
            self.add_import("contextlib")
        new = cst.parse_expression(replacement)
        return (updated_node.with_changes(item=new) if isinstance(updated_node, cst.WithItem)
                else updated_node.with_changes(value=new))

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._entered: set[int] = set()  # ids of the arguments of `stack.enter_context(...)` calls

    def visit_Call(self, node: cst.Call) -> None:
        if m.matches(node.func, m.Attribute(attr=m.Name("enter_context"))) and len(node.args) == 1:
            self._entered.add(id(node.args[0]))

    def _options(self, call: cst.Call) -> list[str]:
        options = list(self.SIBLINGS[_kind(call) or "null"])
        if _leaf_name(call.func) == "set_grad_enabled" and call.args and \
                not m.matches(call.args[0].value, m.Name("True") | m.Name("False")):
            flag = cst.Module([]).code_for_node(call.args[0].value)
            options.append(f"torch.set_grad_enabled(not {flag})")  # keep it data-dependent
        return options
