"""F1, F2: uncaptured side effects on attributes and tensors.

This module also holds the small static analyses that the side-effect, guard and shape
operators share (`ProgramFacts`): which expressions of a region function are tensors,
and which of those are floating point; what `inputs()` returns; which objects a
function may write attributes on. They are deliberately conservative: an operator that
cannot tell a tensor from a list declines rather than writing `list.add_`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.tree import children

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
_TENSOR_FNS = _PRESERVING | _FLOATING | _INTEGRAL | {"tensor", "zeros", "ones", "empty", "full", "arange", "eye"}
_CONSTRUCTORS = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "arange", "linspace", "tensor",
                           "eye", "randint", "randperm"})
_FLOAT_DTYPES = frozenset({"float", "float32", "float64", "double", "half", "float16", "bfloat16"})
# nn layers whose call returns one floating-point tensor.
_TENSOR_LAYERS = frozenset("""
    Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d LayerNorm BatchNorm1d BatchNorm2d
    GroupNorm Embedding ReLU GELU SiLU Tanh Sigmoid Softmax Dropout Identity Sequential Flatten LeakyReLU
    ELU Softplus Hardtanh MaxPool1d MaxPool2d AvgPool1d AvgPool2d InstanceNorm1d RMSNorm
""".split())
_PARAM_LAYERS = {"Linear": ("weight", "bias"), "Bilinear": ("weight", "bias"), "Conv1d": ("weight", "bias"),
                 "Conv2d": ("weight", "bias"), "LayerNorm": ("weight", "bias"), "Embedding": ("weight",),
                 "BatchNorm1d": ("weight", "bias"), "GroupNorm": ("weight", "bias")}
# Classes a receiver must not derive from: their instances refuse (or intercept) new attributes.
_CLOSED_BASES = frozenset({"tuple", "NamedTuple", "namedtuple", "list", "dict", "set", "str", "int", "float",
                           "Tensor", "Enum", "IntEnum", "frozenset", "bytes", "OrderedDict", "defaultdict",
                           "TypedDict", "Function", "type", "Exception", "BaseException"})
_NO_ATTR_METHODS = frozenset({"__setattr__", "__getattr__", "__getattribute__", "__delattr__", "__new__",
                              "__init_subclass__", "__get__", "__set__", "__set_name__", "__delete__",
                              "__torch_function__", "__torch_dispatch__", "__class_getitem__", "__repr__",
                              "__str__", "__format__", "__hash__", "__eq__", "__ne__", "__init__",
                              "__post_init__", "backward"})


def code(node: cst.CSTNode) -> str:
    """Source text of one node."""
    return cst.Module([]).code_for_node(node)


def dotted(expr: cst.BaseExpression) -> str | None:
    """'torch.nn.functional.relu' for an attribute chain of names, else None."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


@lru_cache(maxsize=2048)  # nodes hash by identity; `children` is costly in libcst
def statements(fn: cst.FunctionDef) -> tuple[cst.CSTNode, ...]:
    """Every node of `fn`'s body, nested defs, classes and lambdas excluded."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = children(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        found.append(node)
        stack.extend(children(node))
    return tuple(found)


def body_start(block: cst.BaseSuite) -> int:
    """Index after a docstring: where statements can go at the top of a body."""
    body = block.body if isinstance(block, cst.IndentedBlock) else ()
    if body and m.matches(body[0], m.SimpleStatementLine([m.Expr(m.SimpleString() | m.ConcatenatedString())])):
        return 1
    return 0


def insert_at_top(fn: cst.FunctionDef, new: list[cst.BaseStatement]) -> cst.FunctionDef:
    if not isinstance(fn.body, cst.IndentedBlock):
        return fn
    body = list(fn.body.body)
    at = body_start(fn.body)
    body[at:at] = new
    return fn.with_changes(body=fn.body.with_changes(body=body))


def atom(expr: cst.BaseExpression) -> str:
    """Source of `expr`, parenthesised unless it already binds tighter than attribute access."""
    text = code(expr.with_changes(lpar=(), rpar=()) if hasattr(expr, "lpar") else expr)
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return text
    return f"({text})"


def parse_lines(text: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(text.strip() + "\n").body)


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """What one element of `inputs()` is, as far as its source says."""

    kind: str  # "float" (floating-point tensor), "tensor" (other dtype), "object", "scalar", "unknown"
    expr: cst.BaseExpression
    requires_grad: bool = False
    shape: tuple[int, ...] | None = None
    cls: str | None = None  # the user class of an "object"


@dataclass
class ClassInfo:
    node: cst.ClassDef
    is_module: bool = False
    open: bool = True  # instances accept new attributes through plain setattr
    layers: dict[str, str] = field(default_factory=dict)  # self.lin = nn.Linear(...) -> {"lin": "Linear"}
    tensors: dict[str, bool] = field(default_factory=dict)  # parameters, buffers, tensor attributes -> is float
    scalars: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.k = <literal> in __init__
    class_scalars: dict[str, cst.BaseExpression] = field(default_factory=dict)  # k = <literal> in the body
    containers: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.k = [...] / {...} in __init__


class ProgramFacts:
    """Static facts about one program, computed from its tree (no code is run)."""

    _cache: OrderedDict[int, tuple[cst.Module, ProgramFacts]] = OrderedDict()

    @classmethod
    def of(cls, ctx: MutationContext) -> ProgramFacts:
        """The facts of `ctx`'s tree, shared by the operators applied to it (both passes, all operators)."""
        key = id(ctx.module)
        hit = cls._cache.get(key)
        if hit is not None and hit[0] is ctx.module:
            cls._cache.move_to_end(key)
            return hit[1]
        facts = cls(ctx)
        cls._cache[key] = (ctx.module, facts)
        if len(cls._cache) > 64:
            cls._cache.popitem(last=False)
        return facts

    def __init__(self, ctx: MutationContext) -> None:
        self.ctx = ctx
        body = ctx.module.body
        self.classes = {s.name.value: ClassInfo(s) for s in body if isinstance(s, cst.ClassDef)}
        self.owner: dict[int, str] = {}
        for name, info in self.classes.items():
            for item in info.node.body.body:
                if isinstance(item, cst.FunctionDef):
                    self.owner[id(item)] = name
        for name in self.classes:
            self._describe(name)
        self.instances: dict[str, str] = {}  # top-level NAME = UserClass(...)
        for stmt in body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())], m.Call(m.Name()))])):
                assign = stmt.body[0]
                if assign.value.func.value in self.classes:
                    self.instances[assign.targets[0].target.value] = assign.value.func.value
        self.inputs = self._inputs()
        self._facts: dict[int, TensorFacts] = {}
        self._receivers: dict[int, list[str]] = {}
        # functions handed to functorch transforms (vmap, grad, ...): no .data, no requires_grad_ there
        self.transformed: set[str] = set()
        # attribute names the program deletes or names in strings: their presence is not guaranteed
        self.fragile_attrs: set[str] = set()
        for node in _walk(ctx.module):
            if isinstance(node, cst.Call) and (dotted(node.func) or "").rsplit(".", 1)[-1] in _TRANSFORMS:
                self.transformed.update(n.value for a in node.args for n in _walk(a.value) if isinstance(n, cst.Name))
            elif isinstance(node, cst.Del):
                self.fragile_attrs.update(n.attr.value for n in _walk(node.target) if isinstance(n, cst.Attribute))
            elif isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
                self.fragile_attrs.add(node.evaluated_value)

    # -- classes ----------------------------------------------------------------------------
    def _describe(self, name: str) -> None:
        info = self.classes[name]
        for base in info.node.bases:
            base_name = dotted(base.value) or ""
            last = base_name.rsplit(".", 1)[-1]
            if base_name.startswith(("torch.nn.", "nn.")) or last == "Module":
                info.is_module = True
            elif last in self.classes and last != name:  # defined earlier, so already described
                info.is_module |= self.classes[last].is_module
                info.open &= self.classes[last].open
            if last in _CLOSED_BASES or isinstance(base.value, cst.Call):
                info.open = False
        for deco in info.node.decorators:
            text = code(deco.decorator)
            if "dataclass" in text and ("frozen" in text or "slots" in text):
                info.open = False
        for item in info.node.body.body:
            if isinstance(item, cst.FunctionDef) and item.name.value in ("__setattr__", "__delattr__",
                                                                         "__getattribute__"):
                info.open = False
            if isinstance(item, cst.SimpleStatementLine):
                for small in item.body:
                    if m.matches(small, m.Assign([m.AssignTarget(m.Name("__slots__"))])):
                        info.open = False
                    elif m.matches(small, m.Assign([m.AssignTarget(m.Name())], _LITERAL)):
                        info.class_scalars[small.targets[0].target.value] = small.value
                    elif m.matches(small, m.AnnAssign(m.Name(), value=_LITERAL)):
                        info.class_scalars[small.target.value] = small.value
            if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
                self._describe_init(info, item)

    def _describe_init(self, info: ClassInfo, init: cst.FunctionDef) -> None:
        for node in statements(init):
            if m.matches(node, m.Assign([m.AssignTarget(m.Attribute(m.Name("self"), m.Name()))])):
                attr, value = node.targets[0].target.attr.value, node.value
                call = dotted(value.func) if isinstance(value, cst.Call) else None
                if call and call.rsplit(".", 1)[-1] == "Parameter":
                    info.tensors[attr] = True
                elif call and call.startswith(("torch.nn.", "nn.")):
                    info.layers[attr] = call.rsplit(".", 1)[-1]
                elif call and call.startswith("torch.") and call.rsplit(".", 1)[-1] in _CONSTRUCTORS:
                    info.tensors[attr] = literal_arg(value).kind == "float"
                elif m.matches(value, _LITERAL):
                    info.scalars[attr] = value
                elif isinstance(value, (cst.List, cst.Dict)) and value.elements:
                    info.containers[attr] = value
            elif m.matches(node, m.Call(m.Attribute(m.Name("self"), m.Name("register_buffer")),
                                        [m.Arg(m.SimpleString()), m.Arg(), m.ZeroOrMore()])):
                buffer = node.args[0].value.evaluated_value
                if isinstance(buffer, str):
                    info.tensors[buffer] = literal_arg(node.args[1].value).kind == "float"

    def owner_of(self, fn: cst.FunctionDef) -> ClassInfo | None:
        name = self.owner.get(id(fn))
        return self.classes.get(name) if name else None

    def is_method(self, fn: cst.FunctionDef) -> bool:
        return (id(fn) in self.owner and bool(fn.params.params) and fn.params.params[0].name.value == "self"
                and not any(dotted(d.decorator) in ("staticmethod", "classmethod") for d in fn.decorators))

    # -- inputs() ----------------------------------------------------------------------------
    def _inputs(self) -> list[ArgInfo] | None:
        node = self.ctx.top_level("inputs") if self.ctx.is_harness else None
        if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
            return None
        last = node.body.body[-1]
        if not m.matches(last, m.SimpleStatementLine([m.Return(m.DoNotCare())])) or last.body[0].value is None:
            return None
        value = last.body[0].value
        elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
        if elements is None:
            return [self.arg_info(value)]
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return [self.arg_info(e.value) for e in elements]

    def arg_info(self, expr: cst.BaseExpression) -> ArgInfo:
        info = literal_arg(expr)
        if info.kind != "unknown":
            return info
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in self.classes:
            return ArgInfo("object", expr, cls=expr.func.value)
        if isinstance(expr, cst.Name) and expr.value in self.instances:
            return ArgInfo("object", expr, cls=self.instances[expr.value])
        return info

    def entry_params(self, fn: cst.FunctionDef) -> dict[str, ArgInfo]:
        """Parameters of a harness entry, described by the matching inputs() elements."""
        if self.inputs is None or not any(fn is e for e in self.ctx.entries):
            return {}
        params = list(fn.params.params)
        if self.is_method(fn):
            params = params[1:]
        return {p.name.value: a for p, a in zip(params, self.inputs)}

    # -- functions ---------------------------------------------------------------------------
    def facts(self, fn: cst.FunctionDef) -> TensorFacts:
        if id(fn) not in self._facts:
            self._facts[id(fn)] = TensorFacts(self, fn)
        return self._facts[id(fn)]

    def receivers(self, fn: cst.FunctionDef) -> list[str]:
        """Expressions naming user objects or modules that `fn` may set attributes on."""
        if id(fn) not in self._receivers:
            self._receivers[id(fn)] = self._find_receivers(fn)
        return self._receivers[id(fn)]

    def _find_receivers(self, fn: cst.FunctionDef) -> list[str]:
        found: list[str] = []
        owner = self.owner_of(fn)
        if owner is not None and owner.open and self.is_method(fn) and fn.name.value not in _NO_ATTR_METHODS:
            found.append("self")
        maybe_none = {n.left.value for n in statements(fn) if m.matches(
            n, m.Comparison(m.Name(), [m.ComparisonTarget(m.Is() | m.IsNot() | m.Equal() | m.NotEqual(), m.Name("None"))]))}
        for name, arg in self.entry_params(fn).items():
            if arg.kind == "object" and self.classes[arg.cls].open and name not in maybe_none:
                found.append(name)
        local = self.facts(fn).assigned
        for node in statements(fn):
            if isinstance(node, cst.Name) and node.value in self.instances and node.value not in local:
                if self.classes[self.instances[node.value]].open and node.value not in found:
                    found.append(node.value)
        return found

    def module_of(self, receiver: str, fn: cst.FunctionDef) -> ClassInfo | None:
        """The class of `receiver` as seen from `fn`, when it is known."""
        if receiver == "self":
            return self.owner_of(fn)
        arg = self.entry_params(fn).get(receiver)
        cls = arg.cls if arg is not None else self.instances.get(receiver)
        return self.classes.get(cls) if cls else None


_LITERAL = m.Integer() | m.Float() | m.Name("True") | m.Name("False") | m.SimpleString() | m.UnaryOperation(
    m.Minus(), m.Integer() | m.Float())


_TRANSFORMS = frozenset({"vmap", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "vjp", "jvp",
                         "functional_call", "checkpoint"})


def literal_arg(expr: cst.BaseExpression) -> ArgInfo:
    """Describe a value from its source: a tensor constructor, a scalar literal, or unknown."""
    if m.matches(expr, _LITERAL):
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
    if not name.startswith("torch.") or name.split(".", 1)[1] not in _CONSTRUCTORS:
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
        is_float = any(m.matches(n, m.Float()) for a in positional for n in _walk(a))
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


def _walk(node: cst.CSTNode):  # type: ignore[no-untyped-def]
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


class TensorFacts:
    """Which names and expressions of one function are tensors, and which floating point.

    A name counts only when every binding of it in the function is a tensor expression
    (parameters described by inputs(), then a fixpoint over assignments).
    """

    def __init__(self, facts: ProgramFacts, fn: cst.FunctionDef) -> None:
        self.program = facts
        self.fn = fn
        self.cls = facts.owner_of(fn) if facts.is_method(fn) else None
        self.params = facts.entry_params(fn)
        bindings: dict[str, list[cst.BaseExpression | None]] = {}
        for p in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params):
            arg = self.params.get(p.name.value)
            bindings.setdefault(p.name.value, []).append(arg.expr if arg and arg.kind in ("float", "tensor") else None)
        self.assignments: list[cst.SimpleStatementLine] = []
        for node in statements(fn):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    for name in _target_names(target.target):
                        single = isinstance(target.target, cst.Name) and len(node.targets) == 1
                        bindings.setdefault(name, []).append(node.value if single else None)
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                if isinstance(node.target, cst.Name):
                    value = node.target if isinstance(node, cst.AugAssign) else node.value
                    bindings.setdefault(node.target.value, []).append(value)
            elif isinstance(node, (cst.For, cst.CompFor)):
                for name in _target_names(node.target):
                    bindings.setdefault(name, []).append(None)
            elif isinstance(node, (cst.WithItem, cst.ExceptHandler)) and getattr(node, "asname", None):
                for name in _target_names(node.asname.name):
                    bindings.setdefault(name, []).append(None)
            elif isinstance(node, cst.NamedExpr):
                for name in _target_names(node.target):
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
                if op in _CONSTRUCTORS:
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
        for node in statements(self.fn):
            if m.matches(node, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())])])):
                assign = node.body[0]
                if self.is_float(assign.value) and assign.targets[0].target.value in self.floats:
                    found.append((node, assign.targets[0].target.value, assign.value))
        return found




def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


# -- operator scaffolding -------------------------------------------------------------------------
class FloatAssignmentSite(Operator):
    """Sites are `name = <floating-point tensor>` statements of the region; subclasses add what follows.

    `follow` returns the statements that replace the site (the original first, usually),
    or None to decline.
    """

    NEEDS_RECEIVER = False

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)
        self._sites: dict[int, tuple[cst.FunctionDef, str, cst.BaseExpression]] = {}
        for fn in ctx.region:
            if self.NEEDS_RECEIVER and not self.facts.receivers(fn):
                continue
            for stmt, name, value in self.facts.facts(fn).float_assignments():
                if self.accepts(fn, name, value):
                    self._sites[id(stmt)] = (fn, name, value)

    def accepts(self, fn: cst.FunctionDef, name: str, value: cst.BaseExpression) -> bool:
        return True

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        site = self._sites.get(id(original_node))
        if site is None or not self.is_site(original_node):
            return updated_node
        replacement = self.follow(updated_node, *site)
        if replacement is None:
            return updated_node
        return cst.FlattenSentinel(replacement)

    def follow(self, stmt: cst.SimpleStatementLine, fn: cst.FunctionDef, name: str,
               value: cst.BaseExpression) -> list[cst.BaseStatement] | None:
        raise NotImplementedError


# -- F1: object attribute updates -----------------------------------------------------------------
class AttrCounter(Operator):
    family = "F1"
    name = "attr_counter"
    DESCRIPTION = "Count calls in a new attribute of self or a user object (getattr default, hasattr lazy init, __dict__, setattr)."

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        receivers = self.facts.receivers(original_node) if id(original_node) in self.ctx.region_ids else []
        if not receivers or not self.is_site(original_node):
            return updated_node
        r, c = self.rng.choice(receivers), self.fresh("calls")
        forms = [
            f'{r}.{c} = getattr({r}, "{c}", 0) + 1',
            f'if not hasattr({r}, "{c}"):\n    {r}.{c} = 0\n{r}.{c} += 1',
            f'{r}.__dict__["{c}"] = {r}.__dict__.get("{c}", 0) + 1',
            f'setattr({r}, "{c}", getattr({r}, "{c}", 0) + 1)',
        ]
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))


class LazyAttrCache(FloatAssignmentSite):
    family = "F1"
    name = "lazy_attr_cache"
    DESCRIPTION = "Lazily create an attribute from a tensor on the first call (hasattr/getattr/vars guard) and add it to that tensor."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_first")
        reduce = self.rng.choice(["sum", "mean", "amax"])
        cls = self.facts.module_of(r, fn)
        guards = [f'not hasattr({r}, "{c}")', f'getattr({r}, "{c}", None) is None', f'"{c}" not in vars({r})']
        store = f"{r}.{c} = {name}.detach().{reduce}()"
        if cls is not None and cls.is_module and self.rng.random() < 0.4:
            guards = guards[:2]
            store = f'{r}.register_buffer("{c}", {name}.detach().{reduce}())'
        text = f"if {self.rng.choice(guards)}:\n    {store}\n{name} = {name} + {r}.{c}"
        return [stmt, *parse_lines(text)]


class AlternateAttr(FloatAssignmentSite):
    family = "F1"
    name = "alternate_attr"
    DESCRIPTION = "Create an attribute on one call and read then delete it on the next (del, delattr, __dict__.pop)."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_carry")
        delete = self.rng.choice([f"del {r}.{c}", f'delattr({r}, "{c}")', f'{r}.__dict__.pop("{c}")'])
        text = (f'if hasattr({r}, "{c}"):\n    {name} = {name} + {r}.{c}\n    {delete}\n'
                f"else:\n    {r}.{c} = {name}.detach().mean()")
        return [stmt, *parse_lines(text)]


class DictEdit(FloatAssignmentSite):
    family = "F1"
    name = "dict_edit"
    DESCRIPTION = "Carry a tensor across calls through an object's __dict__ (update, setdefault, get/set) and read it back."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_seen")
        forms = [
            f'{r}.__dict__.update({{"{c}": {name}.detach().sum()}})\n{name} = {name} - {r}.__dict__["{c}"] * 0.5',
            f'{r}.__dict__.setdefault("{c}", {name}.detach().sum())\n{name} = {name} + {r}.{c}',
            (f'{c} = vars({r}).get("{c}")\n{r}.__dict__["{c}"] = {name}.detach().mean()\n'
             f"if {c} is not None:\n    {name} = {name} + {c}"),
        ]
        return [stmt, *parse_lines(self.rng.choice(forms))]


class ClassAttrUpdate(Operator):
    family = "F1"
    name = "class_attr_update"
    DESCRIPTION = "Mutate a class attribute from a method: a class-level counter, or an existing class value updated or shadowed."

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        owner = self.facts.owner_of(original_node)
        if (owner is None or not self.facts.is_method(original_node) or original_node.name.value in _NO_ATTR_METHODS
                or not self.is_site(original_node)):
            return updated_node
        c, cls_name = self.fresh("class_calls"), owner.node.name.value
        forms = [f'type(self).{c} = getattr(type(self), "{c}", 0) + 1', f'{cls_name}.{c} = getattr({cls_name}, "{c}", 0) + 1']
        read = {n.attr.value for n in statements(original_node)
                if m.matches(n, m.Attribute(m.Name("self") | m.Name(cls_name) | m.Call(m.Name("type")), m.Name()))}
        for attr, value in owner.class_scalars.items():
            if attr not in read:
                continue
            if m.matches(value, m.Float() | m.UnaryOperation(expression=m.Float())):
                forms.append(f"type(self).{attr} = type(self).{attr} * 0.5 + 0.25")
                if owner.open:
                    forms.append(f"self.{attr} = type(self).{attr} + 0.5")
            elif m.matches(value, m.Name("True") | m.Name("False")) and owner.open:
                forms.append(f"self.{attr} = not type(self).{attr}")
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))


# -- F2: tensor and metadata updates --------------------------------------------------------------
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
        copy = f"{atom(operand)}.clone()"
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
        alloc = f"{bind}{buf} = torch.empty(0, dtype={atom(operand)}.dtype)"
        call = f"torch.{op}({', '.join(args)}, out={buf})"
        if not self._grad_free(fn, value):
            call = f"with torch.no_grad():\n    {call}"
        self.add_import("torch")
        return parse_lines(f"{alloc}\n{call}\n{name} = {buf}")

    def _grad_free(self, fn: cst.FunctionDef, value: cst.BaseExpression) -> bool:
        """Only inputs() tensors without requires_grad feed `value` (out= refuses autograd inputs)."""
        params = self.facts.entry_params(fn)
        facts = self.facts.facts(fn)
        for node in _walk(value):
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


class InplaceSibling(Operator):
    family = "F2"
    name = "inplace_sibling"
    DESCRIPTION = "Replace an in-place op by a sibling that keeps the program valid (add_/sub_/mul_/div_, clamp_/clamp_min_/clamp_max_, zero_/fill_, +=/-=/*=)."

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)
        self._float_aug: set[int] = set()  # augmented assignments on floating-point tensors
        for fn in ctx.region:
            facts = self.facts.facts(fn)
            for node in statements(fn):
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
        return [("clamp_", [cst.Arg(bound, keyword=cst.Name(side),
                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]),
                (other, [cst.Arg(bound)])]
    found = []
    if bounds.get("min") is not None and not m.matches(bounds["min"], m.Name("None")):
        found.append(("clamp_min_", [cst.Arg(bounds["min"])]))
    if bounds.get("max") is not None and not m.matches(bounds["max"], m.Name("None")):
        found.append(("clamp_max_", [cst.Arg(bounds["max"])]))
    return found


class InputViewInplace(Operator):
    family = "F2"
    name = "input_view_inplace"
    DESCRIPTION = "Mutate a view of a tensor argument in place at the top of the compiled entry (x[0].mul_, narrow, diagonal, unsqueeze)."

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)

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
