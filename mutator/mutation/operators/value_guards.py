"""G1: over-specialisation on values (guards on scalars, objects, attributes and globals).

The compiled function is called again with a Python scalar changed: a new defaulted
parameter of the entry, the scalars among its inputs, a rebuilt input object, a scalar
attribute or a module-level constant the region reads. A guard that misses the change
shows up as a stale result.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._driver import DriverOperator, has_result, result_site, use_in_result
from mutator.mutation.operators._templates import parse_lines
from mutator.mutation.tree import attribute_reads, body_nodes, code, dotted


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


def _sweep(assign: str, value: cst.BaseExpression, rounds: int, call: str) -> str:
    """`assign` (a template with {v}) setting `rounds` variations of `value` and then `value` again, each
    followed by `call`."""
    settings = [perturb(value, k) for k in range(1, rounds + 1)] + [code(value)]
    return "\n".join(f"{assign.format(v=v)}\n{call}" for v in settings)


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
        return entry is not None and result_site(self.facts.facts(entry), entry) is not None

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
        return bool(self._object_inputs()) or (entry is not None and result_site(self.facts.facts(entry), entry)
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


class AttrValuesBetweenCalls(DriverOperator):
    family = "G1"
    name = "attr_values_between_calls"
    DESCRIPTION = "Change a scalar attribute the region reads (module, global object or class) between otherwise identical calls."

    def _targets(self) -> list[tuple[str, str, cst.BaseExpression]]:
        found: list[tuple[str, str, cst.BaseExpression]] = []
        for fn in self.ctx.region:
            owner = self.facts.owner_of(fn)
            if owner is not None and self.facts.is_method(fn):
                reads = attribute_reads(fn, "self")
                holders = [g for g, c in self.facts.instances.items() if self.facts.classes[c] is owner]
                for attr, value in owner.scalars.items():
                    found += [(h, attr, value) for h in holders if attr in reads]
                for attr, value in owner.class_scalars.items():
                    if attr in reads or attr in attribute_reads(fn, owner.node.name.value):
                        found.append((owner.node.name.value, attr, value))
            for g, c in self.facts.instances.items():
                reads = attribute_reads(fn, g)
                found += [(g, a, v) for a, v in self.facts.classes[c].scalars.items() if a in reads]
        return [t for t in dict.fromkeys(found) if perturb(t[2], 1) is not None]

    def applicable(self) -> bool:
        return bool(self._targets())

    def extra_calls(self, f: str, out: str) -> str | None:
        holder, attr, value = self.rng.choice(self._targets())
        return _sweep(f"{holder}.{attr} = {{v}}", value, 3, f"{out}.append({f}(*inputs()))")


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
            declared = {i.name.value for n in body_nodes(fn) if isinstance(n, cst.Global) for i in n.names}
            local = self.facts.facts(fn).assigned - declared
            for node in body_nodes(fn):
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
        return _sweep(f"{setter}({{v}})", value, 2, f"{out}.append({f}(*inputs()))")

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        targets = self._targets()
        if not targets:
            self.decline("the region reads no module-level scalar")
            return None
        name, value = self.rng.choice(targets)
        return parse_lines(f"{name} = {perturb(value, 1)}") + [stmt] + parse_lines(f"{name} = {code(value)}")
