"""One harvested test's program: what it reaches of the folder's modules, in one namespace.

The placed statements (the test, or the classes along its class's MRO, each cut down to
what the test reaches) stand in for their originals; from them, the runner and each
loaded module's configuration, every top-level name reached is followed to the statement
that binds it, in whichever of the folder's modules that is. The program then has the
imports, the plain checks the code calls (`framework.needed`), each module's configuration
and reached definitions (siblings first, each after those it imports; each in file
order), the last placed statement and the runner. Everything shares one namespace: the
test file keeps its names, a sibling's that would clash with another module's (or hide a
builtin) is renamed apart in that sibling's code (`helper` -> `helper_mixin_a`), and
`_mod.x` of a sibling module bound to `_mod` becomes that definition's name. A function's
own import of a name of a sibling (`from .utils import hook` in a setUp) is followed the
same way and dropped, the function then reading the program's definition. What cannot be
followed or renamed raises AssemblyError; a program is never written broken.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, ScopeProvider

from mutator.harvest import framework
from mutator.harvest.modules import BUILTINS, Definition, Folder, Module, ModuleObject, Origin, Statement, \
    Unresolved, nested_imports, references


class AssemblyError(Exception):
    """A test whose program cannot stand alone: it reaches what cannot be followed (a relative
    import leaving the folder, a sibling that does not parse, a sibling module used as an
    object) or a name that cannot be renamed apart."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A statement written in the program in a form of its own, in place of `original`."""

    module: Module
    original: cst.BaseStatement
    node: cst.BaseStatement


def assemble(folder: Folder, placed: list[Placed], runner: str) -> str:
    """The program of `placed` (the last goes last) and `runner`, code of the test file."""
    return _Assembly(folder, placed, runner).program()


class _Assembly:
    def __init__(self, folder: Folder, placed: list[Placed], runner: str) -> None:
        self.folder = folder
        self.placed = {p.original: p for p in placed}
        self.last = placed[-1]
        self.runner = runner
        self.modules = folder.loaded()
        self.needed: dict[Module, set[cst.BaseStatement]] = defaultdict(set)
        self.bound: dict[tuple[Module, str], Definition] = {}
        self.attributes: dict[tuple[Module, str, str], Definition] = {}
        self._renamers: dict[Module, _Renamer | None] = {}
        self.inlined: list[tuple[Module, str, Module, str]] = []  # (module, local name, sibling, its name)
        for p in placed:
            code = _code(p.node.visit(framework.Standalone()))
            self._reach(p.module, references(code), nested_imports(code))
        self._reach(folder.main, references(runner))
        for module in self.modules:
            for statement in module.statements:
                if statement.kind == "config":
                    self._reach(module, statement.refs)
        # siblings only a function's import reaches come before the test file's code too
        self.modules[-1:-1] = [m for m, nodes in self.needed.items() if nodes and m not in self.modules]
        self.names = self._out_names()

    def program(self) -> str:
        self._check_inlined()
        imports: list[str] = []
        for module in [self.folder.main, *self.modules[:-1]]:
            for statement in self._emitted(module, ("import",)):
                node = self._external(self._rename(module, statement.node))
                if node is not None and _code(node) not in imports:
                    imports.append(_code(node))
        own: list[str] = []
        for module in self.modules:
            for statement in self._emitted(module, ("config", "definition")):
                placed = self.placed.get(statement.node)
                if placed is not self.last:
                    own.append(self._standalone(module, placed.node if placed else statement.node))
        own.append(self._standalone(self.last.module, self.last.node))
        pieces = framework.needed("\n".join(own))
        imports += [f"import {name}" for name in framework.IMPORTS
                    if re.search(rf"\b{re.escape(name)}\.", "\n".join(pieces)) and not any(
                        re.match(rf"import (?:[\w.]+\s*,\s*)*{re.escape(name)}(?:\s|,|$)", code) for code in imports)]
        parts = ["\n".join(imports), *pieces, *own, f'if __name__ == "__main__":\n    {self._runner()}']
        return "\n\n\n".join(part for part in parts if part) + "\n"

    # -- what the program reaches --------------------------------------------------------
    def _reach(self, module: Module, refs: frozenset[str], nested: dict[str, Origin] | None = None) -> None:
        """Follow `refs` (and what a function's imports of siblings, `nested`, bind) to the
        statements that bind them, in whichever module, and what those reach in turn."""
        pending = [(module, ref) for ref in refs] + self._inline(module, nested or {})
        while pending:
            module, ref = pending.pop()
            name, _, attr = ref.partition(".")
            binding = self.folder.resolve(module, name)
            if isinstance(binding, ModuleObject) and attr:
                target = self.folder.resolve(binding.module, attr)
                if not isinstance(target, Definition):
                    raise AssemblyError(target.reason if isinstance(target, Unresolved) else
                                        f"{name}.{attr}: {binding.module.name}.py defines no {attr} of its own")
                self.attributes[(module, name, attr)] = binding = target
            elif isinstance(binding, ModuleObject):
                raise AssemblyError(f"uses the module {name} itself, not only names of it")
            elif isinstance(binding, Unresolved):
                raise AssemblyError(binding.reason)
            elif binding is None:
                continue
            else:
                self.bound[(module, name)] = binding
            for statement in self._binding(binding):
                if statement.node not in self.placed and statement.node not in self.needed[binding.module]:
                    self.needed[binding.module].add(statement.node)
                    pending += [(binding.module, r) for r in statement.refs]
                    pending += self._inline(binding.module, statement.nested)

    def _inline(self, module: Module, nested: dict[str, Origin]) -> list[tuple[Module, str]]:
        """What a function-level import of a sibling binds is inlined like the rest of the
        sibling: it is reached in the sibling, and the import dropped (`_Inlined`)."""
        found = []
        for local, origin in nested.items():
            target = _inlinable(self.folder, origin)
            if target is not None and origin.attr and (module, local, target, origin.attr) not in self.inlined:
                self.inlined.append((module, local, target, origin.attr))
                found.append((target, origin.attr))
        return found

    @staticmethod
    def _binding(binding: Definition) -> list[Statement]:
        """The statements a program keeps for a name: its definition, or every import that
        binds it (`import torch` and `import torch._dynamo.testing` both)."""
        if binding.statement.kind != "import":
            return [binding.statement]
        return [s for s in binding.module.statements if s.kind == "import" and binding.name in s.binds]

    def _emitted(self, module: Module, kinds: tuple[str, ...]) -> list[Statement]:
        return [s for s in module.statements if s.kind in kinds and (
            s.kind == "config" or s.node in self.needed[module] or s.node in self.placed)]

    # -- one namespace -------------------------------------------------------------------
    def _out_names(self) -> dict[tuple[Module, str], str]:
        """The program's name of each top-level name of each module that it binds: the test
        file's own, a sibling's unless another module has it already (then renamed apart)."""
        names: dict[tuple[Module, str], str] = {}
        taken: dict[str, tuple[Module, tuple[str, ...]]] = {}  # the program's names: whose, and what
        for module in [self.folder.main, *self.modules[:-1]]:
            for statement in self._emitted(module, ("import", "definition")):
                for name in statement.binds:
                    if (module, name) in names:
                        continue  # bound again further down the same module
                    key = Definition(module, statement, name).key
                    holder = taken.get(name)
                    if module is self.folder.main or _shares(module, key, holder, name):
                        names[(module, name)] = name
                        taken.setdefault(name, (module, key))
                        continue
                    new, n = f"{name}_{module.name.strip('_')}", 2
                    while new in taken or new in BUILTINS:
                        new, n = f"{name}_{module.name.strip('_')}{n}", n + 1
                    names[(module, name)] = new
                    taken[new] = (module, key)
        return names

    def _renames(self, module: Module) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """What `module`'s code calls differently in the program: names, and `alias.attr`s."""
        renames = {name: new for (owner, name), new in self.names.items() if owner is module and new != name}
        for (owner, name), binding in self.bound.items():
            new = self.names[(binding.module, binding.name)]
            if owner is module and new != name:
                renames[name] = new
        attributes: dict[str, dict[str, str]] = defaultdict(dict)
        for (owner, alias, attr), binding in self.attributes.items():
            if owner is module:
                attributes[alias][attr] = self.names[(binding.module, binding.name)]
        return renames, dict(attributes)

    def _rename(self, module: Module, node: cst.BaseStatement) -> cst.BaseStatement:
        if module not in self._renamers:
            renames, attributes = self._renames(module)
            self._renamers[module] = _renamer(module.tree, renames, attributes) if renames or attributes else None
        renamer = self._renamers[module]
        return cst.ensure_type(node.visit(renamer), cst.BaseStatement) if renamer is not None else node

    def _standalone(self, module: Module, node: cst.BaseStatement) -> str:
        standalone = self._rename(module, node).visit(framework.Standalone())
        return _code(standalone.visit(_Inlined(self.folder)) if self.inlined else standalone)

    def _check_inlined(self) -> None:
        """A function whose import of a sibling is dropped reads the name as a global then: the
        program must have the sibling's definition under that name, and the function's module
        no other top-level binding of it."""
        for module, local, sibling, name in self.inlined:
            binding = self.folder.resolve(sibling, name)
            if not isinstance(binding, Definition):
                raise AssemblyError(binding.reason if isinstance(binding, Unresolved) else
                                    f"imports {name} from {sibling.name}.py inside a function, which it does not "
                                    "define")
            own = self.folder.resolve(module, local)
            if self.names.get((binding.module, binding.name)) != local or \
                    own is not None and (not isinstance(own, Definition) or own.key != binding.key):
                raise AssemblyError(f"imports {name} from {sibling.name}.py inside a function, as {local}, which "
                                    "the program has under another name")

    def _runner(self) -> str:
        """The runner, its names as the program has them (the test file's: a class imported
        under another name, a parameter value naming a sibling's definition)."""
        renames, attributes = self._renames(self.folder.main)
        if not renames and not attributes:
            return self.runner
        stubs = "".join(f"{name} = None\n" for name in {*renames, *attributes})  # bind them, to find their uses
        tree = cst.parse_module(stubs + self.runner + "\n")
        renamed = tree.visit(_renamer(tree, renames, attributes))
        return _code(cst.ensure_type(renamed, cst.Module).body[-1])

    def _external(self, node: cst.BaseStatement) -> cst.BaseStatement | None:
        """An `import a, b` without the names that are siblings (inlined instead); None when
        nothing is left."""
        small = node.body[0] if isinstance(node, cst.SimpleStatementLine) else None
        if not isinstance(small, cst.Import):
            return node
        kept = [alias for alias in small.names if self.folder.target(_origin(alias)) is None]
        if len(kept) == len(small.names):
            return node
        kept = [alias.with_changes(comma=cst.MaybeSentinel.DEFAULT) for alias in kept]
        return node.with_changes(body=[small.with_changes(names=kept)]) if kept else None


def _shares(module: Module, key: tuple[str, ...], holder: tuple[Module, tuple[str, ...]] | None, name: str) -> bool:
    """Whether a sibling's name can stay as it is: free (and no builtin the others' code may
    mean), its own from further up, or the same import as the holder's."""
    if holder is None:
        return name not in BUILTINS
    return holder[0] is module or holder[1] == key and key[0] == "import"


def _origin(alias: cst.ImportAlias) -> Origin:
    """What `import a.b` (the package a) or `import a.b as c` (a.b) binds."""
    name = alias.evaluated_name
    return Origin(name if alias.asname else name.split(".")[0], None, 0)


class _Inlined(cst.CSTTransformer):
    """A function's imports of the folder's modules, dropped: what they import is the
    program's own (a `try:` of nothing else goes with them)."""

    def __init__(self, folder: Folder) -> None:
        super().__init__()
        self.folder = folder

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        kept = [small for small in updated.body if not self._sibling(small)]
        if len(kept) == len(updated.body):
            return updated
        return updated.with_changes(body=kept) if kept else cst.RemoveFromParent()

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated if updated.body else updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> cst.Try | cst.RemovalSentinel:
        def blocks(node: cst.Try) -> list[cst.BaseSuite]:
            return [node.body, *(handler.body for handler in node.handlers)]
        emptied = all(map(_only_pass, blocks(updated))) and not all(map(_only_pass, blocks(original)))
        return cst.RemoveFromParent() if emptied and updated.orelse is None and updated.finalbody is None \
            else updated

    def _sibling(self, small: cst.BaseSmallStatement) -> bool:
        if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
            return False
        module = get_full_name_for_node(small.module) if small.module is not None else ""
        origins = [Origin(module or "", alias.evaluated_name, len(small.relative)) for alias in small.names]
        return all(_inlinable(self.folder, origin) is not None for origin in origins)


def _inlinable(folder: Folder, origin: Origin) -> Module | None:
    """The sibling a function's import takes a name of (not `from . import sibling`, a module itself)."""
    target = folder.target(origin)
    return target if isinstance(target, Module) and (origin.module or origin.level == 0) else None


def _only_pass(block: cst.BaseSuite) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body)
               for s in getattr(block, "body", ()))


class _Renamer(cst.CSTTransformer):
    def __init__(self, names: dict[cst.Name, str], aliases: dict[cst.ImportAlias, str],
                 attributes: dict[cst.Name, dict[str, str]]) -> None:
        super().__init__()
        self.names, self.aliases, self.attributes = names, aliases, attributes

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.names.get(original)
        return updated.with_changes(value=new) if new else updated

    def leave_ImportAlias(self, original: cst.ImportAlias, updated: cst.ImportAlias) -> cst.ImportAlias:
        new = self.aliases.get(original)
        return updated.with_changes(asname=cst.AsName(name=cst.Name(new))) if new else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        table = self.attributes.get(original.value) if isinstance(original.value, cst.Name) else None
        if table and original.attr.value in table:
            return cst.Name(table[original.attr.value])
        return updated


def _renamer(tree: cst.Module, renames: dict[str, str], attributes: dict[str, dict[str, str]]) -> _Renamer:
    """Renames the top-level names of `tree` where they are bound and wherever they are used
    (scopes respected: a parameter of the same name stays), and `alias.attr` of `attributes`."""
    scope = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(ScopeProvider)[tree]
    names: dict[cst.Name, str] = {}
    aliases: dict[cst.ImportAlias, str] = {}
    uses: dict[cst.Name, dict[str, str]] = {}
    for name, new in renames.items():
        for assignment in scope.assignments[name]:
            node = getattr(assignment, "node", None)
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                names[node.name] = new
            elif isinstance(node, cst.Name):
                names[node] = new
            elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    if alias.evaluated_alias == name or alias.evaluated_alias is None and alias.evaluated_name == name:
                        aliases[alias] = new
                    elif alias.evaluated_alias is None and alias.evaluated_name.split(".")[0] == name:
                        raise AssemblyError(f"{name} ({_code(node)}) would have to be renamed apart, which a "
                                            "dotted import cannot be")
            else:
                raise AssemblyError(f"{name} would have to be renamed apart where {type(node).__name__} binds it")
            names.update({access.node: new for access in assignment.references if isinstance(access.node, cst.Name)})
    for alias, table in attributes.items():
        for assignment in scope.assignments[alias]:
            uses.update({access.node: table for access in assignment.references if isinstance(access.node, cst.Name)})
    return _Renamer(names, aliases, uses)


def _code(node: cst.CSTNode) -> str:
    """A statement's source, without the blank lines before it."""
    return cst.Module([]).code_for_node(node).strip("\n")
