"""A2: attribute access.

Rewriters change the attribute reads of the compiled region (getattr with a literal or
constant name, hasattr guards, proxies with __getattr__/__getattribute__, reads through
the instance __dict__); a router passes a value through calls on an object whose
instance attribute shadows a method of its class.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._positions import Stores
from mutator.mutation.operators._routing import HelperRouter
from mutator.mutation.operators._templates import define_helpers, template_expr


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


class _AttributeReads(Stores):
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


class ReadViaGetattr(_AttributeReads):
    family = "A2"
    name = "read_via_getattr"
    DESCRIPTION = ("Replace an attribute read `obj.attr` in the region with getattr(obj, name[, default]), the name "
                   "given as a literal or as a module-level string constant.")
    builtins = ("getattr",)

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        how = self.rng.choice(["literal", "constant", "default"] if not self.guarded else ["literal", "constant"])
        if how == "constant":
            key = define_helpers(self, f'$ATTR_NAME = "{attr}"\n')["ATTR_NAME"]
            return template_expr("getattr({obj}, {key})", obj=node.value, key=key)
        # outside a try a default cannot hide an AttributeError the program relies on
        default = ", None" if how == "default" else ""
        return template_expr(f'getattr({{obj}}, "{attr}"{default})', obj=node.value)


class GuardWithHasattr(_AttributeReads):
    family = "A2"
    name = "guard_with_hasattr"
    DESCRIPTION = ("Guard an attribute read in the region with hasattr: on the attribute itself, or on an "
                   "attribute that is certainly missing.")
    simple_receivers = True  # the receiver is evaluated twice
    builtins = ("hasattr",)

    def rewrite(self, node: cst.Attribute, attr: str) -> cst.BaseExpression:
        if not self.guarded and self.rng.random() < 0.5:
            return template_expr(f'({{read}} if hasattr({{obj}}, "{attr}") else None)', read=node,
                                 obj=node.value.deep_clone())
        missing = self.fresh("missing_attr")
        return template_expr(f'(None if hasattr({{obj}}, "{missing}") else {{read}})', read=node,
                             obj=node.value.deep_clone())


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
        proxy = define_helpers(self, self.rng.choice(templates))["Proxy"]
        return node.with_changes(value=template_expr("{proxy}({obj})", proxy=proxy, obj=node.value))


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
        return template_expr(template, obj=obj.deep_clone(), read=node, **copies)


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


class RouteThroughShadowedMethod(HelperRouter):
    family = "A2"
    name = "route_through_shadowed_method"
    DESCRIPTION = ("Pass a value of the region through calls on an object whose instance attribute shadows a "
                   "method of its class (callable, non-callable, set via __dict__, then deleted).")
    TEMPLATES = _SHADOWS
