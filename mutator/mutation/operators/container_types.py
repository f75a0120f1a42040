"""B1: container types.

The containers a compiled region builds are swapped for look-alikes that Dynamo must
model separately (user subclasses with a mixin, namedtuples, OrderedDict, defaultdict,
UserDict, ChainMap), or values are read back through dict views and set algebra.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._positions import ValueSites
from mutator.mutation.operators._templates import atom_code, operand_code
from mutator.mutation.tree import DISPLAY_KINDS, code, is_stable

_DISPLAY = m.List() | m.Tuple() | m.Set() | m.Dict() | m.ListComp() | m.SetComp() | m.DictComp()
_CONSTRUCTOR = m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("dict") | m.Name("set") | m.Name("frozenset"))


def _pass_through(method: str, params: str) -> str:
    """A method that only delegates to the container base: transparent in CPython."""
    args = ", ".join(p.split("=")[0] for p in params.split(", ")) if params else ""
    sig = f"self, {params}" if params else "self"
    return f"    def {method}({sig}):\n        return super().{method}({args})\n"


_OVERRIDES = {
    "list": [("__getitem__", "index"), ("__iter__", ""), ("__len__", ""), ("__contains__", "item"),
             ("append", "item"), ("__add__", "other")],
    "tuple": [("__getitem__", "index"), ("__iter__", ""), ("__len__", ""), ("__contains__", "item"),
              ("count", "item")],
    "dict": [("__getitem__", "key"), ("__iter__", ""), ("keys", ""), ("items", ""), ("values", ""),
             ("get", "key, default=None"), ("__contains__", "key"), ("__setitem__", "key, value")],
    "set": [("__contains__", "item"), ("__iter__", ""), ("__len__", ""), ("add", "item"), ("union", "*others")],
    "frozenset": [("__contains__", "item"), ("__iter__", ""), ("__len__", ""), ("union", "*others")],
}


class ContainerSubclass(ValueSites):
    family = "B1"
    name = "container_subclass"
    DESCRIPTION = ("Build a list/tuple/dict/set of the compiled region as a user subclass of it, "
                   "with pass-through overrides and sometimes a cooperative mixin.")

    @m.leave(_DISPLAY | _CONSTRUCTOR)
    def _container(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.value_site(original_node):
            return updated_node
        if isinstance(updated_node, cst.Call):
            kind = updated_node.func.value  # type: ignore[attr-defined]
            subclass = self._subclass(kind)
            return updated_node.with_changes(func=cst.Name(subclass))
        subclass = self._subclass(DISPLAY_KINDS[type(updated_node)])
        return cst.parse_expression(f"{subclass}({atom_code(updated_node)})")

    def _subclass(self, kind: str) -> str:
        name = self.fresh(f"{kind.capitalize()}Subclass")
        methods = self.rng.sample(_OVERRIDES[kind], self.rng.randint(0, 2))
        bases = kind
        if self.rng.random() < 0.4:  # multiple inheritance: the mixin's override must reach the base via the MRO
            mixin = self.fresh("ContainerMixin")
            method, params = self.rng.choice(_OVERRIDES[kind])
            self.add_helper(f"class {mixin}:\n{_pass_through(method, params)}")
            bases = f"{mixin}, {kind}"
        body = "\n".join(_pass_through(*mp) for mp in methods)
        if kind == "tuple" and self.rng.random() < 0.5:
            body += "\n    def __new__(cls, items=()):\n        return super().__new__(cls, items)\n"
        self.add_helper(f"class {name}({bases}):\n{body or '    pass'}\n")
        return name


class SpecialisedMapping(ValueSites):
    family = "B1"
    name = "specialised_mapping"
    DESCRIPTION = "Turn a dict built in the compiled region into an OrderedDict, defaultdict, UserDict or ChainMap."

    KINDS = ("OrderedDict", "defaultdict", "UserDict", "ChainMap")
    FACTORIES = ("None", "list", "int", "float")

    @m.leave(m.Dict() | m.DictComp() | m.Call(func=m.Name("dict")))
    def _dict(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.value_site(original_node):
            return updated_node
        kind = self.rng.choice(self.KINDS)
        self.add_import("collections")
        factory = f"{self.rng.choice(self.FACTORIES)}, " if kind == "defaultdict" else ""
        return cst.parse_expression(f"collections.{kind}({factory}{code(updated_node)})")


class TupleToNamedtuple(ValueSites):
    family = "B1"
    name = "tuple_to_namedtuple"
    DESCRIPTION = ("Replace a tuple display of the compiled region with a namedtuple "
                   "(function, typing or subclass form).")

    @m.leave(m.Tuple())
    def _tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        if not (1 <= len(original_node.elements) <= 6
                and not any(isinstance(e, cst.StarredElement) for e in original_node.elements)):
            return updated_node
        if not self.value_site(original_node):
            return updated_node
        fields = [f"item{i}" for i in range(len(updated_node.elements))]
        values = [code(e.value) for e in updated_node.elements]
        cls = self.fresh("Record")
        self._define(cls, fields)
        style = self.rng.randrange(3)
        if style == 0:
            call = f"{cls}({', '.join(values)})"
        elif style == 1:
            call = f"{cls}._make(({', '.join(values)}{',' if len(values) == 1 else ''}))"
        else:
            call = f"{cls}({', '.join(f'{f}={v}' for f, v in zip(fields, values))})"
        return cst.parse_expression(call)

    def _define(self, cls: str, fields: list[str]) -> None:
        form = self.rng.randrange(3)
        if form == 1:
            self.add_import("typing")
            annotations = "".join(f"    {f}: object\n" for f in fields)
            self.add_helper(f"class {cls}(typing.NamedTuple):\n{annotations}")
            return
        self.add_import("collections")
        if form == 0:
            self.add_helper(f"{cls} = collections.namedtuple({cls!r}, {fields!r})")
            return
        override = _pass_through(*self.rng.choice(_OVERRIDES["tuple"])) if self.rng.random() < 0.5 else ""
        self.add_helper(f"class {cls}(collections.namedtuple({cls + 'Base'!r}, {fields!r})):\n"
                        f"    __slots__ = ()\n{override}")


_READ_BACK = {  # view path -> (needs a decoy entry, body of read_back(box))
    "values": (False, "return next(iter(box.values()))"),
    "items": (False, "for key, item in box.items():\n        if key == 'value':\n            return item\n"
                     "    raise KeyError('value')"),
    "keys_and": (False, "(key,) = box.keys() & {'value', 'absent'}\n    return box[key]"),
    "keys_sub": (True, "(key,) = box.keys() - {'decoy'}\n    return box[key]"),
    "keys_xor": (True, "(key,) = box.keys() ^ {'decoy'}\n    return box[key]"),
    "set_methods": (False, "keys = set(box).intersection({'value'}).union(set()).difference({'decoy'})\n"
                           "    return box[keys.pop()]"),
    "zip_views": (False, "return dict(zip(box.keys(), box.values()))['value']"),
    "reversed_items": (False, "return [item for key, item in reversed(box.items()) if key == 'value'][0]"),
}
_BOXES = ("{{'value': {v}{decoy}}}", "dict(value={v}{decoy})", "collections.OrderedDict(value={v}{decoy})",
          "collections.defaultdict(None, value={v}{decoy})")


class ThroughDictView(Operator):
    family = "B1"
    name = "through_dict_view"
    DESCRIPTION = ("Route an assigned or returned value through a dict-like box and read it back "
                   "via keys()/items()/values() views or set algebra.")

    @m.leave(m.Assign() | m.Return())
    def _value(self, original_node: cst.Assign | cst.Return,
               updated_node: cst.Assign | cst.Return) -> cst.Assign | cst.Return:
        if original_node.value is None or m.matches(original_node.value, m.Yield() | m.Await()):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        path = self.rng.choice(sorted(_READ_BACK))
        needs_decoy, body = _READ_BACK[path]
        decoy = ", 'decoy': None" if needs_decoy or self.rng.random() < 0.3 else ""
        box = self.rng.choice(_BOXES)
        if "collections" in box:
            self.add_import("collections")
        if not box.startswith("{"):
            decoy = decoy.replace("'decoy': ", "decoy=")
        reader = self.fresh("read_back")
        self.add_helper(f"def {reader}(box):\n    {body}\n")
        value = box.format(v=atom_code(updated_node.value), decoy=decoy)  # type: ignore[arg-type]
        return updated_node.with_changes(value=cst.parse_expression(f"{reader}({value})"))


_SET_OPERATORS = {"union": "|", "intersection": "&", "difference": "-", "symmetric_difference": "^",
                  "issubset": "<=", "issuperset": ">="}
# a dict view call -> same items by another path; {r} is read more than once, {k} a fresh name
_VIEW_PATHS = {
    "keys": ["iter({r})", "list({r})", "dict.fromkeys({r}).keys()"],
    "items": ["zip({r}.keys(), {r}.values())", "(({k}, {r}[{k}]) for {k} in {r})", "dict({r}).items()"],
    "values": ["({r}[{k}] for {k} in {r}.keys())", "map({r}.__getitem__, {r})", "dict({r}).values()"],
}
_SET_METHODS = {cst.BitOr: "union", cst.BitAnd: "intersection", cst.Subtract: "difference",
                cst.BitXor: "symmetric_difference"}
_SET_LIKE = (m.Set() | m.SetComp() | m.Call(func=m.Name("set") | m.Name("frozenset"))
             | m.Call(func=m.Attribute(attr=m.Name("keys")), args=[]))
_ITERATING_BUILTINS = frozenset({"sorted", "list", "tuple", "set", "sum", "any", "all", "min", "max", "enumerate",
                                 "zip"})


class ViewAndSetAlgebra(Operator):
    family = "B1"
    name = "view_and_set_algebra"
    DESCRIPTION = ("Respell set-algebra methods as operators on sets, and dict views (keys/items/values) that are "
                   "only iterated as other views, zips of views or subscripting generators.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._iterated: set[int] = set()

    def visit_For(self, node: cst.For) -> None:
        self._iterated.add(id(node.iter))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._iterated.add(id(node.iter))

    def visit_Call(self, node: cst.Call) -> None:
        if m.matches(node.func, m.Name(m.MatchIfTrue(lambda n: n in _ITERATING_BUILTINS))):
            self._iterated.update(id(a.value) for a in node.args if a.keyword is None and not a.star)

    @m.leave(m.Call(func=m.Attribute(attr=m.Name()), args=[m.Arg(keyword=None, star="")])
             | m.Call(func=m.Attribute(attr=m.Name("keys") | m.Name("items") | m.Name("values")), args=[]))
    def _call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        method = original_node.func.attr.value  # type: ignore[attr-defined]
        receiver = original_node.func.value  # type: ignore[attr-defined]
        is_view = method in _VIEW_PATHS and not original_node.args
        if is_view and not (id(original_node) in self._iterated and is_stable(receiver)):
            return updated_node
        if not is_view and method not in _SET_OPERATORS:
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        r = operand_code(updated_node.func.value)  # type: ignore[attr-defined]
        if is_view:
            return cst.parse_expression(self.rng.choice(_VIEW_PATHS[method]).format(r=r, k=self.fresh("key")))
        other = atom_code(updated_node.args[0].value)
        # set(...) on the left keeps a frozenset/keys-view receiver valid; on the right it admits any iterable
        left = r if self.rng.random() < 0.5 else f"set({r})"
        return cst.parse_expression(f"({left} {_SET_OPERATORS[method]} set({other}))")

    @m.leave(m.BinaryOperation(operator=m.BitOr() | m.BitAnd() | m.Subtract() | m.BitXor()))
    def _operator(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        if not (m.matches(original_node.left, _SET_LIKE) or m.matches(original_node.right, _SET_LIKE)):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        method = _SET_METHODS[type(original_node.operator)]
        left = code(updated_node.left)
        if not m.matches(original_node.left, m.Set() | m.SetComp() | m.Call(func=m.Name("set"))):
            left = f"set({left})"  # a keys view or frozenset on the left: the method must exist
        return cst.parse_expression(f"{left}.{method}({code(updated_node.right)})")
