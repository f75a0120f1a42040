"""A1-A2: object initialisation and attribute access.

Two kinds of operator live here. *Routers* pass one value of the compiled region (the
right-hand side of an assignment, a returned value or one element of a returned tuple)
through an object built on the spot: a dataclass, a `super().__init__` hierarchy, a class
with `__new__`, a half-built object. Their helpers scale floating tensors by a power of
two on the way in and back on the way out, so the value is exactly unchanged in eager
mode, but every step of the object model has to be right for the compiled value to
match. Other values pass through unchanged. *Rewriters* change code the program already
has: its `__init__` methods and its attribute reads.

The shared machinery (`_Scoped`, `_ValueRouter`, `_AttributeReads`, `_helpers`) is also
used by the A3/A4 operators in `dunders.py`.
"""

from __future__ import annotations

import re
from string import Template

import libcst as cst
import libcst.matchers as m
from libcst.helpers import parse_template_expression

from mutator.mutation.operator import Operator

# Rewriting inside these would recurse (attribute hooks) or change the dispatch protocol itself.
_SKIPPED_FUNCTIONS = frozenset({"__torch_function__", "__torch_dispatch__", "__getattr__", "__getattribute__",
                                "__setattr__", "__delattr__"})
# Calls that never produce a tensor: routing their results would only add noise.
_SCALAR_BUILTINS = frozenset({
    "len", "isinstance", "issubclass", "range", "int", "float", "bool", "str", "repr", "format", "type",
    "hasattr", "getattr", "setattr", "callable", "id", "hash", "print", "super", "vars", "dir", "iter", "next",
    "enumerate", "zip", "map", "filter", "sorted", "reversed", "any", "all", "list", "tuple", "dict", "set",
    "frozenset", "object"})
_SCALAR_METHODS = frozenset({"item", "tolist", "size", "dim", "numel", "format", "join", "keys", "items", "values"})

# Scales floating tensors by an exact power of two; every other value passes unchanged.
SCALE = """
def $scale(value, factor):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value * factor
    return value

"""


_HELPER_MODULES = ("torch", "dataclasses", "collections", "functools", "types")


def _helpers(op: Operator, template: str) -> dict[str, str]:
    """Add module-level helper code with a fresh identifier for every `$name` in it; returns the names.

    The modules the code uses (`torch.`, `functools.`, ...) are imported too."""
    fresh = {name: op.fresh(f"_{name}") for name in dict.fromkeys(re.findall(r"\$(\w+)", template))}
    for module in _HELPER_MODULES:
        if re.search(rf"\b{module}\.", template):
            op.add_import(module)
    op.add_helper(Template(template).substitute(fresh))
    return fresh


def _expr(template: str, **nodes: cst.BaseExpression | str) -> cst.BaseExpression:
    """An expression from a `{placeholder}` template; strings become names."""
    return parse_template_expression(template, **{k: cst.Name(v) if isinstance(v, str) else v for k, v in nodes.items()})


def _module_bindings(module: cst.Module) -> set[str]:
    """Names bound by top-level imports: receivers that are modules, not objects."""
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        while isinstance(bound, cst.Attribute):
                            bound = bound.value
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
    return names


class _Scoped(Operator):
    """Tracks the enclosing def/class and whether the code sits in a try statement."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._scopes: list[cst.FunctionDef | cst.ClassDef] = []
        self._tries = 0
        self._bound: dict[tuple[int, tuple[str, ...]], bool] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._scopes.pop()
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        self._scopes.pop()
        return updated_node

    def visit_Try(self, node: cst.Try) -> None:
        self._tries += 1

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try:
        self._tries -= 1
        return updated_node

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self._tries += 1

    def leave_TryStar(self, original_node: cst.TryStar, updated_node: cst.TryStar) -> cst.TryStar:
        self._tries -= 1
        return updated_node

    @property
    def in_plain_function(self) -> bool:
        """Directly inside a def (not a class body) that is not an attribute or dispatch hook."""
        return bool(self._scopes) and isinstance(self._scopes[-1], cst.FunctionDef) \
            and self._scopes[-1].name.value not in _SKIPPED_FUNCTIONS

    @property
    def in_autograd_function(self) -> bool:
        """Inside a torch.autograd.Function, whose forward must return its own (dirty) tensors."""
        return any(isinstance(scope, cst.ClassDef) and any(
            m.matches(b.value, m.Name("Function") | m.Attribute(attr=m.Name("Function"))) for b in scope.bases)
            for scope in self._scopes)

    def binds_locally(self, *names: str) -> bool:
        """Does an enclosing def bind one of `names` itself (say a parameter `type`), hiding the builtin or global?"""
        return any(self._binds(scope, names) for scope in self._scopes if isinstance(scope, cst.FunctionDef))

    def _binds(self, scope: cst.FunctionDef, names: tuple[str, ...]) -> bool:
        key = (id(scope), names)
        if key not in self._bound:  # asked once per attribute or call: remember the answer
            binds = m.OneOf(*(m.Param(m.Name(n)) | m.AssignTarget(m.Name(n)) | m.FunctionDef(name=m.Name(n))
                              | m.For(target=m.Name(n)) | m.AsName(m.Name(n)) for n in names))
            self._bound[key] = bool(m.findall(scope.body, binds) or m.findall(scope.params, binds))
        return self._bound[key]

    @property
    def guarded(self) -> bool:
        """Inside a try: an exception the program expects must still be raised."""
        return self._tries > 0


class _ValueRouter(_Scoped):
    """Base of the routers: picks a value of the region and hands it to `route`."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._values: set[int] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._mark(node.value, names=False)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._mark(node.value, names=False)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._mark(node.value, names=True)

    def _mark(self, value: cst.BaseExpression, *, names: bool) -> None:
        if not self.in_plain_function or self.in_autograd_function:
            return
        parts = value.elements if isinstance(value, cst.Tuple) else [value]
        for part in parts:
            expr = part.value if isinstance(part, cst.Element) else part
            if isinstance(part, cst.StarredElement) or not _likely_value(expr, names=names):
                continue
            self._values.add(id(expr))

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        updated = super().on_leave(original_node, updated_node)
        if id(original_node) in self._values and self.is_site(original_node):
            return self.route(updated)
        return updated

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """The expression that computes `value` through the operator's construct."""
        raise NotImplementedError


def _likely_value(expr: cst.BaseExpression, *, names: bool) -> bool:
    """Could `expr` be a tensor worth routing? (Anything else still passes through unchanged.)"""
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name):
            return func.value not in _SCALAR_BUILTINS
        return not (isinstance(func, cst.Attribute) and func.attr.value in _SCALAR_METHODS)
    if isinstance(expr, cst.UnaryOperation):
        return not isinstance(expr.operator, cst.Not)
    if isinstance(expr, cst.Name):
        return names and expr.value not in {"self", "cls", "None", "True", "False"}
    return isinstance(expr, (cst.BinaryOperation, cst.Subscript, cst.Attribute))


class _Stores(_Scoped):
    """Knows which expressions are written (assignment, del, loop and `as` targets) rather than read,
    and which sit where an inserted expression would not be a plain read (decorators, imports, f-strings)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._stores: set[int] = set()
        self._skip_depth = 0

    @property
    def reading(self) -> bool:
        return not self._skip_depth and self.in_plain_function

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._store(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._store(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._store(node.name)

    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)
        elif isinstance(target, cst.StarredElement):
            self._store(target.value)
        else:
            self._stores.add(id(target))

    def is_store(self, node: cst.CSTNode) -> bool:
        return id(node) in self._stores

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._skip_depth += 1

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator) -> cst.Decorator:
        self._skip_depth -= 1
        return updated_node

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._skip_depth += 1  # quotes inserted into an f-string's fields may end the string early

    def leave_FormattedString(self, original_node: cst.FormattedString,
                              updated_node: cst.FormattedString) -> cst.FormattedString:
        self._skip_depth -= 1
        return updated_node

    def visit_Import(self, node: cst.Import) -> None:
        self._skip_depth += 1

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        self._skip_depth -= 1
        return updated_node

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._skip_depth += 1

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        self._skip_depth -= 1
        return updated_node


class _AttributeReads(_Stores):
    """Base of the attribute-read rewriters: offers each `receiver.attr` load of the region to `rewrite`.

    `simple_receivers` limits sites to receivers that are names or attribute chains, for
    rewrites that evaluate the receiver twice; `builtins` names the builtins the rewrite calls.
    """

    simple_receivers = False
    builtins: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._modules = _module_bindings(self.ctx.module)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if not self._readable(original_node) or not self.is_site(original_node):
            return updated_node
        return self.rewrite(updated_node, original_node.attr.value)

    def _readable(self, node: cst.Attribute) -> bool:
        attr = node.attr.value
        if (not self.reading or self.is_store(node)
                or (attr.startswith("__") and not attr.endswith("__"))  # name-mangled: getattr would miss it
                or self.binds_locally(*self.builtins)):
            return False
        root = node.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            return root.value not in self._modules and root.value != "super"
        if self.simple_receivers:
            return False
        return not m.matches(root, m.Call(func=m.Name("super")))

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------
# A1: object initialisation
# ---------------------------------------------------------------------------------------

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


class RouteThroughDataclass(_ValueRouter):
    family = "A1"
    name = "route_through_dataclass"
    DESCRIPTION = ("Pass a value of the region through a dataclass built there (default_factory, field(init=False), "
                   "__post_init__, frozen, inheritance, replace).")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_DATACLASSES))
        use = self.rng.choice(["{cls}({v}).result()", "{cls}(value={v}).result()",
                               "dataclasses.replace({cls}({v}), gain=0.25).result()"])
        return _expr(use, cls=names["Record"], v=value)


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


class RouteThroughSuperInit(_ValueRouter):
    family = "A1"
    name = "route_through_super_init"
    DESCRIPTION = ("Pass a value of the region through an object whose __init__ delegates along a cooperative "
                   "super().__init__(*args, **kwargs) chain.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        template = SCALE + _SUPER_INIT.replace("$super_call", self.rng.choice(_SUPER_CALLS))
        names = _helpers(self, template)
        use = self.rng.choice(["{cls}({v}).result()", "{cls}({v}, gain=0.5).result()", "{cls}({v}, 4.0).result()"])
        return _expr(use, cls=names["Child"], v=value)


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


class RouteThroughNew(_ValueRouter):
    family = "A1"
    name = "route_through_new"
    DESCRIPTION = ("Pass a value of the region through an object built by a __new__ override or by a property "
                   "setter called from __init__.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_NEW_AND_SETTERS))
        return _expr("{cls}({v}).result()", cls=names["Built"], v=value)


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


class RouteThroughHalfBuiltObject(_ValueRouter):
    family = "A1"
    name = "route_through_half_built_object"
    DESCRIPTION = ("Pass a value of the region through an object with conditional fields whose __bool__/__len__/"
                   "__hash__ run while __init__ is half done.")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_HALF_BUILT))
        use = self.rng.choice(["{cls}({v}, 2.0).result()", "{cls}({v}, gain=0.5).result()", "{cls}({v}).result()"])
        return _expr(use, cls=names["Partial"], v=value)


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


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
    return cst.Arg(cst.Name(name), keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _bare(params: cst.Parameters) -> cst.Parameters:
    """The same parameters without defaults or annotations (they may name class-level things)."""
    def strip(p: cst.Param) -> cst.Param:
        return p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT, annotation=None)
    star = strip(params.star_arg) if isinstance(params.star_arg, cst.Param) else params.star_arg
    return params.with_changes(
        posonly_params=[strip(p) for p in params.posonly_params], params=[strip(p) for p in params.params],
        star_arg=star, kwonly_params=[strip(p) for p in params.kwonly_params],
        star_kwarg=strip(params.star_kwarg) if params.star_kwarg else None)


class HoistInitToBase(_Scoped):
    family = "A1"
    name = "hoist_init_to_base"
    DESCRIPTION = ("Move a region class's __init__ into a new base class and make the class's own __init__ "
                   "delegate to it (super().__init__, super(C, self).__init__ or Base.__init__).")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        init = _method(original_node, "__init__")
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


class InitAttributeViaProperty(_Scoped):
    family = "A1"
    name = "init_attribute_via_property"
    DESCRIPTION = ("Turn an attribute that a region class's __init__ assigns into a property with setter and "
                   "deleter, so __init__ and every later access go through the descriptor.")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.BaseStatement:
        super().leave_ClassDef(original_node, updated_node)
        init = _method(original_node, "__init__")
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
                 for i, s in enumerate(cst.parse_module(code.lstrip()).body)]
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


# ---------------------------------------------------------------------------------------
# A2: attribute access
# ---------------------------------------------------------------------------------------

class ReadViaGetattr(_AttributeReads):
    family = "A2"
    name = "read_via_getattr"
    DESCRIPTION = ("Replace an attribute read `obj.attr` in the region with getattr(obj, name[, default]), the name "
                   "given as a literal or as a module-level string constant.")
    builtins = ("getattr",)

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        how = self.rng.choice(["literal", "constant", "default"] if not self.guarded else ["literal", "constant"])
        if how == "constant":
            key = _helpers(self, f'$ATTR_NAME = "{attr}"\n')["ATTR_NAME"]
            return _expr("getattr({obj}, {key})", obj=node.value, key=key)
        # outside a try a default cannot hide an AttributeError the program relies on
        default = ", None" if how == "default" else ""
        return _expr(f'getattr({{obj}}, "{attr}"{default})', obj=node.value)


class GuardWithHasattr(_AttributeReads):
    family = "A2"
    name = "guard_with_hasattr"
    DESCRIPTION = ("Guard an attribute read in the region with hasattr: on the attribute itself, or on an "
                   "attribute that is certainly missing.")
    simple_receivers = True  # the receiver is evaluated twice
    builtins = ("hasattr",)

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        if not self.guarded and self.rng.random() < 0.5:
            return _expr(f'({{read}} if hasattr({{obj}}, "{attr}") else None)', read=node, obj=node.value.deep_clone())
        missing = self.fresh("missing_attr")
        return _expr(f'(None if hasattr({{obj}}, "{missing}") else {{read}})', read=node, obj=node.value.deep_clone())


_PROXIES = (
    # __getattr__ runs only when normal lookup on the proxy fails, which is every time here
    """
class $Proxy:
    def __init__(self, target):
        object.__setattr__(self, "_proxy_target", target)

    def __getattr__(self, name):
        return getattr(self.__dict__["_proxy_target"], name)
""",
    # __getattribute__ intercepts every lookup, including the proxy's own field
    """
class $Proxy:
    def __init__(self, target):
        self._proxy_target = target

    def __getattribute__(self, name):
        target = object.__getattribute__(self, "_proxy_target")
        return getattr(target, name)
""",
    # __getattr__ falls back to a class-level default for names the target lacks
    """
class $Proxy:
    fallback = None

    def __init__(self, target):
        self._proxy_target = target

    def __getattr__(self, name):
        target = self._proxy_target
        if hasattr(target, name):
            return getattr(target, name)
        return type(self).fallback
""",
)


class ReadThroughProxy(_AttributeReads):
    family = "A2"
    name = "read_through_proxy"
    DESCRIPTION = ("Read an attribute in the region through a proxy object whose __getattr__ or __getattribute__ "
                   "delegates to the original receiver.")

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        templates = _PROXIES if not self.guarded else _PROXIES[:2]  # the fallback would swallow AttributeError
        proxy = _helpers(self, self.rng.choice(templates))["Proxy"]
        return node.with_changes(value=_expr("{proxy}({obj})", proxy=proxy, obj=node.value))


class ReadThroughInstanceDict(_AttributeReads):
    family = "A2"
    name = "read_through_instance_dict"
    DESCRIPTION = ("Read an attribute in the region from the receiver's __dict__ (or vars()) when the instance "
                   "holds it, falling back to normal lookup.")
    simple_receivers = True
    builtins = ("isinstance", "type", "getattr", "vars", "hasattr")

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        obj = node.value
        # a class's __dict__ holds raw descriptors, not what attribute lookup on the class returns
        if self.rng.random() < 0.5:
            template = (f'({{obj}}.__dict__["{attr}"] if not isinstance({{obj2}}, type) '
                        f'and "{attr}" in getattr({{obj3}}, "__dict__", ()) else {{read}})')
        else:
            template = (f'(vars({{obj}})["{attr}"] if not isinstance({{obj2}}, type) and hasattr({{obj3}}, "__dict__") '
                        f'and "{attr}" in vars({{obj4}}) else {{read}})')
        copies = {f"obj{i}": obj.deep_clone() for i in (2, 3, 4) if f"{{obj{i}}}" in template}
        return _expr(template, obj=obj.deep_clone(), read=node, **copies)


_SHADOWS = (
    # an instance attribute set after construction shadows the class's method
    """
class $Shadowed:
    def transform(self, value):
        return $scale(value, 2.0)


def $route(value):
    obj = $Shadowed()
    first = obj.transform(value)
    obj.transform = lambda v: $scale(v, 0.5)
    return obj.transform(first)
""",
    # the shadow goes straight into __dict__; deleting it uncovers the method again
    """
class $Shadowed:
    def transform(self, value):
        return $scale(value, 0.5)


def $route(value):
    obj = $Shadowed()
    obj.__dict__["transform"] = lambda v: $scale(v, 2.0)
    doubled = obj.transform(value)
    del obj.transform
    return obj.transform(doubled)
""",
    # a non-callable instance attribute shadows a method of the same name
    """
class $Shadowed:
    def __init__(self, gain):
        if gain is not None:
            self.factor = gain

    def factor(self):
        return 1.0


def $route(value):
    obj = $Shadowed(2.0)
    plain = $Shadowed(None)
    k = obj.factor if not callable(obj.factor) else obj.factor()
    return $scale($scale(value, k), plain.factor() / k)
""",
    # __init__ binds a method of the class to an instance attribute of another name and shadows the original
    """
class $Shadowed:
    def __init__(self):
        self.original = self.transform
        self.transform = self.halve

    def transform(self, value):
        return $scale(value, 2.0)

    def halve(self, value):
        return $scale(value, 0.5)


def $route(value):
    obj = $Shadowed()
    return obj.transform(obj.original(value))
""",
)


class RouteThroughShadowedMethod(_ValueRouter):
    family = "A2"
    name = "route_through_shadowed_method"
    DESCRIPTION = ("Pass a value of the region through calls on an object whose instance attribute shadows a "
                   "method of its class (callable, non-callable, set via __dict__, then deleted).")

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = _helpers(self, SCALE + self.rng.choice(_SHADOWS))
        return _expr("{route}({v})", route=names["route"], v=value)
