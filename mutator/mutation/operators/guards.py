"""G1, G3: guards (over-specialisation on values, missing guards); G2 lives in shapes.py.

Most of these operators rewrite the driver: guards only matter across calls. `DriverOperator`
adds calls to the compiled callable after the program's own ones, with something changed
between them (a scalar argument, an object, an attribute, grad mode, a parameter). The
program's own calls run first and untouched; drive(f) then returns both results.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.tree import children
from mutator.mutation.operators.side_effects import (
    ProgramFacts,
    TensorFacts,
    code,
    dotted,
    parse_lines,
    statements,
)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.strip("\n").splitlines())


class DriverOperator(Operator):
    """Adds calls to the compiled callable with something changed between them.

    Harness: the site is drive(f), or inputs() when there is no drive (one is then created
    that makes the default single call first). Subclasses implement `extra_calls(f, out)`:
    statements that call `f` and append results to the list `out`; None declines.
    Script: the site is a top-level statement calling a compiled callable; `vary_script`
    returns statements to put before it (typically a varied copy), None declines.
    """

    TARGET = "anywhere"

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)
        drive = ctx.top_level("drive") if ctx.is_harness else None
        self.drive = drive if isinstance(drive, cst.FunctionDef) else None
        self.compiled = _compiled_names(ctx) if not ctx.is_harness else {}
        self._entry_rewrite: tuple[cst.FunctionDef, cst.FunctionDef] | None = None

    # -- for subclasses -------------------------------------------------------------------
    def applicable(self) -> bool:
        """Cheap check before counting a harness site."""
        return True

    def extra_calls(self, f: str, out: str) -> str | None:
        raise NotImplementedError

    def vary_script(self, stmt: cst.SimpleStatementLine, call: cst.Call,
                    entry: cst.FunctionDef | None) -> list[cst.BaseStatement] | None:
        self.decline(f"{self.name} does not vary script programs")
        return None

    def rewrite_entry(self, entry: cst.FunctionDef, new: cst.FunctionDef) -> None:
        """Ask for the compiled entry to be replaced (say, to take a new parameter)."""
        self._entry_rewrite = (entry, new)

    def inputs_call(self) -> str:
        return "inputs()"

    # -- machinery ------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._entry_rewrite is None or self.declined:
            return updated_node
        old, new = self._entry_rewrite
        return updated_node.visit(_Replace(old, new))  # type: ignore[return-value]

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not self.ctx.is_harness or original_node.name.value not in ("drive", "inputs"):
            return updated_node
        is_site = (original_node is self.drive) or (self.drive is None and original_node.name.value == "inputs"
                                                    and self.ctx.top_level("inputs") is original_node)
        if not is_site or not self.applicable() or not self.is_site(original_node):
            return updated_node
        if self.drive is None:
            out = self.fresh("extra")
            extra = self.extra_calls("f", out)
            if extra is None:
                return updated_node
            first = self.fresh("first")
            self.append_to_module(f"def drive(f):\n    {first} = f(*inputs())\n    {out} = []\n"
                                  f"{_indent(extra)}\n    return {first}, {out}")
            return updated_node
        return self._extend_drive(updated_node)

    def _extend_drive(self, drive: cst.FunctionDef) -> cst.FunctionDef:
        returns = [n for n in statements(drive) if isinstance(n, cst.Return)]
        body = list(drive.body.body) if isinstance(drive.body, cst.IndentedBlock) else []
        last = body[-1] if body else None
        if (len(returns) != 1 or not m.matches(last, m.SimpleStatementLine([m.Return()]))
                or last.body[0] is not returns[0] or returns[0].value is None or not drive.params.params):
            self.decline("drive(f) does not end in its only return statement")
            return drive
        f = drive.params.params[0].name.value
        out, result = self.fresh("extra"), self.fresh("result")
        extra = self.extra_calls(f, out)
        if extra is None:
            return drive
        new = parse_lines(f"{result} = {code(returns[0].value)}\n{out} = []\n{extra}\nreturn {result}, {out}")
        return drive.with_changes(body=drive.body.with_changes(body=[*body[:-1], *new]))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        if self.ctx.is_harness or not any(original_node is s for s in self.ctx.module.body):
            return updated_node
        call = next((n for n in _walk_calls(original_node) if dotted(n.func) in self.compiled), None)
        if call is None or not self.is_site(original_node):
            return updated_node
        before = self.vary_script(original_node, call, self.compiled[dotted(call.func)])
        if not before:
            return updated_node
        return cst.FlattenSentinel([*before, updated_node])

    def entry(self) -> cst.FunctionDef | None:
        """The one compiled entry of a harness program."""
        return self.ctx.entries[0] if self.ctx.is_harness and len(self.ctx.entries) == 1 else None


class _Replace(cst.CSTTransformer):
    """Replace the function equal to `old` (the entry may sit before or after the driver)."""

    def __init__(self, old: cst.FunctionDef, new: cst.FunctionDef) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        return self.new if original_node.deep_equals(self.old) else updated_node


def _walk_calls(node: cst.CSTNode) -> list[cst.Call]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            found.append(current)
        if not isinstance(current, cst.Lambda):
            stack.extend(reversed(children(current)))
    return found


def _compiled_names(ctx: MutationContext) -> dict[str, cst.FunctionDef | None]:
    """Script names bound to compiled callables -> the entry they run (None when unknown)."""
    names: dict[str, cst.FunctionDef | None] = {}
    classes = {s.name.value: s for s in ctx.module.body if isinstance(s, cst.ClassDef)}
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.FunctionDef) and any(
                (dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "") == "torch.compile"
                for d in stmt.decorators):
            names[stmt.name.value] = stmt
        elif m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())], m.Call())])):
            assign = stmt.body[0]
            if dotted(assign.value.func) == "torch.compile" and assign.value.args:
                target = assign.value.args[0].value
                entry = None
                if isinstance(target, cst.Name) and isinstance(ctx.top_level(target.value), cst.FunctionDef):
                    entry = ctx.top_level(target.value)
                elif isinstance(target, cst.Call) and isinstance(target.func, cst.Name) and target.func.value in classes:
                    entry = next((e for e in ctx.entries if any(e is i for i in classes[target.func.value].body.body)),
                                 None)
                names[assign.targets[0].target.value] = entry
    return names


def perturb(value: cst.BaseExpression, i: int) -> str | None:
    """The i-th variation (1, 2, ...) of a scalar literal, or None when it has none."""
    if m.matches(value, m.Name("True") | m.Name("False")):
        return ("True", "False")[(value.value == "True") ^ (i % 2 == 0)]
    if isinstance(value, cst.Integer) or m.matches(value, m.UnaryOperation(m.Minus(), m.Integer())):
        n = int(code(value).replace(" ", ""), 0)
        return str(n + i)
    if isinstance(value, cst.Float) or m.matches(value, m.UnaryOperation(m.Minus(), m.Float())):
        x = float(code(value).replace(" ", ""))
        return repr(round(x * (0.5, 1.5, 2.0, 0.25)[i % 4] + 0.25 * i, 4))
    return None


def perturb_literals(expr: cst.BaseExpression, i: int) -> cst.BaseExpression | None:
    """`expr` with every int/float/bool literal in it perturbed (None if it has none)."""
    changed = False

    class _Perturb(cst.CSTTransformer):
        def leave_Integer(self, original, updated):  # type: ignore[no-untyped-def]
            nonlocal changed
            changed = True
            return cst.Integer(perturb(original, i))  # type: ignore[arg-type]

        def leave_Float(self, original, updated):  # type: ignore[no-untyped-def]
            nonlocal changed
            changed = True
            return cst.Float(perturb(original, i))  # type: ignore[arg-type]

        def leave_Name(self, original, updated):  # type: ignore[no-untyped-def]
            nonlocal changed
            if original.value in ("True", "False"):
                changed = True
                return cst.Name(perturb(original, i))  # type: ignore[arg-type]
            return updated

        def leave_Subscript(self, original, updated):  # type: ignore[no-untyped-def]
            return original  # indices are not values

        def leave_Call(self, original, updated):  # type: ignore[no-untyped-def]
            # only constructor arguments (Cfg(0.5)) vary; sizes of tensors and arrays stay
            name = (dotted(original.func) or "").rsplit(".", 1)[-1]
            return updated if name[:1].isupper() and not (dotted(original.func) or "").startswith("torch.") else original

    new = expr.visit(_Perturb())
    return new if changed else None  # type: ignore[return-value]


# -- G1: over-specialisation of mutable or ephemeral state ----------------------------------------
def _result_site(facts: TensorFacts, entry: cst.FunctionDef) -> tuple[int, cst.BaseExpression, int | None] | None:
    """(body index of the final return, the floating-point tensor it returns, its tuple position)."""
    body = entry.body.body if isinstance(entry.body, cst.IndentedBlock) else ()
    if not body or not m.matches(body[-1], m.SimpleStatementLine([m.Return()])) or body[-1].body[0].value is None:
        return None
    value = body[-1].body[0].value
    if facts.is_float(value):
        return len(body) - 1, value, None
    if isinstance(value, cst.Tuple):
        for i, element in enumerate(value.elements):
            if not isinstance(element, cst.StarredElement) and facts.is_float(element.value):
                return len(body) - 1, element.value, i
    return None


def use_in_result(facts: TensorFacts, entry: cst.FunctionDef, param: str | None, default: str, use: str,
                  res: str) -> cst.FunctionDef | None:
    """`entry` with `use` (statements on `res`) applied to its result, and a new parameter `param=default`."""
    params = entry.params
    if param is not None and (isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None):
        return None
    site = _result_site(facts, entry)
    if site is None:
        return None
    at, value, position = site
    ret = entry.body.body[at]
    new_value: cst.BaseExpression = cst.Name(res)
    if position is not None:
        elements = list(ret.body[0].value.elements)
        elements[position] = elements[position].with_changes(value=cst.Name(res))
        new_value = ret.body[0].value.with_changes(elements=elements)
    bare = value.with_changes(lpar=(), rpar=()) if hasattr(value, "lpar") else value
    stmts = [*parse_lines(f"{res} = {code(bare)}\n{use}"),
             ret.with_changes(body=[ret.body[0].with_changes(value=new_value)])]
    entry = entry.with_changes(body=entry.body.with_changes(body=[*entry.body.body[:at], *stmts]))
    if param is None:
        return entry
    new_param = cst.Param(cst.Name(param), default=cst.parse_expression(default),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    return entry.with_changes(params=params.with_changes(params=[*params.params, new_param]))


def has_result(facts: ProgramFacts, entry: cst.FunctionDef | None) -> bool:
    """True when `entry` ends by returning a floating-point tensor (alone or in a tuple)."""
    return entry is not None and _result_site(facts.facts(entry), entry) is not None


_SCALAR_USES = {
    "float": ("1.0", "{r} = {r} * {p}", ("0.5", "2.0", "0.5", "3.25")),
    "int": ("1", "for _ in range({p}):\n    {r} = {r} + 1", ("2", "3", "1", "0")),
    "bool": ("False", "if {p}:\n    {r} = -{r}", ("True", "False", "True")),
    "str": ('"keep"', 'if {p} == "double":\n    {r} = {r} * 2', ('"double"', '"keep"', '"other"')),
}


class ScalarParamSweep(DriverOperator):
    family = "G1"
    name = "scalar_param_sweep"
    DESCRIPTION = "Give the compiled entry a defaulted Python scalar parameter used in its result; call it with changing values."

    def _plan(self) -> tuple[cst.FunctionDef, cst.FunctionDef, str, str] | None:
        entry = self.entry() or (self.ctx.entries[0] if len(self.ctx.entries) == 1 else None)
        if entry is None:
            return None
        kind = self.rng.choice(sorted(_SCALAR_USES))
        default, use, values = _SCALAR_USES[kind]
        p, r = self.fresh({"float": "scale", "int": "repeats", "bool": "flip", "str": "mode"}[kind]), self.fresh("res")
        new = use_in_result(self.facts.facts(entry), entry, p, default, use.format(r=r, p=p), r)
        return (entry, new, values, p) if new is not None else None  # type: ignore[return-value]

    def applicable(self) -> bool:
        entry = self.entry()
        return entry is not None and _result_site(self.facts.facts(entry), entry) is not None

    def extra_calls(self, f: str, out: str) -> str | None:
        plan = self._plan()
        if plan is None:
            self.decline("the compiled entry does not return a floating-point tensor or takes *args")
            return None
        entry, new, values, p = plan
        self.rewrite_entry(entry, new)
        v = self.fresh("value")
        return f"for {v} in ({', '.join(values)}):\n    {out}.append({f}(*{self.inputs_call()}, {v}))"

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        plan = self._plan() if entry is not None and entry in self.ctx.entries else None
        if plan is None or any(a.keyword or a.star for a in call.args):
            self.decline("no compiled entry to give a scalar parameter")
            return None
        _, new, values, _ = plan
        self.rewrite_entry(entry, new)
        varied = call.with_changes(args=[*call.args[:-1], call.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                                         cst.Arg(cst.parse_expression(values[0]))] if call.args else [
            cst.Arg(cst.parse_expression(values[0]))])
        return [stmt.deep_replace(call, varied)]


class VaryScalarInputs(DriverOperator):
    family = "G1"
    name = "vary_scalar_inputs"
    DESCRIPTION = "Call the compiled function again with the Python scalars among its inputs (also inside dicts, tuples, lists) changed."

    def _choices(self) -> list[int]:
        args = self.facts.inputs or []
        return [i for i, a in enumerate(args) if a.kind in ("scalar", "unknown") and perturb_literals(a.expr, 1)
                and not m.matches(a.expr, m.SimpleString())]

    def applicable(self) -> bool:
        return bool(self._choices())

    def extra_calls(self, f: str, out: str) -> str | None:
        i = self.rng.choice(self._choices())
        expr = self.facts.inputs[i].expr  # type: ignore[index]
        args = self.fresh("args")
        lines = []
        for k in (1, 2, 3):
            lines.append(f"{args} = list(inputs())\n{args}[{i}] = {code(perturb_literals(expr, k))}\n"
                         f"{out}.append({f}(*{args}))")
        return "\n".join(lines)


class FreshObjectPerCall(DriverOperator):
    family = "G1"
    name = "fresh_object_per_call"
    DESCRIPTION = "Pass a new object on every call: rebuilt user-object inputs with changed fields, or a new defaulted object parameter."

    def _object_inputs(self) -> list[int]:
        return [i for i, a in enumerate(self.facts.inputs or []) if a.kind == "object"]

    def applicable(self) -> bool:
        entry = self.entry()
        return bool(self._object_inputs()) or (entry is not None and _result_site(self.facts.facts(entry), entry)
                                               is not None)

    def extra_calls(self, f: str, out: str) -> str | None:
        objects = self._object_inputs()
        if objects and self.rng.random() < 0.7:
            return self._rebuild(f, out, self.rng.choice(objects))
        entry = self.entry()
        knob_cls, knob, r = self.fresh("Knob"), self.fresh("knob"), self.fresh("res")
        new = use_in_result(self.facts.facts(entry), entry, knob, "None",
                            f"if {knob} is not None:\n    {r} = {r} * {knob}.scale + {knob}.shift", r) if entry else None
        if new is None:
            self.decline("the compiled entry does not return a floating-point tensor or takes *args")
            return None
        self.rewrite_entry(entry, new)  # type: ignore[arg-type]
        self.add_helper(f"class {knob_cls}:\n    def __init__(self, scale, shift=0.0):\n        self.scale = scale\n"
                        f"        self.shift = shift")
        i = self.fresh("i")
        same = self.rng.random() < 0.3  # equal values, new identity: must not recompile
        fields = "1.5" if same else f"0.5 + {i}, shift=float({i} % 2)"
        return f"for {i} in range(4):\n    {out}.append({f}(*inputs(), {knob_cls}({fields})))"

    def _rebuild(self, f: str, out: str, i: int) -> str:
        arg = self.facts.inputs[i]  # type: ignore[index]
        args = self.fresh("args")
        lines = []
        for k in (1, 2, 3):
            if isinstance(arg.expr, cst.Call):
                fresh = code(perturb_literals(arg.expr, k) or arg.expr)
            else:
                cls = self.facts.classes[arg.cls]  # type: ignore[index]
                self.add_import("copy")
                fresh = f"copy.{'deepcopy' if cls.is_module else 'copy'}({code(arg.expr)})"
            lines.append(f"{args} = list(inputs())\n{args}[{i}] = {fresh}\n{out}.append({f}(*{args}))")
        return "\n".join(lines)


def _attr_reads(fn: cst.FunctionDef, receiver: str) -> set[str]:
    return {n.attr.value for n in statements(fn) if m.matches(n, m.Attribute(m.Name(receiver), m.Name()))}


class AttrValuesBetweenCalls(DriverOperator):
    family = "G1"
    name = "attr_values_between_calls"
    DESCRIPTION = "Change a scalar attribute the region reads (module, global object or class) between otherwise identical calls."

    def _targets(self) -> list[tuple[str, str, cst.BaseExpression]]:
        found: list[tuple[str, str, cst.BaseExpression]] = []
        for fn in self.ctx.region:
            owner = self.facts.owner_of(fn)
            if owner is not None and self.facts.is_method(fn):
                reads = _attr_reads(fn, "self")
                holders = [g for g, c in self.facts.instances.items() if self.facts.classes[c] is owner]
                for attr, value in owner.scalars.items():
                    found += [(h, attr, value) for h in holders if attr in reads]
                for attr, value in owner.class_scalars.items():
                    if attr in reads or attr in _attr_reads(fn, owner.node.name.value):
                        found.append((owner.node.name.value, attr, value))
            for g, c in self.facts.instances.items():
                reads = _attr_reads(fn, g)
                found += [(g, a, v) for a, v in self.facts.classes[c].scalars.items() if a in reads]
        return [t for t in dict.fromkeys(found) if perturb(t[2], 1) is not None]

    def applicable(self) -> bool:
        return bool(self._targets())

    def extra_calls(self, f: str, out: str) -> str | None:
        holder, attr, value = self.rng.choice(self._targets())
        lines = []
        for k in (1, 2, 3):
            lines.append(f"{holder}.{attr} = {perturb(value, k)}\n{out}.append({f}(*inputs()))")
        lines.append(f"{holder}.{attr} = {code(value)}\n{out}.append({f}(*inputs()))")
        return "\n".join(lines)


class GlobalScalarBetweenCalls(DriverOperator):
    family = "G1"
    name = "global_scalar_between_calls"
    DESCRIPTION = "Change a module-level scalar constant the region reads between otherwise identical calls."

    def _targets(self) -> list[tuple[str, cst.BaseExpression]]:
        literals = {}
        for stmt in self.ctx.module.body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())])])):
                value = stmt.body[0].value
                if perturb(value, 1) is not None:
                    literals[stmt.body[0].targets[0].target.value] = value
        found = []
        for fn in self.ctx.region:
            declared = {i.name.value for n in statements(fn) if isinstance(n, cst.Global) for i in n.names}
            local = self.facts.facts(fn).assigned - declared
            for node in statements(fn):
                if isinstance(node, cst.Name) and node.value in literals and node.value not in local:
                    found.append((node.value, literals[node.value]))
        return list(dict.fromkeys((n, v) for n, v in found))

    def applicable(self) -> bool:
        return bool(self._targets()) or has_result(self.facts, self.entry())

    def extra_calls(self, f: str, out: str) -> str | None:
        targets = self._targets()
        if targets:
            name, value = self.rng.choice(targets)
        else:  # introduce one: a module-level gain applied to the entry's result
            entry = self.entry()
            name, value, r = self.fresh("GAIN"), cst.Float("1.0"), self.fresh("res")
            new = use_in_result(self.facts.facts(entry), entry, None, "", f"{r} = {r} * {name}", r)  # type: ignore[arg-type]
            if new is None:
                self.decline("the region reads no module-level scalar")
                return None
            self.rewrite_entry(entry, new)  # type: ignore[arg-type]
            self.add_helper(f"{name} = 1.0")
        setter, v = self.fresh(f"set_{name.lower()}"), self.fresh("value")
        self.add_helper(f"def {setter}({v}):\n    global {name}\n    {name} = {v}")
        lines = []
        for k in (1, 2):
            lines.append(f"{setter}({perturb(value, k)})\n{out}.append({f}(*inputs()))")
        lines.append(f"{setter}({code(value)})\n{out}.append({f}(*inputs()))")
        return "\n".join(lines)

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        targets = self._targets()
        if not targets:
            self.decline("the region reads no module-level scalar")
            return None
        name, value = self.rng.choice(targets)
        return parse_lines(f"{name} = {perturb(value, 1)}") + [stmt] + parse_lines(f"{name} = {code(value)}")


# -- G3: missing or incomplete guards ---------------------------------------------------------------
class GradModeBetweenCalls(DriverOperator):
    family = "G3"
    name = "grad_mode_between_calls"
    DESCRIPTION = "Repeat same-shaped calls under no_grad, set_grad_enabled(False), enable_grad and inference_mode."

    FORMS = (
        "with torch.no_grad():\n    {out}.append({call})",
        "torch.set_grad_enabled(False)\ntry:\n    {out}.append({call})\nfinally:\n    torch.set_grad_enabled(True)",
        "with torch.no_grad():\n    with torch.enable_grad():\n        {out}.append({call})",
        "with torch.set_grad_enabled(False):\n    {out}.append({call})",
        "with torch.inference_mode():\n    {out}.append({call})",
    )

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"  # fresh arguments: the program may change its inputs in place
        forms = self.rng.sample(self.FORMS, 2)
        self.add_import("torch")
        return "\n".join([f"{out}.append({call})",
                          *(form.format(out=out, call=call) for form in forms), f"{out}.append({call})"])

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        self.add_import("torch")
        form = self.rng.choice(["torch.no_grad()", "torch.set_grad_enabled(False)", "torch.inference_mode()"])
        return [cst.With([cst.WithItem(cst.parse_expression(form))], cst.IndentedBlock([stmt]))]


class AutocastBetweenCalls(DriverOperator):
    family = "G3"
    name = "autocast_between_calls"
    DESCRIPTION = "Repeat same-shaped calls inside and outside CPU autocast (bfloat16), and with autocast disabled."

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"
        inner = self.rng.choice(["", 'with torch.autocast("cpu", enabled=False):\n    '])
        self.add_import("torch")
        return (f"{out}.append({call})\n"
                f'with torch.autocast("cpu", dtype=torch.bfloat16):\n'
                f"{_indent(inner + f'{out}.append({call})')}\n{out}.append({call})")

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        self.add_import("torch")
        return [cst.With([cst.WithItem(cst.parse_expression('torch.autocast("cpu", dtype=torch.bfloat16)'))],
                         cst.IndentedBlock([stmt]))]


class MutateReadContainer(DriverOperator):
    family = "G3"
    name = "mutate_read_container"
    DESCRIPTION = "Change the contents of a global list or dict (or a closure's captured values) the region reads, between same-shaped calls."

    def _containers(self) -> list[tuple[str, cst.BaseExpression]]:
        """(expression of a non-empty list or dict literal the region reads, that literal)."""
        found = {}
        for stmt in self.ctx.module.body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())], m.List() | m.Dict())])):
                value = stmt.body[0].value
                if value.elements:
                    found[stmt.body[0].targets[0].target.value] = value
        read = {n.value for fn in self.ctx.region for n in statements(fn) if isinstance(n, cst.Name)}
        found = {name: value for name, value in found.items() if name in read}
        for fn in self.ctx.region:
            owner = self.facts.owner_of(fn) if self.facts.is_method(fn) else None
            for holder, cls in self.facts.instances.items():
                if owner is not None and self.facts.classes[cls] is owner:
                    for attr in _attr_reads(fn, "self") & set(owner.containers):
                        found[f"{holder}.{attr}"] = owner.containers[attr]
        return [(name, value) for name, value in found.items() if self._edit(name, value)]

    def _closure(self) -> bool:
        """A harness whose fn is made by a factory: its captured cells are what it reads."""
        return self.ctx.is_harness and not self.ctx.entries

    def applicable(self) -> bool:
        return bool(self._containers()) or self._closure() or has_result(self.facts, self.entry())

    def _edit(self, name: str, value: cst.BaseExpression) -> list[str]:
        edits = []
        if isinstance(value, cst.List):
            first = value.elements[0].value
            if m.matches(first, m.Integer() | m.Float()) or self.facts.arg_info(first).kind == "float":
                edits += [f"{name}[0] = {name}[0] * 2 + 1", f"{name}.append({name}[-1])"]
        else:
            for element in value.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    continue
                key, item = code(element.key), element.value
                if m.matches(item, m.Name("True") | m.Name("False")):
                    edits.append(f"{name}[{key}] = not {name}[{key}]")
                elif m.matches(item, m.Integer() | m.Float()) or self.facts.arg_info(item).kind == "float":
                    edits.append(f"{name}[{key}] = {name}[{key}] * 2 + 1")
                    if self.facts.arg_info(item).kind == "float":
                        edits.append(f"{name}[{key}].mul_(-1)")
        return edits

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"
        lines = [f"{out}.append({call})"]
        containers = self._containers()
        if not containers and not self._closure():  # introduce one: global factors applied to the result
            entry = self.entry()
            name, w, r = self.fresh("FACTORS"), self.fresh("w"), self.fresh("res")
            new = use_in_result(self.facts.facts(entry), entry, None, "",  # type: ignore[arg-type]
                                f"for {w} in {name}:\n    {r} = {r} * {w}", r)
            if new is None:
                self.decline("the region reads no global list or dict")
                return None
            self.rewrite_entry(entry, new)  # type: ignore[arg-type]
            self.add_helper(f"{name} = [1.0, 0.5]")
            containers = [(name, cst.parse_expression("[1.0, 0.5]"))]
        if containers and (not self._closure() or self.rng.random() < 0.5):
            name, value = self.rng.choice(containers)
            for edit in self.rng.sample(self._edit(name, value), min(2, len(self._edit(name, value)))):
                lines += [edit, f"{out}.append({call})"]
            return "\n".join(lines)
        cell, v = self.fresh("cell"), self.fresh("value")
        lines.append(
            f"for {cell} in getattr(fn, '__closure__', None) or ():\n"
            f"    {v} = {cell}.cell_contents\n"
            f"    if isinstance({v}, list) and {v} and isinstance({v}[0], (int, float)):\n"
            f"        {v}[0] = {v}[0] * 2 + 1\n"
            f"    elif isinstance({v}, dict):\n"
            f"        {v}.update({{k: not x for k, x in {v}.items() if isinstance(x, bool)}})\n"
            f"    elif isinstance({v}, float):\n"
            f"        {cell}.cell_contents = {v} * 0.5")
        lines.append(f"{out}.append({call})")
        return "\n".join(lines)

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        containers = self._containers()
        if not containers:
            self.decline("the region reads no global list or dict")
            return None
        name, value = self.rng.choice(containers)
        return [*parse_lines(self.rng.choice(self._edit(name, value))), stmt]


class UpdateModuleParams(DriverOperator):
    family = "G3"
    name = "update_module_params"
    DESCRIPTION = "Between same-shaped calls, update a module's parameters in place, replace them with new Parameters, or pass a changed copy."

    def _modules(self) -> list[tuple[str, int | None]]:
        """(expression of a module with parameters, its index in inputs() or None)."""
        found: list[tuple[str, int | None]] = []
        with_params = {n for n, c in self.facts.classes.items() if c.is_module and (c.layers or c.tensors)}
        if self.ctx.is_harness and self.facts.instances.get("fn") in with_params:
            found.append(("fn", None))
        read = {n.value for fn in self.ctx.region for n in statements(fn) if isinstance(n, cst.Name)}
        found += [(g, None) for g, c in self.facts.instances.items() if c in with_params and g in read and g != "fn"]
        found += [(f"inputs()[{i}]", i) for i, a in enumerate(self.facts.inputs or [])
                  if a.kind == "object" and a.cls in with_params]
        return found

    def applicable(self) -> bool:
        return bool(self._modules())

    def _update(self, module: str) -> str:
        p, name, sub = self.fresh("p"), self.fresh("name"), self.fresh("sub")
        return self.rng.choice([
            f"with torch.no_grad():\n    for {p} in {module}.parameters():\n        {p}.mul_(-0.5)",
            f"with torch.no_grad():\n    for {p} in {module}.parameters():\n        {p}.add_(0.25)",
            (f"for {sub} in {module}.modules():\n    for {name}, {p} in list({sub}.named_parameters(recurse=False)):\n"
             f"        setattr({sub}, {name}, torch.nn.Parameter({p}.detach() * 0.5 + 0.1))"),
        ])

    def extra_calls(self, f: str, out: str) -> str | None:
        module, index = self.rng.choice(self._modules())
        args = self.fresh("args")
        self.add_import("torch")
        if index is None:
            return "\n".join([f"{out}.append({f}(*inputs()))", self._update(module), f"{out}.append({f}(*inputs()))"])
        other = self.fresh("other")
        self.add_import("copy")
        return "\n".join([f"{out}.append({f}(*inputs()))", f"{args} = list(inputs())",
                          f"{other} = copy.deepcopy({args}[{index}])", self._update(other), f"{args}[{index}] = {other}",
                          f"{out}.append({f}(*{args}))"])

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        modules = [m_ for m_, i in self._modules() if i is None]
        modules += [g for g, c in self.facts.instances.items()
                    if self.facts.classes[c].is_module and g not in modules and not self.ctx.is_harness]
        if not modules:
            self.decline("no module instance with parameters")
            return None
        self.add_import("torch")
        return [stmt, *parse_lines(self._update(self.rng.choice(modules)))]


class VaryTensorMetadata(DriverOperator):
    family = "G3"
    name = "vary_tensor_metadata"
    DESCRIPTION = "Repeat a call with equal-shaped tensors that differ in requires_grad, strides or aliasing (f(x, x))."

    def _forms(self) -> list[str]:
        args = self.facts.inputs or []
        floats = [i for i, a in enumerate(args) if a.kind == "float"]
        forms = []
        entry = self.entry()
        mutated = entry is not None and any(
            m.matches(n, m.Call(m.Attribute(attr=m.Name()))) and n.func.attr.value.endswith("_")
            and not n.func.attr.value.endswith("__") for n in statements(entry))
        if floats and not mutated and not any(a.requires_grad for a in args):
            forms.append("grad")
        if any(args[i].shape and len(args[i].shape) >= 2 for i in floats):
            forms.append("strides")
        shapes = [args[i].shape for i in floats if args[i].shape]
        if len(shapes) != len(set(shapes)):
            forms.append("alias")
        return forms

    def applicable(self) -> bool:
        return bool(self._forms())

    def extra_calls(self, f: str, out: str) -> str | None:
        form = self.rng.choice(self._forms())
        args = self.fresh("args")
        inputs = self.facts.inputs or []
        floats = [k for k, x in enumerate(inputs) if x.kind == "float"]
        lines = [f"{out}.append({f}(*inputs()))", f"{args} = list(inputs())"]
        if form == "grad":
            k = self.rng.choice(floats)
            lines.append(f"{args}[{k}] = {args}[{k}].detach().requires_grad_(True)")
        elif form == "strides":
            k = self.rng.choice([k for k in floats if inputs[k].shape and len(inputs[k].shape) >= 2])
            lines.append(f"{args}[{k}] = {args}[{k}].transpose(0, -1).contiguous().transpose(0, -1)")
        else:
            by_shape: dict[tuple[int, ...], list[int]] = {}
            for k in floats:
                if inputs[k].shape:
                    by_shape.setdefault(inputs[k].shape, []).append(k)
            first, second = next(v for v in by_shape.values() if len(v) > 1)[:2]
            lines.append(f"{args}[{second}] = {args}[{first}]")
        lines.append(f"{out}.append({f}(*{args}))")
        return "\n".join(lines)
