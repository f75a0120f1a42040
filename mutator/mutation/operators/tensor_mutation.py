"""F2: uncaptured tensor and metadata mutation.

Out-of-place tensor ops of the compiled region become in-place ones on a clone or write
into an out= buffer; in-place ops are swapped for siblings; views of the inputs are
mutated in place; tensors are updated through .data and their autograd flags flipped.
Which expressions are floating-point tensors comes from `TensorFacts`.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operators._facts import FactsOperator, FloatAssignmentSite
from mutator.mutation.operators._templates import insert_at_top, keyword_arg, parse_lines
from mutator.mutation.operators._tensor_facts import TensorFacts
from mutator.mutation.tree import body_nodes, code, dotted, nodes

_PARAM_LAYERS = {"Linear": ("weight", "bias"), "Bilinear": ("weight", "bias"), "Conv1d": ("weight", "bias"),
                 "Conv2d": ("weight", "bias"), "LayerNorm": ("weight", "bias"), "Embedding": ("weight",),
                 "BatchNorm1d": ("weight", "bias"), "GroupNorm": ("weight", "bias")}


def _atom(expr: cst.BaseExpression) -> str:
    """Source of `expr`, parenthesised unless it already binds tighter than attribute access."""
    text = code(expr.with_changes(lpar=(), rpar=()) if hasattr(expr, "lpar") else expr)
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return text
    return f"({text})"


_BINOP_INPLACE = {cst.Add: "add_", cst.Subtract: "sub_", cst.Multiply: "mul_", cst.Divide: "div_"}
_FN_INPLACE = {"add": "add_", "sub": "sub_", "mul": "mul_", "div": "div_", "relu": "relu_", "sigmoid": "sigmoid_",
               "tanh": "tanh_", "exp": "exp_", "abs": "abs_", "neg": "neg_", "sin": "sin_", "cos": "cos_",
               "clamp": "clamp_", "clamp_min": "clamp_min_", "clamp_max": "clamp_max_", "unsqueeze": "unsqueeze_",
               "squeeze": "squeeze_", "transpose": "transpose_", "t": "t_", "square": "square_", "floor": "floor_"}


def _inplace_form(facts: TensorFacts, value: cst.BaseExpression) -> tuple[cst.BaseExpression, str, list[cst.Arg]] | None:
    """(operand to copy, in-place method, its arguments) for an out-of-place tensor expression."""
    if isinstance(value, cst.BinaryOperation) and type(value.operator) in _BINOP_INPLACE:
        method = _BINOP_INPLACE[type(value.operator)]
        left, right = value.left, value.right
        if not facts.is_float(left) and method in ("add_", "mul_") and facts.is_float(right):
            left, right = right, left
        if facts.is_float(left):
            return left.with_changes(lpar=(), rpar=()), method, [cst.Arg(right.with_changes(lpar=(), rpar=()))]
        return None
    if not isinstance(value, cst.Call) or any(a.star for a in value.args):
        return None
    name = dotted(value.func) or ""
    if name.startswith("torch.") and name.count(".") == 1 and value.args and not value.args[0].keyword:
        operand, args, op = value.args[0].value, list(value.args[1:]), name[6:]
    elif isinstance(value.func, cst.Attribute):
        operand, args, op = value.func.value, list(value.args), value.func.attr.value
    else:
        return None
    if op not in _FN_INPLACE or not facts.is_tensor(operand):
        return None
    if op not in ("unsqueeze", "squeeze", "transpose", "t") and not facts.is_float(operand):
        return None
    if any(a.keyword and a.keyword.value in ("out", "dtype") for a in args):
        return None
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return operand, _FN_INPLACE[op], args


class InplaceRewrite(FloatAssignmentSite):
    family = "F2"
    name = "inplace_rewrite"
    DESCRIPTION = "Turn an out-of-place tensor op into its in-place form on a clone (x + y -> t = x.clone(); t.add_(y); unsqueeze -> unsqueeze_)."

    def accepts(self, fn, name, value):  # type: ignore[no-untyped-def]
        return _inplace_form(self.facts.facts(fn), value) is not None

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        operand, method, args = _inplace_form(self.facts.facts(fn), value)  # type: ignore[misc]
        call = cst.Call(cst.Attribute(cst.Name(name), cst.Name(method)), args)
        copy = f"{_atom(operand)}.clone()"
        if self.rng.random() < 0.3 and not args:  # chain on the copy: (x.clone()).relu_()
            return [stmt.with_changes(body=[stmt.body[0].with_changes(value=cst.parse_expression(
                f"{copy}.{method}()"))])]
        return [stmt.with_changes(body=[stmt.body[0].with_changes(value=cst.parse_expression(copy))]),
                cst.SimpleStatementLine([cst.Expr(call)])]


_OUT_FNS = frozenset({"add", "sub", "mul", "div", "matmul", "mm", "bmm", "sin", "cos", "exp", "tanh", "sigmoid", "abs",
                      "neg", "sqrt", "clamp", "maximum", "minimum", "square", "cat", "stack", "log", "pow"})
_BINOP_FN = {cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "div", cst.MatrixMultiply: "matmul"}


def _out_form(facts: TensorFacts, value: cst.BaseExpression) -> tuple[str, list[str], cst.BaseExpression] | None:
    """(torch function, argument sources, a tensor operand giving the dtype) for `value`, or None."""
    if isinstance(value, cst.BinaryOperation) and type(value.operator) in _BINOP_FN:
        if facts.is_float(value.left):
            return _BINOP_FN[type(value.operator)], [code(value.left), code(value.right)], value.left
        return None
    if not isinstance(value, cst.Call) or any(a.star or (a.keyword and a.keyword.value == "out") for a in value.args):
        return None
    name = dotted(value.func) or ""
    args = [code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in value.args]
    if name.startswith("torch.") and name.count(".") == 1 and name[6:] in _OUT_FNS and value.args:
        first = value.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)) and first.elements:
            first = first.elements[0].value
        return (name[6:], args, first) if facts.is_float(first) else None
    if isinstance(value.func, cst.Attribute) and value.func.attr.value in _OUT_FNS - {"cat", "stack"}:
        receiver = value.func.value
        return (value.func.attr.value, [code(receiver), *args], receiver) if facts.is_float(receiver) else None
    return None


class OutArgument(FloatAssignmentSite):
    family = "F2"
    name = "out_argument"
    DESCRIPTION = "Compute a tensor into a preallocated buffer through out= (torch.add(a, b, out=buf)), under no_grad when grads may flow."

    def accepts(self, fn, name, value):  # type: ignore[no-untyped-def]
        return _out_form(self.facts.facts(fn), value) is not None

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        op, args, operand = _out_form(self.facts.facts(fn), value)  # type: ignore[misc]
        buf = self.fresh(f"{name}_out")
        bind = ""
        if not isinstance(operand, (cst.Name, cst.Attribute)) and args and args[0] == code(operand):
            lhs = self.fresh(f"{name}_lhs")  # computed once, for its dtype and as the operand
            bind, args = f"{lhs} = {code(operand)}\n", [lhs, *args[1:]]
            operand = cst.Name(lhs)
        alloc = f"{bind}{buf} = torch.empty(0, dtype={_atom(operand)}.dtype)"
        call = f"torch.{op}({', '.join(args)}, out={buf})"
        if not self._grad_free(fn, value):
            call = f"with torch.no_grad():\n    {call}"
        self.add_import("torch")
        return parse_lines(f"{alloc}\n{call}\n{name} = {buf}")

    def _grad_free(self, fn: cst.FunctionDef, value: cst.BaseExpression) -> bool:
        """Only inputs() tensors without requires_grad feed `value` (out= refuses autograd inputs)."""
        params = self.facts.entry_params(fn)
        facts = self.facts.facts(fn)
        for node in nodes(value):
            if isinstance(node, cst.Attribute):
                if m.matches(node.value, m.Name("self")) or node.attr.value == "requires_grad":
                    return False
            elif isinstance(node, cst.Name) and node.value in facts.assigned:
                arg = params.get(node.value)
                if arg is None or arg.requires_grad or node.value not in facts.tensors:
                    return False
        return True


_SIBLINGS = [("add_", "sub_", "mul_", "div_"), ("relu_", "abs_", "neg_"), ("sigmoid_", "tanh_", "sin_", "cos_", "exp_"),
             ("floor_", "ceil_", "round_", "trunc_"), ("addcmul_", "addcdiv_")]
_FLOAT_ONLY = {"div_", "sigmoid_", "tanh_", "sin_", "cos_", "exp_"}


class InplaceSibling(FactsOperator):
    family = "F2"
    name = "inplace_sibling"
    DESCRIPTION = "Replace an in-place op by a sibling that keeps the program valid (add_/sub_/mul_/div_, clamp_/clamp_min_/clamp_max_, zero_/fill_, +=/-=/*=)."

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self._float_aug: set[int] = set()  # augmented assignments on floating-point tensors
        for fn in ctx.region:
            facts = self.facts.facts(fn)
            for node in body_nodes(fn):
                if isinstance(node, cst.AugAssign) and type(node.operator) in (
                        cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign) and facts.is_float(node.target):
                    self._float_aug.add(id(node))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not isinstance(original_node.func, cst.Attribute):
            return updated_node
        choices = self._alternatives(original_node)
        if not choices or not self.is_site(original_node):
            return updated_node
        method, args = self.rng.choice(choices)
        return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name(method)), args=args)

    def _alternatives(self, call: cst.Call) -> list[tuple[str, list[cst.Arg]]]:
        method = call.func.attr.value
        args = list(call.args)
        keywords = {a.keyword.value for a in args if a.keyword}
        if method in ("clamp_", "clamp_min_", "clamp_max_"):
            return _clamp_siblings(method, args)
        if method == "zero_" and not args:
            return [("fill_", [cst.Arg(cst.Float("0.5"))]), ("fill_", [cst.Arg(cst.Integer("1"))])]
        if method == "fill_" and len(args) == 1:
            return [("zero_", [])]
        floating = any(m.matches(a.value, m.Float()) for a in args)
        for group in _SIBLINGS:
            if method in group:
                others = [s for s in group if s != method]
                if "alpha" in keywords:
                    others = [s for s in others if s in ("add_", "sub_")]
                if method not in _FLOAT_ONLY and not floating:
                    others = [s for s in others if s not in _FLOAT_ONLY]
                return [(s, args) for s in others]
        return []

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign) -> cst.AugAssign:
        if id(original_node) not in self._float_aug or not self.is_site(original_node):
            return updated_node
        ops = [cst.AddAssign(), cst.SubtractAssign(), cst.MultiplyAssign(), cst.DivideAssign()]
        ops = [o for o in ops if type(o) is not type(original_node.operator)]
        return updated_node.with_changes(operator=self.rng.choice(ops))


def _clamp_siblings(method: str, args: list[cst.Arg]) -> list[tuple[str, list[cst.Arg]]]:
    bounds: dict[str, cst.BaseExpression] = {}
    for i, a in enumerate(args):
        key = a.keyword.value if a.keyword else (("min", "max")[i] if method == "clamp_" and i < 2 else "bound")
        bounds[key] = a.value
    if method != "clamp_":
        bound = bounds.get("bound") or bounds.get("min") or bounds.get("max")
        if bound is None:
            return []
        side = "min" if method == "clamp_min_" else "max"
        other = "clamp_max_" if method == "clamp_min_" else "clamp_min_"
        return [("clamp_", [keyword_arg(side, bound)]), (other, [cst.Arg(bound)])]
    found = []
    if bounds.get("min") is not None and not m.matches(bounds["min"], m.Name("None")):
        found.append(("clamp_min_", [cst.Arg(bounds["min"])]))
    if bounds.get("max") is not None and not m.matches(bounds["max"], m.Name("None")):
        found.append(("clamp_max_", [cst.Arg(bounds["max"])]))
    return found


class InputViewInplace(FactsOperator):
    family = "F2"
    name = "input_view_inplace"
    DESCRIPTION = "Mutate a view of a tensor argument in place at the top of the compiled entry (x[0].mul_, narrow, diagonal, unsqueeze)."

    def _params(self, fn: cst.FunctionDef) -> list[tuple[str, tuple[int, ...]]]:
        return [(p, a.shape) for p, a in self.facts.entry_params(fn).items()
                if a.kind == "float" and not a.requires_grad and a.shape and min(a.shape) > 0]

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        params = self._params(original_node)
        if not params or not self.is_site(original_node):
            return updated_node
        p, shape = self.rng.choice(params)
        forms = [f"{p}[0].mul_(0.5)", f"{p}.narrow(-1, 0, 1).add_(1.0)", f"{p}.unsqueeze(0).mul_(2.0)",
                 f"{p}.select(0, {shape[0] - 1}).neg_()", f"{p}[..., -1:].clamp_(min=-0.5, max=0.5)"]
        if len(shape) == 2:
            forms += [f"{p}.diagonal().zero_()", f"{p}.t()[0].add_(1.0)"]
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))


class DataUpdate(FloatAssignmentSite):
    family = "F2"
    name = "data_update"
    DESCRIPTION = "Update tensors behind autograd's back through .data: module parameters at the top of a method, or a fresh tensor."

    def accepts(self, fn, name, value):  # type: ignore[no-untyped-def]
        return fn.name.value not in self.facts.transformed

    def _targets(self, fn: cst.FunctionDef) -> list[str]:
        if fn.name.value in self.facts.transformed:
            return []
        found = []
        for r in self.facts.receivers(fn):
            cls = self.facts.module_of(r, fn)
            if cls is None:
                continue
            found += [f"{r}.{t}" for t in cls.tensors if t not in self.facts.fragile_attrs]
            for attr, layer in cls.layers.items():
                found += [f"{r}.{attr}.{p}" for p in _PARAM_LAYERS.get(layer, ())[:1]]
        return found

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        targets = self._targets(original_node) if id(original_node) in self.ctx.region_ids else []
        if not targets or not self.is_site(original_node):
            return updated_node
        t = self.rng.choice(targets)
        forms = [f"{t}.data.mul_(0.9)", f"{t}.data = {t}.data * 0.9 + 0.01", f"{t}.data.add_(0.05)",
                 f"{t}.data = {t}.data.clamp(-0.5, 0.5)"]
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        forms = [f"{name}.data = {name}.data * 2", f"{name}.data.mul_(0.5)", f"{name}.data = {name}.data.abs()"]
        return [stmt, *parse_lines(self.rng.choice(forms))]


class GradFlagToggle(FloatAssignmentSite):
    family = "F2"
    name = "grad_flag_toggle"
    DESCRIPTION = "Flip autograd metadata in place on a tensor of the region (clone().detach_(), requires_grad_ on a leaf added to it)."

    def accepts(self, fn, name, value):  # type: ignore[no-untyped-def]
        return fn.name.value not in self.facts.transformed

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        aux = self.fresh(f"{name}_leaf")
        forms = [
            f"{name} = {name}.clone()\n{name}.detach_()",
            f"{aux} = torch.zeros_like({name})\n{aux}.requires_grad_(True)\n{name} = {name} + {aux}",
            f"{aux} = {name}.detach().clone()\n{aux}.requires_grad_()\n{name} = {name} + {aux} * 0.5",
        ]
        self.add_import("torch")
        return [stmt, *parse_lines(self.rng.choice(forms))]
