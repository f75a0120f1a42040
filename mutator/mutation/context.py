"""What an operator needs to know about a program: its tree, its compiled region, its driver.

The *compiled region* is the code Dynamo traces: the harness's `fn` (or the `forward` of
the module instance bound to `fn`), whatever a script passes to or decorates with
`torch.compile` (a module-level function, or one defined locally next to the call, as in
a test method), and, transitively, the functions, methods and classes of the same file
that those reference. The *driver* is the code that calls the compiled callable: the
harness's `drive(f)`, or a script's top-level statements and the bodies of the functions
and methods that compile something (a test method that compiles and calls).
"""

from __future__ import annotations

import builtins
import keyword
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import libcst as cst
import libcst.matchers as m
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from mutator.mutation.tree import children as _children
from mutator.mutation.tree import target_names
from mutator.core.program import Program, ProgramForm

Target = Literal["region", "driver", "anywhere"]
T = TypeVar("T")
HARNESS_HOOKS = frozenset({"inputs", "drive", "state"})
ENTRY_METHODS = ("forward", "__call__")


@dataclass
class MutationContext:
    """A parsed program with its region and driver; built once and shared by operators."""

    program: Program
    module: cst.Module
    entries: list[cst.FunctionDef]  # the compiled callables themselves
    region: list[cst.FunctionDef]  # entries and everything they reach in this file
    region_ids: dict[int, str]  # id(node) -> qualified name of its region function
    driver_ids: set[int]
    names: set[str]
    candidates: dict[str, list[cst.CSTNode]] = field(default_factory=dict)  # operator id -> its sites here
    parents: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(node) -> its parent
    # names the program binds to compiled callables (`@torch.compile def g`, `g = torch.compile(f)`,
    # `g = torch._dynamo.optimize(...)(f)`) -> the function they run (None when not in this file)
    compiled_names: dict[str, cst.FunctionDef | None] = field(default_factory=dict)
    by_type: dict[str, list[int]] = field(default_factory=dict)  # node type name -> its nodes' ids, in order
    derived: dict[object, Any] = field(default_factory=dict)  # see `fact`
    _reaching: dict[tuple[str, frozenset[str] | None], set[int]] = field(default_factory=dict)
    _lines: dict[int, int] | None = None  # id(node) -> line, made when a site is first named

    @classmethod
    def of(cls, program: Program) -> MutationContext:
        module = cst.parse_module(program.source)
        tree = _Tree(module)
        entries, region = _find_region(tree, program.form)
        region_ids: dict[int, str] = {}
        for qualname, fn in _qualified(module, region):
            for node in tree.walk(fn):
                region_ids.setdefault(id(node), qualname)
        by_type: dict[str, list[int]] = defaultdict(list)
        for node in tree.order:
            by_type[type(node).__name__].append(id(node))
        return cls(
            program=program,
            module=module,
            entries=entries,
            region=region,
            region_ids=region_ids,
            driver_ids={id(n) for stmt in _driver_statements(tree, program.form) for n in tree.walk(stmt)}
            - set(region_ids),
            names=_all_names(tree),
            parents={id(child): node for node in tree.order for child in tree.kids[id(node)]},
            compiled_names=_compiled_names(tree),
            by_type=dict(by_type),
        )

    def fact(self, key: object, make: Callable[[MutationContext], T]) -> T:
        """What `make` derives from this program (its scopes, its classes' facts), made once
        per context and shared by both passes of every operator applied to it: it lives as
        long as the context does, in whatever cache holds contexts."""
        try:
            return self.derived[key]  # type: ignore[no-any-return]
        except KeyError:
            return self.derived.setdefault(key, make(self))  # type: ignore[no-any-return]

    @property
    def is_harness(self) -> bool:
        return self.program.form is ProgramForm.HARNESS

    def in_target(self, node: cst.CSTNode, target: Target) -> bool:
        if target == "region":
            return id(node) in self.region_ids
        if target == "driver":
            return id(node) in self.driver_ids
        return True

    def reaching(self, target: Target, *, hooked: frozenset[str] | None = None) -> set[int] | None:
        """The ids of every node in `target` and of their ancestors (None: everything);
        with `hooked` (node type names), of the nodes of those types among them and of
        their ancestors: the same hooks fire in the same order on a walk of either."""
        key = (target, hooked)
        cached = self._reaching.get(key)
        if cached is not None:
            return cached
        if hooked is None:
            if target == "anywhere":
                return None
            inside: Iterable[int] = self.region_ids.keys() if target == "region" else self.driver_ids
        else:
            reach = self.reaching(target)  # what the walk without `hooked` visits
            inside = [node_id for name in hooked for node_id in self.by_type.get(name, ())
                      if reach is None or node_id in reach]
        cached = set()
        for node_id in inside:
            if node_id in cached:
                continue
            cached.add(node_id)
            parent = self.parents.get(node_id)
            while parent is not None and id(parent) not in cached:
                cached.add(id(parent))
                parent = self.parents.get(id(parent))
        self._reaching[key] = cached
        return cached

    def path_to(self, node: cst.CSTNode) -> set[int]:
        """The ids of `node` and all its ancestors."""
        path = {id(node)}
        while id(node) in self.parents:
            node = self.parents[id(node)]
            path.add(id(node))
        return path

    def where(self, node: cst.CSTNode) -> str:
        """A site label for provenance: 'forward:12' (function and line)."""
        owner = self.region_ids.get(id(node)) or ("drive" if id(node) in self.driver_ids else "module")
        return f"{owner}:{self.lines.get(id(node), 0)}"

    @property
    def lines(self) -> dict[int, int]:
        """id(node) -> its first line. Positions cost a third of making a context, and a
        context whose operators all decline never names a site."""
        if self._lines is None:
            self._lines = {id(node): pos.start.line for node, pos in _positions(self.module).items()}
        return self._lines

    def top_level(self, name: str) -> cst.CSTNode | None:
        """The top-level def, class or assignment binding `name`, if any."""
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
                return stmt
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                    ):
                        return stmt
        return None


class NameAllocator:
    """Fresh identifiers that collide with nothing in the program (nor with each other)."""

    def __init__(self, taken: set[str]) -> None:
        self._taken = set(taken) | set(dir(builtins)) | set(keyword.kwlist)

    def fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        self._taken.add(name)
        return name

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def reserve(self, names: Iterable[str]) -> None:
        """Names no fresh one may take from now on (a splice's donor names, kept as they are)."""
        self._taken.update(names)


def _positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """PositionProvider's positions of every node. Its own codegen pass, without the
    MetadataWrapper, whose resolve first walks the module for batched providers (half the
    cost, and there are none); the wrapper where that provider's internals have changed."""
    provider = PositionProvider()
    try:
        provider._gen_impl(module)
        return provider._computed
    except AttributeError:
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


class _Tree:
    """A module walked once: every node in source order and each node's children, for the
    dozen walks building a context makes (reading children from a node's fields is most of
    a walk's cost)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.order: list[cst.CSTNode] = []
        self.kids: dict[int, list[cst.CSTNode]] = {}
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            self.order.append(node)
            found = self.kids[id(node)] = _children(node)
            stack.extend(reversed(found))

    def walk(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Every node under `node` (one of this module's), in source order."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(self.kids[id(current)]))


def _definitions(module: cst.Module) -> tuple[dict[str, cst.FunctionDef], dict[str, cst.ClassDef]]:
    """The module's top-level functions and classes by name."""
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    return functions, classes


def _find_region(tree: _Tree, form: ProgramForm) -> tuple[list[cst.FunctionDef], list[cst.FunctionDef]]:
    module = tree.module
    functions, classes = _definitions(module)
    instances = _instances(module, classes)
    entries: list[cst.FunctionDef] = []
    if form is ProgramForm.HARNESS:
        if "fn" in functions:
            entries.append(functions["fn"])
        elif "fn" in instances:
            entries.extend(_entry_methods(classes[instances["fn"]], classes))
    else:
        entries.extend(_script_entries(tree, functions, classes, instances))
    owners = {id(m): name for name, cls in classes.items() for m in _methods(cls, classes)}
    region: list[cst.FunctionDef] = []
    seen: set[int] = set()
    seen_classes: set[str] = set()
    work = list(entries)

    def add_class(name: str) -> None:
        """A class whose instances the region uses: its methods run there (dunders implicitly).

        The classes its __init__ instantiates come along (submodules called as
        self.block(x)); the harness module's own __init__ runs at load time, so it is
        read for those, not added.
        """
        if name in seen_classes:
            return
        seen_classes.add(name)
        for method in _methods(classes[name], classes):
            if method.name.value != "__init__" or instances.get("fn") != name:
                work.append(method)
            else:
                for referenced in _referenced_names(tree, method):
                    if referenced in classes:
                        add_class(referenced)

    for entry in entries:
        if id(entry) in owners:
            add_class(owners[id(entry)])
    while work:
        fn = work.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        region.append(fn)
        for name in _referenced_names(tree, fn):
            if name in HARNESS_HOOKS:
                continue
            if name in functions:
                work.append(functions[name])
            elif name in classes:
                add_class(name)
    return entries, region


def _script_entries(tree: _Tree, functions: dict[str, cst.FunctionDef], classes: dict[str, cst.ClassDef],
                    instances: dict[str, str]) -> list[cst.FunctionDef]:
    entries: list[cst.FunctionDef] = []
    local: dict[str, cst.FunctionDef] = {}  # the last function of each name defined so far, at any depth
    for node in tree.order:
        if isinstance(node, cst.FunctionDef):
            local[node.name.value] = node
            if any(_is_compile(d.decorator) for d in node.decorators):
                entries.append(node)
        elif isinstance(node, cst.Call) and _is_compile(node.func) and node.args:
            target = node.args[0].value
            if isinstance(target, cst.Call):
                target = target.func
            if isinstance(target, cst.Name):
                if target.value in functions:
                    entries.append(functions[target.value])
                elif target.value in classes:
                    entries.extend(_entry_methods(classes[target.value], classes))
                elif target.value in instances:
                    entries.extend(_entry_methods(classes[instances[target.value]], classes))
                elif target.value in local:  # defined next to the call, in a function or test method
                    entries.append(local[target.value])
    return entries


def _compiled_names(tree: _Tree) -> dict[str, cst.FunctionDef | None]:
    functions, classes = _definitions(tree.module)
    instances = _instances(tree.module, classes)
    found: dict[str, cst.FunctionDef | None] = {}
    local: dict[str, cst.FunctionDef] = {}
    for node in tree.order:
        if isinstance(node, cst.FunctionDef):
            local[node.name.value] = node
        if isinstance(node, cst.FunctionDef) and any(_is_compile(d.decorator) for d in node.decorators):
            found[node.name.value] = node
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and _compiling(node.value):
            target = node.value.args[0].value
            if isinstance(target, cst.Call):  # torch.compile(Model())
                target = target.func
            name = target.value if isinstance(target, cst.Name) else None
            entry = (functions.get(name) or local.get(name)) if name else None
            if name in classes or name in instances:
                entry = next(iter(_entry_methods(classes[instances.get(name, name)], classes)), None)
            for assigned in node.targets:
                found.update((n.value, entry) for n in target_names(assigned.target) or [])
    return found


def _compiling(call: cst.Call) -> bool:
    """A call that returns a compiled callable: `torch.compile(f, ...)`, `torch.compile(...)(f)`,
    `torch._dynamo.optimize(...)(f)` (not `torch.compile(backend=...)` alone, a decorator)."""
    if not call.args or call.args[0].keyword is not None:
        return False
    if isinstance(call.func, cst.Call):
        return _is_compile(call.func.func)
    return m.matches(call.func, m.Attribute(value=m.Name("torch"), attr=m.Name("compile")))


def _is_compile(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "compile" and isinstance(expr.value, cst.Name) and expr.value.value == "torch":
            return True
        return expr.attr.value == "optimize" and (
            (isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "_dynamo")
            or (isinstance(expr.value, cst.Name) and expr.value.value in {"dynamo", "_dynamo", "torchdynamo"})
        )
    return False


def _instances(module: cst.Module, classes: dict[str, cst.ClassDef]) -> dict[str, str]:
    """Top-level `name = SomeClass(...)` bindings: name -> class name."""
    found: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name) and small.value.func.value in classes):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        found[target.target.value] = small.value.func.value
    return found


def _methods(cls: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> list[cst.FunctionDef]:
    """The methods of `cls` and of its base classes defined in the same file."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and base.value.value in classes and base.value.value != cls.name.value:
            methods.extend(_methods(classes[base.value.value], classes))
    return methods


def _entry_methods(cls: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> list[cst.FunctionDef]:
    methods = {m.name.value: m for m in reversed(_methods(cls, classes))}
    return [methods[name] for name in ENTRY_METHODS if name in methods][:1]


def _referenced_names(tree: _Tree, fn: cst.FunctionDef) -> set[str]:
    names: set[str] = set()
    for node in tree.walk(fn.body):
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            names.add(node.attr.value)  # self.helper(...) reaches the class's own method
    return names


def _qualified(module: cst.Module, region: list[cst.FunctionDef]) -> list[tuple[str, cst.FunctionDef]]:
    owners: dict[int, str] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    owners[id(item)] = f"{stmt.name.value}.{item.name.value}"
    return [(owners.get(id(fn), fn.name.value), fn) for fn in region]


def _driver_statements(tree: _Tree, form: ProgramForm) -> list[cst.CSTNode]:
    module = tree.module
    if form is ProgramForm.HARNESS:
        return [s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == "drive"]
    top = [
        s for s in module.body
        if not isinstance(s, (cst.FunctionDef, cst.ClassDef))
        and not (isinstance(s, cst.SimpleStatementLine) and all(
            isinstance(b, (cst.Import, cst.ImportFrom)) for b in s.body))
    ]
    return top + _compiling_functions(tree)


def _compiling_functions(tree: _Tree) -> list[cst.FunctionDef]:
    """Functions and methods whose own body compiles something and calls it (a test method)."""
    found: list[cst.FunctionDef] = []
    for node in tree.order:
        if isinstance(node, cst.FunctionDef) and not any(_is_compile(d.decorator) for d in node.decorators):
            own = [n for n in tree.walk(node.body) if isinstance(n, cst.Call) and _is_compile(n.func)]
            inner_decorated = [n for n in tree.walk(node.body) if isinstance(n, cst.FunctionDef)
                               and any(_is_compile(d.decorator) for d in n.decorators)]
            if own or inner_decorated:
                found.append(node)
    return found


def _all_names(tree: _Tree) -> set[str]:
    names: set[str] = set()
    for node in tree.order:
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Attribute):
            names.add(node.attr.value)
    return names
