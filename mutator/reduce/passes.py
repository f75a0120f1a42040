"""Reduction passes: each a plain function from a program's syntax tree to smaller candidates.

A pass yields candidate modules in the order they should be tried, biggest cuts first
(delta debugging: whole blocks, then halves, ..., then single statements). Passes never
check anything themselves; the `ReductionProblem` decides what is kept. Every candidate
is valid Python by construction (libcst writes it), keeps the original's formatting
where it is untouched, and may still be rejected by the problem (wrong form, not
interesting).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

Pass = Callable[[cst.Module], Iterator[cst.Module]]
_PASS_LINE = cst.SimpleStatementLine([cst.Pass()])


# -- statements: delete chunks, lift blocks ----------------------------------------------
class _BodyEditor(cst.CSTTransformer):
    """Counts statement bodies (the module's, then every indented block, in source order)
    and lets `edit` rewrite the statement list of body number `target`."""

    def __init__(self, target: int | None, edit: Callable[[list[cst.BaseStatement]], list[cst.BaseStatement]]):
        super().__init__()
        self.target = target
        self.edit = edit
        self.bodies: list[int] = []  # statement count of each body, in visit order
        self._stack: list[int] = []

    def visit_Module(self, node: cst.Module) -> bool:
        self._enter(len(node.body))
        return True

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        self._enter(len(node.body))
        return True

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self._stack.pop() == self.target:
            return updated.with_changes(body=self.edit(list(updated.body)))
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if self._stack.pop() == self.target:
            body = self.edit(list(updated.body))
            return updated.with_changes(body=body or [_PASS_LINE])
        return updated

    def _enter(self, size: int) -> None:
        self._stack.append(len(self.bodies))
        self.bodies.append(size)


def _body_sizes(module: cst.Module) -> list[int]:
    editor = _BodyEditor(None, lambda body: body)
    module.visit(editor)
    return editor.bodies


def _edit_body(module: cst.Module, target: int,
               edit: Callable[[list[cst.BaseStatement]], list[cst.BaseStatement]]) -> cst.Module:
    return module.visit(_BodyEditor(target, edit))


def delete_statements(module: cst.Module) -> Iterator[cst.Module]:
    """Delete runs of statements in every body: definitions, imports, docstrings, calls.

    Chunks halve in size, as in delta debugging: a whole body (which becomes `pass`), its
    halves, quarters, ..., single statements; bigger chunks of any body come first.
    """
    plan: list[tuple[int, int, int]] = []  # (chunk size, body, start)
    for target, size in enumerate(_body_sizes(module)):
        chunk = size
        while chunk >= 1:
            plan += [(chunk, target, start) for start in range(0, size, chunk)]
            chunk //= 2
    for chunk, target, start in sorted(plan, key=lambda step: -step[0]):  # stable: bodies in source order
        yield _edit_body(module, target, lambda body, s=start, e=start + chunk: body[:s] + body[e:])


def lift_blocks(module: cst.Module) -> Iterator[cst.Module]:
    """Replace an `if`/`for`/`while`/`with`/`try` statement by one of its bodies."""
    for target, size in enumerate(_body_sizes(module)):
        for index in range(size):
            found: list[int] = []

            def count(body: list[cst.BaseStatement], i: int = index) -> list[cst.BaseStatement]:
                found.append(len(_inner_bodies(body[i])))
                return body
            _edit_body(module, target, count)
            for choice in range(found[0] if found else 0):
                yield _edit_body(module, target, lambda body, i=index, c=choice:
                                 body[:i] + list(_inner_bodies(body[i])[c]) + body[i + 1:])


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
class _NodeEditor(cst.CSTTransformer):
    """Numbers the nodes `alternatives` has something for (post-order) and replaces node
    `target` by its alternative number `choice`."""

    def __init__(self, alternatives: Callable[[cst.CSTNode], list[cst.CSTNode]], target: tuple[int, int] | None):
        super().__init__()
        self.alternatives = alternatives
        self.target = target
        self.counts: list[int] = []

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        options = []
        if self.target is None or len(self.counts) <= self.target[0]:
            try:
                options = self.alternatives(updated)
            except cst.CSTValidationError:  # an alternative libcst cannot write: not offered
                options = []
        if not options:
            return updated
        index = len(self.counts)
        self.counts.append(len(options))
        if self.target is not None and index == self.target[0]:
            return options[self.target[1]]
        return updated


def node_pass(alternatives: Callable[[cst.CSTNode], list[cst.CSTNode]]) -> Pass:
    """A pass trying, node by node, every alternative `alternatives` offers for it."""
    def run(module: cst.Module) -> Iterator[cst.Module]:
        counter = _NodeEditor(alternatives, None)
        module.visit(counter)
        for index, count in enumerate(counter.counts):
            for choice in range(count):
                yield module.visit(_NodeEditor(alternatives, (index, choice)))
    run.__name__ = alternatives.__name__
    return run


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


def inline_names(module: cst.Module) -> Iterator[cst.Module]:
    """`h = x` followed by uses of `h`: the uses become `x` and the assignment goes.

    Only for a name assigned once in its body, from a name, an attribute or a literal (so
    nothing is evaluated twice or out of order)."""
    for target, size in enumerate(_body_sizes(module)):
        for index in range(size):
            yield from _inline_at(module, target, index)


def _inline_at(module: cst.Module, target: int, index: int) -> Iterator[cst.Module]:
    found: list[tuple[str, cst.BaseExpression]] = []

    def inspect(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        assignment = _simple_assignment(body[index])
        if assignment is not None:
            name = assignment[0]
            assigned_again = any(_assigns(statement, name) for statement in body[index + 1:])
            if not assigned_again:
                found.append(assignment)
        return body
    _edit_body(module, target, inspect)
    if not found:
        return
    name, value = found[0]

    def inline(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        rest = [statement.visit(_Substitute(name, value)) for statement in body[index + 1:]]
        return body[:index] + rest  # type: ignore[operator]
    yield _edit_body(module, target, inline)


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


def remove_parameter_everywhere(module: cst.Module) -> Iterator[cst.Module]:
    """A parameter of a function (or of a class's __init__) removed together with the
    matching argument of every call by name (`Stack(CONFIG)` with `__init__(self, config)`)."""
    collector = _Signatures()
    module.visit(collector)
    for callee, params in collector.found:
        for position, param in enumerate(params):
            yield module.visit(_DropParameter(callee, param, position))


class _Signatures(cst.CSTVisitor):
    """(name the function is called by, its parameter names without self) for each def."""

    def __init__(self) -> None:
        self.found: list[tuple[str, list[str]]] = []
        self._classes: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in node.params.params]
        if self._classes:
            params = params[1:]
            callee = self._classes[-1] if node.name.value == "__init__" else node.name.value
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


class _HarnessEntry(cst.CSTVisitor):
    """The compiled callable's parameters: `def fn`, or `forward` of the class `fn = C(...)` makes."""

    def __init__(self) -> None:
        self.entry: tuple[str, str] = ("", "")  # (class or "", function name)
        self.parameters = 0
        self._functions: dict[tuple[str, str], int] = {}
        self._classes: list[str] = []
        self._fn_class = ""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = self._classes[-1] if self._classes else ""
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


class _DropHarnessArgument(cst.CSTTransformer):
    def __init__(self, entry: tuple[str, str], position: int) -> None:
        super().__init__()
        self._entry = entry
        self._position = position
        self._classes: list[str] = []
        self._function: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._function.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._function.pop()
        owner = self._classes[-1] if self._classes else ""
        if (owner, original.name.value) != self._entry:
            return updated
        skip = 1 if owner else 0
        return updated.with_changes(params=updated.params.with_changes(
            params=_without(updated.params.params, self._position + skip)))

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        value = updated.value
        if self._function[-1:] == ["inputs"] and not self._classes and isinstance(value, cst.Tuple) \
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


class _DropParameter(cst.CSTTransformer):
    def __init__(self, callee: str, param: str, position: int) -> None:
        super().__init__()
        self._callee, self._param, self._position = callee, param, position
        self._classes: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        name = original.name.value
        callee = (self._classes[-1] if name == "__init__" else name) if self._classes else name
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


@dataclass(frozen=True, slots=True)
class NamedPass:
    name: str
    run: Pass


PASSES: tuple[NamedPass, ...] = (
    NamedPass("strip comments", strip_comments),
    NamedPass("delete statements", delete_statements),
    NamedPass("lift blocks", lift_blocks),
    NamedPass("inline names", inline_names),
    NamedPass("remove parameters with their arguments", remove_parameter_everywhere),
    NamedPass("remove a parameter of fn with its input", remove_harness_argument),
    NamedPass("fewer arguments, parameters, bases, decorators, items", node_pass(fewer_parts)),
    NamedPass("simpler expressions", node_pass(simpler_expressions)),
    NamedPass("smaller literals", node_pass(smaller_literals)),
)
