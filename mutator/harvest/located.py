"""Programs for the tests an import collected (`harvest.collection`), each found in the
folder's text by where its code lives.

A collected test names its class as the module's namespace has it and the function its
code comes from. The class is the first along its MRO that the folder's text writes (a
class `instantiate_device_type_tests` made stands for its generic class); members the
import copied onto a class from another class of the folder (a `setattr` loop over a
mixin's `__dict__`) are that class's bases in the program, with those members only. A test
whose name the text's class has (`test_add`) is made as the text shows it; one it does not
have (copied, or named by a parametrisation: `test_add_n_2`) is its function, found by its
qualified name, run with the parameters the collection read. Skips and expected failures
are the ones the import evaluated; a test on another device than the CPU is not harvested.
"""

from __future__ import annotations

import os
from collections import defaultdict

import libcst as cst

from mutator.harvest.assemble import AssemblyError
from mutator.harvest.classes import ClassRef, Hierarchy
from mutator.harvest.collection import Collected, CollectedTest, Site
from mutator.harvest.extract import Extraction, ExtractionError, ExtractionFailed, Extractor, NotHarvested, one_line
from mutator.harvest.modules import Definition, Folder, Module, ModuleObject, Siblings


def extract_collected(source: str, collection: Collected, *, path: str, siblings: Siblings) -> list[Extraction]:
    """One extraction per collected test (per parameter set), in the collection's order;
    raises ExtractionError when the file as a whole cannot be taken apart."""
    try:
        return _Located(Extractor(Folder(source, siblings)), collection, path).extractions()
    except Exception as exc:  # noqa: BLE001 - as `extract`: it costs this file, never the harvest
        raise ExtractionError(f"cannot be taken apart ({one_line(exc)})") from None


class _Unlocated(Exception):
    """A collected test whose code the folder's text does not have where the collection says."""


class _Located:
    def __init__(self, extractor: Extractor, collection: Collected, path: str) -> None:
        self.extractor = extractor
        self.folder: Folder = extractor.folder
        self.hierarchy: Hierarchy = extractor.hierarchy
        self.collection = collection
        self.path = os.path.realpath(path)
        self._copied: set[ClassRef] = set()

    def extractions(self) -> list[Extraction]:
        found: list[Extraction] = []
        for test in self.collection.tests:
            found.extend(self.extractor.guarded(test.test_id, lambda: self._extraction(test)))
        return found

    def _extraction(self, test: CollectedTest) -> list[Extraction]:
        if test.broken:
            return [ExtractionFailed(test.test_id, f"extraction failed: collecting it: {test.broken}")]
        if test.device not in (None, "cpu"):
            return [NotHarvested(test.test_id, f"runs on {test.device}: harvest takes a device-generic test's "
                                               "CPU instance only")]
        if test.skip:
            return [NotHarvested(test.test_id, f"skipped: {test.skip}")]
        if test.xfail:
            return [NotHarvested(test.test_id, "expected to fail")]
        try:
            return self._method(test) if test.cls else self._function(test)
        except _Unlocated as exc:
            return [ExtractionFailed(test.test_id, f"extraction failed: {exc}")]

    def _method(self, test: CollectedTest) -> list[Extraction]:
        cls = self._written_class(test)
        bound = self._name_in(self.folder.main, cls)
        if bound is None:
            raise _Unlocated(f"its class {cls.name} ({cls.module.name}.py) has no name in the test file")
        if test.params is None:
            return [NotHarvested(test.test_id, f"parametrised: {test.why}")]
        found = self.hierarchy.lookup(cls, test.attribute)
        if found is not None and _is_def(found[1], test.attribute):
            owner, node = found
            return self.extractor.method_tests(test.test_id, bound, cls, owner, node, _given(test))
        owner, node = self._function_site(test, cls)
        return self.extractor.method_tests(test.test_id, bound, cls, owner, node, [(test.test_id, dict(test.params))])

    def _function(self, test: CollectedTest) -> list[Extraction]:
        defined = self.folder.main.defined.get(test.attribute)
        node = defined.node if defined is not None else None
        if not _is_def(node, test.attribute):
            return [NotHarvested(test.test_id, "a test function the test file imports: harvest takes the test "
                                               "file's own")]
        if test.params is None:
            return [NotHarvested(test.test_id, f"parametrised: {test.why}")]
        return self.extractor.function_tests(test.test_id, node, _given(test))  # type: ignore[arg-type]

    # -- where the code lives ------------------------------------------------------------
    def _written_class(self, test: CollectedTest) -> ClassRef:
        """The first class along the test's class's MRO that the text writes, with the members
        the import copied onto it (and onto the classes made from it)."""
        pending: list[Site] = []
        written: ClassRef | None = None
        for site in test.classes:
            pending.append(site)
            cls = self._class_at(site)
            if cls is not None:
                self._copy_onto(cls, pending)  # and onto the written classes further along its MRO
                written, pending = written or cls, []
        if written is not None:
            return written
        raise _Unlocated(f"its class {test.cls} is made at import time from no class the folder's text writes")

    def _copy_onto(self, cls: ClassRef, sites: list[Site]) -> None:
        """Tell the hierarchy what the import copied onto `cls` (`sites`: it and the classes
        made from it), once: copied functions by where their code is; other copied members
        by which of those classes defines them."""
        if cls in self._copied:
            return
        names: dict[ClassRef, set[str]] = defaultdict(set)
        held: set[str] = set()
        for site in sites:
            collected = self.collection.cls(site)
            if collected is None:
                continue
            held.update(collected.members)
            for name, source in collected.copied:
                origin = self._class_at(source)
                if origin is not None and origin != cls:
                    names[origin].add(name)
        own = set(self.hierarchy.members(cls))
        for name in held - own - {n for copied in names.values() for n in copied}:
            origin = next((o for o in names if name in self.hierarchy.members(o)), None)
            if origin is not None:
                names[origin].add(name)
        written = {origin: self._name_in(cls.module, origin) for origin in names}
        unnamed = next((origin for origin, name in written.items() if name is None), None)
        if unnamed is not None:  # raised for each of its tests, never half registered
            raise AssemblyError(f"{cls.name} gets members of {unnamed.name} ({unnamed.module.name}.py) at import "
                                f"time, which {cls.module.name or 'the test file'}.py does not name")
        for origin, members in names.items():
            self.hierarchy.copy_onto(cls, origin, frozenset(members), written[origin])  # type: ignore[arg-type]
        self._copied.add(cls)

    def _function_site(self, test: CollectedTest, cls: ClassRef) -> tuple[ClassRef, cst.FunctionDef]:
        """The class along `cls`'s MRO (a copy onto it included) and the method the test's code is."""
        site = test.function
        if site is None:
            raise _Unlocated("its test is no Python function")
        owner_name, _, name = site.qualname.rpartition(".")
        written = self._class_at(Site(site.file, owner_name)) if owner_name else None
        if written is None:
            raise _Unlocated(f"its code ({site.qualname}, {os.path.basename(site.file)}:{site.line}) is no method "
                             "of a class the folder's text writes")
        owner = next((a for a in self.hierarchy.mro(cls) if isinstance(a, ClassRef) and a.node is written.node
                      and name in self.hierarchy.members(a)), None)
        node = self.hierarchy.members(owner).get(name) if owner is not None else None
        if owner is None or not _is_def(node, name):
            raise _Unlocated(f"its code is {site.qualname} ({os.path.basename(site.file)}:{site.line}), which is "
                             f"neither along {cls.name}'s MRO nor copied onto it")
        return owner, node  # type: ignore[return-value]

    def _class_at(self, site: Site) -> ClassRef | None:
        module = self._module_at(site.file)
        statement = module.defined.get(site.qualname) if module is not None else None
        if statement is None or not isinstance(statement.node, cst.ClassDef) or \
                statement.node.name.value != site.qualname:
            return None
        return ClassRef(module, statement.node)

    def _module_at(self, file: str) -> Module | None:
        path = os.path.realpath(file)
        if path == self.path:
            return self.folder.main
        if os.path.dirname(path) != os.path.dirname(self.path) or not path.endswith(".py"):
            return None
        found = self.folder.sibling(os.path.basename(path)[:-3])
        return found if isinstance(found, Module) else None

    def _name_in(self, module: Module, cls: ClassRef) -> str | None:
        """How `module`'s code names `cls`: a name bound to it, or `alias.Class` of a sibling
        module bound to `alias`."""
        if module is cls.module and cls.name in module.defined:
            return cls.name
        for name in [*module.defined, *module.imported]:
            binding = self.folder.resolve(module, name)
            if isinstance(binding, Definition) and binding.statement.node is cls.node:
                return name
            if isinstance(binding, ModuleObject) and binding.module is cls.module and cls.name in cls.module.defined:
                return f"{name}.{cls.name}"
        return None


def _given(test: CollectedTest) -> list[tuple[str, dict[str, str]]] | None:
    """The parameter set of a test its class's text names: the collection's, or (None) those
    its decorators give, for pytest.mark.parametrize, which pytest expands when it collects."""
    return None if test.marks_parametrize else [(test.test_id, dict(test.params or ()))]


def _is_def(node: cst.CSTNode | None, name: str) -> bool:
    return isinstance(node, cst.FunctionDef) and node.name.value == name
