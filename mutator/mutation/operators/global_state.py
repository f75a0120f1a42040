"""E4: global state and environment.

Two kinds of operator. Some make the compiled region read a piece of global state (a
module global, an environment variable) through a helper and have the driver change it
between calls, so a guard that misses the change shows up as a stale result. Others
change global state inside the region (module counters, the default dtype, grad mode, RNG
state) or reset Dynamo in the driver while compiled functions are live.
"""

from __future__ import annotations

import random
from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.operators._blocks import BlockOperator, ValueOperator, ValueStatement, WrapRun, movable_indices
from mutator.mutation.operators._templates import build
from mutator.mutation.tree import after_docstring, children

LITERAL = m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.List(elements=[]) \
    | m.Dict(elements=[])
EXITS = m.Return() | m.Raise() | m.Break() | m.Continue()


def _exits(run: list[cst.BaseStatement]) -> bool:
    """Might control leave `run` early, skipping a restore placed after it? (Conservative: counts
    the exits of nested loops and functions too.)"""
    return any(m.findall(stmt, EXITS) for stmt in run)


METADATA = frozenset({"dtype", "shape", "device", "requires_grad", "ndim", "is_leaf", "grad_fn", "layout"})
CONVERSIONS = frozenset({"str", "len", "int", "bool", "type", "isinstance", "repr", "tuple", "list", "dict", "id"})
NOT_FLOAT = (LITERAL | m.Comparison() | m.BooleanOperation() | m.UnaryOperation(operator=m.Not())
             | m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in METADATA)))
             | m.Call(func=m.Name(m.MatchIfTrue(lambda n: n in CONVERSIONS))))


def _float_parts(value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, int | None]]:
    """What a float-transforming helper could wrap: the value itself or, for a tuple, one of its
    elements (with its index); expressions that are plainly not floats or float tensors are left out."""
    if isinstance(value, cst.Tuple) and value.elements and not any(
            isinstance(e, cst.StarredElement) for e in value.elements):
        return [(e.value, i) for i, e in enumerate(value.elements) if not m.matches(e.value, NOT_FLOAT)]
    return [] if m.matches(value, NOT_FLOAT) else [(value, None)]


def _wrap_part(op: Operator, site: ValueStatement, helper: str) -> cst.SimpleStatementLine:
    """`site` with `helper(...)` around its value, or around one element of a tuple value."""
    part, index = op.rng.choice(_float_parts(site.written))
    call = cst.Call(cst.Name(helper), [cst.Arg(part)])
    if index is None:
        return site.with_value(call)
    elements = list(site.written.elements)  # type: ignore[attr-defined]
    elements[index] = elements[index].with_changes(value=call)
    return site.with_value(site.written.with_changes(elements=elements))


# -- state read in the region, changed by the driver between calls -------------------------------

class _InsertAfter(cst.CSTTransformer):
    """Inserts statements after given statement lines (by identity)."""

    def __init__(self, after: dict[int, list[cst.BaseStatement]]) -> None:
        super().__init__()
        self.after = after

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        extra = self.after.get(id(original_node))
        return cst.FlattenSentinel([updated_node, *extra]) if extra else updated_node

    def statements(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        """`stmt` with the insertions made, as a list (a top-level line may become several)."""
        if id(stmt) in self.after:
            return [stmt, *self.after[id(stmt)]]
        return [stmt.visit(self)]  # type: ignore[list-item]


def _lines(node: cst.CSTNode) -> list[tuple[cst.SimpleStatementLine, bool]]:
    """The statement lines in `node`, in order, each with whether it is inside a loop; nested
    functions and classes are not descended into."""
    found: list[tuple[cst.SimpleStatementLine, bool]] = []
    stack: list[tuple[cst.CSTNode, bool]] = [(node, False)]
    while stack:
        current, in_loop = stack.pop()
        if isinstance(current, cst.SimpleStatementLine):
            found.append((current, in_loop))
        elif current is node or not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            in_loop = in_loop or isinstance(current, (cst.For, cst.While))
            stack.extend((child, in_loop) for child in reversed(children(current)))
    return found


def driver_call_points(ctx: MutationContext) -> list[cst.SimpleStatementLine]:
    """Lines of the driver that call the compiled callable and are followed by another call (a later
    line, or the same line again in a loop): a change of state placed after one happens between two
    calls. In a harness the compiled callable is drive's parameter."""
    if ctx.is_harness:
        drive = ctx.top_level("drive")
        if not isinstance(drive, cst.FunctionDef) or not drive.params.params:
            return []
        callees, scope = {drive.params.params[0].name.value}, [drive]
    else:
        callees = set(ctx.compiled_names)
        scope = [stmt for stmt in ctx.module.body if ctx.in_target(stmt, "driver")]
    calls = m.Call(func=m.Name(m.MatchIfTrue(lambda n: n in callees)))
    lines = [(line, in_loop, bool(m.findall(line, calls))) for node in scope for line, in_loop in _lines(node)]
    last_call = max((i for i, (_, _, calls_it) in enumerate(lines) if calls_it), default=-1)
    return [line for i, (line, in_loop, calls_it) in enumerate(lines)
            if calls_it and not m.findall(line, m.Return()) and (in_loop or i < last_call)]


class BetweenCalls(ValueOperator):
    """Base: the region applies a helper that reads some state; the driver changes that state.

    Subclasses say how the state is declared (`declare`), read (`helper_body`) and changed
    (`change`). In a harness without drive(f) a drive is created that calls f three times.
    """

    CHANGES: ClassVar[int] = 2

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._values: list[str] = []
        self._global: str | None = None  # a name drive() must declare global
        self._new = self.ctx.is_harness and not isinstance(self.ctx.top_level("drive"), cst.FunctionDef)
        self._points = driver_call_points(self.ctx)  # where the state changes (unless a drive is made)

    def accepts(self, site: ValueStatement) -> bool:
        return bool(_float_parts(site.value)) and (self._new or bool(self._points)) and not self._in_backward(site)

    def _in_backward(self, site: ValueStatement) -> bool:
        """Is the site in a `backward` (of an autograd.Function)? torch.compile traces the backward
        when it compiles the forward, and documents that what the backward reads is baked in then
        ("torch.compile has different autograd semantics"); the driver changes the state right
        after a call, between that call's forward and its `loss.backward()`: documented, not a bug."""
        owner = self._scopes.statements.get(id(site.line))
        return owner is not None and owner.name.value == "backward"

    def no_site_reason(self) -> str:
        if not (self._new or self._points):
            return f"no site for {self.name}: the driver makes no call after which state could change"
        return super().no_site_reason()

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        self.add_import("torch")
        helper = self.fresh(self.HELPER)
        initial, self._values = self.declare()
        self.add_helper(f"def {helper}(v):\n{self.helper_body(initial)}")
        return [_wrap_part(self, site, helper)]

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._values:
            return updated_node
        if self._new:
            self._new_drive()
            return updated_node
        changes = [build(self.change(v)) for v in self._values]
        chosen = sorted(self.rng.sample(range(len(self._points)), min(len(changes), len(self._points))))
        insert = _InsertAfter({id(self._points[i]): change for i, change in zip(chosen, changes)})
        # the region and the driver are disjoint, so the driver's statements are still the original
        # nodes, and the module body still lines up with the original one
        body = [stmt for orig, new in zip(original_node.body, updated_node.body)
                for stmt in (insert.statements(orig) if self.ctx.in_target(orig, "driver") else [new])]
        if self._global:
            body = [_declare_global(stmt, self._global) if _is_drive(stmt) else stmt for stmt in body]
        return updated_node.with_changes(body=body)

    def _new_drive(self) -> None:
        outs = self.fresh("outs")
        lines = ["def drive(f):"]
        if self._global:
            lines.append(f"    global {self._global}")
        lines.append(f"    {outs} = [f(*inputs())]")
        for value in self._values:
            lines += ["    " + line for line in self.change(value).splitlines()]
            lines.append(f"    {outs}.append(f(*inputs()))")
        lines.append(f"    return {outs}")
        self.append_to_module("\n".join(lines))


def _changes(rng: random.Random, initial: str, values: tuple[str, ...], count: int) -> list[str]:
    """`count` values to set one after another, each different from the one before."""
    sequence, previous = [], initial
    for _ in range(count):
        previous = rng.choice([v for v in values if v != previous])
        sequence.append(previous)
    return sequence


def _is_drive(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.FunctionDef) and stmt.name.value == "drive"


def _declare_global(drive: cst.FunctionDef, name: str) -> cst.FunctionDef:
    body = list(drive.body.body)
    at = after_docstring(body)
    body.insert(at, cst.parse_statement(f"global {name}\n"))
    return drive.with_changes(body=drive.body.with_changes(body=body))


KNOBS = {  # kind -> (initial, values the driver sets, how the helper applies it to a float value)
    "scale": ("1.0", ("0.5", "2.0", "-1.0"), "v * {k}"),
    "offset": ("0", ("1", "3", "-2"), "v + {k}"),
    "flag": ("False", ("True", "False"), "-v if {k} else v"),
    "mode": ('"identity"', ('"tanh"', '"square"', '"identity"'),
             'torch.tanh(v) if {k} == "tanh" else v * v if {k} == "square" else v'),
}


class GlobalBetweenCalls(BetweenCalls):
    family = "E4"
    name = "global_between_calls"
    DESCRIPTION = ("Make a value of the compiled region depend on a module global (float, int, bool or str) "
                   "that the driver rebinds between calls.")
    HELPER = "apply_knob"

    def declare(self) -> tuple[str, list[str]]:
        self._kind = self.rng.choice(sorted(KNOBS))
        initial, values, _ = KNOBS[self._kind]
        self._global = self.fresh("KNOB")
        self.add_helper(f"{self._global} = {initial}")
        return initial, _changes(self.rng, initial, values, self.CHANGES)

    def helper_body(self, initial: str) -> str:
        apply = KNOBS[self._kind][2].format(k=self._global)
        float_only = "(torch.Tensor, float)" if self._kind != "mode" else "torch.Tensor"
        return (f"    if isinstance(v, {float_only}) and (isinstance(v, float) or v.is_floating_point()):\n"
                f"        return {apply}\n"
                f"    return v\n")

    def change(self, value: str) -> str:
        return f"{self._global} = {value}"


class EnvironBetweenCalls(BetweenCalls):
    family = "E4"
    name = "environ_between_calls"
    DESCRIPTION = ("Make a value of the compiled region depend on an environment variable read inside it "
                   "(os.environ[...], .get or os.getenv; set at import time or not), which the driver sets "
                   "between calls.")
    HELPER = "apply_env"

    def declare(self) -> tuple[str, list[str]]:
        self.add_import("os")
        self._key = "MUTATOR_" + self.fresh("KNOB").upper()
        self._kind = self.rng.choice(("scale", "switch"))
        initial, values = ("1.0", ("0.5", "2.0", "-1.0")) if self._kind == "scale" else ("off", ("on", "off"))
        # an unset variable (the default is read) and a set one are guarded differently
        reads = [f'os.environ.get("{self._key}", "{initial}")', f'os.getenv("{self._key}", "{initial}")']
        if self.rng.random() < 0.5:
            self.add_helper(f'os.environ["{self._key}"] = "{initial}"')
            reads.append(f'os.environ["{self._key}"]')
        self._read = self.rng.choice(reads)
        return initial, _changes(self.rng, initial, values, self.CHANGES)

    def helper_body(self, initial: str) -> str:
        use = f"v * float({self._read})" if self._kind == "scale" else f'v + 1 if {self._read} == "on" else v'
        return (f"    if isinstance(v, torch.Tensor) and v.is_floating_point():\n"
                f"        return {use}\n"
                f"    return v\n")

    def change(self, value: str) -> str:
        return f'os.environ["{self._key}"] = "{value}"'


# -- state changed inside the region ------------------------------------------------------------

class GlobalCounter(BlockOperator):
    family = "E4"
    name = "global_counter"
    DESCRIPTION = ("Declare a new module global in a function of the compiled region and update it there "
                   "(global N; N += 1).")

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
                          ) -> cst.FunctionDef:
        if not (isinstance(original_node.body, cst.IndentedBlock) and movable_indices(original_node.body.body)
                and self.hosts_code(original_node)):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        counter = self.fresh("COUNTER")
        initial, update = self.rng.choice((
            ("0", f"{counter} += 1"),
            ("0.0", f"{counter} += 0.5"),
            ("()", f"{counter} = {counter} + (len({counter}),)"),
            ("0", f"{counter} = {counter} * 2 + 1"),
        ))
        self.add_helper(f"{counter} = {initial}")
        body = list(updated_node.body.body)
        at = self.rng.choice(movable_indices(body))
        body.insert(at, cst.parse_statement(f"{update}\n"))
        body.insert(after_docstring(body), cst.parse_statement(f"global {counter}\n"))
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


FACTORIES = frozenset({"zeros", "ones", "full", "arange", "linspace", "logspace", "tensor", "rand", "randn",
                       "empty", "eye", "as_tensor", "scalar_tensor", "zeros_like", "ones_like", "randn_like"})
FACTORY_CALL = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(lambda n: n in FACTORIES))))


class DefaultDtypeInRegion(BlockOperator):
    family = "E4"
    name = "default_dtype_in_region"
    DESCRIPTION = ("Switch torch.set_default_dtype (float64, float16 or bfloat16) around a statement of the "
                   "compiled region that calls a tensor factory, restoring it afterwards.")

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if not (self.in_function_body(original_node) and m.findall(original_node, FACTORY_CALL)):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        prev = self.fresh("prev_dtype")
        dtype = self.rng.choice(("float64", "float64", "float16", "bfloat16"))
        head = f"{prev} = torch.get_default_dtype()\ntorch.set_default_dtype(torch.{dtype})\n"
        if _exits([original_node]):
            new = build(head + f"try:\n    STMT\nfinally:\n    torch.set_default_dtype({prev})",
                        STMT=[updated_node.with_changes(leading_lines=())])
        else:
            new = build(head + f"STMT\ntorch.set_default_dtype({prev})",
                        STMT=[updated_node.with_changes(leading_lines=())])
        new[0] = new[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel(new)


class SetGradEnabledInRegion(WrapRun):
    family = "E4"
    name = "set_grad_enabled_in_region"
    DESCRIPTION = ("Toggle grad mode with the function form torch.set_grad_enabled(b) around statements of the "
                   "compiled region, restoring the previous mode afterwards.")

    def wrap(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        self.add_import("torch")
        prev = self.fresh("prev_grad")
        mode = self.rng.choice(("False", "True", f"not {prev}"))
        head = f"{prev} = torch.is_grad_enabled()\ntorch.set_grad_enabled({mode})\n"
        if _exits(run):
            return build(head + f"try:\n    RUN\nfinally:\n    torch.set_grad_enabled({prev})", RUN=run)
        return build(head + f"RUN\ntorch.set_grad_enabled({prev})", RUN=run)


class RngInRegion(ValueOperator):
    family = "E4"
    name = "rng_in_region"
    DESCRIPTION = ("Add noise to a value of the compiled region from the global RNG (after manual_seed, or "
                   "saved and restored with get/set_rng_state) or from a seeded torch.Generator.")

    def accepts(self, site: ValueStatement) -> bool:
        return bool(_float_parts(site.value))

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        self.add_import("torch")
        helper = self.fresh("add_noise")
        source = self.rng.choice(("global", "manual_seed", "generator", "saved_state"))
        seed = self.rng.choice((0, 7, 1234))
        if source == "generator":
            gen = self.fresh("GENERATOR")
            self.add_helper(f"{gen} = torch.Generator().manual_seed({seed})")
            noise = f"torch.rand(v.shape, generator={gen}, dtype=v.dtype)"
        else:
            noise = "torch.rand_like(v)"
        pre = post = ""
        if source == "manual_seed":
            pre = f"        torch.manual_seed({seed})\n"
        elif source == "saved_state":
            pre, post = "        state = torch.get_rng_state()\n", "        torch.set_rng_state(state)\n"
        self.add_helper(
            f"def {helper}(v):\n"
            f"    if isinstance(v, torch.Tensor) and v.is_floating_point():\n"
            f"{pre}        noise = {noise}\n{post}"
            f"        return v + noise * 0.01\n"
            f"    return v\n")
        return [_wrap_part(self, site, helper)]


class DynamoResetBetweenCalls(Operator):
    family = "E4"
    name = "dynamo_reset_between_calls"
    DESCRIPTION = "Call torch._dynamo.reset() in the driver between calls, while the compiled function is live."
    TARGET = "driver"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._points = {id(p) for p in driver_call_points(self.ctx)}

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if id(original_node) not in self._points or not self.is_site(original_node):
            return updated_node
        self.add_import("torch")
        reset = self.rng.choice(("torch._dynamo.reset()", "torch.compiler.reset()"))
        return cst.FlattenSentinel([updated_node, cst.parse_statement(f"{reset}\n")])
