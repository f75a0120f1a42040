"""Test files into programs: one standalone script per test that compiles something.

A unittest test method keeps its body and its class, minus the other tests: the class's
framework base becomes `HarvestedChecks` (plain asserts, `harvest.checks`), so
`self.assertEqual` and friends are plain Python, and a runner at the bottom plays
unittest's part. A pytest test function keeps its body, `pytest.raises` becomes
`harvested_raises`, and the module calls it. Of the module, a program keeps only what
its test reaches: imports, module-level functions, classes and constants, transitively,
and module-level configuration. Parametrised tests give one program per parameter set;
skipped and expected-to-fail tests and tests that compile nothing are reported, not
written; a test that cannot be taken apart costs that test only (`ExtractionFailed`), a
file that cannot be raises `ExtractionError`. Pure: the harvesting process never imports
the test files.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from mutator import syntax
from mutator.harvest import checks
from mutator.program import terminal_name

# torch.compile (not torch.compiler.*), torch._dynamo.optimize(_assert), torch's standard_test helper
_COMPILES = re.compile(r"\b(?:torch\.compile|torch\.compiler\.compile|_?dynamo\.optimize(?:_assert)?|standard_test)"
                       r"(?![\w.])")
_COMPILE_NAMES = frozenset({"standard_test", "optimize_assert", "compile"})  # when imported by name
_STANDARD_TEST = "standard_test"
_SET_UP = ("setUp", "tearDown", "setUpClass", "tearDownClass")
_XFAIL = ("expectedFailure", "xfail", "expectedFailureDynamo")
# a test that branches on being compiled makes eager and compiled differ on purpose
_BY_DESIGN = re.compile(r"\bis_compiling\s*\(")
_PARAMETRIZE = ("parametrize",)
_RUNNERS = frozenset({"run_tests", "main", "instantiate_parametrized_tests", "instantiate_device_type_tests"})
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__"}
_CASE_BASES = ("TestCase",)


@dataclass(frozen=True, slots=True)
class Harvested:
    test_id: str  # "Tests::test_add", "Tests::test_add[n=2]", "test_free_function"
    source: str  # the program, without the provenance header


@dataclass(frozen=True, slots=True)
class NotHarvested:
    test_id: str
    reason: str  # "compiles nothing", "skipped: ...", "expected to fail", ...


@dataclass(frozen=True, slots=True)
class ExtractionFailed:
    """A test that extraction could not take apart: a shape it does not expect, or a bug of ours."""

    test_id: str
    reason: str  # "extraction failed: TypeError: ..."


Extraction = Harvested | NotHarvested | ExtractionFailed


class ExtractionError(ValueError):
    """A test file that cannot be taken apart at all (libcst does not parse it, it nests too deeply)."""


def is_test_file(source: str) -> bool:
    """Whether `source` defines unittest test classes or pytest test functions."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return False
    return any(_test_class(node, tree) or _pytest_function(node) for node in tree.body)


def extract(source: str) -> list[Extraction]:
    """One extraction per test (per parameter set) of a test file, in file order; raises
    ExtractionError when the file as a whole cannot be taken apart."""
    try:
        module = _Module(source)
    except (cst.ParserSyntaxError, SyntaxError, RecursionError) as exc:
        raise ExtractionError(f"cannot be taken apart ({one_line(exc)})") from None
    return module.extractions()


@dataclass
class _Statement:
    node: cst.BaseStatement
    binds: frozenset[str]
    uses: frozenset[str]
    kind: str  # import, definition, config, runner, main, other


class _Module:
    def __init__(self, source: str) -> None:
        self.tree = cst.parse_module(source)
        self.statements = [self._describe(node) for node in self.tree.body]
        self.defined = {name: s for s in self.statements if s.kind != "import" for name in s.binds}
        self.imported = {name: s for s in self.statements if s.kind == "import" for name in s.binds}
        self._py = syntax.parse(source)
        self.test_classes = {node.name for node in self._py.body if _test_class(node, self._py)}

    def extractions(self) -> list[Extraction]:
        found: list[Extraction] = []
        for cls, test in self._tests():
            try:
                found.extend(self._method(cls, test) if cls is not None else self._function(test))
            except Exception as exc:  # noqa: BLE001 - a test file is foreign input run through our code:
                # a shape we never met, or a bug of ours, in one test must cost that test, not the harvest
                found.append(ExtractionFailed(_test_id(cls, test), f"extraction failed: {one_line(exc)}"))
        return found

    def _tests(self) -> Iterator[tuple[cst.ClassDef | None, cst.FunctionDef]]:
        """Every test of the file, in file order, with its class (None: a pytest function)."""
        for statement in self.statements:
            node = statement.node
            if isinstance(node, cst.ClassDef) and node.name.value in self.test_classes:
                for item in _body(node):
                    if isinstance(item, cst.FunctionDef) and item.name.value.startswith("test"):
                        yield node, item
            elif isinstance(node, cst.FunctionDef) and node.name.value.startswith("test"):
                yield None, node

    # -- unittest methods and pytest functions ---------------------------------------------
    def _method(self, cls: cst.ClassDef, test: cst.FunctionDef) -> list[Extraction]:
        test_id = _test_id(cls, test)
        members = _class_context(self.tree, cls, test)
        sets = self._parameter_sets(test_id, test, members)
        if isinstance(sets, NotHarvested):
            return [sets]
        kept = cst.ensure_type(cls.with_changes(
            bases=_bases(cls),
            body=cls.body.with_changes(body=[_without_parametrize(item) if item is test else item
                                             for item in _body(cls) if item is test or item in members]),
        ), cst.ClassDef)
        return [Harvested(test_id + _suffix(params), self._program(
            kept, f'{checks.BASE_CLASS}.{checks.RUN}({cls.name.value}, "{test.name.value}", '
                  f'{{{_mapping(_with_device(test, params))}}})'))
            for params in sets]

    def _function(self, test: cst.FunctionDef) -> list[Extraction]:
        test_id = test.name.value
        sets = self._parameter_sets(test_id, test, [])
        if isinstance(sets, NotHarvested):
            return [sets]
        kept = _without_parametrize(test)
        return [Harvested(test_id + _suffix(params), self._program(
            kept, f"{test.name.value}({_arguments(_with_device(test, params))})")) for params in sets]

    def _parameter_sets(self, test_id: str, test: cst.FunctionDef, members: list[cst.BaseStatement]
                        ) -> list[dict[str, str]] | NotHarvested:
        """The parameter sets to harvest the test with, or why it is not harvested."""
        why = self._not_harvestable(test, *members) or (None if self._compiles(test, *members) else "compiles nothing")
        if why:
            return NotHarvested(test_id, why)
        sets = _parameter_sets(test, self.defined)
        if sets is None:
            return NotHarvested(test_id, "parametrised over values not written as a literal")
        if not self._wrapped(test) and not _standalone_params(test, [_with_device(test, p) for p in sets]):
            return NotHarvested(test_id, "takes arguments no parameter set gives (a pytest fixture)")
        return sets

    # -- the program ---------------------------------------------------------------------
    def _program(self, test_node: cst.BaseStatement, runner: str) -> str:
        """Imports, the plain checks, what the test reaches of the module, the test, its runner."""
        test_node = cst.ensure_type(test_node.visit(_Standalone()), cst.BaseStatement)
        own_name = cst.ensure_type(test_node, cst.FunctionDef | cst.ClassDef).name.value  # type: ignore[arg-type]
        needed = self._closure((_uses(test_node) | _uses_code(runner)) - {own_name})  # parameter values name things
        configs = [s.node for s in self.statements if s.kind == "config"]
        definitions = [s.node.visit(_Standalone()) for s in self.statements
                       if s.kind == "definition" and s.binds & needed]
        own = [_code(node) for node in [*configs, *definitions, test_node]]
        pieces = checks.needed("\n".join(own))
        imports = [s.node for s in self.statements if s.kind == "import" and s.binds & needed]
        imports += [cst.parse_statement(f"import {name}") for name in checks.IMPORTS
                    if re.search(rf"\b{re.escape(name)}\.", "\n".join(pieces))
                    and not any(_imports_module(node, name) for node in imports)]
        parts = ["\n".join(_code(node) for node in imports), *pieces, *own,
                 f'if __name__ == "__main__":\n    {runner}']
        return "\n\n\n".join(part for part in parts if part) + "\n"

    def _closure(self, names: frozenset[str]) -> frozenset[str]:
        """Every module-level name the test reaches, through definitions that use others."""
        needed: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name in needed:
                continue
            needed.add(name)
            statement = self.defined.get(name)
            if statement is not None:
                pending.extend(statement.uses)
        return frozenset(needed)

    def _compiles(self, *nodes: cst.CSTNode) -> bool:
        """Whether running these (and what they reach: helpers, decorators, methods) compiles."""
        return any(_COMPILES.search(code) or any(name in _COMPILE_NAMES and name in self.imported
                                                 for name in _names(code)) for code in self._reached(nodes))

    def _reached(self, nodes: tuple[cst.CSTNode, ...]) -> Iterator[str]:
        """The code of `nodes` and of every module-level definition they reach, transitively."""
        seen: set[str] = set()
        pending = [self.tree.code_for_node(node) for node in nodes]
        while pending:
            code = pending.pop()
            yield code
            for name in _names(code) - seen:
                seen.add(name)
                statement = self.defined.get(name)
                if statement is not None:
                    pending.append(self.tree.code_for_node(statement.node))

    def _wrapped(self, test: cst.FunctionDef) -> bool:
        """Whether a decorator of the file's own makes the test (like a `make_test` helper):
        what the test function itself takes is then the decorator's business."""
        return any(_cst_terminal(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                   in self.defined for d in test.decorators)

    def _not_harvestable(self, test: cst.FunctionDef, *members: cst.CSTNode) -> str | None:
        if any(_BY_DESIGN.search(code) for code in self._reached((test, *members))):
            return "branches on is_compiling(): eager and compiled differ by design"
        for decorator in test.decorators:
            text = self.tree.code_for_node(decorator.decorator)
            if any(mark in text for mark in _XFAIL):
                return "expected to fail"
            if "mark.skip(" in text or text.endswith("mark.skip") or text.startswith("unittest.skip(") \
                    or text.startswith("skip("):
                return "skipped: " + text
        return None

    def _describe(self, node: cst.BaseStatement) -> _Statement:
        code = self.tree.code_for_node(node)
        parsed = syntax.parse(textwrap.dedent(code)).body
        first = parsed[0] if parsed else None
        binds: frozenset[str] = frozenset(_stored(first)) if first is not None else frozenset()
        kind = "definition" if binds else "other"
        if isinstance(first, (ast.Import, ast.ImportFrom)):
            binds = frozenset((a.asname or a.name).split(".")[0] for a in first.names if a.name != "*")
            kind = "import"
        elif isinstance(first, (ast.Assign, ast.AugAssign)) and not binds:
            kind = "config"  # `torch._dynamo.config.x = y` at module level
        elif isinstance(first, ast.If) and _is_main_guard(first):
            binds, kind = frozenset(), "main"
        elif isinstance(first, ast.Expr) and isinstance(first.value, ast.Call) and \
                terminal_name(first.value.func) in _RUNNERS:
            kind = "runner"
        return _Statement(node, binds, _uses(node.visit(_Standalone())), kind)


class _Standalone(cst.CSTTransformer):
    """What needs a test framework, rewritten to plain Python: `pytest.raises(E, match=...)`
    -> `harvested_raises(E, match=...)`; torch's `standard_test(self, fn, nargs)` ->
    `harvested_standard_test(...)`, which compiles through torch.compile like the test's own code."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "raises" and \
                isinstance(func.value, cst.Name) and func.value.value == "pytest":
            return updated.with_changes(func=cst.Name(checks.RAISES))
        if _cst_terminal(func) == _STANDARD_TEST:
            return updated.with_changes(func=cst.Name(checks.STANDARD_TEST))
        return updated


def _class_context(tree: cst.Module, cls: cst.ClassDef, test: cst.FunctionDef) -> list[cst.BaseStatement]:
    """The class's members a test needs: set-up and tear-down, and what it (transitively) reads
    as `self.name` or `cls.name` (helpers, class attributes); never the other tests."""
    members = {name: item for item in _body(cls) if not _is_test(item) for name in _member_names(item)}
    needed: list[cst.BaseStatement] = []
    pending = [test] + [members[name] for name in _SET_UP if name in members]
    while pending:
        item = pending.pop()
        if item is not test and item not in needed:
            needed.append(item)
        code = tree.code_for_node(item)
        for name in re.findall(r"\b(?:self|cls)\.(\w+)", code):
            member = members.get(name)
            if member is not None and member not in needed and member is not item:
                pending.append(member)
    order = _body(cls)
    return sorted(needed, key=order.index)


def _member_names(item: cst.BaseStatement) -> set[str]:
    try:
        tree = syntax.parse(textwrap.dedent(cst.Module([]).code_for_node(item)))
    except SyntaxError:
        return set()
    return set(_stored(tree.body[0])) if tree.body else set()


def _stored(node: ast.stmt) -> set[str]:
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


def _with_device(test: cst.FunctionDef, params: dict[str, str]) -> dict[str, str]:
    """A device-generic test (`def test_x(self, device)`) runs on the CPU."""
    takes_device = any(p.name.value == "device" and p.default is None for p in test.params.params)
    return {**params, "device": '"cpu"'} if takes_device and "device" not in params else params


def _standalone_params(test: cst.FunctionDef, sets: list[dict[str, str]]) -> bool:
    params = [p.name.value for p in test.params.params if p.name.value != "self" and p.default is None]
    return all(set(params) <= set(values) for values in sets)


def _parameter_sets(test: cst.FunctionDef, defined: dict[str, _Statement]) -> list[dict[str, str]] | None:
    """The parameter sets a parametrize decorator gives (source text per argument), [{}] for none."""
    sets: list[dict[str, str]] = [{}]
    for decorator in test.decorators:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and _cst_terminal(call.func) in _PARAMETRIZE and len(call.args) >= 2):
            continue
        names_node, values_node = call.args[0].value, call.args[1].value
        if not isinstance(names_node, cst.SimpleString):
            return None
        names = [n.strip() for n in names_node.evaluated_value.split(",") if n.strip()]  # type: ignore[union-attr]
        values = _literal_items(values_node, defined)
        if values is None:
            return None
        rows: list[dict[str, str]] = []
        for value in values:
            items = _literal_items(value, defined) if len(names) > 1 else [value]
            if items is None or len(items) != len(names):
                return None
            rows.append({n: cst.Module([]).code_for_node(v) for n, v in zip(names, items)})
        sets = [{**old, **row} for old in sets for row in rows]
    return sets


def _literal_items(node: cst.BaseExpression, defined: dict[str, _Statement]) -> list[cst.BaseExpression] | None:
    if isinstance(node, (cst.List, cst.Tuple)):
        return [e.value for e in node.elements]
    if isinstance(node, cst.Name) and node.value in defined:  # a module-level list of parameters
        statement = defined[node.value].node
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            return _literal_items(statement.body[0].value, {})
    return None


def _without_parametrize(test: cst.FunctionDef) -> cst.FunctionDef:
    return test.with_changes(decorators=[d for d in test.decorators
                                         if not (isinstance(d.decorator, cst.Call)
                                                 and _cst_terminal(d.decorator.func) in _PARAMETRIZE)])


def _bases(cls: cst.ClassDef) -> list[cst.Arg]:
    """A test framework's TestCase base becomes HarvestedChecks (a plain pytest class gets it);
    mixins of the file stay."""
    bases = [arg.with_changes(value=cst.Name(checks.BASE_CLASS)) if _cst_terminal(arg.value).endswith(_CASE_BASES)
             else arg for arg in cls.bases]
    if not any(_cst_terminal(arg.value) == checks.BASE_CLASS for arg in bases):
        bases.append(cst.Arg(cst.Name(checks.BASE_CLASS)))
    return bases


def _body(cls: cst.ClassDef) -> list[cst.BaseStatement]:
    return list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []


def _is_test(item: cst.CSTNode) -> bool:
    return isinstance(item, cst.FunctionDef) and item.name.value.startswith("test")


def _test_class(node: ast.stmt, tree: ast.Module, seen: frozenset[str] = frozenset()) -> bool:
    """A TestCase (directly or through the file's own classes), or a pytest `Test*` class.
    `seen`: the classes already on the way, so bases that name each other end."""
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


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _uses(node: cst.CSTNode) -> frozenset[str]:
    return _uses_code(cst.Module([]).code_for_node(node))


def _uses_code(code: str) -> frozenset[str]:
    return frozenset(_names(code) - _BUILTINS)


def _names(code: str) -> set[str]:
    """Names a piece of code loads (roots of attribute chains included)."""
    try:
        tree = syntax.parse(textwrap.dedent(code))
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _imports_module(node: cst.CSTNode, module: str) -> bool:
    """Whether `node` is `import module` (with more names or `as` allowed)."""
    code = _code(node)
    return bool(re.match(rf"import (?:[\w.]+\s*,\s*)*{re.escape(module)}(?:\s|,|$)", code))


def _code(node: cst.CSTNode) -> str:
    """A statement's source, without the blank lines before it."""
    return cst.Module([]).code_for_node(node).strip("\n")


def _cst_terminal(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return ""


def _test_id(cls: cst.ClassDef | None, test: cst.FunctionDef) -> str:
    return f"{cls.name.value}::{test.name.value}" if cls is not None else test.name.value


def one_line(exc: BaseException) -> str:
    """An exception as a report's reason: `Type: message` on one line, short enough to list."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]


def _mapping(params: dict[str, str]) -> str:
    return ", ".join(f'"{k}": {v}' for k, v in params.items())


def _arguments(params: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _suffix(params: dict[str, str]) -> str:
    return "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]" if params else ""
