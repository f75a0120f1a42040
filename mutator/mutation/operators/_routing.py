"""Routers: operators that pass one value of the compiled region through a construct built on the spot.

A router's site is the right-hand side of an assignment, a returned value or one element
of a returned tuple, in a plain function of the region. Its helpers scale floating
tensors by a power of two on the way in and back on the way out (`SCALE`), so the value
is exactly unchanged in eager mode, but every step of the construct has to be modelled
right for the compiled value to match. Other values pass through unchanged.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from mutator.mutation.operators._positions import Scoped
from mutator.mutation.operators._templates import define_helpers, template_expr

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


class ValueRouter(Scoped):
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


class HelperRouter(ValueRouter):
    """Base of the routers that call `$route(value)`, defined by one of their TEMPLATES (which may use `$scale`)."""

    TEMPLATES: ClassVar[tuple[str, ...]]

    def route(self, value: cst.BaseExpression) -> cst.BaseExpression:
        names = define_helpers(self, SCALE + self.rng.choice(self.TEMPLATES))
        return template_expr("{route}({v})", route=names["route"], v=value)
