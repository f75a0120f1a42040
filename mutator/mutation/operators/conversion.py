"""D: missing type conversion.

Operators that make the compiled region cross between Python values and tensors where
Dynamo must insert (or must not forget) a conversion: Python scalars become 0-d tensors,
tensor reductions become Python scalars, sizes go through tensors, dtypes and devices
through strings, `is None` tests are respelled or introduced, tensors round-trip
through numpy and lists.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._positions import ValueSites
from mutator.mutation.operators._templates import operand_code, parse_lines
from mutator.mutation.tree import after_docstring, code

_NUMBER = m.Integer() | m.Float() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())
_ARITHMETIC = (m.Add() | m.Subtract() | m.Multiply() | m.Divide() | m.FloorDivide() | m.Modulo() | m.Power())
_ORDERING = m.Equal() | m.NotEqual() | m.LessThan() | m.GreaterThan() | m.LessThanEqual() | m.GreaterThanEqual()
# operands that make `*`/`+`/`%` mean sequence repetition, concatenation or formatting
_SEQUENCE = (m.SimpleString() | m.ConcatenatedString() | m.FormattedString() | m.List() | m.Tuple() | m.ListComp()
             | m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("str")))


class ScalarToTensor(ValueSites):
    family = "D"
    name = "scalar_to_tensor"
    DESCRIPTION = ("Turn a Python number used in arithmetic or a comparison of the compiled region into a 0-d "
                   "tensor (torch.tensor, as_tensor, scalar_tensor, full).")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._operands: set[int] = set()
        self._rounding = 0

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if m.matches(node.operator, _ARITHMETIC) and not m.matches(node.left, _SEQUENCE) \
                and not m.matches(node.right, _SEQUENCE):
            self._operands.update((id(node.left), id(node.right)))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and m.matches(node.comparisons[0].operator, _ORDERING):
            self._operands.update((id(node.left), id(node.comparisons[0].comparator)))

    # round(tensor) has no __round__; the builtins below need a Python number or accept both poorly
    def visit_Call(self, node: cst.Call) -> None:
        self._rounding += m.matches(node.func, m.Name("round") | m.Name("format") | m.Name("chr"))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self._rounding -= m.matches(original_node.func, m.Name("round") | m.Name("format") | m.Name("chr"))
        return updated_node

    @m.leave(_NUMBER)
    def _number(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if id(original_node) not in self._operands or self._rounding or not self.value_site(original_node):
            return updated_node
        value = code(updated_node)
        is_float = m.matches(original_node, m.Float() | m.UnaryOperation(expression=m.Float()))
        forms = ["torch.tensor({v})", "torch.as_tensor({v})", "torch.full((), {v})"]
        forms.append("torch.scalar_tensor({v})" if is_float else "torch.tensor({v}, dtype=torch.int64)")
        self.add_import("torch")
        return cst.parse_expression(self.rng.choice(forms).format(v=value))


_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "prod", "norm", "std", "var", "median",
                         "all", "any", "count_nonzero"})
_REDUCTION = (m.Call(func=m.Attribute(value=m.DoesNotMatch(m.Name("torch") | m.Name("np") | m.Name("numpy")),
                                      attr=m.Name(m.MatchIfTrue(lambda n: n in _REDUCTIONS))), args=[])
              | m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(lambda n: n in _REDUCTIONS))),
                       args=[m.Arg(keyword=None, star="")]))
_TO_PYTHON = m.Call(func=m.Name("float") | m.Name("int"), args=[m.Arg(value=~(m.SimpleString() | m.FormattedString()),
                                                                       keyword=None, star="")])
_ROUND_TRIPS = ["torch.tensor({e}.item())", "torch.as_tensor(float({e}))", "torch.scalar_tensor({e}.item())",
                "torch.full((), {e}.item())"]


class TensorToScalar(Operator):
    family = "D"
    name = "tensor_to_scalar"
    DESCRIPTION = ("Convert a tensor reduction of the compiled region to a Python scalar with float()/.item() "
                   "(round-tripping back to a tensor outside arithmetic), or route float()/int() through a tensor.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._numeric_operands: set[int] = set()

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if m.matches(node.operator, m.Add() | m.Subtract() | m.Multiply()):
            self._numeric_operands.update((id(node.left), id(node.right)))

    @m.leave(_REDUCTION | _TO_PYTHON)
    def _convert(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self.is_site(original_node):
            return updated_node
        self.add_import("torch")
        if m.matches(original_node, _TO_PYTHON):
            converter = original_node.func.value  # type: ignore[attr-defined]
            return cst.parse_expression(f"{converter}(torch.as_tensor({code(updated_node.args[0].value)}))")
        e = code(updated_node)
        if id(original_node) in self._numeric_operands and self.rng.random() < 0.6:
            return cst.parse_expression(self.rng.choice(["float({e})", "{e}.item()"]).format(e=e))
        return cst.parse_expression(self.rng.choice(_ROUND_TRIPS).format(e=e))


_SIZE_INT = (m.Subscript(value=m.Attribute(attr=m.Name("shape")), slice=[m.SubscriptElement(m.Index())])
             | m.Call(func=m.Attribute(attr=m.Name("size")), args=[m.Arg(keyword=None, star="")])
             | m.Call(func=m.Attribute(attr=m.Name("dim") | m.Name("numel")), args=[])
             | m.Attribute(attr=m.Name("ndim"))
             | m.Call(func=m.Name("len"), args=[m.Arg(keyword=None, star="")]))
_SIZE_WHOLE = m.Attribute(attr=m.Name("shape")) | m.Call(func=m.Attribute(attr=m.Name("size")), args=[])
# calls whose positional arguments are sizes: a 0-d integer tensor is accepted there as is
_SIZE_TAKERS = frozenset({"zeros", "ones", "empty", "randn", "rand", "arange", "view", "reshape", "expand", "repeat",
                          "new_zeros", "new_ones", "new_empty", "range", "narrow", "tile"})
_INT_FORMS = ["int(torch.tensor({s}))", "torch.tensor({s}).item()", "operator.index(torch.tensor({s}))",
              "int(torch.as_tensor({s}))", "torch.tensor({s}).tolist()"]
_SHAPE_FORMS = ["torch.Size(torch.tensor({s}).tolist())",
                "torch.Size(int(d) for d in torch.tensor({s}, dtype=torch.int64))"]


class SizeThroughTensor(ValueSites):
    family = "D"
    name = "size_through_tensor"
    DESCRIPTION = ("Route a size of the compiled region (x.shape[i], x.size(i), len(x), numel, dim, x.shape) "
                   "through a tensor and back, or pass it to a size-taking call as a 0-d tensor.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._size_args: set[int] = set()

    def visit_Subscript_slice(self, node: cst.Subscript) -> None:
        pass  # sizes used as indices are wanted here: do not shield subscripts

    def leave_Subscript_slice(self, node: cst.Subscript) -> None:
        pass

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
        if name in _SIZE_TAKERS:
            self._size_args.update(id(a.value) for a in node.args if a.keyword is None and not a.star)

    @m.leave(_SIZE_INT | _SIZE_WHOLE)
    def _size(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.value_site(original_node):
            return updated_node
        whole = not m.matches(original_node, _SIZE_INT)
        self.add_import("torch")
        s = code(updated_node)
        if whole:
            form = self.rng.choice(_SHAPE_FORMS)
        elif id(original_node) in self._size_args and self.rng.random() < 0.5:
            form = "torch.tensor({s})"
        else:
            form = self.rng.choice(_INT_FORMS)
            if form.startswith("operator."):
                self.add_import("operator")
        return cst.parse_expression(form.format(s=s))


_DTYPES = frozenset({"float32", "float", "float64", "double", "float16", "half", "bfloat16", "int64", "long", "int32",
                     "int", "int16", "short", "int8", "uint8", "bool", "complex64"})
_CASTS = {"float": ("float32", "FloatTensor"), "double": ("float64", "DoubleTensor"), "half": ("float16", "HalfTensor"),
          "long": ("int64", "LongTensor"), "int": ("int32", "IntTensor"), "bool": ("bool", "BoolTensor"),
          "short": ("int16", "ShortTensor")}
_DTYPE_ATTR = m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(lambda n: n in _DTYPES)))
_CAST_CALL = m.Call(func=m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _CASTS))), args=[])
_META_READ = m.Attribute(value=m.DoesNotMatch(m.Name("torch")), attr=m.Name("dtype") | m.Name("device"))
# "cpu" where a torch.device is accepted too: `device=` keywords and the argument of .to(); not autocast's device_type
_CPU = m.SimpleString(m.MatchIfTrue(lambda s: s.strip("\"'") == "cpu"))
_DEVICE_STRING = m.Arg(value=_CPU, keyword=m.Name("device")) | m.Call(func=m.Attribute(attr=m.Name("to")))
_ROUND_TRIP_HELPERS = {
    "dtype": ("def {h}(dtype):\n    \"\"\"The same dtype, looked up again by its name.\"\"\"\n"
              "    if isinstance(dtype, torch.dtype):\n        return getattr(torch, str(dtype).split('.')[-1])\n"
              "    return dtype\n"),
    "device": ("def {h}(device):\n    \"\"\"The same device, rebuilt from its string.\"\"\"\n"
               "    if isinstance(device, torch.device):\n        return torch.device(str(device))\n"
               "    return device\n"),
}


class DtypeDeviceStrings(ValueSites):
    family = "D"
    name = "dtype_device_strings"
    DESCRIPTION = ("Spell dtypes and devices of the compiled region through strings: getattr(torch, 'float32'), "
                   ".float() as .to()/.type('torch.FloatTensor'), x.dtype/x.device rebuilt from str(), "
                   "'cpu' as torch.device.")

    @m.leave(_DTYPE_ATTR | _CAST_CALL | _META_READ)
    def _dtype(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.value_site(original_node):
            return updated_node
        self.add_import("torch")
        if m.matches(original_node, _DTYPE_ATTR):
            name = original_node.attr.value  # type: ignore[attr-defined]
            return cst.parse_expression(self.rng.choice([f"getattr(torch, {name!r})",
                                                         f"getattr(torch, 'torch.{name}'.split('.')[-1])"]))
        if m.matches(original_node, _CAST_CALL):
            dtype, tensor_type = _CASTS[original_node.func.attr.value]  # type: ignore[attr-defined]
            receiver = code(updated_node.func.value)  # type: ignore[attr-defined]
            return cst.parse_expression(self.rng.choice(
                [f"{receiver}.to(torch.{dtype})", f"{receiver}.to(dtype=getattr(torch, {dtype!r}))",
                 f"{receiver}.type(torch.{dtype})", f"{receiver}.type({'torch.' + tensor_type!r})"]))
        kind = original_node.attr.value  # type: ignore[attr-defined]
        helper = self.fresh(f"{kind}_from_string")
        self.add_helper(_ROUND_TRIP_HELPERS[kind].format(h=helper))
        return cst.parse_expression(f"{helper}({code(updated_node)})")

    @m.leave(_DEVICE_STRING)
    def _device(self, original_node: cst.Arg | cst.Call, updated_node: cst.Arg | cst.Call) -> cst.Arg | cst.Call:
        if isinstance(original_node, cst.Call):  # x.to("cpu", ...): the first argument
            if not (original_node.args and m.matches(original_node.args[0], m.Arg(value=_CPU, keyword=None))):
                return updated_node
            site: cst.Arg = original_node.args[0]
        else:
            site = original_node
        if not self.value_site(site.value):
            return updated_node
        self.add_import("torch")
        device = cst.parse_expression(f"torch.device({code(site.value)})")
        if isinstance(updated_node, cst.Call):
            return updated_node.with_deep_changes(updated_node.args[0], value=device)
        return updated_node.with_changes(value=device)


_IS_NONE = m.Comparison(comparisons=[m.ComparisonTarget(operator=m.Is() | m.IsNot(), comparator=m.Name("None"))])
_NONE_FORMS = {
    "is": ["isinstance({e}, type(None))", "type({e}) is type(None)", "not ({e} is not None)", "({e} is None) is True"],
    "is not": ["not isinstance({e}, type(None))", "type({e}) is not type(None)", "not ({e} is None)",
               "({e} is not None) == True"],
}
_NORMALISE = ["if {p} is None:\n    {p} = {d}\n", "{p} = {d} if {p} is None else {p}\n",
              "{p} = {p} if {p} is not None else {d}\n"]


class NoneComparison(Operator):
    family = "D"
    name = "none_comparison"
    DESCRIPTION = ("Respell an `is None`/`is not None` test of the compiled region (isinstance/type checks), or give "
                   "a parameter a None default that the function body replaces with the old default.")

    @m.leave(_IS_NONE)
    def _test(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if not self.is_site(original_node):
            return updated_node
        op = "is" if m.matches(original_node.comparisons[0].operator, m.Is()) else "is not"
        form = self.rng.choice(_NONE_FORMS[op]).format(e=operand_code(updated_node.left))
        return cst.parse_expression(f"({form})" if updated_node.lpar else form)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        params = [p for p in (*original_node.params.params, *original_node.params.kwonly_params)
                  if p.default is not None and not m.matches(p.default, m.Name("None"))]
        if not params or not isinstance(original_node.body, cst.IndentedBlock) or not self.is_site(original_node):
            return updated_node
        chosen = self.rng.choice(params)
        name = chosen.name.value
        new_params = updated_node.params.with_deep_changes(
            next(p for p in (*updated_node.params.params, *updated_node.params.kwonly_params) if p.name.value == name),
            default=cst.Name("None"))
        statements = parse_lines(self.rng.choice(_NORMALISE).format(p=name, d=code(chosen.default)))
        body = list(updated_node.body.body)
        at = after_docstring(body, concatenated=False)
        body[at:at] = statements
        return updated_node.with_changes(params=new_params, body=updated_node.body.with_changes(body=body))


# torch functions and tensor methods that return one tensor (numpy arrays have none of these methods)
_TORCH_FUNCTIONS = frozenset({"zeros", "ones", "randn", "rand", "full", "arange", "linspace", "tensor", "zeros_like",
                              "ones_like", "full_like", "randn_like", "stack", "cat", "matmul", "mm", "bmm", "relu",
                              "sigmoid", "tanh", "sin", "cos", "exp", "log", "abs", "sqrt", "add", "mul", "sub", "div",
                              "where", "clamp", "softmax", "einsum", "outer", "flatten", "cumsum", "masked_fill"})
_TENSOR_METHODS = frozenset({"sin", "cos", "tanh", "relu", "exp", "abs", "clone", "sigmoid", "unsqueeze", "permute",
                             "matmul", "clamp", "softmax", "log_softmax", "tril", "triu", "expand", "expand_as",
                             "masked_fill", "sqrt", "pow", "neg", "contiguous", "new_zeros", "new_ones", "new_full",
                             "new_tensor", "index_select", "gather", "type_as", "narrow", "mm", "bmm", "square"})
_MODULES = m.Name("torch") | m.Name("np") | m.Name("numpy") | m.Name("math")
_TENSOR_CALL = (m.Call(func=m.Attribute(value=m.Name("torch"),
                                        attr=m.Name(m.MatchIfTrue(lambda n: n in _TORCH_FUNCTIONS))))
                | m.Call(func=m.Attribute(value=m.DoesNotMatch(_MODULES),
                                          attr=m.Name(m.MatchIfTrue(lambda n: n in _TENSOR_METHODS)))))
_ROUND_TRIP_BODIES = [
    "out = torch.from_numpy(t.detach().numpy().copy())",
    "out = torch.as_tensor(numpy.asarray(t.detach()))",
    "out = torch.tensor(t.detach().numpy())",
    "out = torch.from_numpy(numpy.array(t.detach().numpy()))",
    "out = torch.tensor(t.tolist(), dtype=t.dtype)",
]


class NumpyRoundTrip(Operator):
    family = "D"
    name = "numpy_round_trip"
    DESCRIPTION = ("Send a tensor computed in the compiled region through numpy (or a Python list) and back "
                   "with from_numpy/as_tensor/tensor, keeping dtype and requires_grad.")

    @m.leave(_TENSOR_CALL)
    def _tensor(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self.is_site(original_node):
            return updated_node
        body = self.rng.choice(_ROUND_TRIP_BODIES)
        helper = self.fresh("via_numpy" if "numpy" in body else "via_list")
        self.add_import("torch")
        if "numpy." in body:
            self.add_import("numpy")
        # anything that is not a plain float/int/bool CPU tensor passes through untouched
        self.add_helper(
            f"def {helper}(t):\n"
            f"    if type(t) is not torch.Tensor or t.dtype in (torch.bfloat16, torch.complex32) or t.is_sparse:\n"
            f"        return t\n"
            f"    {body}\n"
            f"    return out.requires_grad_() if t.requires_grad else out\n")
        return cst.parse_expression(f"{helper}({code(updated_node)})")
