"""Operator bases that know where the visit stands, so a hook can tell whether a node is a site.

`Scoped` tracks the enclosing defs and classes and whether the code sits in a try;
`Stores` adds which expressions are written rather than read; `ValueSites` skips binding
targets, subscript indices, except types and annotations, where no value can go.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator

# Rewriting inside these would recurse (attribute hooks) or change the dispatch protocol itself.
SKIPPED_FUNCTIONS = frozenset({"__torch_function__", "__torch_dispatch__", "__getattr__", "__getattribute__",
                               "__setattr__", "__delattr__"})


class Scoped(Operator):
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
            and self._scopes[-1].name.value not in SKIPPED_FUNCTIONS

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


class Stores(Scoped):
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
