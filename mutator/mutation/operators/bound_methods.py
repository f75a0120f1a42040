"""A4: method binding through the descriptor protocol.

A router passes a value of the region through bound methods copied between instances
(a.f = b.f) and types.MethodType bindings; rewriters call the region's methods by hand
(type(obj).f(obj, ...), obj.f.__func__, __get__) and module-level helpers through class
attributes (staticmethod, a forwarding classmethod, a property returning them).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._positions import Scoped
from mutator.mutation.operators._routing import HelperRouter
from mutator.mutation.tree import class_body_names, code, method_of

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


class RouteThroughCopiedMethods(HelperRouter):
    family = "A4"
    name = "route_through_copied_methods"
    DESCRIPTION = ("Pass a value of the region through bound methods copied between instances (a.f = b.f), "
                   "types.MethodType bindings and functions stored as instance attributes.")
    TEMPLATES = _COPIED


_METHOD_DECORATORS = {"staticmethod": "static", "classmethod": "class", "lru_cache": "plain", "cache": "plain"}
# How to call `obj.meth(...)` by hand, per kind of method: the callee, and what goes before the arguments.
_REBOUND = {
    "plain": [("type({obj}).{meth}", "{obj}"), ("{obj}.{meth}.__func__", "{obj}"),
              ("types.MethodType(type({obj}).{meth}, {obj})", None),
              ("getattr(type({obj}), \"{meth}\").__get__({obj}, type({obj}))", None)],
    "class": [("type({obj}).{meth}", None), ("{obj}.{meth}.__func__", "type({obj})")],
    "static": [("type({obj}).{meth}", None), ("getattr(type({obj}), \"{meth}\")", None)],
}


class RebindMethodCall(Scoped):
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
        kinds = {_METHOD_DECORATORS.get(code(d.decorator).split("(")[0].split(".")[-1]) for d in found.decorators}
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
        if meth in class_body_names(cls):
            return method_of(cls, meth)
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


class CallHelperThroughDescriptor(Scoped):
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
        fn, namespace_code = self._pending
        body = list(updated_node.body)
        at = next(i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef) and s.name.value == fn)
        namespace = cst.parse_statement(namespace_code).with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2)
        body.insert(at + 1, namespace)
        return updated_node.with_changes(body=body)
