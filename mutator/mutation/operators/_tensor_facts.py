"""Which expressions are tensors, and which of those floating point, as far as the source says.

`literal_arg` describes a value from its source (a tensor constructor, a scalar literal);
`TensorFacts` does the same for the names and expressions of one function, from what
inputs() passes it and a fixpoint over its assignments. Both are deliberately
conservative: an operator that cannot tell a tensor from a list declines rather than
writing `list.add_`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutator.mutation.tree import body_nodes, dotted, names_in_target, nodes

# -- what torch calls return ------------------------------------------------------------------
# Result dtype follows the first tensor operand.
_PRESERVING = frozenset("""
    add sub mul clamp clamp_min clamp_max clone view reshape t transpose permute unsqueeze squeeze flatten
    expand expand_as repeat contiguous detach neg abs relu sum cumsum flip roll narrow select index_select
    masked_fill tril triu diagonal cat stack where matmul mm bmm amax amin square pow maximum minimum gather
    new_zeros new_ones new_empty new_full zeros_like ones_like empty_like full_like view_as reshape_as
    lerp outer addmm diag movedim swapaxes squeeze unflatten mul_ add_ sub_ clamp_ zero_ fill_ fmod remainder
    masked_select prod max min sort_values round floor ceil trunc frac
""".split())
# Always floating point (or an error on integer input).
_FLOATING = frozenset("""
    sigmoid tanh softmax log_softmax exp log log1p sin cos sqrt rsqrt mean var std norm randn rand linspace
    logsumexp gelu silu layer_norm normalize dropout linear erf float double atan sinh cosh reciprocal div
    true_divide randn_like rand_like softplus elu leaky_relu hardtanh mish tan asin acos cumprod baddbmm
""".split())
# Tensors of integer or boolean dtype.
_INTEGRAL = frozenset("""
    argmax argmin nonzero long int bool eq ne gt lt ge le isnan isfinite isinf argsort bincount
    logical_and logical_or logical_not logical_xor randint randperm sign
""".split())
CONSTRUCTORS = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "arange", "linspace", "tensor",
                          "eye", "randint", "randperm"})
_FLOAT_DTYPES = frozenset({"float", "float32", "float64", "double", "half", "float16", "bfloat16"})
# nn layers whose call returns one floating-point tensor.
_TENSOR_LAYERS = frozenset("""
    Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d LayerNorm BatchNorm1d BatchNorm2d
    GroupNorm Embedding ReLU GELU SiLU Tanh Sigmoid Softmax Dropout Identity Sequential Flatten LeakyReLU
    ELU Softplus Hardtanh MaxPool1d MaxPool2d AvgPool1d AvgPool2d InstanceNorm1d RMSNorm
""".split())


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """What one element of `inputs()` is, as far as its source says."""

    kind: str  # "float" (floating-point tensor), "tensor" (other dtype), "object", "scalar", "unknown"
    expr: cst.BaseExpression
    requires_grad: bool = False
    shape: tuple[int, ...] | None = None
    cls: str | None = None  # the user class of an "object"


LITERAL = m.Integer() | m.Float() | m.Name("True") | m.Name("False") | m.SimpleString() | m.UnaryOperation(
    m.Minus(), m.Integer() | m.Float())


def literal_arg(expr: cst.BaseExpression) -> ArgInfo:
    """Describe a value from its source: a tensor constructor, a scalar literal, or unknown."""
    if m.matches(expr, LITERAL):
        return ArgInfo("scalar", expr)
    if isinstance(expr, cst.BinaryOperation):
        left, right = literal_arg(expr.left), literal_arg(expr.right)
        for side in (left, right):
            if side.kind in ("float", "tensor"):
                other = right if side is left else left
                is_float = side.kind == "float" or m.matches(other.expr, m.Float()) or isinstance(
                    expr.operator, cst.Divide)
                return ArgInfo("float" if is_float else "tensor", expr, side.requires_grad, side.shape)
        return ArgInfo("unknown", expr)
    if not isinstance(expr, cst.Call):
        return ArgInfo("unknown", expr)
    name = dotted(expr.func) or ""
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("float", "double") and not expr.args:
        inner = literal_arg(expr.func.value)
        if inner.kind in ("float", "tensor"):
            return ArgInfo("float", expr, inner.requires_grad, inner.shape)
    if not name.startswith("torch.") or name.split(".", 1)[1] not in CONSTRUCTORS:
        return ArgInfo("unknown", expr)
    ctor = name.split(".", 1)[1]
    kwargs = {a.keyword.value: a.value for a in expr.args if a.keyword}
    positional = [a.value for a in expr.args if not a.keyword and not a.star]
    requires_grad = "requires_grad" in kwargs and m.matches(kwargs["requires_grad"], m.Name("True"))
    dtype = kwargs.get("dtype")
    if dtype is not None:
        is_float = isinstance(dtype, cst.Attribute) and dtype.attr.value in _FLOAT_DTYPES
    elif ctor in ("full",):
        is_float = len(positional) > 1 and m.matches(positional[1], m.Float() | m.UnaryOperation(expression=m.Float()))
    elif ctor in ("tensor", "arange"):
        is_float = any(m.matches(n, m.Float()) for a in positional for n in nodes(a))
    else:
        is_float = ctor not in ("randint", "randperm")
    shape = None
    if ctor in ("randn", "rand", "zeros", "ones", "empty", "full"):
        dims = positional[:1] if ctor == "full" or (positional and isinstance(positional[0], cst.Tuple)) else positional
        if len(dims) == 1 and isinstance(dims[0], (cst.Tuple, cst.List)):
            dims = [e.value for e in dims[0].elements]
        if dims and all(isinstance(d, cst.Integer) for d in dims):
            shape = tuple(int(d.value) for d in dims)
    return ArgInfo("float" if is_float else "tensor", expr, requires_grad, shape)


class TensorFacts:
    """Which names and expressions of one function are tensors, and which floating point.

    A name counts only when every binding of it in the function is a tensor expression
    (parameters described by inputs(), then a fixpoint over assignments).
    """

    def __init__(self, fn: cst.FunctionDef, *, cls: str | None, params: dict[str, ArgInfo]) -> None:
        """`cls`: the class `fn` is a method of; `params`: what inputs() passes its parameters."""
        self.fn = fn
        self.cls = cls
        self.params = params
        bindings: dict[str, list[cst.BaseExpression | None]] = {}
        for p in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params):
            arg = self.params.get(p.name.value)
            bindings.setdefault(p.name.value, []).append(arg.expr if arg and arg.kind in ("float", "tensor") else None)
        self.assignments: list[cst.SimpleStatementLine] = []
        for node in body_nodes(fn):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    for name in names_in_target(target.target):
                        single = isinstance(target.target, cst.Name) and len(node.targets) == 1
                        bindings.setdefault(name, []).append(node.value if single else None)
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                if isinstance(node.target, cst.Name):
                    value = node.target if isinstance(node, cst.AugAssign) else node.value
                    bindings.setdefault(node.target.value, []).append(value)
            elif isinstance(node, (cst.For, cst.CompFor)):
                for name in names_in_target(node.target):
                    bindings.setdefault(name, []).append(None)
            elif isinstance(node, (cst.WithItem, cst.ExceptHandler)) and getattr(node, "asname", None):
                for name in names_in_target(node.asname.name):
                    bindings.setdefault(name, []).append(None)
            elif isinstance(node, cst.NamedExpr):
                for name in names_in_target(node.target):
                    bindings.setdefault(name, []).append(None)
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    bindings.setdefault(item.name.value, []).append(None)
        self.assigned = set(bindings)
        self.tensors: set[str] = set()
        self.floats: set[str] = set()
        changed = True
        while changed:  # least fixpoint, optimistic about a name's own earlier bindings (x = x + 1)
            changed = False
            for name, values in bindings.items():
                if name in self.tensors or not values or any(v is None for v in values):
                    continue
                self.tensors.add(name)
                if all(self.is_tensor(v) for v in values):
                    changed = True
                else:
                    self.tensors.discard(name)
        self.floats = set(self.tensors)
        changed = True
        while changed:  # greatest fixpoint: drop names with a binding that is not floating point
            changed = False
            for name in sorted(self.floats):
                if not all(self.is_float(v) for v in bindings[name]):
                    self.floats.discard(name)
                    changed = True

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.tensors
        if isinstance(expr, cst.Attribute):
            return self._self_attr(expr) in (self.cls.tensors if self.cls else {})
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value)
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, cst.Minus) and self.is_tensor(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            return not isinstance(expr.operator, (cst.BitOr, cst.BitAnd, cst.LeftShift, cst.RightShift)) and (
                self.is_tensor(expr.left) or self.is_tensor(expr.right))
        if isinstance(expr, cst.IfExp):
            return self.is_tensor(expr.body) and self.is_tensor(expr.orelse)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr) is not None
        return False

    def is_float(self, expr: cst.BaseExpression) -> bool:
        """True for an expression that is a floating-point tensor."""
        if not self.is_tensor(expr):
            return False
        if isinstance(expr, cst.Name):
            return expr.value in self.floats
        if isinstance(expr, cst.Attribute):
            return bool(self.cls and self.cls.tensors.get(self._self_attr(expr) or "", False))
        if isinstance(expr, cst.Subscript):
            return self.is_float(expr.value)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_float(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Divide):
                return True
            return any(self.is_float(s) or m.matches(s, m.Float()) for s in (expr.left, expr.right))
        if isinstance(expr, cst.IfExp):
            return self.is_float(expr.body) and self.is_float(expr.orelse)
        return self._call_kind(expr) == "float"

    def _self_attr(self, expr: cst.Attribute) -> str | None:
        return expr.attr.value if m.matches(expr.value, m.Name("self")) else None

    def _call_kind(self, call: cst.Call) -> str | None:
        """'float', 'tensor' (dtype unknown or integral) or None (not known to be a tensor)."""
        func = call.func
        name = dotted(func) or ""
        if name.startswith("self.") and self.cls and name.count(".") == 1:
            layer = self.cls.layers.get(name.split(".")[1])
            return "float" if layer in _TENSOR_LAYERS else None
        first = call.args[0].value if call.args and not call.args[0].keyword else None
        for prefix in ("torch.nn.functional.", "F.", "torch.special.", "torch.linalg.", "torch."):
            if name.startswith(prefix) and name.count(".") == prefix.count("."):
                op = name[len(prefix):]
                if op in CONSTRUCTORS:
                    return literal_arg(call).kind if literal_arg(call).kind in ("float", "tensor") else None
                if op in ("cat", "stack") and isinstance(first, (cst.List, cst.Tuple)) and first.elements:
                    inner = first.elements[0].value
                    return ("float" if self.is_float(inner) else "tensor") if self.is_tensor(inner) else None
                if op in ("max", "min") and len(call.args) > 1:
                    return None
                return self._op_kind(op, first)
        if isinstance(func, cst.Attribute) and self.is_tensor(func.value):
            if func.attr.value in ("max", "min") and call.args:
                return None  # (values, indices) along a dim
            return self._op_kind(func.attr.value, func.value)
        return None

    def _op_kind(self, op: str, operand: cst.BaseExpression | None) -> str | None:
        if op in _FLOATING:
            return "float"
        if op in _INTEGRAL:
            return "tensor"
        if op in _PRESERVING and operand is not None and self.is_tensor(operand):
            return "float" if self.is_float(operand) else "tensor"
        return None

    def float_assignments(self) -> list[tuple[cst.SimpleStatementLine, str, cst.BaseExpression]]:
        """`name = <floating-point tensor expression>` statements of the function's body."""
        found = []
        for node in body_nodes(self.fn):
            if m.matches(node, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())])])):
                assign = node.body[0]
                if self.is_float(assign.value) and assign.targets[0].target.value in self.floats:
                    found.append((node, assign.targets[0].target.value, assign.value))
        return found
