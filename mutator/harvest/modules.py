"""The modules a test file's tests come from: the file itself and the modules of its own
folder that it imports, read the way pytest's import would find them and never imported.

A `Module` is one file's top-level statements, each with the names it binds and uses (a
`try:` of imports that falls back on others `except ImportError:` stands for its first
branch's imports) and what the imports inside its functions bind. A
`Folder` holds the test file's module and reads a sibling (`from ._mixins import M`,
`from . import _mod`, `import helpers_mod`) on first use, through a `Siblings` reader, so
`resolve` can say what a name of any of them is: a statement of one of the folder's
modules (a definition, or an import of something outside the folder), a sibling module
itself, or something that cannot be followed (a relative import leaving the folder, a
sibling that does not parse).
"""

from __future__ import annotations

import ast
import builtins
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from mutator.core import parsing
from mutator.harvest import framework
from mutator.core.program import ProgramError, read_source, terminal_name

Siblings = Callable[[str], "str | None"]  # the source of module `name` beside the test file, or None
RUNNERS = frozenset({"run_tests", "main", "instantiate_parametrized_tests", "instantiate_device_type_tests"})
BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__"}


def no_siblings(name: str) -> None:
    """A test file read on its own: no module beside it."""
    return None


def folder_reader(path: Path) -> Siblings:
    """Reads the modules beside `path` (never `path` itself); a file that cannot be read
    raises ProgramError, which the folder turns into a reason."""
    def read(name: str) -> str | None:
        candidate = path.parent / f"{name}.py"
        return read_source(candidate) if name != path.stem and candidate.is_file() else None
    return read


@dataclass(frozen=True, slots=True)
class Origin:
    """What an import binds a name to: module `module` itself (attr None) or its `attr`;
    `level`: the leading dots of a relative import (`from . import m`: module "", attr "m")."""

    module: str
    attr: str | None
    level: int


@dataclass(frozen=True, slots=True)
class Statement:
    node: cst.BaseStatement
    binds: frozenset[str]
    refs: frozenset[str]  # what it loads as the folder resolves it: "name" (bare) and "name.attr"
    kind: str  # import, definition, config, runner, main, other
    origins: dict[str, Origin] = field(default_factory=dict)  # an import's names
    # what the imports inside its functions bind (`from .utils import hook` in a setUp), each name's first
    nested: dict[str, Origin] = field(default_factory=dict)


class Module:
    """One file's top level: its statements, what it defines and imports, what it deletes."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name  # "" for the test file itself
        self.tree = cst.parse_module(source)
        self.statements = [self._describe(node) for node in _top_level(self.tree.body)]
        self.defined = {n: s for s in self.statements if s.kind != "import" for n in s.binds}
        self.imported = {n: s for s in self.statements if s.kind == "import" for n in s.binds}
        self.stars = [origin for s in self.statements for n, origin in s.origins.items() if n == "*"]
        self.deleted = {target.value for node in self.tree.body if isinstance(node, cst.SimpleStatementLine)
                        for small in node.body if isinstance(small, cst.Del)
                        for target in _del_targets(small.target)}

    def code(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node)

    def _describe(self, node: cst.BaseStatement) -> Statement:
        code = self.tree.code_for_node(node)
        parsed = parsing.parse(textwrap.dedent(code)).body
        first = parsed[0] if parsed else None
        binds: frozenset[str] = frozenset(stored(first)) if first is not None else frozenset()
        kind, origins = ("definition" if binds else "other"), {}
        if isinstance(first, (ast.Import, ast.ImportFrom)):
            origins = _origins(first)
            binds, kind = frozenset(n for n in origins if n != "*"), "import"
        elif isinstance(first, (ast.Assign, ast.AugAssign)) and not binds:
            kind = "config"  # `torch._dynamo.config.x = y` at module level
        elif isinstance(first, ast.If) and _is_main_guard(first):
            binds, kind = frozenset(), "main"
        elif _runner_call(first):  # `instantiate_parametrized_tests(T)`, `T = instantiate_...(T)` too
            binds, kind = frozenset(), "runner"
        nested = {} if kind == "import" or first is None else _nested_origins(first)
        standalone = cst.Module([]).code_for_node(node.visit(framework.Standalone()))
        return Statement(node, binds, references(standalone), kind, origins, nested)


@dataclass(frozen=True, slots=True)
class Definition:
    """A name bound by a statement of one of the folder's modules (an import of something
    outside the folder included)."""

    module: Module
    statement: Statement
    name: str

    @property
    def key(self) -> tuple[str, ...]:
        """Bindings with one key are one object: the same import in two modules shares a name."""
        origin = self.statement.origins.get(self.name)
        if origin is not None and self.statement.kind == "import":
            return ("import", origin.module, origin.attr or "", str(origin.level))
        return ("definition", self.module.name, self.name)


@dataclass(frozen=True, slots=True)
class ModuleObject:
    """A name bound to a sibling module itself (`from . import _mod`, `import helpers_mod`)."""

    module: Module


@dataclass(frozen=True, slots=True)
class Unresolved:
    reason: str


Binding = Definition | ModuleObject | Unresolved


class Folder:
    """The test file's module and the siblings it reaches, read on first use."""

    def __init__(self, source: str, siblings: Siblings) -> None:
        self.main = Module("", source)
        self._siblings = siblings
        self._read: dict[str, Module | Unresolved | None] = {}

    def sibling(self, name: str) -> Module | Unresolved | None:
        """Module `name` beside the test file; None when there is none."""
        if name not in self._read:
            try:
                source = self._siblings(name)
                self._read[name] = None if source is None else Module(name, source)
            except (ProgramError, cst.ParserSyntaxError, SyntaxError, RecursionError) as exc:
                why = str(exc).splitlines()[0] if isinstance(exc, ProgramError) else f"{type(exc).__name__}: {exc}"
                why = " ".join(why.split())
                self._read[name] = Unresolved(f"{name}.py beside the test cannot be read: {why}"[:300])
        return self._read[name]

    def resolve(self, module: Module, name: str, _seen: frozenset[tuple[str, str]] = frozenset()) -> Binding | None:
        """What `name` is at the top level of `module`; None for what no statement binds there
        (a builtin, a local)."""
        if (module.name, name) in _seen:
            return Unresolved(f"{name} is imported in a cycle of the folder's modules")
        seen = _seen | {(module.name, name)}
        if name in module.defined:
            return Definition(module, module.defined[name], name)
        statement = module.imported.get(name)
        if statement is None:
            return self._from_star(module, name, seen)
        origin = statement.origins[name]
        target = self.target(origin)
        if target is None:
            return Definition(module, statement, name)
        if isinstance(target, Unresolved):
            return target
        if origin.attr is None or origin.level == 1 and not origin.module:  # `import m`, `from . import m`
            return ModuleObject(target)
        found = self.resolve(target, origin.attr, seen)
        return found if found is not None else Unresolved(f"{target.name}.py defines no {origin.attr}")

    def imports(self, module: Module) -> Iterator[Module]:
        """The siblings `module`'s import statements read."""
        for statement in module.statements:
            for origin in statement.origins.values():
                target = self.target(origin)
                if isinstance(target, Module):
                    yield target

    def loaded(self) -> list[Module]:
        """The siblings importing the test file loads, each after those it imports, then the file."""
        order: list[Module] = []
        visiting: set[str] = set()

        def visit(module: Module) -> None:
            visiting.add(module.name)
            for sibling in self.imports(module):
                if sibling.name not in visiting:
                    visit(sibling)
            if module not in order:
                order.append(module)
        visit(self.main)
        return order

    def target(self, origin: Origin) -> Module | Unresolved | None:
        """The sibling an import reads (None: a module outside the folder)."""
        if origin.level == 0:
            return self.sibling(origin.module) if origin.module.isidentifier() else None
        name = origin.module or origin.attr or ""
        written = f"{'.' * origin.level}{origin.module} import {origin.attr}"
        if origin.level > 1:
            return Unresolved(f"a relative import from outside the test's folder ({written})")
        if not name.isidentifier():
            return Unresolved(f"a relative import of a package beside the test, which harvest does not read "
                              f"({written})")
        found = self.sibling(name)
        return found if found is not None else Unresolved(f"a relative import of {name}, which is no file beside "
                                                          "the test")

    def _from_star(self, module: Module, name: str, seen: frozenset[tuple[str, str]]) -> Binding | None:
        for origin in reversed(module.stars):
            target = self.target(Origin(origin.module, None, origin.level))
            if isinstance(target, Module) and not name.startswith("_"):
                found = self.resolve(target, name, seen)
                if found is not None:
                    return found
        return None


def sibling_imports(tree: ast.Module) -> set[str]:
    """The names of the modules a file's top-level imports could find beside it (those of a
    `try:` block that falls back on other imports included)."""
    found: set[str] = set()
    for node in (n for top in tree.body for n in (top.body if isinstance(top, ast.Try) else [top])):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if "." not in a.name)
        elif isinstance(node, ast.ImportFrom) and node.level <= 1:
            if node.module and "." not in node.module:
                found.add(node.module)
            elif node.level == 1 and not node.module:
                found.update(a.name for a in node.names)
    return found


def _top_level(body: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """A module's top-level statements, with the imports of a `try:` that falls back on other
    imports when they fail (`try: from ._common import x` / `except ImportError: from _common
    import x`) standing for the block: its first branch is what a package import runs, and
    the modules of either are the ones beside the file."""
    for node in body:
        yield from node.body.body if _import_fallback(node) else [node]  # type: ignore[attr-defined]


def _import_fallback(node: cst.BaseStatement) -> bool:
    """`try:` imports, `except ImportError:` (or ModuleNotFoundError) other imports, and nothing else."""
    if not (isinstance(node, cst.Try) and node.handlers and node.orelse is None and node.finalbody is None):
        return False
    caught = [h.type for h in node.handlers]
    if not all(isinstance(t, (cst.Name, cst.Tuple)) and names(cst.Module([]).code_for_node(t)) <= _IMPORT_ERRORS
               for t in caught):
        return False
    statements = [s for block in (node.body, *(h.body for h in node.handlers)) for s in block.body]
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass))
                                                               for small in s.body) for s in statements)


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _origins(node: ast.Import | ast.ImportFrom) -> dict[str, Origin]:
    if isinstance(node, ast.Import):  # `import a.b` binds the package a; `import a.b as c`, a.b itself
        return {alias.asname or alias.name.split(".")[0]: Origin(alias.name if alias.asname else
                                                                 alias.name.split(".")[0], None, 0)
                for alias in node.names}
    return {alias.asname or alias.name: Origin(node.module or "", alias.name, node.level) for alias in node.names}


def nested_imports(code: str) -> dict[str, Origin]:
    """What the imports inside the functions (and classes) of a piece of code bind."""
    try:
        tree = parsing.parse(textwrap.dedent(code))
    except SyntaxError:
        return {}
    return {name: origin for node in tree.body for name, origin in _nested_origins(node).items()}


def _nested_origins(node: ast.stmt) -> dict[str, Origin]:
    found: dict[str, Origin] = {}
    for inner in ast.walk(node):
        if isinstance(inner, ast.ImportFrom):
            for name, origin in _origins(inner).items():
                found.setdefault(name, origin)
    found.pop("*", None)
    return found


def _del_targets(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _del_targets(element.value)


def _runner_call(node: ast.stmt | None) -> bool:
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    return isinstance(value, ast.Call) and terminal_name(value.func) in RUNNERS and (
        isinstance(node, ast.Expr) or [terminal_name(t) for t in node.targets] ==  # type: ignore[union-attr]
        [terminal_name(a) for a in value.args[:1]])


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def stored(node: ast.stmt) -> set[str]:
    """The names a module- or class-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    found: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Store):
            found.add(current.id)
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(current.name)  # defined in an if/try block: its body is not the module's
            continue
        stack.extend(ast.iter_child_nodes(current))
    return found


def names(code: str) -> set[str]:
    """Names a piece of code loads (roots of attribute chains included)."""
    try:
        tree = parsing.parse(textwrap.dedent(code))
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def uses_code(code: str) -> frozenset[str]:
    return frozenset(names(code) - BUILTINS)


def references(code: str) -> frozenset[str]:
    """What a piece of code loads: `name` where a name is used as it is, `name.attr` where
    only an attribute of it is (which is all that a sibling module bound to `name` gives)."""
    try:
        tree = parsing.parse(textwrap.dedent(code))
    except SyntaxError:
        return frozenset()
    under_attribute = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in BUILTINS:
            found.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in under_attribute \
                and node.id not in BUILTINS:
            found.add(node.id)
    return frozenset(found)
