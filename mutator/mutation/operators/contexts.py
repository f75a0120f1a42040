"""E1: context managers.

Region code runs under grad modes, autocast, user context managers (classes, generators,
module-level instances), ExitStacks and TorchFunctionModes; a graph break lands inside a
with block; a context manager the program already uses is swapped for a sibling.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._blocks import WrapRun
from mutator.mutation.operators._templates import build, record
from mutator.mutation.tree import after_docstring, code

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
        at = self.rng.randint(after_docstring(body), len(body))
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
        current = code(call)
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
            flag = code(call.args[0].value)
            options.append(f"torch.set_grad_enabled(not {flag})")  # keep it data-dependent
        return options
