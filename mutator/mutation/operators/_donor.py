"""What a splice takes from its donor: one part of another program, with everything it needs.

The S operators combine two programs, as AFL++ splices two queue entries: a class, a
decorator, a context manager, a container subclass or a helper function of the *donor*
goes into the compiled region of the *recipient*. `Donor` reads the donor once (a fact of
its context, shared by every splice of it): its parts by kind, how the donor itself uses
each (the calls, decorators and with items that say how to build and call it), and, by
libcst's scope analysis (so a local that shadows a global is told apart), which
module-level names each top-level statement reads and binds. `Donor.transplant` takes a
part's closure (the imports, constants and definitions it reads, transitively), renames
every module-level name that clashes with the recipient's, and gives the statements to
add; or the reason the part cannot go, for the operator to decline with.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

import libcst as cst
import libcst.matchers as m
from libcst.metadata import BuiltinScope, GlobalScope, MetadataWrapper, ScopeProvider

from mutator.mutation.context import HARNESS_HOOKS, MutationContext, NameAllocator
from mutator.mutation.tree import bound_names, code, dotted, is_docstring, is_import, names, nodes

KINDS = ("class", "decorator", "context_manager", "container", "helper")
HARNESS_NAMES = HARNESS_HOOKS | {"fn", "COMPILE_KWARGS"}  # what the harness reads: a transplant never binds them
CONTAINER_BASES = {"list": "list", "dict": "dict", "set": "set", "frozenset": "frozenset", "tuple": "tuple",
                   "OrderedDict": "dict", "collections.OrderedDict": "dict"}  # base -> the builtin it wraps
MAX_STATEMENTS = 40  # a part that needs more of its donor is most of it: not a part
_NOT_CLASSES = ("Exception", "Error", "Warning", "Enum", "Flag", "NamedTuple", "TypedDict", "Protocol", "TestCase")
_COMPILING = ("torch.compile", "torch._dynamo.optimize", "torch._dynamo.optimize_assert", "dynamo.optimize")
_SMALL = (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr)


@dataclass(frozen=True, slots=True)
class Part:
    """A top-level class or function of the donor that a splice can use (`Donor.parts` says as what)."""

    name: str
    node: cst.FunctionDef | cst.ClassDef
    container: str = ""  # for a container subclass: the builtin it derives from


class _Rename(cst.CSTTransformer):
    """Renames the donor's module-level names in donor code: the Name nodes that bind or read
    them (by identity, as the scope analysis found them) and `global` declarations."""

    def __init__(self, ids: dict[int, str], renamed: dict[str, str]) -> None:
        super().__init__()
        self.ids = ids
        self.renamed = renamed

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.ids.get(id(original_node))
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Global(self, original_node: cst.Global, updated_node: cst.Global) -> cst.Global:
        return updated_node.with_changes(names=[
            item.with_changes(name=item.name.with_changes(value=self.renamed.get(item.name.value, item.name.value)))
            for item in updated_node.names])


@dataclass(frozen=True)
class Transplant:
    """The donor statements a part needs, renamed for the recipient, and how to rename donor
    expressions copied alongside (a decorator, a with item, a call)."""

    statements: tuple[cst.BaseStatement, ...]
    renamed: dict[str, str]  # donor name -> its name in the recipient, for those that clashed
    _renamer: _Rename

    def name(self, donor_name: str) -> str:
        return self.renamed.get(donor_name, donor_name)

    def rename(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        return expr.visit(self._renamer)  # type: ignore[return-value]


class Donor:
    """One donor program read for splicing: its parts, their uses, its module-level names."""

    @classmethod
    def of(cls, ctx: MutationContext) -> Donor:
        return ctx.fact(cls, cls)

    def __init__(self, ctx: MutationContext) -> None:
        self.ctx = ctx
        self.label = PurePath(ctx.program.name).name.replace("\n", " ")
        self.body = list(ctx.module.body)
        # unsafe_skip_copy: the context's tree is never changed, and its node identities are
        # what the parents, the sites and the renaming below all key on
        scopes = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(ScopeProvider)
        top = {id(node): i for i, stmt in enumerate(self.body) for node in nodes(stmt)}
        self._globals = scopes[ctx.module]
        self.binders: dict[str, list[int]] = defaultdict(list)  # name -> statements binding it at module level
        self.reads: list[set[str]] = [set() for _ in self.body]  # module-level names each statement reads
        self.unbound: list[set[str]] = [set() for _ in self.body]  # names it reads that nothing binds
        for assignment in self._globals.assignments:
            i, name = top[id(assignment.node)], _bound(assignment.name)
            if i not in self.binders[name]:
                self.binders[name].append(i)
            for access in assignment.references:
                self.reads[top[id(access.node)]].add(name)
        self._accesses = {}  # id(Name) -> how it is read
        for scope in dict.fromkeys(scopes.values()):  # each scope once, in the order of the tree
            for access in scope.accesses:
                node = access.node
                while isinstance(node, cst.Attribute):  # `a.b.c` read through `import a.b`
                    node = node.value
                self._accesses[id(node)] = access
                if not access.referents and isinstance(node, cst.Name):
                    self.unbound[top[id(access.node)]].add(node.value)
        self.star = any(isinstance(s, cst.ImportFrom) and isinstance(s.names, cst.ImportStar)
                        for stmt in self.body if isinstance(stmt, cst.SimpleStatementLine) for s in stmt.body)
        self.followers = _followers(self.body)
        self._uses()
        # a harness's own `fn` and the inputs() it is called with: a splice can call it (or an
        # instance of its class) on the donor's inputs, fitted from the recipient's value
        inputs = ctx.top_level("inputs") if ctx.is_harness else None
        self.inputs = isinstance(inputs, cst.FunctionDef)
        entry = ctx.top_level("fn") if self.inputs else None
        self.entry = entry if isinstance(entry, cst.FunctionDef) else None
        self.entry_class = self.instances.get("fn") if self.inputs else None
        self.parts = self._parts()

    # -- how the donor uses its own definitions ---------------------------------------------
    def _uses(self) -> None:
        parents = self.ctx.parents
        self.calls: dict[str, list[cst.Call]] = defaultdict(list)  # name(...) anywhere
        self.method_calls: dict[str, list[cst.Call]] = defaultdict(list)  # <x>.name(...) anywhere
        self.decorations: dict[str, list[tuple[cst.Decorator, bool]]] = defaultdict(list)  # (decorator, on a method)
        self.with_items: dict[str, list[cst.WithItem]] = defaultdict(list)  # by the class or function they enter
        self.rebinding: set[int] = set()  # calls assigned back to a name they take: y = f(y, ...)
        self.instances = {small.targets[0].target.value: small.value.func.value  # NAME = Class(...)
                          for stmt in self.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body
                          if m.matches(small, m.Assign([m.AssignTarget(m.Name())], m.Call(m.Name())))}
        for node in nodes(self.ctx.module):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                self.calls[node.func.value].append(node)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                self.method_calls[node.func.attr.value].append(node)
            elif isinstance(node, cst.Decorator):
                target = node.decorator.func if isinstance(node.decorator, cst.Call) else node.decorator
                decorated = parents[id(node)]
                if isinstance(target, cst.Name) and isinstance(decorated, cst.FunctionDef):
                    owner = parents.get(id(parents[id(decorated)]))
                    self.decorations[target.value].append((node, isinstance(owner, cst.ClassDef)))
            elif isinstance(node, cst.WithItem):
                item = node.item.func if isinstance(node.item, cst.Call) else node.item
                if isinstance(item, cst.Name):
                    key = self.instances.get(item.value, item.value) if item is node.item else item.value
                    self.with_items[key].append(node)
            elif m.matches(node, m.Assign([m.AssignTarget(m.Name())], m.Call())):
                target = node.targets[0].target.value  # type: ignore[attr-defined]
                if any(m.matches(a.value, m.Name(target)) for a in node.value.args):  # type: ignore[attr-defined]
                    self.rebinding.add(id(node.value))

    def _parts(self) -> dict[str, list[Part]]:
        classes = {s.name.value: s for s in self.body if isinstance(s, cst.ClassDef)}
        parts: dict[str, list[Part]] = {kind: [] for kind in KINDS}
        for stmt in self.body:
            if isinstance(stmt, cst.ClassDef):
                name = stmt.name.value
                methods = _methods(stmt, classes)
                bases = [dotted(b.value) or "" for b in stmt.bases]
                kind = _container_kind(stmt, classes)
                if kind:
                    parts["container"].append(Part(name, stmt, kind))
                elif {"__enter__", "__exit__"} <= methods or any(b.endswith("Mode") for b in bases):
                    parts["context_manager"].append(Part(name, stmt))
                elif not any(b.rsplit(".", 1)[-1].endswith(_NOT_CLASSES) for b in bases) and not any(
                        isinstance(b.value, cst.Call) for b in stmt.bases):
                    parts["class"].append(Part(name, stmt))
            elif isinstance(stmt, cst.FunctionDef) and (stmt.name.value not in HARNESS_NAMES or self.entry is stmt) \
                    and not stmt.asynchronous:
                name = stmt.name.value
                decorators = [dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
                              for d in stmt.decorators]
                if any(d.endswith("contextmanager") for d in decorators):
                    parts["context_manager"].append(Part(name, stmt))
                elif self.decorations.get(name) or _decorator_shaped(stmt):
                    parts["decorator"].append(Part(name, stmt))
                elif not any(d in _COMPILING for d in decorators) and not (
                        stmt.params.params and stmt.params.params[0].name.value in ("self", "cls")):  # a method
                    parts["helper"].append(Part(name, stmt))
        return parts

    # -- donor expressions -------------------------------------------------------------------
    def closed(self, expr: cst.CSTNode) -> bool:
        """Does `expr` read only module-level names and builtins (or its own lambda and
        comprehension variables)? Then it means the same anywhere, once its names come along."""
        inner = bound_names(expr)
        for name in names(expr):
            if name.value in inner:
                continue
            access = self._accesses.get(id(name))
            if access is None or not access.referents or any(
                    not isinstance(r.scope, (GlobalScope, BuiltinScope)) for r in access.referents):
                return False
        return True

    def global_reads(self, expr: cst.CSTNode) -> set[str]:
        """The module-level names of the donor that `expr` reads."""
        found = set()
        for name in names(expr):
            access = self._accesses.get(id(name))
            if access is not None:
                found.update(_bound(r.name) for r in access.referents if isinstance(r.scope, GlobalScope))
        return found

    # -- what a part needs, brought over ----------------------------------------------------
    def transplant(self, part: Part, uses: Sequence[cst.CSTNode], *, recipient: MutationContext,
                   names: NameAllocator, also: Iterable[str] = ()) -> Transplant | str:
        """The statements `part` needs (with what the donor expressions `uses` read, and the
        names `also`), their module-level names renamed where the recipient's (`names`)
        already has them; or why they cannot go."""
        wanted = {part.name, *also} | {n for use in uses for n in self.global_reads(use)}
        closure = self._closure(wanted)
        if isinstance(closure, str):
            return closure
        indices, needed = closure
        if _future_annotations(self.body) and not _future_annotations(recipient.module.body):
            return "the donor defers annotations (from __future__ import annotations) and the recipient does not"
        imported = _recipient_imports(recipient.module.body)
        clashing = []
        for name in sorted({n for n, binders in self.binders.items() for i in binders if i in indices}):
            if self._is_import(name) and name not in needed:
                continue  # an alias of an import line the part does not read: left out
            signature = self._import_signature(name)
            theirs = imported.get(name, ("",))[0]
            if signature is not None and theirs == signature:
                continue  # the recipient imports it the same way
            if signature is not None and signature.startswith("import ") and " as " not in signature:
                # `import a.b` binds `a`: harmless beside the recipient's own `import a...`, and not renamable
                if theirs.startswith(f"import {name}") and " as " not in theirs:
                    continue
                if name in names:
                    return f"cannot rename the donor's `{signature}`: the recipient binds {name} otherwise"
            if name in names or name in HARNESS_NAMES:
                clashing.append(name)
        names.reserve(self.ctx.names)  # a fresh name must collide with no donor name either
        renamed = {name: names.fresh(name) for name in clashing}
        ids = {}
        for assignment in self._globals.assignments:
            new = renamed.get(_bound(assignment.name))
            for node in (assignment.node, *(a.node for a in assignment.references)) if new else ():
                target = node.name if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else node
                if isinstance(target, cst.Name):
                    ids[id(target)] = new
        renamer = _Rename(ids, renamed)
        statements = []
        for i in indices:
            stmt = self.body[i]
            if is_import(stmt):
                lines = [line for small in stmt.body for line in self._import_lines(small, needed, renamed, imported)]
                statements.extend(cst.parse_statement(line + "\n") for line in lines)
            else:
                statements.append(stmt.visit(renamer).with_changes(leading_lines=()))  # type: ignore[union-attr]
        if statements:  # the mark goes on the first definition: the imports join the recipient's
            first = next((k for k, stmt in enumerate(statements) if not is_import(stmt)), 0)
            comment = cst.EmptyLine(comment=cst.Comment(f"# spliced from {self.label}: {part.name}"))
            statements[first] = statements[first].with_changes(leading_lines=[comment])
        return Transplant(tuple(statements), renamed, renamer)

    def _closure(self, wanted: set[str]) -> tuple[list[int], set[str]] | str:
        """The top-level statements binding `wanted` and what they read, transitively (and the
        lines that fill a container or object they bind); with the names needed."""
        needed: set[str] = set()
        indices: set[int] = set()
        work = sorted(wanted, reverse=True)
        while work:
            name = work.pop()
            if name in needed:
                continue
            needed.add(name)
            binders = self.binders.get(name)
            if not binders:
                return f"{name} is not bound at the donor's top level"
            statements = list(binders)
            if not any(is_import(self.body[i]) for i in binders):
                statements += self.followers.get(name, [])
            for i in statements:
                if i in indices:
                    continue
                reason = self._unmovable(i)
                if reason:
                    return f"the donor's {name} {reason}"
                indices.add(i)
                work.extend(sorted(self.reads[i] - needed, reverse=True))
        if len(indices) > MAX_STATEMENTS:
            return f"the part needs {len(indices)} of the donor's statements (at most {MAX_STATEMENTS})"
        return sorted(indices), needed

    def _unmovable(self, i: int) -> str:
        stmt = self.body[i]
        if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and not (
                isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, _SMALL) for s in stmt.body)):
            return "is bound in a compound statement"
        if self.unbound[i]:
            star = " (it star-imports)" if self.star else ""
            return f"reads {sorted(self.unbound[i])[0]}, which the donor never binds{star}"
        for node in nodes(stmt):
            if isinstance(node, cst.ImportFrom) and node.relative:
                return "comes from a relative import"
            if isinstance(node, cst.Attribute) and dotted(node) in _COMPILING:
                return "compiles code itself"
        return ""

    def _is_import(self, name: str) -> bool:
        return all(is_import(self.body[i]) for i in self.binders[name])

    def _import_signature(self, name: str) -> str | None:
        """How the donor imports `name` ('import torch.nn as nn'), if only by one import."""
        binders = self.binders.get(name, [])
        if len(binders) != 1 or not is_import(self.body[binders[0]]):
            return None
        return next((sig for small in self.body[binders[0]].body  # type: ignore[attr-defined]
                     for bound, sig in _signatures(small) if bound == name), None)

    def _import_lines(self, small: cst.BaseSmallStatement, needed: set[str], renamed: dict[str, str],
                      imported: dict[str, tuple[str, bool]]) -> list[str]:
        """The import lines for the aliases of `small` the part needs, renamed; not those the
        recipient's leading imports already bind the same way, nor `__future__` ones."""
        if isinstance(small, cst.ImportFrom) and code(small.module) == "__future__":  # type: ignore[arg-type]
            return []
        lines = []
        for bound, signature in _signatures(small):
            if bound not in needed or imported.get(bound) == (signature, True):
                continue
            new = renamed.get(bound)
            base = signature.split(" as ")[0]
            lines.append(f"{base} as {new}" if new else signature)
        return lines


def _bound(name: str) -> str:
    """The name a binding binds: the scope analysis calls `import a.b`'s binding 'a.b'."""
    return name.split(".", 1)[0]


def _signatures(small: cst.BaseSmallStatement) -> list[tuple[str, str]]:
    """(bound name, one-alias import line) for each alias of an import statement."""
    found = []
    if isinstance(small, cst.Import):
        for alias in small.names:
            module = code(alias.name)
            bound = alias.asname.name.value if alias.asname else module.split(".")[0]  # type: ignore[attr-defined]
            found.append((bound, f"import {module} as {bound}" if alias.asname else f"import {module}"))
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and small.module:
        module = code(small.module)
        for alias in small.names:
            name = code(alias.name)
            bound = alias.asname.name.value if alias.asname else name  # type: ignore[attr-defined]
            found.append((bound, f"from {module} import {name} as {bound}" if alias.asname
                          else f"from {module} import {name}"))
    return found


def _recipient_imports(body: Sequence[cst.BaseStatement]) -> dict[str, tuple[str, bool]]:
    """The recipient's top-level imports: bound name -> (its one-alias line, in the leading
    import block, where spliced code can rely on it)."""
    found: dict[str, tuple[str, bool]] = {}
    leading = True
    for i, stmt in enumerate(body):
        if not is_import(stmt):
            leading = leading and i == 0 and is_docstring(stmt)
            continue
        for small in stmt.body:  # type: ignore[attr-defined]
            for bound, signature in _signatures(small):
                found.setdefault(bound, (signature, leading))
    return found


def _future_annotations(body: Sequence[cst.BaseStatement]) -> bool:
    return any(isinstance(s, cst.ImportFrom) and s.module is not None and code(s.module) == "__future__"
               and not isinstance(s.names, cst.ImportStar) and any(code(a.name) == "annotations" for a in s.names)
               for stmt in body if isinstance(stmt, cst.SimpleStatementLine) for s in stmt.body)


def _followers(body: Sequence[cst.BaseStatement]) -> dict[str, list[int]]:
    """Top-level lines that fill what a name holds (`REGISTRY["a"] = f`, `EVENTS.append(0)`,
    `Cls.attr = 1`): a part reading the name needs them too."""
    found: dict[str, list[int]] = defaultdict(list)
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            targets: list[cst.BaseExpression] = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                targets = [small.target]
            elif isinstance(small, cst.Expr) and m.matches(small.value, m.Call(m.Attribute())):
                targets = [small.value.func.value]  # type: ignore[attr-defined]
            for target in targets:
                if not isinstance(target, (cst.Attribute, cst.Subscript)) and not isinstance(small, cst.Expr):
                    continue  # a plain binding: the name's binder, not a follower
                while isinstance(target, (cst.Attribute, cst.Subscript)):
                    target = target.value
                if isinstance(target, cst.Name) and i not in found[target.value]:
                    found[target.value].append(i)
    return found


def _methods(cls: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> set[str]:
    """The names of the methods `cls` defines or inherits from classes of the same file."""
    found = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and base.value.value in classes and base.value.value != cls.name.value:
            found |= _methods(classes[base.value.value], classes)
    return found


def _container_kind(cls: cst.ClassDef, classes: dict[str, cst.ClassDef], seen: frozenset[str] = frozenset()) -> str:
    """The builtin container `cls` derives from (through classes of the same file), or ''."""
    for base in cls.bases:
        name = dotted(base.value) or ""
        if name in CONTAINER_BASES:
            return CONTAINER_BASES[name]
        if name in classes and name not in seen:
            kind = _container_kind(classes[name], classes, seen | {cls.name.value})
            if kind:
                return kind
    return ""


def _decorator_shaped(fn: cst.FunctionDef) -> bool:
    """A function of one parameter that defines a function and returns it: a decorator."""
    params = fn.params
    if len(params.params) != 1 or params.star_arg or params.kwonly_params or not isinstance(fn.body, cst.IndentedBlock):
        return False
    inner = {s.name.value for s in fn.body.body if isinstance(s, cst.FunctionDef)}
    last = fn.body.body[-1] if fn.body.body else None
    return bool(inner) and m.matches(last, m.SimpleStatementLine([m.Return(m.Name(m.MatchIfTrue(inner.__contains__)))]))


def required_positional(fn: cst.FunctionDef, *, skip: int = 0) -> int | None:
    """How many positional arguments a call of `fn` must pass (after the first `skip`: self,
    cls, ctx); None when it also requires keyword-only ones."""
    if any(p.default is None for p in fn.params.kwonly_params):
        return None
    positional = [*fn.params.posonly_params, *fn.params.params][skip:]
    return sum(p.default is None for p in positional)


def accepts_positional(fn: cst.FunctionDef, count: int, *, skip: int = 1) -> bool:
    """Can `fn` (a method: `skip` self) be called with exactly `count` positional arguments?"""
    required = required_positional(fn, skip=skip)
    positional = len([*fn.params.posonly_params, *fn.params.params]) - skip
    return required is not None and required <= count and (count <= positional or
                                                            isinstance(fn.params.star_arg, cst.Param))


def find_method(cls: cst.ClassDef, name: str, classes: Iterable[cst.ClassDef]) -> cst.FunctionDef | None:
    """The def of method `name` that `cls` uses: its own, or the first of a base of the same file."""
    by_name = {c.name.value: c for c in classes}
    work, seen = [cls], set()
    while work:
        current = work.pop(0)
        if current.name.value in seen:
            continue
        seen.add(current.name.value)
        for stmt in current.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        work.extend(by_name[b.value.value] for b in current.bases
                    if isinstance(b.value, cst.Name) and b.value.value in by_name)
    return None
