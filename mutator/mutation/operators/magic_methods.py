"""A3: magic methods.

Operands of the region's operators are wrapped in objects whose dunders compute the
original operation; container protocols (in, len, for, indexing, truth) go through user
objects; a class's own dunder moves into a sibling of its protocol; routers pass a value
through a torch.Tensor subclass with __torch_function__ or a namedtuple subclass with
overridden operators.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._positions import Scoped, Stores
from mutator.mutation.operators._routing import HelperRouter, ValueRouter
from mutator.mutation.operators._templates import define_helpers, rewrite_returns, template_expr
from mutator.mutation.tree import class_body_names, code

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
          "@": "matmul", "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift"}
UNARY = {"-": "neg", "+": "pos", "~": "invert"}
COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_NUMBERS = m.Integer() | m.Float() | m.Imaginary() | m.UnaryOperation(operator=m.Minus(),
                                                                        expression=m.Integer() | m.Float())


class WrapOperandInDunderClass(Scoped):
    family = "A3"
    name = "wrap_operand_in_dunder_class"
    DESCRIPTION = ("Wrap one operand of a binary, unary or comparison operator in the region in a user object whose "
                   "__op__/__rop__ override computes the original operation.")

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation,
                              updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        if not self.in_plain_function or not self.is_site(original_node):
            return updated_node
        symbol = code(updated_node.operator).strip()
        if m.matches(updated_node.left, _NUMBERS):  # a number's own __op__ gives up, so ours runs reflected
            wrapper = self._operand(f"__r{BINARY[symbol]}__", f"return other {symbol} self.value")
            return updated_node.with_changes(right=template_expr("{w}({v})", w=wrapper, v=updated_node.right))
        wrapper = self._operand(f"__{BINARY[symbol]}__", f"return self.value {symbol} other")
        return updated_node.with_changes(left=template_expr("{w}({v})", w=wrapper, v=updated_node.left))

    def leave_UnaryOperation(self, original_node: cst.UnaryOperation,
                             updated_node: cst.UnaryOperation) -> cst.BaseExpression:
        if (isinstance(original_node.operator, cst.Not) or m.matches(original_node.expression, _NUMBERS)
                or not self.in_plain_function or not self.is_site(original_node)):
            return updated_node
        symbol = code(updated_node.operator).strip()
        wrapper = self._operand(f"__{UNARY[symbol]}__", f"return {symbol}self.value", params="self")
        return updated_node.with_changes(expression=template_expr("{w}({v})", w=wrapper, v=updated_node.expression))

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if (len(original_node.comparisons) != 1 or not self.in_plain_function
                or code(original_node.comparisons[0].operator).strip() not in COMPARE
                or not self.is_site(original_node)):
            return updated_node
        symbol = code(updated_node.comparisons[0].operator).strip()
        wrapper = self._operand(f"__{COMPARE[symbol]}__", f"return self.value {symbol} other")
        return updated_node.with_changes(left=template_expr("{w}({v})", w=wrapper, v=updated_node.left))

    def _operand(self, dunder: str, body: str, *, params: str = "self, other") -> str:
        # the value sits in __slots__ or in the instance dict
        slots = '    __slots__ = ("value",)\n\n' if self.rng.random() < 0.5 else ""
        template = f"class $Operand:\n{slots}    def __init__(self, value):\n        self.value = value\n\n" \
                   f"    def {dunder}({params}):\n        {body}\n"
        return define_helpers(self, template)["Operand"]


_CONTAINERS = {
    "contains": "    def __contains__(self, item):\n        return item in self.items\n",
    "len": "    def __len__(self):\n        return len(self.items)\n",
    "iter": "    def __iter__(self):\n        return iter(self.items)\n",
    "iter_gen": "    def __iter__(self):\n        for item in self.items:\n            yield item\n",
    "getitem": "    def __getitem__(self, key):\n        return self.items[key]\n",
    "bool": "    def __bool__(self):\n        return bool(self.items)\n",
}


class WrapInContainerProtocol(Stores):
    family = "A3"
    name = "wrap_in_container_protocol"
    DESCRIPTION = ("Wrap the object of an `in` test, len(), a for loop, an indexing read or a truth test in the "
                   "region in a user object whose __contains__/__len__/__iter__/__getitem__/__bool__ delegates.")

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if (len(original_node.comparisons) != 1 or not self.reading
                or not isinstance(original_node.comparisons[0].operator, (cst.In, cst.NotIn))
                or not self.is_site(original_node)):
            return updated_node
        target = updated_node.comparisons[0].comparator
        return updated_node.with_changes(comparisons=[updated_node.comparisons[0].with_changes(
            comparator=self._wrap(target, "contains"))])

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (not m.matches(original_node, m.Call(func=m.Name("len"), args=[m.Arg(star="", keyword=None)]))
                or not self.reading or self.binds_locally("len") or not self.is_site(original_node)):
            return updated_node
        return updated_node.with_changes(args=[updated_node.args[0].with_changes(
            value=self._wrap(updated_node.args[0].value, "len"))])

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        if not self.reading or not self.is_site(original_node):  # the loop, not its iterable: that may be a site too
            return updated_node
        return updated_node.with_changes(iter=self._wrap(updated_node.iter, self._iteration(original_node.iter)))

    def leave_CompFor(self, original_node: cst.CompFor, updated_node: cst.CompFor) -> cst.CompFor:
        if not self.reading or not self.is_site(original_node):
            return updated_node
        return updated_node.with_changes(iter=self._wrap(updated_node.iter, self._iteration(original_node.iter)))

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        if self.is_store(original_node) or not self.reading or not self.is_site(original_node):
            return updated_node
        return updated_node.with_changes(value=self._wrap(updated_node.value, "getitem"))

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        return self._truth(original_node, updated_node)

    def leave_While(self, original_node: cst.While, updated_node: cst.While) -> cst.While:
        return self._truth(original_node, updated_node)

    def _truth(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        if not self.in_plain_function or not self.is_site(original_node):
            return updated_node
        return updated_node.with_changes(test=self._wrap(updated_node.test, "bool"))

    def _iteration(self, iterable: cst.BaseExpression) -> str:
        # the legacy __getitem__ protocol only works on things indexed 0, 1, ... that raise IndexError
        sequence = m.matches(iterable, m.List() | m.Tuple() | m.Call(func=m.Name("range")))
        return self.rng.choice(["iter", "iter_gen", "getitem"] if sequence else ["iter", "iter_gen"])

    def _wrap(self, value: cst.BaseExpression, protocol: str) -> cst.BaseExpression:
        template = f"class $Delegate:\n    def __init__(self, items):\n        self.items = items\n\n" \
                   f"{_CONTAINERS[protocol]}"
        return template_expr("{w}({v})", w=define_helpers(self, template)["Delegate"], v=value)


_REFLECTED = {f"__{n}__": f"__r{n}__" for n in BINARY.values()}
_INPLACE = {f"__{n}__": f"__i{n}__" for n in BINARY.values()}
_BINARY_SYMBOL = {f"__{n}__": s for s, n in BINARY.items()}
_REFLECTED_SYMBOL = {f"__r{n}__": s for s, n in BINARY.items()}
_UNARY_FORM = {"__neg__": "-{}", "__pos__": "+{}", "__invert__": "~{}", "__abs__": "abs({})"}
_COMPLEMENT = {"__eq__": "__ne__", "__ne__": "__eq__", "__lt__": "__ge__", "__ge__": "__lt__",
               "__le__": "__gt__", "__gt__": "__le__"}
_COMPARE_SYMBOL = {f"__{n}__": s for s, n in COMPARE.items()}
_ARITY = {**dict.fromkeys([*_BINARY_SYMBOL, *_REFLECTED_SYMBOL, *_COMPLEMENT, "__getitem__", "__getattr__"], 2),
          **dict.fromkeys([*_UNARY_FORM, "__len__", "__iter__"], 1)}
# What builtin bases define themselves: a sibling must not silently override it.
_BUILTIN_OWN = frozenset().union(*(vars(t) for t in (tuple, list, dict, set, frozenset, str, int, float)))
_MODULE_OWN = frozenset({"__getattr__", "__setattr__", "__delattr__", "__dir__", "__call__", "__getstate__",
                         "__setstate__"})

_ADDED = {
    "__bool__": "def __bool__($self):\n    return len($self) > 0\n",
    "__iter__": ("def __iter__($self):\n    index = 0\n    while True:\n        try:\n"
                 "            item = $self[index]\n        except IndexError:\n            return\n"
                 "        yield item\n        index += 1\n"),
    "__contains__": ("def __contains__($self, value):\n"
                     "    return any(item is value or item == value for item in $self)\n"),
}
NEGATE = """
def $negate(result):
    if result is NotImplemented:
        return result
    if isinstance(result, torch.Tensor):
        return result.logical_not()
    return not result
"""


def _siblings(dunder: str) -> list[tuple[str, str]]:
    """(kind, sibling) pairs a defined dunder can be swapped for."""
    if dunder in _BINARY_SYMBOL:
        return [("binary", s) for s in _BINARY_SYMBOL if s != dunder] + \
            [("reflected", _REFLECTED[dunder]), ("inplace", _INPLACE[dunder])]
    if dunder in _REFLECTED_SYMBOL:
        return [("reflected_binary", s) for s in _REFLECTED_SYMBOL if s != dunder]
    if dunder in _UNARY_FORM:
        return [("unary", s) for s in _UNARY_FORM if s != dunder]
    if dunder in _COMPLEMENT:
        return [("complement", _COMPLEMENT[dunder])]
    return {"__len__": [("add", "__bool__")], "__getitem__": [("add", "__iter__")],
            "__iter__": [("add", "__contains__")], "__getattr__": [("getattribute", "__getattribute__")]}.get(dunder, [])


def _positional(fn: cst.FunctionDef) -> list[str] | None:
    params = fn.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
        return None
    return [p.name.value for p in (*params.posonly_params, *params.params)]


class SwapDunderForSibling(Scoped):
    family = "A3"
    name = "dunder_sibling"
    DESCRIPTION = ("Move a region class's dunder body into a sibling of its protocol (__add__ -> __mul__/__radd__/"
                   "__iadd__, __eq__ -> __ne__, __neg__ -> __invert__, __getattr__ -> __getattribute__, "
                   "__len__ -> +__bool__) and keep the original delegating to it through the sibling's operator.")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        if any("Tensor" in code(b.value) for b in original_node.bases):
            return updated_node  # torch.Tensor defines every operator; its subclasses dispatch differently
        taken = self._taken(original_node)
        forbidden = _external_own(original_node, self._classes)
        chosen: tuple[cst.FunctionDef, list[tuple[str, str]]] | None = None
        for fn in original_node.body.body:
            if not isinstance(fn, cst.FunctionDef) or fn.decorators or fn.asynchronous:
                continue
            params = _positional(fn)
            options = [(k, s) for k, s in _siblings(fn.name.value) if s not in taken and s not in forbidden]
            if params is None or len(params) != _ARITY.get(fn.name.value) or not options:
                continue
            if self.is_site(fn):
                chosen = (fn, options)
        if chosen is None:
            return updated_node
        fn, options = chosen
        kind = self.rng.choice(sorted({k for k, _ in options}))  # a reflected or in-place swap as often as a binary one
        sibling = self.rng.choice([s for k, s in options if k == kind])
        body = list(updated_node.body.body)
        at = next(i for i, s in enumerate(original_node.body.body) if s is fn)
        body[at:at + 1] = self._swap(fn, kind, sibling, _positional(fn) or [])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def _swap(self, fn: cst.FunctionDef, kind: str, sibling: str, params: list[str]) -> list[cst.BaseStatement]:
        dunder, me, other = fn.name.value, params[0], params[-1]
        moved = fn.with_changes(name=cst.Name(sibling), leading_lines=[cst.EmptyLine(indent=False)])
        if kind == "add":
            added = cst.parse_statement(_ADDED[sibling].replace("$self", me))
            return [fn, added.with_changes(leading_lines=[cst.EmptyLine(indent=False)])]
        if kind == "getattribute":
            fallback = self.fresh("_attribute_fallback")
            getattribute = (f"def __getattribute__({me}, {other}):\n    try:\n"
                            f"        return super().__getattribute__({other})\n    except AttributeError:\n"
                            f"        return type({me}).{fallback}({me}, {other})\n")
            return [cst.parse_statement(getattribute).with_changes(leading_lines=fn.leading_lines),
                    fn.with_changes(name=cst.Name(fallback), leading_lines=[cst.EmptyLine(indent=False)])]
        if kind == "complement":
            negate = define_helpers(self, NEGATE)["negate"]
            moved = moved.with_changes(body=rewrite_returns(moved.body, lambda ret: template_expr(
                "{n}({v})", n=negate, v=ret.value or cst.Name("None"))))
            delegate = f"return {negate}({me} {_COMPARE_SYMBOL[sibling]} {other})"
        elif kind == "binary":
            delegate = f"return {me} {_BINARY_SYMBOL[sibling]} {other}"
        elif kind == "reflected":
            delegate = f"return type({me}).{sibling}({me}, {other})"
        elif kind == "inplace":
            delegate = f"result = {me}\n        result {_BINARY_SYMBOL[dunder]}= {other}\n        return result"
        elif kind == "reflected_binary":
            delegate = f"return {other} {_REFLECTED_SYMBOL[sibling]} {me}"
        else:  # unary
            delegate = f"return {_UNARY_FORM[sibling].format(me)}"
        lines = "".join(f"    {line.strip()}\n" for line in delegate.split("\n"))
        original = cst.parse_statement(f"def {dunder}({', '.join(params)}):\n{lines}")
        return [original.with_changes(leading_lines=fn.leading_lines), moved]

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._classes = {n.name.value: n for n in m.findall(self.ctx.module, m.ClassDef())}

    def _taken(self, cls: cst.ClassDef) -> set[str]:
        """Names bound by the class and by every class of the file it inherits from or that inherits from it."""
        classes = self._classes
        parents = {name: {b.value.value for b in c.bases if isinstance(b.value, cst.Name)} for name, c in classes.items()}
        family, grew = {cls.name.value}, True
        while grew:
            more = {n for n in family for p in parents.get(n, ()) if p in classes} | \
                   {n for n, ps in parents.items() if ps & family}
            grew = not more <= family
            family |= more
        return set().union(*(class_body_names(classes[n]) for n in family if n in classes))


def _external_own(cls: cst.ClassDef, classes: dict[str, cst.ClassDef], seen: frozenset[str] = frozenset()) \
        -> frozenset[str]:
    """Dunders defined by bases from outside the file, which a new sibling would override."""
    own: frozenset[str] = frozenset()
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and base.value.value in classes:
            if base.value.value not in seen:
                own |= _external_own(classes[base.value.value], classes, seen | {cls.name.value, base.value.value})
        elif m.matches(base.value, m.Name("object")):
            continue
        elif code(base.value).endswith("Module"):
            own |= _MODULE_OWN
        else:
            own |= _BUILTIN_OWN
    return own


_SUBCLASSES = (
    # __torch_function__ defers to the default, which keeps results wrapped
    """
class $Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})

    def halved(self):
        return self * 0.5
""",
    # __torch_function__ runs the op with subclass dispatch disabled and rewraps the result
    """
class $Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and not isinstance(out, cls):
            out = out.as_subclass(cls)
        return out

    def halved(self):
        return torch.mul(self, 0.5)
""",
    # __torch_function__ unwraps its arguments, so results come back as plain tensors
    """
class $Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            args = tuple(a.as_subclass(torch.Tensor) if isinstance(a, cls) else a for a in args)
        return func(*args, **(kwargs or {}))

    def halved(self):
        return self.mul(0.5)
""",
)
_SUBCLASS_ROUTE = """
def $route(value):
    if type(value) not in (torch.Tensor, torch.nn.Parameter):
        return value
    traced = value.as_subclass($Traced)
    if traced.is_floating_point():
        doubled = traced * 2.0
        traced = doubled.halved() if isinstance(doubled, $Traced) else $Traced.halved(doubled)
    return traced.as_subclass(torch.Tensor)
"""


class RouteThroughTensorSubclass(ValueRouter):
    family = "A3"
    name = "route_through_tensor_subclass"
    DESCRIPTION = ("Pass a tensor of the region through a torch.Tensor subclass with __torch_function__ "
                   "(as_subclass, ops and a method on the subclass, then back to a plain tensor).")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = define_helpers(self, self.rng.choice(_SUBCLASSES) + _SUBCLASS_ROUTE)
        return template_expr("{route}({v})", route=names["route"], v=value)


_NAMEDTUPLES = (
    # __mul__ and __truediv__ overrides replace tuple repetition
    """
class $Pair(collections.namedtuple("$PairFields", ["value", "gain"])):
    __slots__ = ()

    def __mul__(self, k):
        return $Pair($scale(self.value, k), self.gain * k)

    def __truediv__(self, k):
        return $Pair($scale(self.value, 1.0 / k), self.gain / k)


def $route(value):
    pair = $Pair(value, 1.0) * 4.0
    return (pair / pair.gain).value
""",
    # __add__ replaces concatenation and __eq__ compares one field; unpacking still sees two fields
    """
class $Pair(collections.namedtuple("$PairFields", "value gain")):
    def __add__(self, other):
        return $Pair($scale(self.value, other.gain), self.gain + other.gain)

    def __eq__(self, other):
        return isinstance(other, $Pair) and self.gain == other.gain

    __hash__ = tuple.__hash__


def $route(value):
    pair = $Pair(value, 0.0) + $Pair(None, 2.0)
    out, gain = pair
    return $scale(out, 1.0 / gain) if pair == $Pair(None, 2.0) else out
""",
    # __len__ lies about the field count, while indexing and unpacking use the real fields
    """
class $Pair(collections.namedtuple("$PairFields", ["value", "gain"])):
    def __len__(self):
        return 1

    def __getitem__(self, index):
        if index == "value":
            return self.value
        return tuple.__getitem__(self, index)


def $route(value):
    pair = $Pair($scale(value, 2.0), 2.0)
    out, gain = pair
    return $scale(pair["value"], len(pair) / pair[1]) if out is pair.value else out
""",
)


class RouteThroughNamedtupleSubclass(HelperRouter):
    family = "A3"
    name = "route_through_namedtuple_subclass"
    DESCRIPTION = ("Pass a value of the region through a namedtuple subclass that overrides __mul__/__truediv__, "
                   "__add__/__eq__ or __len__/__getitem__.")
    TEMPLATES = _NAMEDTUPLES
