"""A3-A4: magic-method overrides, tensor-subclass dispatch and descriptors.

Built on the shared machinery of `objects.py`: routers pass a value of the compiled
region through a new construct and back unchanged (floating tensors scaled by a power of
two and back), rewriters change the program's own operators, dunders and calls.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators.objects import (SCALE, _expr, _helpers, _method, _Scoped, _Stores,
                                                _ValueRouter)

# ---------------------------------------------------------------------------------------
# A3: magic methods
# ---------------------------------------------------------------------------------------

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
          "@": "matmul", "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift"}
UNARY = {"-": "neg", "+": "pos", "~": "invert"}
COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_NUMBERS = m.Integer() | m.Float() | m.Imaginary() | m.UnaryOperation(operator=m.Minus(),
                                                                        expression=m.Integer() | m.Float())


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class WrapOperandInDunderClass(_Scoped):
    family = "A3"
    name = "wrap_operand_in_dunder_class"
    DESCRIPTION = ("Wrap one operand of a binary, unary or comparison operator in the region in a user object whose "
                   "__op__/__rop__ override computes the original operation.")

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation,
                              updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        if not self.in_plain_function or not self.is_site(original_node):
            return updated_node
        symbol = _code(updated_node.operator).strip()
        if m.matches(updated_node.left, _NUMBERS):  # a number's own __op__ gives up, so ours runs reflected
            wrapper = self._operand(f"__r{BINARY[symbol]}__", f"return other {symbol} self.value")
            return updated_node.with_changes(right=_expr("{w}({v})", w=wrapper, v=updated_node.right))
        wrapper = self._operand(f"__{BINARY[symbol]}__", f"return self.value {symbol} other")
        return updated_node.with_changes(left=_expr("{w}({v})", w=wrapper, v=updated_node.left))

    def leave_UnaryOperation(self, original_node: cst.UnaryOperation,
                             updated_node: cst.UnaryOperation) -> cst.BaseExpression:
        if (isinstance(original_node.operator, cst.Not) or m.matches(original_node.expression, _NUMBERS)
                or not self.in_plain_function or not self.is_site(original_node)):
            return updated_node
        symbol = _code(updated_node.operator).strip()
        wrapper = self._operand(f"__{UNARY[symbol]}__", f"return {symbol}self.value", params="self")
        return updated_node.with_changes(expression=_expr("{w}({v})", w=wrapper, v=updated_node.expression))

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if (len(original_node.comparisons) != 1 or not self.in_plain_function
                or _code(original_node.comparisons[0].operator).strip() not in COMPARE
                or not self.is_site(original_node)):
            return updated_node
        symbol = _code(updated_node.comparisons[0].operator).strip()
        wrapper = self._operand(f"__{COMPARE[symbol]}__", f"return self.value {symbol} other")
        return updated_node.with_changes(left=_expr("{w}({v})", w=wrapper, v=updated_node.left))

    def _operand(self, dunder: str, body: str, *, params: str = "self, other") -> str:
        # the value sits in __slots__ or in the instance dict
        slots = '    __slots__ = ("value",)\n\n' if self.rng.random() < 0.5 else ""
        template = f"class $Operand:\n{slots}    def __init__(self, value):\n        self.value = value\n\n" \
                   f"    def {dunder}({params}):\n        {body}\n"
        return _helpers(self, template)["Operand"]


_CONTAINERS = {
    "contains": "    def __contains__(self, item):\n        return item in self.items\n",
    "len": "    def __len__(self):\n        return len(self.items)\n",
    "iter": "    def __iter__(self):\n        return iter(self.items)\n",
    "iter_gen": "    def __iter__(self):\n        for item in self.items:\n            yield item\n",
    "getitem": "    def __getitem__(self, key):\n        return self.items[key]\n",
    "bool": "    def __bool__(self):\n        return bool(self.items)\n",
}


class WrapInContainerProtocol(_Stores):
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
        return _expr("{w}({v})", w=_helpers(self, template)["Delegate"], v=value)


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


def _class_bound(cls: cst.ClassDef) -> set[str]:
    bound = {s.name.value for s in cls.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            bound.update(n.value for t in m.findall(stmt, m.AssignTarget()) for n in m.findall(t, m.Name()))
    return bound


class SwapDunderForSibling(_Scoped):
    family = "A3"
    name = "dunder_sibling"
    DESCRIPTION = ("Move a region class's dunder body into a sibling of its protocol (__add__ -> __mul__/__radd__/"
                   "__iadd__, __eq__ -> __ne__, __neg__ -> __invert__, __getattr__ -> __getattribute__, "
                   "__len__ -> +__bool__) and keep the original delegating to it through the sibling's operator.")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        if any("Tensor" in _code(b.value) for b in original_node.bases):
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
            code = (f"def __getattribute__({me}, {other}):\n    try:\n"
                    f"        return super().__getattribute__({other})\n    except AttributeError:\n"
                    f"        return type({me}).{fallback}({me}, {other})\n")
            return [cst.parse_statement(code).with_changes(leading_lines=fn.leading_lines),
                    fn.with_changes(name=cst.Name(fallback), leading_lines=[cst.EmptyLine(indent=False)])]
        if kind == "complement":
            negate = _helpers(self, NEGATE)["negate"]
            moved = moved.with_changes(body=moved.body.visit(_NegateReturns(negate)))
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
        return set().union(*(_class_bound(classes[n]) for n in family if n in classes))


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
        elif _code(base.value).endswith("Module"):
            own |= _MODULE_OWN
        else:
            own |= _BUILTIN_OWN
    return own


class _NegateReturns(cst.CSTTransformer):
    """Wraps the values a function body returns (not those of nested defs and lambdas) in a negation."""

    def __init__(self, negate: str) -> None:
        super().__init__()
        self.negate = negate

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        value = updated_node.value or cst.Name("None")
        return updated_node.with_changes(value=_expr("{n}({v})", n=self.negate, v=value))


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


class RouteThroughTensorSubclass(_ValueRouter):
    family = "A3"
    name = "route_through_tensor_subclass"
    DESCRIPTION = ("Pass a tensor of the region through a torch.Tensor subclass with __torch_function__ "
                   "(as_subclass, ops and a method on the subclass, then back to a plain tensor).")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, self.rng.choice(_SUBCLASSES) + _SUBCLASS_ROUTE)
        return _expr("{route}({v})", route=names["route"], v=value)


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


class RouteThroughNamedtupleSubclass(_ValueRouter):
    family = "A3"
    name = "route_through_namedtuple_subclass"
    DESCRIPTION = ("Pass a value of the region through a namedtuple subclass that overrides __mul__/__truediv__, "
                   "__add__/__eq__ or __len__/__getitem__.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_NAMEDTUPLES))
        return _expr("{route}({v})", route=names["route"], v=value)


# ---------------------------------------------------------------------------------------
# A4: descriptors
# ---------------------------------------------------------------------------------------

_PROPERTIES = (
    # getter, setter and a deleter that changes what the getter computes afterwards
    """
class $Holder:
    def __init__(self):
        self.scale = 2.0

    @property
    def value(self):
        return $scale(self._raw, 1.0 / self.scale)

    @value.setter
    def value(self, v):
        self._raw = $scale(v, self.scale)

    @value.deleter
    def value(self):
        self.scale = 4.0


def $route(value):
    holder = $Holder()
    holder.value = value
    del holder.value
    return $scale(holder.value, 2.0)
""",
    # property() built from functions, used through the class: fset, fget and __get__
    """
def $get_value(self):
    return $scale(self._raw, 0.5)


def $set_value(self, v):
    self._raw = $scale(v, 2.0)


class $Holder:
    value = property($get_value, $set_value)


def $route(value):
    holder = $Holder()
    type(holder).value.fset(holder, value)
    first = $Holder.value.__get__(holder, $Holder)
    return type(holder).value.fget(holder) if first is not None else first
""",
    # a subclass replaces only the getter of its base's property; the base setter still runs
    """
class $HolderBase:
    @property
    def value(self):
        return self._raw

    @value.setter
    def value(self, v):
        self._raw = $scale(v, 2.0)


class $Holder($HolderBase):
    @$HolderBase.value.getter
    def value(self):
        return $scale(self._raw, 0.5)


def $route(value):
    holder = $Holder()
    holder.value = value
    return holder.value
""",
)


class RouteThroughProperty(_ValueRouter):
    family = "A4"
    name = "route_through_property"
    DESCRIPTION = ("Pass a value of the region through a property: setter, getter and deleter, property() used via "
                   "fget/fset/__get__, or a subclass that replaces only the getter.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_PROPERTIES))
        return _expr("{route}({v})", route=names["route"], v=value)


_DESCRIPTORS = (
    # a data descriptor that names its storage slot in __set_name__
    """
class $Scaled:
    def __init__(self, factor):
        self.factor = factor

    def __set_name__(self, owner, name):
        self.slot = "_" + name + "_raw"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return $scale(getattr(obj, self.slot), 1.0 / self.factor)

    def __set__(self, obj, value):
        setattr(obj, self.slot, $scale(value, self.factor))


class $Holder:
    value = $Scaled(2.0)

    def __init__(self, value):
        self.value = value


def $route(value):
    return $Holder(value).value
""",
    # a non-data descriptor, then an instance attribute of the same name that shadows it
    """
class $Halving:
    def __get__(self, obj, objtype=None):
        if obj is None:
            return 0.5
        return $scale(obj.raw, 0.5)


class $Holder:
    value = $Halving()

    def __init__(self, value):
        self.raw = $scale(value, 4.0)


def $route(value):
    holder = $Holder(value)
    holder.value = holder.value
    return $scale(holder.value, $Holder.value)
""",
    # a descriptor that binds functions like methods do, with types.MethodType
    """
class $Bound:
    def __init__(self, func):
        self.func = func

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.func
        return types.MethodType(self.func, obj)


class $Holder:
    def __init__(self, gain):
        self.gain = gain

    @$Bound
    def apply(self, value):
        return $scale(value, self.gain)


def $route(value):
    return $Holder(0.5).apply($Holder.apply($Holder(2.0), value))
""",
    # __delete__ on a data descriptor resets the stored value to the class default
    """
class $Resettable:
    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        return self if obj is None else obj.__dict__.get(self.slot, 1.0)

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value

    def __delete__(self, obj):
        obj.__dict__.pop(self.slot, None)


class $Holder:
    gain = $Resettable()


def $route(value):
    holder = $Holder()
    holder.gain = 2.0
    doubled = $scale(value, holder.gain)
    del holder.gain
    return $scale(doubled, holder.gain / 2.0)
""",
)


class RouteThroughDescriptor(_ValueRouter):
    family = "A4"
    name = "route_through_descriptor"
    DESCRIPTION = ("Pass a value of the region through a user descriptor: data (__set_name__/__get__/__set__, "
                   "__delete__), non-data shadowed by an instance attribute, or one that binds methods.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_DESCRIPTORS))
        return _expr("{route}({v})", route=names["route"], v=value)


_CACHES = (
    # cached_property computes once per instance, and again after its cache is deleted
    """
class $Lazy:
    def __init__(self, value):
        self.value = value
        self.computed = 0

    @functools.cached_property
    def doubled(self):
        self.computed += 1
        return $scale(self.value, 2.0)


def $route(value):
    lazy = $Lazy(value)
    first = lazy.doubled
    again = lazy.doubled
    del lazy.doubled
    return $scale(lazy.doubled if again is first else first, 1.0 / (2 * lazy.computed - 2))
""",
    # lru_cache on a module-level function of hashable arguments, hit on every call after the first
    """
@functools.lru_cache(maxsize=None)
def $factor(power):
    return 2.0 ** power


def $route(value):
    return $scale($scale(value, $factor(3)), $factor(-3))
""",
    # lru_cache on a method of a module-level instance, and functools.cache on a staticmethod
    """
class $Table:
    def __init__(self, base):
        self.base = base

    @functools.lru_cache(maxsize=8)
    def factor(self, power):
        return self.base ** power

    @staticmethod
    @functools.cache
    def inverse(x):
        return 1.0 / x


$table = $Table(2.0)


def $route(value):
    k = $table.factor(2)
    return $scale($scale(value, k), $Table.inverse(k))
""",
)


class RouteThroughCache(_ValueRouter):
    family = "A4"
    name = "route_through_cache"
    DESCRIPTION = ("Pass a value of the region through functools.cached_property (read, reread, deleted) or "
                   "lru_cache/cache on functions, methods and staticmethods.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_CACHES))
        return _expr("{route}({v})", route=names["route"], v=value)


_COPIED = (
    # a.f = b.f: the copied bound method stays bound to b
    """
class $Scaler:
    def __init__(self, gain):
        self.gain = gain

    def apply(self, value):
        return $scale(value, self.gain)


def $route(value):
    up, down = $Scaler(2.0), $Scaler(0.5)
    up.apply = down.apply
    return up.apply($Scaler.apply(up, value))
""",
    # types.MethodType binds a plain function to one instance; __func__ and __self__ are taken apart
    """
class $Scaler:
    def __init__(self, gain):
        self.gain = gain


def $scaled_by(self, value):
    return $scale(value, self.gain)


def $route(value):
    up, down = $Scaler(2.0), $Scaler(0.5)
    up.apply = types.MethodType($scaled_by, up)
    down.apply = types.MethodType(up.apply.__func__, down)
    return down.apply(up.apply(value)) if down.apply.__self__ is down else value
""",
    # bound methods of two instances kept in a list and called later, and a function stored as an attribute
    """
class $Scaler:
    def __init__(self, gain):
        self.gain = gain
        self.plain = $scale

    def apply(self, value):
        return self.plain(value, self.gain)


def $route(value):
    steps = [$Scaler(4.0).apply, $Scaler(0.25).apply]
    for step in steps:
        value = step(value)
    return value
""",
)


class RouteThroughCopiedMethods(_ValueRouter):
    family = "A4"
    name = "route_through_copied_methods"
    DESCRIPTION = ("Pass a value of the region through bound methods copied between instances (a.f = b.f), "
                   "types.MethodType bindings and functions stored as instance attributes.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_COPIED))
        return _expr("{route}({v})", route=names["route"], v=value)


_METHOD_DECORATORS = {"staticmethod": "static", "classmethod": "class", "lru_cache": "plain", "cache": "plain"}
# How to call `obj.meth(...)` by hand, per kind of method: the callee, and what goes before the arguments.
_REBOUND = {
    "plain": [("type({obj}).{meth}", "{obj}"), ("{obj}.{meth}.__func__", "{obj}"),
              ("types.MethodType(type({obj}).{meth}, {obj})", None),
              ("getattr(type({obj}), \"{meth}\").__get__({obj}, type({obj}))", None)],
    "class": [("type({obj}).{meth}", None), ("{obj}.{meth}.__func__", "type({obj})")],
    "static": [("type({obj}).{meth}", None), ("getattr(type({obj}), \"{meth}\")", None)],
}


class RebindMethodCall(_Scoped):
    family = "A4"
    name = "rebind_method_call"
    DESCRIPTION = ("Call a method of the region through the descriptor protocol by hand: type(obj).f(obj, ...), "
                   "obj.f.__func__(obj, ...), types.MethodType(...) or __get__.")

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._classes = {s.name.value: s for s in self.ctx.module.body if isinstance(s, cst.ClassDef)}
        self._instances = {t.target.value: a.value.func.value for s in self.ctx.module.body
                           if isinstance(s, cst.SimpleStatementLine) for a in s.body
                           if m.matches(a, m.Assign(value=m.Call(func=m.Name())))
                           and a.value.func.value in self._classes
                           for t in a.targets if isinstance(t.target, cst.Name)}
        # methods anything assigns or deletes on an instance may be shadowed: calling the class's is not the same
        self._shadowed = {n.attr.value for n in m.findall(self.ctx.module, m.AssignTarget(m.Attribute()) | m.Del(
            m.Attribute()) | m.AugAssign(m.Attribute()))
                          for n in [n.target]} | {s.value.strip("\"'") for s in m.findall(
                              self.ctx.module, m.Call(m.Name("setattr") | m.Name("delattr"),
                                                      args=[m.DoNotCare(), m.Arg(m.SimpleString()), m.ZeroOrMore()]))
                              for s in [s.args[1].value]}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        kind = self._kind(original_node)
        if kind is None or not self.is_site(original_node):
            return updated_node
        obj, meth = original_node.func.value.value, original_node.func.attr.value
        callee, first = self.rng.choice(_REBOUND[kind])
        if callee.startswith("types."):
            self.add_import("types")
        args = list(updated_node.args)
        if first is not None:
            args.insert(0, cst.Arg(cst.parse_expression(first.format(obj=obj))))
        return updated_node.with_changes(func=cst.parse_expression(callee.format(obj=obj, meth=meth)), args=args)

    def _kind(self, call: cst.Call) -> str | None:
        if (not self.in_plain_function or not m.matches(call.func, m.Attribute(m.Name(), m.Name()))
                or self.binds_locally("type", "getattr", "types")):
            return None
        receiver, meth = call.func.value.value, call.func.attr.value
        if meth in self._shadowed or meth.startswith("__") and not meth.endswith("__"):
            return None
        cls_name = self._instances.get(receiver) or self._local_instance(receiver)
        if cls_name is None and len(self._scopes) >= 2 and isinstance(self._scopes[-2], cst.ClassDef):
            method, owner = self._scopes[-1], self._scopes[-2]
            params = [*method.params.posonly_params, *method.params.params]
            if params and params[0].name.value == receiver and not method.decorators and owner.name.value in \
                    self._classes:
                cls_name = owner.name.value
        if cls_name is None:
            return None
        found = self._find(cls_name, meth, set())
        if found is None:
            return None
        kinds = {_METHOD_DECORATORS.get(_code(d.decorator).split("(")[0].split(".")[-1]) for d in found.decorators}
        if None in kinds or len(kinds) > 1:
            return None  # property, cached_property or something unknown: not a plain call of a function
        return kinds.pop() if kinds else "plain"

    def _local_instance(self, name: str) -> str | None:
        """The in-file class of `name` when the enclosing def binds it exactly once, to `SomeClass(...)`."""
        scope = next((s for s in reversed(self._scopes) if isinstance(s, cst.FunctionDef)), None)
        if scope is None:
            return None
        binds = m.findall(scope, m.AssignTarget(m.Name(name)) | m.Param(m.Name(name)) | m.For(target=m.Name(name))
                          | m.CompFor(target=m.Name(name)) | m.AugAssign(m.Name(name)))
        built = m.findall(scope, m.Assign(targets=[m.AssignTarget(m.Name(name))], value=m.Call(m.Name())))
        if len(binds) != 1 or len(built) != 1 or built[0].value.func.value not in self._classes:
            return None
        return built[0].value.func.value

    def _find(self, cls_name: str, meth: str, seen: set[str]) -> cst.FunctionDef | None:
        """The method `meth` of an in-file class, found along its in-file bases."""
        if cls_name in seen or cls_name not in self._classes:
            return None
        seen.add(cls_name)
        cls = self._classes[cls_name]
        if meth in _class_bound(cls):
            return _method(cls, meth)
        for base in cls.bases:
            if isinstance(base.value, cst.Name):
                found = self._find(base.value.value, meth, seen)
                if found is not None:
                    return found
        return None


_NAMESPACES = (
    ("class $Namespace:\n    $fn = staticmethod($fn)\n", ["{ns}.{fn}", "{ns}().{fn}"]),
    ("class $Namespace:\n    @classmethod\n    def call(cls, *args, **kwargs):\n        return $fn(*args, **kwargs)\n",
     ["{ns}.call", "{ns}().call"]),
    ("class $Namespace:\n    @property\n    def $fn(self):\n        return $fn\n", ["{ns}().{fn}"]),
)


class CallHelperThroughDescriptor(_Scoped):
    family = "A4"
    name = "call_helper_through_descriptor"
    DESCRIPTION = ("Call a module-level helper function of the region through a class attribute: staticmethod, "
                   "a classmethod that forwards, or a property that returns it.")

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._functions = {s.name.value for s in self.ctx.module.body if isinstance(s, cst.FunctionDef)}
        self._pending: tuple[str, str] | None = None  # (function, namespace class code) to insert after the def

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (not m.matches(original_node.func, m.Name()) or original_node.func.value not in self._functions
                or not self.in_plain_function or self.binds_locally(original_node.func.value)
                or not self.is_site(original_node)):
            return updated_node
        fn = original_node.func.value
        template, uses = self.rng.choice(_NAMESPACES)
        ns = self.fresh("_Namespace")
        self._pending = (fn, template.replace("$Namespace", ns).replace("$fn", fn))
        return updated_node.with_changes(func=cst.parse_expression(self.rng.choice(uses).format(ns=ns, fn=fn)))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._pending is None:
            return updated_node
        fn, code = self._pending
        body = list(updated_node.body)
        at = next(i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef) and s.name.value == fn)
        namespace = cst.parse_statement(code).with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2)
        body.insert(at + 1, namespace)
        return updated_node.with_changes(body=body)
