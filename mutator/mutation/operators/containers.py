"""B1, B2: container types and untracked container mutation.

B1 operators swap the containers a compiled region builds for look-alikes that Dynamo
must model separately (user subclasses with a mixin, namedtuples, OrderedDict,
defaultdict, UserDict, ChainMap) or read values back through dict views and set algebra.
B2 operators make the region mutate containers in ways that are easy to lose track of:
sibling methods, `**` of custom mappings, mutation inside comprehensions, containers
rebuilt from iterators, and mutation while iterating over a snapshot.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator

_DISPLAY = m.List() | m.Tuple() | m.Set() | m.Dict() | m.ListComp() | m.SetComp() | m.DictComp()
_CONSTRUCTOR = m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("dict") | m.Name("set") | m.Name("frozenset"))
_KIND = {cst.List: "list", cst.ListComp: "list", cst.Tuple: "tuple", cst.Set: "set", cst.SetComp: "set",
         cst.Dict: "dict", cst.DictComp: "dict"}


# -- code helpers, shared with iteration.py and conversion.py ------------------------------------
def code_of(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return cst.Module([]).code_for_node(node)


def atom_code(node: cst.BaseExpression) -> str:
    """The node's code, parenthesised when it is a bare tuple (`a, b`) or generator expression."""
    code = code_of(node)
    return f"({code})" if isinstance(node, (cst.Tuple, cst.GeneratorExp)) and not node.lpar else code


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
          cst.FormattedString, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp)


def operand_code(node: cst.BaseExpression) -> str:
    """The node's code, parenthesised unless it is an atom: safe as an operand or a `for ... in` iterable."""
    code = code_of(node)
    return code if isinstance(node, _ATOMS) or getattr(node, "lpar", None) else f"({code})"


def is_stable(node: cst.CSTNode) -> bool:
    """A name, a literal, or an attribute chain on a name: evaluating it twice is harmless."""
    if isinstance(node, cst.Attribute):
        return is_stable(node.value)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float))


def _mentions(expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """Whether `expr` may read `target` (a name, or an attribute of the same name)."""
    if isinstance(target, cst.Name):
        return bool(m.findall(expr, m.Name(target.value)))
    return bool(m.findall(expr, m.Attribute(attr=m.Name(target.attr.value))))  # type: ignore[attr-defined]


def _statements(code: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(code).body)


def _pass_through(method: str, params: str) -> str:
    """A method that only delegates to the container base: transparent in CPython."""
    args = ", ".join(p.split("=")[0] for p in params.split(", ")) if params else ""
    sig = f"self, {params}" if params else "self"
    return f"    def {method}({sig}):\n        return super().{method}({args})\n"


class ValueSites(Operator):
    """Tracks binding targets, subscript indices, except types and annotations: no value sites there."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._shield = 0

    def _enter(self, node: cst.CSTNode) -> None:
        self._shield += 1

    def _exit(self, node: cst.CSTNode) -> None:
        self._shield -= 1

    visit_Assign_targets = visit_For_target = visit_CompFor_target = visit_AugAssign_target = _enter
    leave_Assign_targets = leave_For_target = leave_CompFor_target = leave_AugAssign_target = _exit
    visit_AnnAssign_target = visit_AnnAssign_annotation = visit_Del_target = visit_Subscript_slice = _enter
    leave_AnnAssign_target = leave_AnnAssign_annotation = leave_Del_target = leave_Subscript_slice = _exit
    visit_ExceptHandler_type = visit_WithItem_asname = visit_Param_annotation = visit_NamedExpr_target = _enter
    leave_ExceptHandler_type = leave_WithItem_asname = leave_Param_annotation = leave_NamedExpr_target = _exit
    visit_FunctionDef_returns = visit_FunctionDef_decorators = _enter
    leave_FunctionDef_returns = leave_FunctionDef_decorators = _exit

    def value_site(self, node: cst.CSTNode) -> bool:
        return not self._shield and self.is_site(node)


# ---------------------------------------------------------------------------------------- B1
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
        subclass = self._subclass(_KIND[type(updated_node)])
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
        return cst.parse_expression(f"collections.{kind}({factory}{code_of(updated_node)})")


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
        values = [code_of(e.value) for e in updated_node.elements]
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
        left = code_of(updated_node.left)
        if not m.matches(original_node.left, m.Set() | m.SetComp() | m.Call(func=m.Name("set"))):
            left = f"set({left})"  # a keys view or frozenset on the left: the method must exist
        return cst.parse_expression(f"{left}.{method}({code_of(updated_node.right)})")


# ---------------------------------------------------------------------------------------- B2
# method shape -> sibling templates. Fields: {r} receiver, {a0} {a1} arguments, {kw} ", key=..." keywords,
# {kwdict} / {kwpairs} the keywords as dict entries / pairs, {v} {k} fresh names.
# Flags: "R" receiver evaluated twice, "A" first argument evaluated twice, "S" only as an expression statement.
_SIBLINGS: dict[str, list[tuple[str, str]]] = {
    "append": [("{r}.extend(({a0},))", ""), ("{r}.extend(iter([{a0}]))", ""),
               ("{r}.insert(len({r}), {a0})", "R"), ("{r}.__iadd__([{a0}])", "S")],
    "extend": [("{r}.extend(list({a0}))", ""), ("{r}.__iadd__({a0})", "S"),
               ("[{r}.append({v}) for {v} in {a0}]", "RS"), ("{r}.extend({v} for {v} in {a0})", "")],
    "insert": [("{r}.__setitem__(slice({a0}, {a0}), [{a1}])", "A")],
    "add": [("{r}.update(({a0},))", ""), ("{r}.update([{a0}])", ""), ("{r}.__ior__({{{a0}}})", "S")],
    "discard": [("{r}.difference_update(({a0},))", ""), ("{r}.__isub__({{{a0}}})", "S"),
                ("({r}.remove({a0}) if {a0} in {r} else None)", "RA")],
    "update:kw": [("{r}.update({{{kwdict}}})", ""), ("{r}.update([{kwpairs}])", ""),
                  ("{r}.update(iter([{kwpairs}]))", "")],
    "update:dict": [("{r}.update(iter({a0}.items()))", ""), ("{r}.update(list({a0}.items()))", ""),
                    ("[{r}.__setitem__({k}, {v}) for {k}, {v} in {a0}.items()]", "RS")],
    "update:iter": [("{r}.update(list({a0}))", ""), ("{r}.update(tuple({a0}))", "")],
    "setdefault": [("(({r}.__setitem__({a0}, {a1}) if {a0} not in {r} else None) or {r}[{a0}])", "RA"),
                   ("({r}[{a0}] if {a0} in {r} else {r}.setdefault({a0}, {a1}))", "RA"),
                   ("(({r}.update({{{a0}: {a1}}}) if {a0} not in {r} else None) or {r}[{a0}])", "RA")],
    "get": [("({r}[{a0}] if {a0} in {r} else {a1})", "RA"),
            ("next(({v} for {k}, {v} in {r}.items() if {k} == {a0}), {a1})", "A"),
            ("{r}.setdefault({a0}, {a1})", "")],
    "pop": [("({r}.pop({a0}) if {a0} in {r} else {a1})", "RA"),
            ("next(({r}.pop({k}) for {k} in [{a0}] if {k} in {r}), {a1})", "R")],
    "popitem": [("(lambda {k}: ({k}, {r}.pop({k})))(next(reversed({r})))", "R"),
                ("(lambda {k}: ({k}, {r}.pop({k})))(list({r})[-1])", "R")],
    "copy": [("copy.copy({r})", "")],
    "sort": [("{r}.__setitem__(slice(None), sorted({r}{kw}))", "R")],
    "reverse": [("{r}.__setitem__(slice(None), {r}[::-1])", "R")],
}
# method -> (positional counts accepted, keywords accepted)
_ARITY = {"append": ({1}, ()), "extend": ({1}, ()), "insert": ({2}, ()), "add": ({1}, ()), "discard": ({1}, ()),
          "update": ({0, 1}, None), "setdefault": ({1, 2}, ()), "get": ({1, 2}, ()), "pop": ({2}, ()),
          "popitem": ({0}, ()), "copy": ({0}, ()), "sort": ({0}, ("key", "reverse")), "reverse": ({0}, ())}
_ITERABLE_ARG = (m.GeneratorExp() | m.ListComp() | m.List() | m.Tuple() | m.SetComp() | m.Set()
                 | m.Call(func=m.Name("zip") | m.Name("map") | m.Name("filter") | m.Name("enumerate")
                          | m.Name("iter") | m.Name("reversed") | m.Name("sorted")))


def _method_shape(call: cst.Call) -> str | None:
    """The _SIBLINGS key for `receiver.method(...)`, or None when the call's shape is not one we know."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method not in _ARITY or any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    counts, allowed = _ARITY[method]
    if len(positional) not in counts:
        return None
    if method != "update":
        return method if all(k in allowed for k in keywords) else None
    if not positional:
        return "update:kw" if keywords else None
    if keywords:
        return None
    if m.matches(positional[0].value, m.Dict() | m.DictComp()):
        return "update:dict"
    return "update:iter" if m.matches(positional[0].value, _ITERABLE_ARG) else None


class MethodSibling(Operator):
    family = "B2"
    name = "method_sibling"
    DESCRIPTION = ("Replace a list/dict/set method call (append, extend, insert, add, discard, update, setdefault, "
                   "get, pop, popitem, copy, sort, reverse) with a sibling spelling that keeps the program valid.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._statement_calls: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    @m.leave(m.Call(func=m.Attribute(attr=m.Name())))
    def _call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        shape = _method_shape(original_node)
        if shape is None:
            return updated_node
        receiver = original_node.func.value  # type: ignore[attr-defined]
        positional = [a.value for a in original_node.args if a.keyword is None]
        is_statement = id(original_node) in self._statement_calls
        usable = [(t, flags) for t, flags in _SIBLINGS[shape]
                  if ("R" not in flags or is_stable(receiver)) and ("A" not in flags or is_stable(positional[0]))
                  and ("S" not in flags or is_statement)]
        if not usable or not self.is_site(original_node):
            return updated_node
        template, _ = self.rng.choice(usable)
        args = [operand_code(a.value) for a in updated_node.args if a.keyword is None]
        keywords = [(a.keyword.value, code_of(a.value)) for a in updated_node.args if a.keyword is not None]
        if "copy.copy" in template:
            self.add_import("copy")
        code = template.format(
            r=code_of(updated_node.func.value),  # type: ignore[attr-defined]
            a0=args[0] if args else "", a1=args[1] if len(args) > 1 else "None",
            kw="".join(f", {k}={v}" for k, v in keywords),
            kwdict=", ".join(f"{k!r}: {v}" for k, v in keywords),
            kwpairs=", ".join(f"({k!r}, {v})" for k, v in keywords),
            v=self.fresh("item") if "{v}" in template else "", k=self.fresh("key") if "{k}" in template else "")
        return cst.parse_expression(code)


_MAPPINGS = {
    "abc_mapping": ("{cls}({kw})", """
        class {cls}(collections.abc.Mapping):
            \"\"\"A read-only mapping that is not a dict: `**` must go through keys() and __getitem__.\"\"\"

            def __init__(self, **entries):
                self._entries = entries

            def __getitem__(self, key):
                return self._entries[key]

            def __iter__(self):
                return iter(self._entries)

            def __len__(self):
                return len(self._entries)
    """),
    "dict_subclass": ("{cls}({kw})", """
        class {cls}(dict):
            def keys(self):
                return super().keys()

            def __getitem__(self, key):
                return super().__getitem__(key)
    """),
    "userdict": ("collections.UserDict({kw})", ""),
    "ordereddict": ("collections.OrderedDict({kw})", ""),
    "mappingproxy": ("types.MappingProxyType({{{kwdict}}})", ""),
    "chainmap": ("collections.ChainMap({{{head}}}, {{{tail}}})", ""),
}


class KwargsViaMapping(Operator):
    family = "B2"
    name = "kwargs_via_mapping"
    DESCRIPTION = ("Pass a call's keyword arguments through ** unpacking of a custom Mapping, dict subclass, "
                   "UserDict, OrderedDict, MappingProxyType or ChainMap.")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not any(a.keyword is not None for a in original_node.args) or m.matches(original_node.func, m.Name("super")):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        keywords = [(a.keyword.value, code_of(a.value)) for a in updated_node.args if a.keyword is not None]
        kind = self.rng.choice(sorted(_MAPPINGS))
        template, helper = _MAPPINGS[kind]
        cls = self.fresh("KwargMapping") if helper else ""
        used = template + helper
        module = next((name for name in ("types", "collections.abc", "collections") if f"{name}." in used), None)
        if module:  # `import collections.abc` binds `collections` too
            self.add_import(module)
        if helper:
            self.add_helper(helper.format(cls=cls))
        split = self.rng.randint(0, len(keywords))
        entries = [f"{k!r}: {v}" for k, v in keywords]
        mapping = template.format(cls=cls, kw=", ".join(f"{k}={v}" for k, v in keywords), kwdict=", ".join(entries),
                                  head=", ".join(entries[:split]), tail=", ".join(entries[split:]))
        kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args if a.keyword is None]
        # `**` goes after every positional and `*` argument: f(**m, *a) is a syntax error
        at = max((i + 1 for i, a in enumerate(kept) if a.star != "**"), default=0)
        kept.insert(at, cst.Arg(cst.parse_expression(mapping), star="**"))
        return updated_node.with_changes(args=kept)


# mutation of a module-level sink inside a comprehension; {s} sink, {t} the loop target, {e} the element
_SINK_WRITES = {
    "list": ["({s}.append({t}) or {e})", "({s}.extend([{t}]) or {e})", "({s}.insert(0, {t}) or {e})"],
    "dict": ["({s}.__setitem__(len({s}), {t}) or {e})", "({s}.update({{len({s}): {t}}}) or {e})",
             "({s}.setdefault(len({s}), {t}), {e})[1]"],
}


class ComprehensionSideEffect(Operator):
    family = "B2"
    name = "comprehension_side_effect"
    DESCRIPTION = ("Make a comprehension or generator expression of the compiled region record its loop "
                   "variables into a module-level list or dict as it runs (in its element or its filter).")

    @m.leave(m.ListComp() | m.SetComp() | m.GeneratorExp() | m.DictComp())
    def _comprehension(self, original_node: cst.BaseComp, updated_node: cst.BaseComp) -> cst.BaseExpression:
        if not self.is_site(original_node):
            return updated_node
        innermost = updated_node.for_in
        while innermost.inner_for_in is not None:
            innermost = innermost.inner_for_in
        kind = self.rng.choice(sorted(_SINK_WRITES))
        sink = self.fresh("TRACE")
        self.add_helper(f"{sink} = {'[]' if kind == 'list' else '{}'}")
        target = atom_code(innermost.target)
        if self.rng.random() < 0.25:  # mutate in the filter instead of the element
            condition = cst.parse_expression(f"{sink}.append({target}) is None" if kind == "list"
                                             else f"{sink}.update({{len({sink}): {target}}}) is None")
            new_for = innermost.with_changes(ifs=[*innermost.ifs, cst.CompIf(condition)])
            return updated_node.deep_replace(innermost, new_for)  # type: ignore[return-value]
        write = self.rng.choice(_SINK_WRITES[kind])
        if isinstance(updated_node, cst.DictComp):
            return updated_node.with_changes(
                value=cst.parse_expression(write.format(s=sink, t=target, e=operand_code(updated_node.value))))
        element = write.format(s=sink, t=target, e=operand_code(updated_node.elt))
        return updated_node.with_changes(elt=cst.parse_expression(element))


class RebuildFromIterator(Operator):
    family = "B2"
    name = "rebuild_from_iterator"
    DESCRIPTION = ("Build a list/dict/set assigned in the compiled region by mutating an empty one: "
                   "extend/update from an iterator or generator, or append/add/__setitem__ in a loop.")

    PLAN = {  # kind -> (empty, ways to fill it from {src}: a code snippet over the element sequence)
        "list": ("[]", ["{t}.extend(iter({src}))", "{t}.extend({v} for {v} in {src})", "{t} += {src}",
                        "for {v} in {src}:\n    {t}.append({v})"]),
        "set": ("set()", ["{t}.update(iter({src}))", "for {v} in {src}:\n    {t}.add({v})", "{t} |= set({src})"]),
        "dict": ("{{}}", ["{t}.update(iter({src}))", "{t}.update(({k}, {v}) for {k}, {v} in {src})",
                          "for {k}, {v} in {src}:\n    {t}[{k}] = {v}"]),
        # dict(src): src is a mapping or an iterable of pairs, which update() and dict() both accept
        "mapping": ("{{}}", ["{t}.update({src})", "{t} |= dict({src})",
                             "for {k}, {v} in dict({src}).items():\n    {t}[{k}] = {v}"]),
    }

    SITE = m.SimpleStatementLine(body=[m.Assign(
        targets=[m.AssignTarget(m.Name() | m.Attribute())],
        value=m.List() | m.Set() | m.Dict() | m.ListComp() | m.SetComp() | m.DictComp()
        | m.Call(func=m.Name("list") | m.Name("set") | m.Name("dict"), args=[m.Arg(keyword=None, star="")]))])

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if not m.matches(original_node, self.SITE):
            return updated_node
        value = original_node.body[0].value  # type: ignore[attr-defined]
        target = original_node.body[0].targets[0].target  # type: ignore[attr-defined]
        if not is_stable(target) or _mentions(value, target) or not getattr(value, "elements", True):
            return updated_node
        if any(isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in getattr(value, "elements", ())):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        kind, src = self._source(value)
        empty, fills = self.PLAN[kind]
        t = code_of(target)
        fill = self.rng.choice(fills)
        code = f"{t} = {empty.format()}\n" + fill.format(t=t, src=src, v=self.fresh("item"), k=self.fresh("key")) + "\n"
        first, *rest = _statements(code)
        return cst.FlattenSentinel([first.with_changes(leading_lines=original_node.leading_lines), *rest])

    @staticmethod
    def _source(value: cst.BaseExpression) -> tuple[str, str]:
        """The PLAN kind for `value` and the code of what its elements come from."""
        if isinstance(value, cst.Call):
            name = value.func.value  # type: ignore[attr-defined]
            return ("mapping" if name == "dict" else name), operand_code(value.args[0].value)
        if isinstance(value, (cst.ListComp, cst.SetComp)):
            return _KIND[type(value)], f"({code_of(value.elt)} {code_of(value.for_in)})"
        if isinstance(value, cst.DictComp):
            return "dict", f"(({code_of(value.key)}, {code_of(value.value)}) {code_of(value.for_in)})"
        items = [f"({code_of(e.key)}, {code_of(e.value)})" if isinstance(value, cst.Dict) else code_of(e.value)
                 for e in value.elements]  # type: ignore[attr-defined]
        return _KIND[type(value)], f"({', '.join(items)}{',' if len(items) == 1 else ''})"


_ROTATIONS = [
    "if isinstance(container, list) and container:\n        container.append(container.pop(0))",
    "if isinstance(container, list) and container:\n        container.insert(len(container), container.pop(0))",
    "if isinstance(container, list) and container:\n        container[:] = container[1:] + container[:1]",
]
_DICT_ROTATIONS = [
    "if isinstance(container, dict) and container:\n        key = next(iter(container))\n"
    "        container[key] = container.pop(key)",
    "if isinstance(container, dict) and container:\n        key = next(iter(container))\n"
    "        container.update([(key, container.pop(key))])",
]


class MutateWhileIterating(Operator):
    family = "B2"
    name = "mutate_while_iterating"
    DESCRIPTION = ("Iterate a snapshot of a list/dict in a for loop of the compiled region while rotating the "
                   "original in place each step (a full pass restores its order).")

    SNAPSHOTS = ("list({it})", "tuple({it})", "[*{it}]")
    VIEW = m.Call(func=m.Attribute(attr=m.Name("keys") | m.Name("items") | m.Name("values")), args=[])
    COPY = (m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("sorted"), args=[m.Arg(keyword=None, star="")])
            | m.Call(func=m.Attribute(attr=m.Name("copy")), args=[])
            | m.Subscript(slice=[m.SubscriptElement(m.Slice(lower=None, upper=None, step=None))]))

    @m.leave(m.For(asynchronous=None))
    def _for(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        container, copied = original_node.iter, m.matches(original_node.iter, self.COPY)
        if copied:  # the loop already iterates a copy: only add the mutation
            container = container.args[0].value if isinstance(container, cst.Call) and container.args \
                else container.value  # type: ignore[attr-defined]
        if m.matches(container, self.VIEW):
            container = container.func.value  # type: ignore[attr-defined]
        if not (is_stable(container) and isinstance(container, (cst.Name, cst.Attribute))):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        helper = self.fresh("rotate_in_place")
        rotations = f"{self.rng.choice(_ROTATIONS)}\n    el{self.rng.choice(_DICT_ROTATIONS)}"
        self.add_helper(f"def {helper}(container):\n    \"\"\"Move the first item or key to the end.\"\"\"\n"
                        f"    {rotations}\n")
        snapshot = code_of(updated_node.iter) if copied else \
            self.rng.choice(self.SNAPSHOTS).format(it=operand_code(updated_node.iter))
        rotate = cst.parse_statement(f"{helper}({code_of(container)})\n")
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock):
            body = body.with_changes(body=[rotate, *body.body])
        else:
            body = body.with_changes(body=[*rotate.body, *body.body])  # type: ignore[attr-defined]
        return updated_node.with_changes(iter=cst.parse_expression(snapshot), body=body)
