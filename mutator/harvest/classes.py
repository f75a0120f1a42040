"""Test classes as pytest collects them, read from the folder's modules.

A class yields every `test_*` its MRO has, the first definition along the MRO winning
(a subclass's override, or its `test_x = None` that hides one), once per class the
module's namespace holds: a unittest `TestCase` subclass whatever its name (unless
abstract), a plain class when its name starts with `Test` (unless it defines `__init__`
or `__new__`); `__test__ = False` hides either. A mixin is collected only through the
classes that inherit it. Tests come in pytest's order: a TestCase's sorted by name
(unittest's loader), a plain class's base classes first, each in definition order.

For one test, `members` says what of each class along the MRO the program keeps: the
test, set-up and tear-down, and what they reach as `self.x`/`cls.x` (its first
definition along the MRO) or `super().x` (every definition); `pruned` writes each class
with only those, its framework base turned into `HarvestedChecks` (`HarvestedDynamoChecks`
for torch's Dynamo TestCase and those derived from it, whose set-up then still runs).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import libcst as cst

from mutator.core import parsing
from mutator.harvest import framework
from mutator.harvest.modules import Binding, Definition, Folder, Module, ModuleObject, Unresolved, stored, uses_code

SET_UP = ("setUp", "tearDown", "setUpClass", "tearDownClass")
_CASE_BASES = ("TestCase",)
_SELF = re.compile(r"\b(?:self|cls)\.(\w+)")
_SUPER = re.compile(r"\bsuper\([^()]*\)\.(\w+)")


@dataclass(frozen=True, slots=True)
class ClassRef:
    """A top-level class of one of the folder's modules; or, with `copied`, the members of it
    that were copied onto another class at import time (`Hierarchy.copy_onto`)."""

    module: Module
    node: cst.ClassDef
    copied: frozenset[str] | None = None

    @property
    def name(self) -> str:
        return self.node.name.value


Ancestor = ClassRef | str  # str: a class from outside the folder, as its base is written


class HierarchyError(Exception):
    """A class whose bases cannot be followed: a base in a sibling that cannot be read, an
    MRO Python would refuse."""


class Hierarchy:
    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self._mros: dict[ClassRef, list[Ancestor]] = {}
        self._members: dict[ClassRef, dict[str, cst.BaseStatement]] = {}
        self._copies: dict[ClassRef, list[tuple[ClassRef, str]]] = {}

    def copy_onto(self, target: ClassRef, source: ClassRef, names: frozenset[str], written: str) -> None:
        """Members `names` of `source` were copied onto `target` when the module was imported
        (a `setattr` loop over a mixin's `__dict__`): they are found right after `target`'s own,
        and the program writes `source` (with those members only) as a base of `target`,
        `written` being its name in `target`'s module."""
        self._copies.setdefault(target, []).append((ClassRef(source.module, source.node, names), written))
        self._mros.clear()

    def class_of(self, binding: Binding | None) -> ClassRef | None:
        """The class a binding is, if it is a top-level class of the folder's modules."""
        if isinstance(binding, Unresolved):
            raise HierarchyError(binding.reason)
        if isinstance(binding, Definition) and isinstance(binding.statement.node, cst.ClassDef) and \
                binding.statement.node.name.value == binding.name:
            return ClassRef(binding.module, binding.statement.node)
        return None

    def mro(self, cls: ClassRef, _below: tuple[ClassRef, ...] = ()) -> list[Ancestor]:
        """C3, as Python computes it; classes from outside the folder are opaque leaves, and what
        the import copied onto a class comes right after it."""
        if cls in self._mros:
            return self._mros[cls]
        if cls in _below:
            raise HierarchyError(f"{cls.name} is among its own bases")
        bases = self._bases(cls)
        copies = [copy for copy, _ in self._copies.get(cls, ())]
        mro = [cls, *copies, *_merge([self.mro(b, (*_below, cls)) if isinstance(b, ClassRef) else [b] for b in bases]
                                     + [bases], cls.name)]
        self._mros[cls] = mro
        return mro

    def collected(self, name: str, cls: ClassRef) -> bool:
        """Whether pytest collects the class bound to `name` in a test module."""
        hidden = self.lookup(cls, "__test__")
        if hidden is not None and re.fullmatch(r"__test__\s*=\s*False\s*", hidden[0].module.code(hidden[1]).strip()):
            return False
        if self.is_case(cls):
            return not self._abstract(cls)
        constructed = any(self.lookup(cls, method) is not None for method in ("__init__", "__new__"))
        return name.startswith("Test") and not constructed and bool(self.tests(cls))

    def is_case(self, cls: ClassRef) -> bool:
        """Whether a unittest TestCase (from outside the folder) is along its MRO."""
        return any(isinstance(a, str) and a.split(".")[-1].endswith(_CASE_BASES) for a in self.mro(cls))

    def tests(self, cls: ClassRef) -> list[tuple[ClassRef, cst.FunctionDef]]:
        """Every test of the class, each with the class along its MRO that defines it."""
        seen: set[str] = set()
        per_class: list[list[tuple[ClassRef, cst.FunctionDef]]] = []
        for owner in self._classes(cls):
            found = []
            for name, item in self.members(owner).items():
                if name not in seen and name.startswith("test") and isinstance(item, cst.FunctionDef):
                    found.append((owner, item))
                seen.add(name)
            per_class.append(found)
        if self.is_case(cls):
            return sorted((t for found in per_class for t in found), key=lambda t: t[1].name.value)
        return [t for found in reversed(per_class) for t in found]

    def lookup(self, cls: ClassRef, name: str) -> tuple[ClassRef, cst.BaseStatement] | None:
        """The first definition of a class attribute along the MRO."""
        for owner in self._classes(cls):
            item = self.members(owner).get(name)
            if item is not None:
                return owner, item
        return None

    def members(self, cls: ClassRef) -> dict[str, cst.BaseStatement]:
        """What the class body binds, in order, the last binding of a name winning."""
        if cls not in self._members:
            found: dict[str, cst.BaseStatement] = {}
            for item in body(cls.node):
                for name in member_names(cls.module, item):
                    found[name] = item
            if cls.copied is not None:
                found = {name: item for name, item in found.items() if name in cls.copied}
            self._members[cls] = found
        return self._members[cls]

    def members_for(self, cls: ClassRef, test: str) -> dict[ClassRef, list[cst.BaseStatement]]:
        """Of every class along the MRO, the members a test of `cls` reaches, in body order."""
        owners = self._classes(cls)
        kept: dict[ClassRef, list[cst.BaseStatement]] = {owner: [] for owner in owners}
        done: set[tuple[str, bool]] = set()
        pending = [(test, False), *((name, False) for name in SET_UP)]
        while pending:
            name, every = pending.pop()  # every: each definition along the MRO (reached through super())
            if (name, every) in done:
                continue
            done.add((name, every))
            defining = [owner for owner in owners if name in self.members(owner)]
            for owner in defining if every else defining[:1]:
                item = self.members(owner)[name]
                if item in kept[owner]:
                    continue
                kept[owner].append(item)
                code = owner.module.code(item)
                pending += [(n, False) for n in _SELF.findall(code)] + [(n, True) for n in _SUPER.findall(code)]
                if not isinstance(item, (cst.FunctionDef, cst.ClassDef)):  # an attribute made of others
                    pending += [(n, False) for n in uses_code(code)]
        return {owner: sorted(items, key=body(owner.node).index) for owner, items in kept.items()}

    def pruned(self, cls: ClassRef, members: dict[ClassRef, list[cst.BaseStatement]],
               replace: dict[cst.BaseStatement, cst.BaseStatement]) -> list[tuple[ClassRef, cst.ClassDef]]:
        """Each class along the MRO with only `members` (some `replace`d), its TestCase base
        HarvestedChecks; the class itself gets HarvestedChecks when no base of the folder has it.
        A class members were copied onto has the classes they came from as bases, those of them
        the test reaches."""
        found = []
        for owner, items in members.items():
            if owner.copied is not None and not items:
                continue  # copied members the test does not reach
            bases = [arg.with_changes(value=cst.Name(self._stand_in(owner, arg))) if self._framework(owner, arg)
                     else arg for arg in owner.node.bases] if owner.copied is None else []  # its own members only
            bases[:0] = [cst.Arg(cst.parse_expression(written)) for copy, written in self._copies.get(owner, ())
                         if members.get(copy)]
            if owner == cls and not self.is_case(cls):
                bases.append(cst.Arg(cst.Name(framework.BASE_CLASS)))
            kept = [replace.get(item, item) for item in items] or [cst.SimpleStatementLine([cst.Pass()])]
            kept[0] = kept[0].with_changes(leading_lines=[])  # the members before it are gone
            block = owner.node.body if isinstance(owner.node.body, cst.IndentedBlock) else cst.IndentedBlock([])
            found.append((owner, owner.node.with_changes(bases=bases, body=block.with_changes(body=kept))))
        return found

    def _classes(self, cls: ClassRef) -> list[ClassRef]:
        return [a for a in self.mro(cls) if isinstance(a, ClassRef)]

    def _bases(self, cls: ClassRef) -> list[Ancestor]:
        if cls.copied is not None:
            return []  # what was copied is the class's own members, not what it inherits
        found: list[Ancestor] = []
        for arg in cls.node.bases:
            found.append(self._base(cls.module, arg.value) or cls.module.code(arg.value))
        return found

    def _base(self, module: Module, expr: cst.BaseExpression) -> ClassRef | None:
        if isinstance(expr, cst.Name):
            return self.class_of(self.folder.resolve(module, expr.value))
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            binding = self.folder.resolve(module, expr.value.value)
            if isinstance(binding, ModuleObject):
                found = self.folder.resolve(binding.module, expr.attr.value)
                return self.class_of(found or Unresolved(f"{binding.module.name}.py defines no {expr.attr.value}"))
        return None

    def _framework(self, owner: ClassRef, arg: cst.Arg) -> bool:
        """Whether a base is a test framework's TestCase (from outside the folder)."""
        base = self._base(owner.module, arg.value)
        return base is None and owner.module.code(arg.value).split(".")[-1].endswith(_CASE_BASES)

    def _stand_in(self, owner: ClassRef, arg: cst.Arg) -> str:
        """What a framework base becomes: HarvestedDynamoChecks for torch's Dynamo TestCase or
        one derived from it (its set-up gives the test its configuration), else HarvestedChecks."""
        dotted = self._dotted(owner.module, arg.value)
        return framework.DYNAMO_BASE if dotted.startswith(framework.DYNAMO_CASES) else framework.BASE_CLASS

    def _dotted(self, module: Module, expr: cst.BaseExpression) -> str:
        """The dotted name a base from outside the folder stands for, through the module's
        imports (`TestCase` of `from torch._dynamo.test_case import TestCase`)."""
        written = module.code(expr)
        head, _, rest = written.partition(".")
        binding = self.folder.resolve(module, head) if head.isidentifier() else None
        origin = binding.statement.origins.get(head) if isinstance(binding, Definition) and \
            binding.statement.kind == "import" else None
        if origin is None or origin.level:
            return written
        full = origin.module if origin.attr is None else f"{origin.module}.{origin.attr}"
        return f"{full}.{rest}" if rest else full

    def _abstract(self, cls: ClassRef) -> bool:
        """An ABC with abstract methods left: pytest does not collect it."""
        owners = self._classes(cls)
        abc = any(isinstance(a, str) and a.split(".")[-1] == "ABC" for a in self.mro(cls)) or any(
            "ABCMeta" in owner.module.code(k.value) for owner in owners for k in owner.node.keywords)
        return abc and any(self.lookup(cls, name) == (owner, item) for owner in owners
                           for name, item in self.members(owner).items() if _abstract_method(item))


def body(cls: cst.ClassDef) -> list[cst.BaseStatement]:
    return list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []


def member_names(module: Module, item: cst.BaseStatement) -> set[str]:
    if isinstance(item, (cst.FunctionDef, cst.ClassDef)):
        return {item.name.value}
    try:
        tree = parsing.parse(textwrap.dedent(module.code(item)))
    except SyntaxError:
        return set()
    return set(stored(tree.body[0])) if tree.body else set()


def _merge(sequences: list[list[Ancestor]], name: str) -> list[Ancestor]:
    """C3's merge of the bases' MROs and the bases themselves."""
    pending = [list(s) for s in sequences if s]
    merged: list[Ancestor] = []
    while pending:
        for sequence in pending:
            head = sequence[0]
            if not any(head in other[1:] for other in pending):
                break
        else:
            raise HierarchyError(f"{name}: its bases are in an order Python refuses (no consistent MRO)")
        merged.append(head)
        pending = [s[1:] if s[0] == head else s for s in pending]
        pending = [s for s in pending if s]
    return merged


def _abstract_method(item: cst.BaseStatement) -> bool:
    return isinstance(item, cst.FunctionDef) and any(_terminal(d.decorator) == "abstractmethod"
                                                     for d in item.decorators)


def _terminal(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call):
        node = node.func
    return node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
