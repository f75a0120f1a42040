"""Test files into programs: one standalone script per test that compiles something.

What is a test is what pytest collects (`harvest.classes`): the file's test functions and
the classes its namespace holds, each yielding every `test_*` along its MRO, once per
concrete class, the bases read from the modules beside the file that it imports
(`harvest.modules`). A unittest test method keeps its body and, of each class along its
class's MRO, what it reaches (set-up, helpers, class attributes such as a subclass's
`thetype = frozenset`); the framework base becomes `HarvestedChecks` (plain asserts,
`harvest.framework`), so `self.assertEqual` and friends are plain Python, and a runner at the
bottom plays unittest's part. A pytest test function keeps its body, `pytest.raises`
becomes `harvested_raises`, and the module calls it. Of the file and its siblings, a
program keeps only what its test reaches: imports, top-level functions, classes and
constants, transitively, and module-level configuration, in one namespace
(`harvest.assemble`). Parametrised tests give one program per parameter set, inherited
ones too; skipped and expected-to-fail tests are reported (whether a test compiles
anything is decided by running it: `Harvested.compiles_visibly` says what its text shows),
not written; a test that cannot be taken apart or made standalone costs that test only
(`ExtractionFailed`), a file that cannot be raises `ExtractionError`. Pure: the harvesting
process never imports the test files or their siblings.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from mutator.core import parsing
from mutator.harvest import framework
from mutator.harvest.assemble import AssemblyError, Placed, assemble
from mutator.harvest.classes import ClassRef, Hierarchy, HierarchyError
from mutator.harvest.modules import Definition, Folder, Module, ModuleObject, Siblings, names, no_siblings, \
    references, sibling_imports
from mutator.core.program import terminal_name

# torch.compile (not torch.compiler.*), torch._dynamo.optimize(_assert), torch's standard_test helper
_COMPILES = re.compile(r"\b(?:torch\.compile|torch\.compiler\.compile|_?dynamo\.optimize(?:_assert)?|standard_test)"
                       r"(?![\w.])")
_COMPILE_NAMES = frozenset({"standard_test", "optimize_assert", "compile"})  # when imported by name
_XFAIL = ("expectedFailure", "xfail", "expectedFailureDynamo")
# a test that branches on being compiled makes eager and compiled differ on purpose
_BY_DESIGN = re.compile(r"\bis_compiling\s*\(")
_PARAMETRIZE = ("parametrize",)
_CASE_BASES = ("TestCase",)


@dataclass(frozen=True, slots=True)
class Harvested:
    test_id: str  # "Tests::test_add", "Tests::test_add[n=2]", "test_free_function"
    source: str  # the program, without the provenance header
    # Read in its text: torch.compile, torch._dynamo.optimize(_assert), torch's compiling test
    # helpers. A test that names none of them may still compile (a decorator or helper of
    # another module's, a factory): whether it does is decided by running it.
    compiles_visibly: bool = True


@dataclass(frozen=True, slots=True)
class NotHarvested:
    test_id: str
    reason: str  # "skipped: ...", "expected to fail", ... ("compiles nothing" is decided by running it)


@dataclass(frozen=True, slots=True)
class ExtractionFailed:
    """A test that extraction could not take apart: a shape it does not expect, or a bug of ours."""

    test_id: str
    reason: str  # "extraction failed: TypeError: ..."


Extraction = Harvested | NotHarvested | ExtractionFailed


class ExtractionError(ValueError):
    """A test file that cannot be taken apart at all (libcst does not parse it, it nests too deeply)."""


def is_test_file(source: str, *, siblings: Siblings = no_siblings) -> bool:
    """Whether `source` defines unittest test classes or pytest test functions (its classes'
    bases followed into the modules beside it that it imports, read by `siblings`)."""
    try:
        tree = parsing.parse(source)
    except SyntaxError:
        return False
    if any(_test_class(node, tree) or _pytest_function(node) for node in tree.body):
        return True
    if not sibling_imports(tree):
        return False
    try:
        return any(True for _ in Extractor(Folder(source, siblings)).collected())
    except (cst.ParserSyntaxError, RecursionError):
        return False
    except Exception:  # noqa: BLE001 - a class whose bases cannot be followed (HierarchyError), or a
        # bug of ours reading them: extraction says which, for that class or that file
        return True


def extract(source: str, *, siblings: Siblings = no_siblings) -> list[Extraction]:
    """One extraction per test (per parameter set) of a test file, in pytest's order; raises
    ExtractionError when the file as a whole cannot be taken apart. `siblings` reads the
    modules beside it (the mixins it imports)."""
    try:
        return Extractor(Folder(source, siblings)).extractions()
    except Exception as exc:  # noqa: BLE001 - libcst refusing the file, ast's nesting limit, a shape of its
        # top level we never met or a bug of ours there (each test and class is guarded on its own):
        # it costs this file, never the harvest
        raise ExtractionError(f"cannot be taken apart ({one_line(exc)})") from None


class Extractor:
    """A test file taken apart: what pytest collects of it (read from its text, `extractions`), each
    test made a program (`method_tests`, `function_tests`, also for the tests an import collected)."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self.main = folder.main
        self.hierarchy = Hierarchy(folder)

    def extractions(self) -> list[Extraction]:
        found: list[Extraction] = []
        for name, item in self._namespace():
            if isinstance(item, cst.FunctionDef):
                found.extend(self.guarded(name, lambda: self._function(item)))
                continue
            try:
                tests = self.hierarchy.tests(item) if self.hierarchy.collected(name, item) else []
            except HierarchyError as exc:
                found.append(ExtractionFailed(name, f"extraction failed: {exc}"))
                continue
            except Exception as exc:  # noqa: BLE001 - a class shape we never met costs that class
                found.append(ExtractionFailed(name, f"extraction failed: {one_line(exc)}"))
                continue
            for owner, test in tests:
                found.extend(self.guarded(f"{name}::{test.name.value}",
                                          lambda: self._method(name, item, owner, test)))
        return found

    def collected(self) -> Iterator[str]:
        """The names of the classes pytest collects (raises HierarchyError for one it cannot follow)."""
        return (name for name, item in self._namespace()
                if isinstance(item, ClassRef) and self.hierarchy.collected(name, item))

    def _namespace(self) -> Iterator[tuple[str, cst.FunctionDef | ClassRef]]:
        """The module's test functions and classes, in file order: its own classes and those it
        imports from beside it (pytest collects what the module's namespace holds at the end)."""
        main = self.main
        for statement in main.statements:
            node = statement.node
            if isinstance(node, cst.FunctionDef) and node.name.value.startswith("test"):
                yield node.name.value, node
            elif isinstance(node, cst.ClassDef):
                if node.name.value not in main.deleted and main.defined.get(node.name.value) is statement:
                    yield node.name.value, ClassRef(main, node)
            elif statement.kind == "import":
                for name in sorted(statement.binds, key=list(statement.origins).index):
                    if name in main.deleted or name in main.defined or main.imported[name] is not statement:
                        continue
                    try:
                        cls = self.hierarchy.class_of(self.folder.resolve(main, name))
                    except HierarchyError:
                        continue  # the classes inheriting from it say why
                    if cls is not None:
                        yield name, cls

    # -- unittest methods and pytest functions ---------------------------------------------
    def method_tests(self, test_id: str, bound: str, cls: ClassRef, owner: ClassRef, test: cst.FunctionDef,
                     given: list[tuple[str, dict[str, str]]] | None = None) -> list[Extraction]:
        """The test as a method of `cls` (bound to `bound` in the test file), defined by `owner`
        along its MRO: one program per parameter set, those `given` (each with its test id)
        or those its decorators give (and then its skip and expected-failure decorators count)."""
        members = self.hierarchy.members_for(cls, test.name.value)
        reached = [(k.module, item) for k, items in members.items() for item in items if item is not test]
        sets = self._parameter_sets(test_id, owner.module, test, reached, given)
        if isinstance(sets, NotHarvested):
            return [sets]
        classes = self.hierarchy.pruned(cls, members, {test: _without_parametrize(test)})
        placed = [Placed(k.module, k.node, node) for k, node in reversed(classes)]
        visibly = self._compiles([(owner.module, test), *reached])
        found: list[Extraction] = []
        for set_id, params in sets:
            arguments = _with_device(test, params)
            self._same_names(owner.module, arguments)
            found.append(Harvested(set_id, assemble(
                self.folder, placed, f'{framework.BASE_CLASS}.{framework.RUN}({bound}, "{test.name.value}", '
                                     f'{{{_mapping(arguments)}}})'), compiles_visibly=visibly))
        return found

    def function_tests(self, test_id: str, test: cst.FunctionDef,
                       given: list[tuple[str, dict[str, str]]] | None = None) -> list[Extraction]:
        """A test function of the test file, as `method_tests` a method."""
        sets = self._parameter_sets(test_id, self.main, test, [], given)
        if isinstance(sets, NotHarvested):
            return [sets]
        placed = [Placed(self.main, test, _without_parametrize(test))]
        visibly = self._compiles([(self.main, test)])
        return [Harvested(set_id, assemble(
            self.folder, placed, f"{test.name.value}({_arguments(_with_device(test, params))})"),
            compiles_visibly=visibly) for set_id, params in sets]

    def guarded(self, test_id: str, extraction: Callable[[], list[Extraction]]) -> list[Extraction]:
        """What `extraction` gives, or the reason it failed: one test's failure costs that test."""
        try:
            return extraction()
        except AssemblyError as exc:
            return [ExtractionFailed(test_id, f"extraction failed: cannot stand alone: {exc}")]
        except Exception as exc:  # noqa: BLE001 - a test file is foreign input run through our code:
            # a shape we never met, or a bug of ours, in one test must cost that test, not the harvest
            return [ExtractionFailed(test_id, f"extraction failed: {one_line(exc)}")]

    def _method(self, name: str, cls: ClassRef, owner: ClassRef, test: cst.FunctionDef) -> list[Extraction]:
        return self.method_tests(f"{name}::{test.name.value}", name, cls, owner, test)

    def _function(self, test: cst.FunctionDef) -> list[Extraction]:
        return self.function_tests(test.name.value, test)

    def _parameter_sets(self, test_id: str, module: Module, test: cst.FunctionDef,
                        members: list[tuple[Module, cst.BaseStatement]],
                        given: list[tuple[str, dict[str, str]]] | None) -> list[tuple[str, dict[str, str]]] | \
            NotHarvested:
        """The parameter sets to harvest the test with, each with its test id, or why it is not harvested."""
        if any(_BY_DESIGN.search(code) for _, code in self._reached([(module, test), *members])):
            return NotHarvested(test_id, "branches on is_compiling(): eager and compiled differ by design")
        sets = given
        if sets is None:
            why = _marked(module, test)
            if why:
                return NotHarvested(test_id, why)
            read = _parameter_sets(test, lambda name: self._definition(module, name))
            if read is None:
                return NotHarvested(test_id, "parametrised over values not written as a literal")
            sets = [(test_id + _suffix(params), params) for params in read]
        if not self._wrapped(module, test) and \
                not _standalone_params(test, [_with_device(test, params) for _, params in sets]):
            return NotHarvested(test_id, "takes arguments no parameter set gives (a pytest fixture)")
        return sets

    def _same_names(self, module: Module, params: dict[str, str]) -> None:
        """Parameter values of a test defined beside the test file name what the file does."""
        if module is self.main:
            return
        for name in {ref.partition(".")[0] for ref in references(" , ".join(params.values()))}:
            here, there = self.folder.resolve(self.main, name), self.folder.resolve(module, name)
            if (here.key if isinstance(here, Definition) else here) != \
                    (there.key if isinstance(there, Definition) else there):
                raise AssemblyError(f"its parameter values name {name} of {module.name}.py, which the test file "
                                    "does not")

    def _definition(self, module: Module, name: str) -> cst.BaseStatement | None:
        binding = self.folder.resolve(module, name)
        return binding.statement.node if isinstance(binding, Definition) and binding.statement.kind != "import" \
            else None

    def _compiles(self, nodes: list[tuple[Module, cst.CSTNode]]) -> bool:
        """Whether running these (and what they reach: helpers, decorators, methods) compiles."""
        return any(_COMPILES.search(code) or any(name in _COMPILE_NAMES and name in module.imported
                                                 for name in names(code)) for module, code in self._reached(nodes))

    def _reached(self, nodes: list[tuple[Module, cst.CSTNode]]) -> Iterator[tuple[Module, str]]:
        """The code of `nodes` and of every top-level definition of the folder's modules they
        reach, transitively, each with its module."""
        seen: set[tuple[Module, str]] = set()
        pending = [(module, module.code(node)) for module, node in nodes]
        while pending:
            module, code = pending.pop()
            yield module, code
            for ref in references(code):
                if (module, ref) in seen:
                    continue
                seen.add((module, ref))
                name, _, attr = ref.partition(".")
                binding = self.folder.resolve(module, name)
                if isinstance(binding, ModuleObject) and attr:
                    binding = self.folder.resolve(binding.module, attr)
                if isinstance(binding, Definition) and binding.statement.kind != "import":
                    pending.append((binding.module, binding.module.code(binding.statement.node)))

    def _wrapped(self, module: Module, test: cst.FunctionDef) -> bool:
        """Whether a decorator of the file's own makes the test (like a `make_test` helper):
        what the test function itself takes is then the decorator's business."""
        return any(_cst_terminal(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                   in module.defined for d in test.decorators)



def _marked(module: Module, test: cst.FunctionDef) -> str | None:
    """Why the test's own decorators say it is not run as it is: skipped, expected to fail."""
    for decorator in test.decorators:
        text = module.code(decorator.decorator)
        if any(mark in text for mark in _XFAIL):
            return "expected to fail"
        if "mark.skip(" in text or text.endswith("mark.skip") or text.startswith("unittest.skip(") \
                or text.startswith("skip("):
            return "skipped: " + text
    return None


def _with_device(test: cst.FunctionDef, params: dict[str, str]) -> dict[str, str]:
    """A device-generic test (`def test_x(self, device)`) runs on the CPU."""
    takes_device = any(p.name.value == "device" and p.default is None for p in test.params.params)
    return {**params, "device": '"cpu"'} if takes_device and "device" not in params else params


def _standalone_params(test: cst.FunctionDef, sets: list[dict[str, str]]) -> bool:
    params = [p.name.value for p in test.params.params if p.name.value != "self" and p.default is None]
    return all(set(params) <= set(values) for values in sets)


def _parameter_sets(test: cst.FunctionDef, definition: Callable[[str], cst.BaseStatement | None]
                    ) -> list[dict[str, str]] | None:
    """The parameter sets a parametrize decorator gives (source text per argument), [{}] for none;
    `definition`: the top-level statement a name of the test's module stands for."""
    sets: list[dict[str, str]] = [{}]
    for decorator in test.decorators:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and _cst_terminal(call.func) in _PARAMETRIZE and len(call.args) >= 2):
            continue
        names_node, values_node = call.args[0].value, call.args[1].value
        if not isinstance(names_node, cst.SimpleString):
            return None
        names = [n.strip() for n in names_node.evaluated_value.split(",") if n.strip()]  # type: ignore[union-attr]
        values = _literal_items(values_node, definition)
        if values is None:
            return None
        rows: list[dict[str, str]] = []
        for value in values:
            items = _literal_items(value, lambda name: None) if len(names) > 1 else [value]
            if items is None or len(items) != len(names):
                return None
            rows.append({n: cst.Module([]).code_for_node(v) for n, v in zip(names, items)})
        sets = [{**old, **row} for old in sets for row in rows]
    return sets


def _literal_items(node: cst.BaseExpression, definition: Callable[[str], cst.BaseStatement | None]
                   ) -> list[cst.BaseExpression] | None:
    if isinstance(node, (cst.List, cst.Tuple)):
        return [e.value for e in node.elements]
    statement = definition(node.value) if isinstance(node, cst.Name) else None  # a top-level list of parameters
    if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
        return _literal_items(statement.body[0].value, lambda name: None)
    return None


def _without_parametrize(test: cst.FunctionDef) -> cst.FunctionDef:
    return test.with_changes(decorators=[d for d in test.decorators
                                         if not (isinstance(d.decorator, cst.Call)
                                                 and _cst_terminal(d.decorator.func) in _PARAMETRIZE)])


def _test_class(node: ast.stmt, tree: ast.Module, seen: frozenset[str] = frozenset()) -> bool:
    """A TestCase (directly or through the file's own classes), or a pytest `Test*` class
    with tests: the quick look at a file of its own. `seen`: the classes already on the
    way, so bases that name each other end."""
    if not isinstance(node, ast.ClassDef):
        return False
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    seen = seen | {node.name}
    for base in node.bases:
        name = terminal_name(base)
        if name.endswith(_CASE_BASES) or name in local and name not in seen and _test_class(local[name], tree, seen):
            return True
    return node.name.startswith("Test") and any(
        isinstance(item, ast.FunctionDef) and item.name.startswith("test") for item in node.body)


def _pytest_function(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name.startswith("test")


def _cst_terminal(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return ""


def one_line(exc: BaseException) -> str:
    """An exception as a report's reason: `Type: message` on one line, short enough to list."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]


def _mapping(params: dict[str, str]) -> str:
    return ", ".join(f'"{k}": {v}' for k, v in params.items())


def _arguments(params: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _suffix(params: dict[str, str]) -> str:
    return "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]" if params else ""
