"""A1: object initialisation.

Routers pass a value of the compiled region through an object built on the spot: a
dataclass, a `super().__init__` hierarchy, a class with `__new__`, a half-built object
(see `_routing`). Rewriters change the `__init__` methods the program already has: moved
into a new base class, or assigning through a property.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._positions import Scoped
from mutator.mutation.operators._routing import SCALE, ValueRouter
from mutator.mutation.operators._templates import define_helpers, keyword_arg, parse_lines, template_expr
from mutator.mutation.tree import method_of

_DATACLASSES = (
    # __post_init__ fills a field(init=False) and appends to a default_factory list
    """
@dataclasses.dataclass
class $Record:
    value: object
    gain: float = 2.0
    trail: list = dataclasses.field(default_factory=list)
    scaled: object = dataclasses.field(init=False, default=None)

    def __post_init__(self):
        self.trail.append(self.gain)
        self.scaled = $scale(self.value, self.gain)

    def result(self):
        return $scale(self.scaled, 1.0 / self.trail[-1])
""",
    # a frozen dataclass can only set its derived field through object.__setattr__
    """
@dataclasses.dataclass(frozen=True)
class $Record:
    value: object
    gain: float = 0.5
    scaled: object = dataclasses.field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self):
        object.__setattr__(self, "scaled", $scale(self.value, self.gain))

    def result(self):
        return $scale(self.scaled, 1.0 / self.gain)
""",
    # a dataclass subclass whose __post_init__ chains to its base's
    """
@dataclasses.dataclass
class $RecordBase:
    value: object
    gain: float = 4.0

    def __post_init__(self):
        self.scaled = $scale(self.value, self.gain)


@dataclasses.dataclass
class $Record($RecordBase):
    inverse: float = dataclasses.field(init=False)

    def __post_init__(self):
        super().__post_init__()
        self.inverse = 1.0 / self.gain

    def result(self):
        return $scale(self.scaled, self.inverse)
""",
)


class RouteThroughDataclass(ValueRouter):
    family = "A1"
    name = "route_through_dataclass"
    DESCRIPTION = ("Pass a value of the region through a dataclass built there (default_factory, field(init=False), "
                   "__post_init__, frozen, inheritance, replace).")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = define_helpers(self, SCALE + self.rng.choice(_DATACLASSES))
        use = self.rng.choice(["{cls}({v}).result()", "{cls}(value={v}).result()",
                               "dataclasses.replace({cls}({v}), gain=0.25).result()"])
        return template_expr(use, cls=names["Record"], v=value)


_SUPER_CALLS = (
    "super().__init__($scale(value, gain), gain=gain, **options)",
    "super($Child, self).__init__($scale(value, gain), gain=gain, **options)",
    "$Mixin.__init__(self, $scale(value, gain), gain=gain, **options)",
)
_SUPER_INIT = """
class $Base:
    def __init__(self, value, **options):
        self.value = value
        self.gain = options.get("gain", 1.0)


class $Mixin:
    def __init__(self, *args, **kwargs):
        self.ready = True
        super().__init__(*args, **kwargs)


class $Child($Mixin, $Base):
    def __init__(self, value, gain=2.0, **options):
        $super_call

    def result(self):
        return $scale(self.value, 1.0 / self.gain) if self.ready else self.value
"""


class RouteThroughSuperInit(ValueRouter):
    family = "A1"
    name = "route_through_super_init"
    DESCRIPTION = ("Pass a value of the region through an object whose __init__ delegates along a cooperative "
                   "super().__init__(*args, **kwargs) chain.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        template = SCALE + _SUPER_INIT.replace("$super_call", self.rng.choice(_SUPER_CALLS))
        names = define_helpers(self, template)
        use = self.rng.choice(["{cls}({v}).result()", "{cls}({v}, gain=0.5).result()", "{cls}({v}, 4.0).result()"])
        return template_expr(use, cls=names["Child"], v=value)


_NEW_AND_SETTERS = (
    # __new__ sets a field before __init__ runs
    """
class $Built:
    def __new__(cls, value, gain=2.0):
        obj = super().__new__(cls)
        obj.scaled = $scale(value, gain)
        return obj

    def __init__(self, value, gain=2.0):
        self.gain = gain

    def result(self):
        return $scale(self.scaled, 1.0 / self.gain)
""",
    # __init__ assigns through a property setter
    """
class $Built:
    def __init__(self, value, gain=2.0):
        self.gain = gain
        self.value = value

    @property
    def value(self):
        return $scale(self._stored, 1.0 / self.gain)

    @value.setter
    def value(self, v):
        self._stored = $scale(v, self.gain)

    def result(self):
        return self.value
""",
    # a subclass __new__ forwards changed arguments to its base's __new__; the base __init__ still runs
    """
class $BuiltBase:
    def __new__(cls, value, *args, **kwargs):
        obj = super().__new__(cls)
        obj.raw = value
        return obj

    def __init__(self, value, gain=1.0):
        self.gain = gain


class $Built($BuiltBase):
    def __new__(cls, value, gain=4.0):
        inst = super().__new__(cls, $scale(value, gain))
        inst.inverse = 1.0 / gain
        return inst

    def result(self):
        return $scale(self.raw, self.inverse * self.gain)
""",
    # __new__ returns an instance of another class, so __init__ must not run
    """
class $Plain:
    def result(self):
        return $scale(self.scaled, 0.5)


class $Built:
    def __new__(cls, value):
        obj = object.__new__($Plain)
        obj.scaled = $scale(value, 2.0)
        return obj

    def __init__(self, value):
        raise RuntimeError("__init__ runs only for instances of the class")
""",
)


class RouteThroughNew(ValueRouter):
    family = "A1"
    name = "route_through_new"
    DESCRIPTION = ("Pass a value of the region through an object built by a __new__ override or by a property "
                   "setter called from __init__.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = define_helpers(self, SCALE + self.rng.choice(_NEW_AND_SETTERS))
        return template_expr("{cls}({v}).result()", cls=names["Built"], v=value)


_HALF_BUILT = (
    # __len__ and __hash__ are consulted while __init__ is still adding fields
    """
class $Partial:
    def __init__(self, value, gain=None):
        if gain is not None:
            self.gain = gain
        self.ready = bool(self)
        self.fields = hash(self)
        self.value = value

    def __len__(self):
        return len(vars(self))

    def __hash__(self):
        return 10 * len(vars(self))

    def result(self):
        if self.ready and hasattr(self, "gain"):
            return $scale($scale(self.value, self.gain), self.fields / (20.0 * self.gain))
        return self.value
""",
    # __bool__ reads a field that only some construction paths set
    """
class $Partial:
    def __init__(self, value, gain=None):
        if isinstance(value, torch.Tensor):
            self.tensor = value
        if gain:
            self.gain = gain
        self.complete = bool(self)
        if not self.complete:
            self.value = value

    def __bool__(self):
        return "tensor" in self.__dict__ and getattr(self, "gain", 0) > 0

    def result(self):
        if self.complete:
            return $scale($scale(self.tensor, self.gain), 1.0 / self.gain)
        return getattr(self, "value", None)
""",
)


class RouteThroughHalfBuiltObject(ValueRouter):
    family = "A1"
    name = "route_through_half_built_object"
    DESCRIPTION = ("Pass a value of the region through an object with conditional fields whose __bool__/__len__/"
                   "__hash__ run while __init__ is half done.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = define_helpers(self, SCALE + self.rng.choice(_HALF_BUILT))
        use = self.rng.choice(["{cls}({v}, 2.0).result()", "{cls}({v}, gain=0.5).result()", "{cls}({v}).result()"])
        return template_expr(use, cls=names["Partial"], v=value)


def _mangled_or_class_bound(node: cst.CSTNode) -> bool:
    """Does code use private (name-mangled) names, `__class__`, or super() with arguments?

    Such code depends on the class its def sits in, so it cannot move to another class.
    """
    return bool(m.findall(node, m.Name(m.MatchIfTrue(lambda v: v.startswith("__") and not v.endswith("__"))) |
                          m.Name("__class__") | m.Call(func=m.Name("super"), args=[m.AtLeastN(n=1)])))


def _forwarding(params: cst.Parameters, *, by_keyword: bool) -> list[cst.Arg] | None:
    """Arguments that pass every parameter but the first (self) on to another __init__."""
    positional = [*params.posonly_params, *params.params]
    if not positional:
        return None
    keyword_ok = by_keyword and not isinstance(params.star_arg, cst.Param)
    args = [cst.Arg(cst.Name(p.name.value)) for p in params.posonly_params[1:]]
    for p in params.params[1 if not params.posonly_params else 0:]:
        name = cst.Name(p.name.value)
        args.append(_keyword(name.value) if keyword_ok else cst.Arg(name))
    if isinstance(params.star_arg, cst.Param):
        args.append(cst.Arg(cst.Name(params.star_arg.name.value), star="*"))
    for p in params.kwonly_params:
        args.append(_keyword(p.name.value))
    if params.star_kwarg is not None:
        args.append(cst.Arg(cst.Name(params.star_kwarg.name.value), star="**"))
    return args


def _keyword(name: str) -> cst.Arg:
    """`name=name`."""
    return keyword_arg(name, cst.Name(name))


def _bare(params: cst.Parameters) -> cst.Parameters:
    """The same parameters without defaults or annotations (they may name class-level things)."""
    def strip(p: cst.Param) -> cst.Param:
        return p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT, annotation=None)
    star = strip(params.star_arg) if isinstance(params.star_arg, cst.Param) else params.star_arg
    return params.with_changes(
        posonly_params=[strip(p) for p in params.posonly_params], params=[strip(p) for p in params.params],
        star_arg=star, kwonly_params=[strip(p) for p in params.kwonly_params],
        star_kwarg=strip(params.star_kwarg) if params.star_kwarg else None)


class HoistInitToBase(Scoped):
    family = "A1"
    name = "hoist_init_to_base"
    DESCRIPTION = ("Move a region class's __init__ into a new base class and make the class's own __init__ "
                   "delegate to it (super().__init__, super(C, self).__init__ or Base.__init__).")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        init = method_of(original_node, "__init__")
        if (init is None or original_node.decorators or original_node.keywords or init.decorators
                or init.asynchronous or _mangled_or_class_bound(init.body) or not self.is_site(init)):
            return updated_node
        cls = original_node.name.value
        base = self.fresh(f"_{cls.lstrip('_')}Init")
        args = _forwarding(init.params, by_keyword=self.rng.random() < 0.5)
        if args is None:
            self.decline(f"{cls}.__init__ takes no self")
            return updated_node
        call = self.rng.choice(["super().__init__", f"super({cls}, self).__init__", f"{base}.__init__"])
        if call.startswith(base):
            args = [cst.Arg(cst.Name(init.params.params[0].name.value if not init.params.posonly_params
                                     else init.params.posonly_params[0].name.value)), *args]
        delegate = cst.SimpleStatementLine([cst.Expr(cst.Call(cst.parse_expression(call), args))])
        # the new base takes over the original bases, so super() in the moved body reaches the same classes
        init_class = cst.ClassDef(
            name=cst.Name(base), bases=original_node.bases,
            body=cst.IndentedBlock([init.with_changes(params=_bare(init.params), leading_lines=[])]),
            lpar=cst.LeftParen() if original_node.bases else cst.MaybeSentinel.DEFAULT,
            rpar=cst.RightParen() if original_node.bases else cst.MaybeSentinel.DEFAULT,
            leading_lines=original_node.leading_lines)
        body = [init.with_changes(body=cst.IndentedBlock([delegate])) if s is init else s
                for s in original_node.body.body]
        new_class = updated_node.with_changes(
            bases=[cst.Arg(cst.Name(base))], lpar=cst.LeftParen(), rpar=cst.RightParen(),
            leading_lines=[cst.EmptyLine()] * (1 if self._scopes else 2),
            body=updated_node.body.with_changes(body=body))
        return cst.FlattenSentinel([init_class, new_class])


class InitAttributeViaProperty(Scoped):
    family = "A1"
    name = "init_attribute_via_property"
    DESCRIPTION = ("Turn an attribute that a region class's __init__ assigns into a property with setter and "
                   "deleter, so __init__ and every later access go through the descriptor.")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        init = method_of(original_node, "__init__")
        if (init is None or original_node.decorators or original_node.keywords
                or any(not m.matches(b, m.Arg(m.Name("object"), keyword=None)) for b in original_node.bases)
                or not (init.params.posonly_params or init.params.params)):
            return updated_node
        taken = _class_level_names(original_node)
        if taken & _ATTRIBUTE_HOOKS or m.findall(original_node.body, m.Name("vars") | m.Name("__dict__")):
            return updated_node  # it manages its own instance dict, which would not see the renamed store
        me = (init.params.posonly_params or init.params.params)[0].name.value
        seen: set[str] = set()
        chosen = None
        for assign in m.findall(init.body, m.Assign(targets=[m.AssignTarget(m.Attribute(m.Name(me), m.Name()))])):
            attr = assign.targets[0].target.attr.value
            if attr in taken or attr in seen or attr.startswith("__"):
                continue
            seen.add(attr)
            if self.is_site(assign):
                chosen = attr
        if chosen is None:
            return updated_node
        store = self.fresh(f"_{chosen.lstrip('_')}_value")
        if self.rng.random() < 0.5:
            code = f"""
@property
def {chosen}(self):
    return self.{store}

@{chosen}.setter
def {chosen}(self, value):
    self.{store} = value

@{chosen}.deleter
def {chosen}(self):
    del self.{store}
"""
        else:
            code = (f"{chosen} = property(\n    lambda self: self.{store},\n"
                    f"    lambda self, value: setattr(self, \"{store}\", value),\n"
                    f"    lambda self: delattr(self, \"{store}\"),\n)\n")
        # blank lines without indentation: inside the class they would otherwise carry trailing spaces
        added = [s.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * max(i == 0, len(s.leading_lines)))
                 for i, s in enumerate(parse_lines(code))]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*updated_node.body.body, *added]))


_ATTRIBUTE_HOOKS = frozenset({"__slots__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__"})


def _class_level_names(cls: cst.ClassDef) -> set[str]:
    """Everything the class body binds (methods, class attributes, __slots__): a property would clash."""
    names: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        for target in m.findall(stmt, m.AssignTarget() | m.AnnAssign()) if not isinstance(stmt, cst.FunctionDef) \
                else []:
            node = target.target
            names.update(n.value for n in m.findall(node, m.Name()))
    return names
