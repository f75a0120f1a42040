"""Reduction passes: each a plain function from a program's syntax tree to smaller candidates.

A pass yields candidate modules in the order they should be tried, biggest cuts first
(delta debugging: whole blocks, then halves, ..., then single statements). Passes never
check anything themselves; the `ReductionProblem` decides what is kept. Every candidate
is valid Python by construction (libcst writes it), keeps the original's formatting
where it is untouched, and may still be rejected by the problem (wrong form, not
interesting). A pass that proposes many takes `start=n` and builds nothing before its
candidate n (after a kept candidate the problem goes on from where it was), and builds
each candidate by rebuilding only the edited node's ancestors.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from mutator.mutation.tree import bound_names, is_docstring

Pass = Callable[[cst.Module], Iterator[cst.Module]]
_PASS_LINE = cst.SimpleStatementLine([cst.Pass()])


# -- editing one node: rebuild only its ancestors ------------------------------------------
class _Ancestry(cst.CSTVisitor):
    """One walk recording, for the nodes `wanted` picks, the path from the module down to
    each: a candidate then rebuilds only that path (a whole-tree transform per candidate
    cost ~10 ms of libcst). Import statements are not entered (`import a.b` holds an
    Attribute that must stay a dotted name)."""

    def __init__(self, wanted: Callable[[cst.CSTNode, cst.CSTNode | None], bool], *, post_order: bool) -> None:
        super().__init__()
        self._wanted = wanted
        self._post_order = post_order
        self._stack: list[cst.CSTNode] = []
        self.paths: list[tuple[cst.CSTNode, ...]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._stack.append(node)
        if not self._post_order and self._wanted(node, self._parent):
            self.paths.append(tuple(self._stack))
        return not isinstance(node, (cst.Import, cst.ImportFrom))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self._post_order and self._wanted(original_node, self._parent):
            self.paths.append(tuple(self._stack))
        self._stack.pop()

    @property
    def _parent(self) -> cst.CSTNode | None:
        return self._stack[-2] if len(self._stack) > 1 else None


def _replaced(path: tuple[cst.CSTNode, ...], new: cst.CSTNode) -> cst.Module:
    """The module (path[0]) with path[-1] replaced by `new`; raises CSTValidationError
    when an ancestor does not take it."""
    for parent, old in zip(reversed(path[:-1]), reversed(path[1:])):
        new = _with_child(parent, old, new)
    return new  # type: ignore[return-value]


def _with_child(parent: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    for field in dataclasses.fields(parent):
        value = getattr(parent, field.name)
        if value is old:
            return parent.with_changes(**{field.name: new})
        if isinstance(value, (tuple, list)) and any(item is old for item in value):
            return parent.with_changes(**{field.name: [new if item is old else item for item in value]})
    raise ValueError(f"{type(old).__name__} is not a child of {type(parent).__name__}")


# -- statements: delete chunks, lift blocks ----------------------------------------------
Body = tuple[cst.CSTNode, ...]  # the path from the module down to a Module or IndentedBlock


def _bodies(module: cst.Module) -> list[Body]:
    """Every statement body (the module's, then every indented block), in source order."""
    ancestry = _Ancestry(lambda node, parent: isinstance(node, (cst.Module, cst.IndentedBlock)), post_order=False)
    module.visit(ancestry)
    return ancestry.paths


def _statements(body: Body) -> list[cst.BaseStatement]:
    return list(body[-1].body)  # type: ignore[attr-defined]


def _edit_body(body: Body, edit: Callable[[list[cst.BaseStatement]], list[cst.BaseStatement]]) -> cst.Module:
    node = body[-1]
    statements = edit(_statements(body))
    if isinstance(node, cst.IndentedBlock):
        statements = statements or [_PASS_LINE]
    return _replaced(body, node.with_changes(body=statements))


def delete_statements(module: cst.Module, *, start: int = 0) -> Iterator[cst.Module]:
    """Delete runs of statements in every body: definitions, imports, docstrings, calls.

    Chunks halve in size, as in delta debugging: a whole body (which becomes `pass`), its
    halves, quarters, ..., single statements; bigger chunks of any body come first.
    `start`: candidates before this one are not built.
    """
    bodies = _bodies(module)
    plan: list[tuple[int, int, int]] = []  # (chunk size, body, start)
    for target, body in enumerate(bodies):
        size = chunk = len(_statements(body))
        while chunk >= 1:
            plan += [(chunk, target, first) for first in range(0, size, chunk)]
            chunk //= 2
    plan.sort(key=lambda step: -step[0])  # stable: bodies in source order
    for chunk, target, first in plan[start:]:
        yield _edit_body(bodies[target], lambda body, s=first, e=first + chunk: body[:s] + body[e:])


def lift_blocks(module: cst.Module, *, start: int = 0) -> Iterator[cst.Module]:
    """Replace an `if`/`for`/`while`/`with`/`try` statement by one of its bodies."""
    bodies = _bodies(module)
    plan = [(body, index, choice) for body in bodies for index, statement in enumerate(_statements(body))
            for choice in range(len(_inner_bodies(statement)))]  # (body, statement, which of its bodies)
    for body, index, choice in plan[start:]:
        yield _edit_body(body, lambda statements, i=index, c=choice:
                         statements[:i] + list(_inner_bodies(statements[i])[c]) + statements[i + 1:])


def _inner_bodies(statement: cst.BaseStatement) -> list[Sequence[cst.BaseStatement]]:
    blocks: list[cst.BaseSuite] = []
    if isinstance(statement, (cst.If, cst.For, cst.While, cst.With)):
        blocks.append(statement.body)
        orelse = getattr(statement, "orelse", None)
        if isinstance(orelse, cst.Else):
            blocks.append(orelse.body)
        elif isinstance(orelse, cst.If):
            blocks.append(cst.IndentedBlock(body=[orelse]))
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        blocks.append(statement.body)
        blocks += [handler.body for handler in statement.handlers]
        if statement.orelse is not None:
            blocks.append(statement.orelse.body)
        if statement.finalbody is not None:
            blocks.append(statement.finalbody.body)
    return [block.body for block in blocks if isinstance(block, cst.IndentedBlock)]


# -- nodes: one replacement at a time ------------------------------------------------------
def node_pass(alternatives: Callable[[cst.CSTNode], list[cst.CSTNode]]) -> Pass:
    """A pass trying, node by node (children before their parents), every alternative
    `alternatives` offers for it; an alternative libcst cannot write is not offered, nor a
    constant in place of what a call calls (`None(x)`, `1(x)` only raise TypeError).
    Parents first took as long on 6 campaign findings and left one at 92 tokens, not 53."""
    def run(module: cst.Module, *, start: int = 0) -> Iterator[cst.Module]:
        options: dict[int, list[cst.CSTNode]] = {}

        def wanted(node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
            try:
                found = alternatives(node)
            except cst.CSTValidationError:
                return False
            if isinstance(parent, cst.Call) and parent.func is node:
                found = [option for option in found if not _is_constant(option)]
            options[id(node)] = found
            return bool(found)
        ancestry = _Ancestry(wanted, post_order=True)
        module.visit(ancestry)
        plan = [(path, choice) for path in ancestry.paths for choice in options[id(path[-1])]]
        for path, choice in plan[start:]:
            try:
                yield _replaced(path, choice)
            except cst.CSTValidationError:  # an ancestor refuses it: proposed as no change
                yield module
    run.__name__ = alternatives.__name__
    return run


def _is_constant(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or _is_name(node, ("None", "True", "False"))


def _without(items: Sequence[cst.CSTNode], i: int) -> list[cst.CSTNode]:
    """`items` without item `i`; the new last one loses its trailing comma."""
    rest = list(items[:i]) + list(items[i + 1:])
    if rest and i == len(items) - 1 and hasattr(rest[-1], "comma"):
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)  # type: ignore[attr-defined]
    return rest


def fewer_parts(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A call without one of its arguments, a function without one of its parameters or
    decorators, a class without one of its bases, keywords or decorators, a list, tuple or
    set without one of its items."""
    if isinstance(node, (cst.List, cst.Set)) and len(node.elements) > 1:
        return [node.with_changes(elements=_without(node.elements, i)) for i in range(len(node.elements))]
    if isinstance(node, cst.Tuple) and len(node.elements) > 2:  # (a, b) -> (a,) is smaller_literals' job
        return [node.with_changes(elements=_without(node.elements, i)) for i in range(len(node.elements))]
    if isinstance(node, cst.Call):
        return [node.with_changes(args=_without(node.args, i)) for i in range(len(node.args))]
    if isinstance(node, cst.Parameters):
        return [node.with_changes(params=_without(node.params, i)) for i in range(len(node.params))]
    if isinstance(node, cst.FunctionDef):  # @staticmethod stays: autograd.Function's forward is read as one
        return [node.with_changes(decorators=_without(node.decorators, i)) for i in range(len(node.decorators))
                if not _is_name(node.decorators[i].decorator, ("staticmethod", "classmethod"))]
    if isinstance(node, cst.ClassDef):
        options = [node.with_changes(decorators=_without(node.decorators, i)) for i in range(len(node.decorators))]
        options += [_class_without_base(node, i) for i in range(len(node.bases))]
        options += [node.with_changes(keywords=_without(node.keywords, i)) for i in range(len(node.keywords))]
        return options
    return []


def _is_name(node: cst.BaseExpression, names: tuple[str, ...]) -> bool:
    return isinstance(node, cst.Name) and node.value in names


def _class_without_base(node: cst.ClassDef, i: int) -> cst.ClassDef:
    bases = _without(node.bases, i)
    if bases or node.keywords:
        return node.with_changes(bases=bases)
    return node.with_changes(bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)


def simpler_expressions(node: cst.CSTNode) -> list[cst.CSTNode]:
    """An expression replaced by one of its parts: an operand, a branch, a call's argument,
    a subscripted value; or by None."""
    parts: list[cst.CSTNode] = []
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
        parts = [node.left, node.right]
    elif isinstance(node, cst.UnaryOperation):
        parts = [node.expression]
    elif isinstance(node, cst.IfExp):
        parts = [node.body, node.orelse]
    elif isinstance(node, cst.Call):
        parts = [arg.value for arg in node.args if not arg.star and arg.keyword is None]
        if isinstance(node.func, cst.Attribute):  # x.sum() -> x
            parts.append(node.func.value)
    elif isinstance(node, cst.Subscript):
        parts = [node.value]
    elif isinstance(node, cst.Comparison):
        parts = [node.left]
    if isinstance(node, (cst.Call, cst.Subscript, cst.BinaryOperation, cst.Attribute)):
        parts += [cst.Name("None"), cst.Integer("1")]
    return [_unparenthesized(part) for part in parts]


def inline_names(module: cst.Module, *, start: int = 0) -> Iterator[cst.Module]:
    """`h = x` followed by uses of `h`: the uses become `x` and the assignment goes.

    Only for a name assigned once in its body, from a name, an attribute or a literal (so
    nothing is evaluated twice or out of order)."""
    plan: list[tuple[Body, int, str, cst.BaseExpression]] = []  # (body, statement, name, value)
    for body in _bodies(module):
        statements = _statements(body)
        for index, statement in enumerate(statements):
            assignment = _simple_assignment(statement)
            if assignment is not None and not any(_assigns(later, assignment[0]) for later in statements[index + 1:]):
                plan.append((body, index, *assignment))
    for body, index, name, value in plan[start:]:
        yield _edit_body(body, lambda statements, i=index, n=name, v=value:
                         statements[:i] + [later.visit(_Substitute(n, v)) for later in statements[i + 1:]])


def _simple_assignment(statement: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    if not isinstance(small.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)):
        return None
    return target.value, small.value


def _assigns(statement: cst.CSTNode, name: str) -> bool:
    class Finder(cst.CSTVisitor):
        hit = False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                self.hit = True

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                self.hit = True
    finder = Finder()
    statement.visit(finder)
    return finder.hit


class _Substitute(cst.CSTTransformer):
    def __init__(self, name: str, value: cst.BaseExpression) -> None:
        super().__init__()
        self._name = name
        self._value = value

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # only the object of `a.b` can be the name, never the attribute
        return True

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._value if original.value == self._name else updated


# -- knowing the class one is in -----------------------------------------------------------
class _InClass:
    """Mixed into a visitor or a transformer: it knows the class it is in (`owner`, "" outside
    any), whatever its own visit_/leave_ methods do."""

    def __init__(self) -> None:
        super().__init__()
        self._classes: list[str] = []

    @property
    def owner(self) -> str:
        return self._classes[-1] if self._classes else ""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.ClassDef):
            self._classes.append(node.name.value)
        return super().on_visit(node)  # type: ignore[misc]

    def on_leave(self, original_node: cst.CSTNode, *updated: cst.CSTNode):  # type: ignore[no-untyped-def]
        result = super().on_leave(original_node, *updated)  # type: ignore[misc]
        if isinstance(original_node, cst.ClassDef):
            self._classes.pop()
        return result


def remove_parameter_everywhere(module: cst.Module) -> Iterator[cst.Module]:
    """A parameter of a function (or of a class's __init__) removed together with the
    matching argument of every call by name (`Stack(CONFIG)` with `__init__(self, config)`)."""
    collector = _Signatures()
    module.visit(collector)
    for callee, params in collector.found:
        for position, param in enumerate(params):
            yield module.visit(_DropParameter(callee, param, position))


class _Signatures(_InClass, cst.CSTVisitor):
    """(name the function is called by, its parameter names without self) for each def."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[str]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in node.params.params]
        if self.owner:
            params = params[1:]
            callee = self.owner if node.name.value == "__init__" else node.name.value
        else:
            callee = node.name.value
        if params:
            self.found.append((callee, params))


def remove_harness_argument(module: cst.Module) -> Iterator[cst.Module]:
    """In harness form: a parameter of `fn` (or of its module's `forward`) removed with the
    matching item of the tuple `inputs()` returns and the argument of `f(...)` in `drive`."""
    finder = _HarnessEntry()
    module.visit(finder)
    for position in range(finder.parameters):
        yield module.visit(_DropHarnessArgument(finder.entry, position))


class _HarnessEntry(_InClass, cst.CSTVisitor):
    """The compiled callable's parameters: `def fn`, or `forward` of the class `fn = C(...)` makes."""

    def __init__(self) -> None:
        super().__init__()
        self.entry: tuple[str, str] = ("", "")  # (class or "", function name)
        self.parameters = 0
        self._functions: dict[tuple[str, str], int] = {}
        self._fn_class = ""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = self.owner
        count = len(node.params.params) - (1 if owner else 0)
        if node.params.star_arg is cst.MaybeSentinel.DEFAULT and not node.params.kwonly_params:
            self._functions[(owner, node.name.value)] = count

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Name) and target.value == "fn" and isinstance(node.value, cst.Call) \
                and isinstance(node.value.func, cst.Name):
            self._fn_class = node.value.func.value

    def leave_Module(self, original: cst.Module) -> None:
        for entry in (("", "fn"), (self._fn_class, "forward")):
            if entry in self._functions and (entry[0] or not self._fn_class):
                self.entry, self.parameters = entry, self._functions[entry]


class _DropHarnessArgument(_InClass, cst.CSTTransformer):
    def __init__(self, entry: tuple[str, str], position: int) -> None:
        super().__init__()
        self._entry = entry
        self._position = position
        self._function: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._function.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._function.pop()
        owner = self.owner
        if (owner, original.name.value) != self._entry:
            return updated
        skip = 1 if owner else 0
        return updated.with_changes(params=updated.params.with_changes(
            params=_without(updated.params.params, self._position + skip)))

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        value = updated.value
        if self._function[-1:] == ["inputs"] and not self.owner and isinstance(value, cst.Tuple) \
                and self._position < len(value.elements):
            elements = _without(value.elements, self._position)
            if len(elements) == 1:
                elements = [elements[0].with_changes(comma=cst.Comma())]
            return updated.with_changes(value=value.with_changes(elements=elements))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self._function[-1:] == ["drive"] and isinstance(original.func, cst.Name) and original.func.value == "f":
            positional = [i for i, arg in enumerate(updated.args) if arg.keyword is None and not arg.star]
            if self._position < len(positional):
                return updated.with_changes(args=_without(updated.args, positional[self._position]))
        return updated


class _DropParameter(_InClass, cst.CSTTransformer):
    def __init__(self, callee: str, param: str, position: int) -> None:
        super().__init__()
        self._callee, self._param, self._position = callee, param, position

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        name = original.name.value
        callee = (self.owner if name == "__init__" else name) if self.owner else name
        if callee != self._callee:
            return updated
        params = list(updated.params.params)
        keep = [i for i, p in enumerate(params) if p.name.value != self._param]
        if len(keep) == len(params):
            return updated
        return updated.with_changes(params=updated.params.with_changes(
            params=_without(params, next(i for i in range(len(params)) if i not in keep))))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = original.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        if name != self._callee:
            return updated
        args = list(updated.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == self._param:
                return updated.with_changes(args=_without(args, i))
        positional = [i for i, arg in enumerate(args) if arg.keyword is None and not arg.star]
        if self._position < len(positional):
            return updated.with_changes(args=_without(args, positional[self._position]))
        return updated


_NEED_PARENTHESES = (cst.Tuple, cst.GeneratorExp, cst.Yield, cst.Lambda, cst.NamedExpr, cst.IfExp)


def _unparenthesized(node: cst.CSTNode) -> cst.CSTNode:
    """The part without the parentheses it had, unless it needs them wherever it lands
    (`f(())` must not give a bare `()`, nor `f((a, b))` an `a, b`). A change of precedence
    (`x * f(a + b)` -> `x * a + b`) is just another candidate: the predicate decides."""
    if isinstance(node, _NEED_PARENTHESES):
        return node if getattr(node, "lpar", None) else node.with_changes(lpar=[cst.LeftParen()],
                                                                          rpar=[cst.RightParen()])
    return node.with_changes(lpar=[], rpar=[]) if hasattr(node, "lpar") else node


def smaller_literals(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Integers to 1 or 2 (sizes, loop counts; not 0: `Linear(4, 0)` is no one's program),
    floats to 1.0, collections to one item."""
    if isinstance(node, cst.Integer):
        value = node.evaluated_value
        return [cst.Integer(str(v)) for v in (1, 2) if v < value]
    if isinstance(node, cst.Float) and node.value not in ("0.0", "1.0"):
        return [cst.Float("1.0"), cst.Float("0.0")]
    if isinstance(node, (cst.List, cst.Set)) and len(node.elements) > 1:
        return [node.with_changes(elements=[node.elements[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])]
    if isinstance(node, cst.Tuple) and len(node.elements) > 1:
        return [node.with_changes(elements=[node.elements[0].with_changes(comma=cst.Comma())])]
    if isinstance(node, cst.Dict) and len(node.elements) > 1:
        return [node.with_changes(elements=[node.elements[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])]
    return []


# -- helpers called once --------------------------------------------------------------------
_HARNESS_NAMES = frozenset({"fn", "inputs", "drive", "state"})


@dataclass(frozen=True, slots=True)
class _Helper:
    owner: str  # the class of a method called as self.name(...), "" for a module-level function
    name: str
    params: tuple[cst.Param, ...]  # without self
    body: tuple[cst.BaseStatement, ...]  # without its docstring and final return
    result: cst.BaseExpression | None  # what the final `return` returned


def inline_helpers(module: cst.Module) -> Iterator[cst.Module]:
    """A function called exactly once, where the call is a whole statement (`v = h(a)`,
    `return h(a)`, `h(a)`), replaced by its body: parameters become assignments (which
    `inline names` then folds away), the final `return` the statement's value. Module-level
    functions and methods called as `self.h(...)`; a helper with another `return`, a
    `yield`, `*args` or decorators is left alone."""
    finder = _HelperFinder()
    module.visit(finder)
    for helper in finder.helpers():
        candidate = module.visit(_InlineHelper(helper))
        if candidate.code != module.code:
            yield candidate


class _HelperFinder(_InClass, cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self._defs: dict[tuple[str, str], _Helper] = {}
        self._names: dict[str, int] = {}  # uses of a name (a def's own name is not counted)
        self._self_calls: dict[str, int] = {}  # self.name(...) calls; other self.name reads count double
        self._depth = 0

    def helpers(self) -> list[_Helper]:
        found = []
        for (owner, name), helper in self._defs.items():
            uses = self._self_calls.get(name, 0) if owner else self._names.get(name, 0)
            if uses == 1:
                found.append(helper)
        return found

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        owner = self.owner
        nested = self._depth > 0
        self._depth += 1
        if nested or node.decorators or node.asynchronous is not None:
            return True
        name = node.name.value
        if (not owner and name in _HARNESS_NAMES) or name.startswith("__") or name == "forward":
            return True
        params = node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg \
                or params.posonly_params:
            return True
        own = list(params.params)
        if owner:
            if not own or own[0].name.value != "self":
                return True
            own = own[1:]
        split = _split_body(node)
        if split is not None:
            self._defs[(owner, name)] = _Helper(owner, name, tuple(own), *split)
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_Name(self, node: cst.Name) -> None:
        self._names[node.value] = self._names.get(node.value, 0) + 1

    def visit_FunctionDef_name(self, node: cst.FunctionDef) -> None:
        self._names[node.name.value] = self._names.get(node.name.value, 0) - 1  # its own name is no use

    def visit_ClassDef_name(self, node: cst.ClassDef) -> None:
        self._names[node.name.value] = self._names.get(node.name.value, 0) - 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if _is_name(node.value, ("self",)):
            self._self_calls[node.attr.value] = self._self_calls.get(node.attr.value, 0) + 2  # a read

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and _is_name(func.value, ("self",)):
            self._self_calls[func.attr.value] = self._self_calls.get(func.attr.value, 0) - 1  # a call, not 2 reads


def _split_body(node: cst.FunctionDef) -> tuple[tuple[cst.BaseStatement, ...], cst.BaseExpression | None] | None:
    """(statements, returned value) when the only `return` is the last statement and
    nothing yields; None otherwise."""
    if not isinstance(node.body, cst.IndentedBlock):
        return None
    body = list(node.body.body)
    if body and is_docstring(body[0], concatenated=False):
        body = body[1:]
    result: cst.BaseExpression | None = None
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
        result = last.body[0].value or cst.Name("None")
        body = body[:-1]
    counter = _ReturnsAndYields()
    for statement in body:
        statement.visit(counter)
    if counter.found:
        return None
    return tuple(body), result


class _ReturnsAndYields(cst.CSTVisitor):
    """Counts `return`, `yield`, `global` and `nonlocal` outside nested functions and classes."""

    def __init__(self) -> None:
        self.found = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.found += 1

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found += 1

    def visit_Global(self, node: cst.Global) -> None:
        self.found += 1

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found += 1


class _InlineHelper(_InClass, cst.CSTTransformer):
    def __init__(self, helper: _Helper) -> None:
        super().__init__()
        self._helper = helper
        self.inlined = False

    def leave_FunctionDef(self, original: cst.FunctionDef,
                          updated: cst.FunctionDef) -> cst.FunctionDef | cst.RemovalSentinel:
        owner = self.owner
        if (owner, original.name.value) == (self._helper.owner, self._helper.name):
            return cst.RemoveFromParent()
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(body=self._expand(updated.body))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(body=self._expand(updated.body) or [_PASS_LINE])

    def _expand(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for statement in body:
            expansion = None if self.inlined else self._inline(statement)
            if expansion is None:
                out.append(statement)
            else:
                out += expansion
                self.inlined = True
        return out

    def _inline(self, statement: cst.BaseStatement) -> list[cst.BaseStatement] | None:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        small = statement.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Return, cst.Expr)) else None
        if not isinstance(value, cst.Call) or not self._calls_helper(value.func):
            return None
        bindings = _bind(self._helper.params, value.args)
        if bindings is None:
            return None
        lines: list[cst.BaseStatement] = [
            cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], arg)])
            for name, arg in bindings if not _is_name(arg, (name,))]  # no `x = x`
        lines += self._helper.body
        result = self._helper.result
        if isinstance(small, cst.Assign):
            lines.append(statement.with_changes(body=[small.with_changes(value=result or cst.Name("None"))]))
        elif isinstance(small, cst.Return):
            lines.append(statement.with_changes(body=[small.with_changes(value=result)]))
        elif result is not None and not isinstance(result, cst.Name):
            lines.append(statement.with_changes(body=[cst.Expr(result)]))
        return lines or [_PASS_LINE]

    def _calls_helper(self, func: cst.BaseExpression) -> bool:
        if self._helper.owner:
            return isinstance(func, cst.Attribute) and _is_name(func.value, ("self",)) \
                and func.attr.value == self._helper.name
        return _is_name(func, (self._helper.name,))


def _bind(params: Sequence[cst.Param], args: Sequence[cst.Arg]) -> list[tuple[str, cst.BaseExpression]] | None:
    """Each parameter's value at this call (its argument, else its default); None when the
    call does not fit (a starred argument, an unknown keyword, one missing)."""
    if any(arg.star for arg in args):
        return None
    positional = [arg.value for arg in args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in args if arg.keyword is not None}
    if len(positional) > len(params) or set(keywords) - {p.name.value for p in params}:
        return None
    bound = []
    for i, param in enumerate(params):
        name = param.name.value
        value = positional[i] if i < len(positional) else keywords.get(name, param.default)
        if value is None:
            return None
        bound.append((name, _unparenthesized(value)))
    return bound  # type: ignore[return-value]


# -- whole-program clean-ups ------------------------------------------------------------------
class _CommentRemover(cst.CSTTransformer):
    def leave_EmptyLine(self, original: cst.EmptyLine, updated: cst.EmptyLine) -> cst.EmptyLine | cst.RemovalSentinel:
        return cst.RemoveFromParent() if updated.comment is not None else updated

    def leave_TrailingWhitespace(self, original: cst.TrailingWhitespace,
                                 updated: cst.TrailingWhitespace) -> cst.TrailingWhitespace:
        return updated.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))


def strip_comments(module: cst.Module) -> Iterator[cst.Module]:
    """All comments at once (they never matter to Dynamo, but a `# type:` might to a reader)."""
    stripped = module.visit(_CommentRemover())
    if stripped.code != module.code:
        yield stripped


def drop_unused(module: cst.Module) -> Iterator[cst.Module]:
    """Every top-level definition nothing refers to (functions, classes, assignments to a
    name, imported names), and every docstring, in one candidate: a seed's distractions
    go in one check instead of a delta-debugging descent. The harness's names stay."""
    uses: dict[str, int] = {}

    class Count(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            uses[node.value] = uses.get(node.value, 0) + 1

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `a.b` uses `a`, not a global named `b`
            return False
    module.visit(Count())
    kept: list[cst.BaseStatement] = []
    for i, stmt in enumerate(module.body):
        bound = _binds(stmt)
        own = sum(1 for name in bound)  # each binding's own Name node was counted as a use
        unused = bound and not (bound & (_HARNESS_NAMES | {"COMPILE_KWARGS"})) \
            and sum(uses.get(name, 0) for name in bound) <= own
        if unused or (is_docstring(stmt) and i == 0):
            continue
        kept.append(stmt)
    candidate = module.with_changes(body=kept).visit(_DocstringRemover())
    if candidate.code != module.code:
        yield candidate


def _binds(stmt: cst.BaseStatement) -> set[str]:
    """The names a top-level statement binds, when that is all it does."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return set()
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets) \
            and isinstance(small.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString,
                                         cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return {t.target.value for t in small.targets}  # type: ignore[union-attr]
    if isinstance(small, cst.Import) or isinstance(small, cst.ImportFrom) and not (
            isinstance(small.module, cst.Name) and small.module.value == "__future__"):
        return bound_names(small)
    return set()


class _DocstringRemover(cst.CSTTransformer):
    """The docstrings of functions and classes (a body of only a docstring gets `pass`)."""

    def _strip(self, updated: cst.FunctionDef | cst.ClassDef) -> cst.FunctionDef | cst.ClassDef:
        body = updated.body
        if isinstance(body, cst.IndentedBlock) and body.body and is_docstring(body.body[0]):
            return updated.with_changes(body=body.with_changes(body=list(body.body[1:]) or [_PASS_LINE]))
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return self._strip(updated)  # type: ignore[return-value]

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        return self._strip(updated)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class NamedPass:
    name: str
    run: Pass
    skips: bool = False  # run(module, start=n) builds nothing before its candidate n

    def proposals(self, module: cst.Module, start: int = 0) -> Iterator[tuple[int, cst.Module]]:
        """(position, candidate) from candidate `start` on: after a kept candidate the
        problem goes on about where it was, and what comes before is not built again."""
        if self.skips:
            return enumerate(self.run(module, start=start), start)  # type: ignore[call-arg]
        return itertools.islice(enumerate(self.run(module)), start, None)


PASSES: tuple[NamedPass, ...] = (
    NamedPass("strip comments", strip_comments),
    NamedPass("drop unused definitions and docstrings", drop_unused),
    NamedPass("delete statements", delete_statements, skips=True),
    NamedPass("lift blocks", lift_blocks, skips=True),
    NamedPass("inline helpers called once", inline_helpers),
    NamedPass("inline names", inline_names, skips=True),
    NamedPass("remove parameters with their arguments", remove_parameter_everywhere),
    NamedPass("remove a parameter of fn with its input", remove_harness_argument),
    NamedPass("fewer arguments, parameters, bases, decorators, items", node_pass(fewer_parts), skips=True),
    NamedPass("simpler expressions", node_pass(simpler_expressions), skips=True),
    NamedPass("smaller literals", node_pass(smaller_literals), skips=True),
)
