"""What matters: after reduction, which constructs left in the program the bug needs.

A minimal program is minimal in size, not in explanation: a maintainer's first questions
are "does it need X? does it happen without Y?". For each construct of the reduced
program (a class's base, a decorator, a context manager, a function transform such as
`vmap`, a generator expression, a graph break, a compile option, a format spec, a
method of a class, a `getattr`/`setattr` spelled as a builtin call), its removal and
its neighbours (a `set` subclass becomes a `frozenset` subclass or a plain `set`, a
generator a list comprehension, `no_grad` `enable_grad`) are each run, eager and
compiled, and judged with the finding's predicate:

- *still fails*: the same signature: the change does not matter;
- *passes*: eager and compiled agree: what was changed is what the bug needs;
- *fails otherwise*: another finding (kept as a note: it is not this bug);
- *changes the program*: the eager run now ends otherwise (a NameError: the change
  broke the program, and says nothing about the bug).

A construct *matters* when some change of it passes, and does not when every change
that kept the program working still fails. Constructs the reduction removed from the
original program did not matter either (the reduced program fails without them); they
are listed for free. Probes are budgeted (`budget` variants per finding; a variant that
passes is run a second time, so a flaky pass is not taken for an explanation) and
cached by source within a run.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from mutator.judge.check import CheckResult, Runner
from mutator.findings.store import Signature
from mutator.mutation.tree import DISPLAY_KINDS, code, dotted
from mutator.core.observation import ExecResult, Mode
from mutator.judge.oracle import Oracle
from mutator.core.program import Program, ProgramError
from mutator.reduce.reducer import Target, admissible, ends

DEFAULT_BUDGET = 24

STILL_FAILS = "still fails"
PASSES = "passes"
FAILS_OTHERWISE = "fails otherwise"
BREAKS_PROGRAM = "changes the program"

# A base class and the bases it is swapped for: the containers' neighbours.
_BASE_SIBLINGS: dict[str, tuple[str, ...]] = {
    "set": ("frozenset",), "frozenset": ("set",), "list": ("tuple",), "tuple": ("list",),
    "dict": ("collections.OrderedDict",), "OrderedDict": ("dict",), "collections.OrderedDict": ("dict",),
    "int": ("float",), "float": ("int",), "str": ("bytes",),
}
# with-statement managers and their neighbours (leaf name -> replacement call)
_CONTEXT_SIBLINGS: dict[str, tuple[str, ...]] = {
    "no_grad": ("torch.enable_grad()", "torch.inference_mode()"),
    "enable_grad": ("torch.no_grad()",),
    "inference_mode": ("torch.no_grad()",),
    "set_grad_enabled": ("torch.no_grad()", "torch.enable_grad()"),
}
# function transforms: W(g, ...)(args) -> g(args), W(g, args) -> g(args) for the call forms
_TRANSFORMS_CURRIED = ("vmap", "grad", "jacrev", "jacfwd", "hessian", "grad_and_value")
_TRANSFORMS_DIRECT = ("checkpoint",)
_GRAPH_BREAKS = ("graph_break",)
# bases without which a class is no longer what its code needs (a Module's forward, a Function's apply)
_STRUCTURAL_BASES = ("Module", "Function", "TestCase", "Exception", "Error", "Enum", "Protocol", "ABC")


@dataclass(frozen=True, slots=True)
class Probe:
    construct: str  # what it is about, in words that do not depend on the program's names
    change: str  # what the variant does to it
    source: str
    removal: bool = False  # the change takes the construct away (rather than swapping it)


@dataclass(frozen=True, slots=True)
class Row:
    construct: str
    change: str
    outcome: str  # STILL_FAILS, PASSES, FAILS_OTHERWISE, BREAKS_PROGRAM
    detail: str = ""  # the other signature, or how the eager run ended
    removal: bool = False  # the change took the construct away (else: swapped it for a neighbour)

    def as_json(self) -> dict[str, Any]:
        return dict(construct=self.construct, change=self.change, outcome=self.outcome, detail=self.detail[:200],
                    removal=self.removal)


@dataclass
class Matters:
    rows: list[Row] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # constructs of the original the reduction took away
    checks: int = 0  # runs spent (each eager or compiled run counts one)
    seconds: float = 0.0
    skipped: int = 0  # probes over the budget, not run

    @property
    def needed(self) -> list[str]:
        """Constructs some change of which makes the bug go away, in the order found."""
        return list(dict.fromkeys(row.construct for row in self.rows if row.outcome == PASSES))

    @property
    def not_needed(self) -> list[str]:
        """Constructs the bug stays without: a removal still fails, and no change passes."""
        return [c for c in self._unexplaining() if any(row.removal and row.outcome == STILL_FAILS
                                                       for row in self.rows if row.construct == c)]

    @property
    def any_neighbour(self) -> list[str]:
        """Constructs whose kind does not matter: every neighbour tried still fails, no change
        passes, and no removal told whether the construct itself is needed (it broke the
        program: a `try` whose body raises eagerly, say)."""
        return [c for c in self._unexplaining() if c not in self.not_needed
                and any(not row.removal and row.outcome == STILL_FAILS for row in self.rows if row.construct == c)]

    def _unexplaining(self) -> list[str]:
        passing = {row.construct for row in self.rows if row.outcome == PASSES}
        return list(dict.fromkeys(row.construct for row in self.rows if row.construct not in passing))

    def as_json(self) -> dict[str, Any]:
        return dict(rows=[row.as_json() for row in self.rows], removed=self.removed, needed=self.needed,
                    not_needed=self.not_needed, any_neighbour=self.any_neighbour, checks=self.checks,
                    seconds=round(self.seconds, 1), skipped=self.skipped)


# ---- the constructs of a program and their variants -------------------------------------------------------


def _dotted(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


def _leaf(node: cst.BaseExpression) -> str:
    return _dotted(node).rsplit(".", 1)[-1]


def _replaced(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode | cst.RemovalSentinel
              | cst.FlattenSentinel[Any]) -> str | None:
    try:
        return module.deep_replace(old, new).code  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a variant libcst cannot build is a variant not tried
        return None


def _without_statement(module: cst.Module, statement: cst.CSTNode) -> str | None:
    """The module without `statement`; a body left empty gets a `pass`."""
    class Remove(cst.CSTTransformer):
        @staticmethod
        def _body(original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
                  ) -> list[cst.BaseStatement]:
            kept = [new for old, new in zip(original, updated) if old is not statement]
            return kept or [cst.SimpleStatementLine([cst.Pass()])]

        def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
            if any(s is statement for s in original.body):
                return updated.with_changes(body=self._body(original.body, updated.body))
            return updated

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            if any(s is statement for s in original.body):
                return updated.with_changes(body=self._body(original.body, updated.body))
            return updated
    try:
        return module.visit(Remove()).code
    except Exception:  # noqa: BLE001
        return None


class _Collect(cst.CSTVisitor):
    def __init__(self) -> None:
        self.classes: list[cst.ClassDef] = []
        self.functions: list[cst.FunctionDef] = []
        self.withs: list[cst.With] = []
        self.calls: list[cst.Call] = []
        self.generators: list[cst.GeneratorExp] = []
        self.statements: list[cst.SimpleStatementLine] = []
        self.specs: list[cst.FormattedStringExpression] = []
        self.dicts: list[cst.Assign] = []
        self.trys: list[cst.Try] = []

    def visit_Try(self, node: cst.Try) -> None:
        self.trys.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def visit_With(self, node: cst.With) -> None:
        self.withs.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self.generators.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statements.append(node)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if node.format_spec or node.conversion:
            self.specs.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Name) and t.target.value == "COMPILE_KWARGS" for t in node.targets):
            self.dicts.append(node)


def probes(source: str) -> list[Probe]:
    """The variants of `source` that tell what matters, most telling first: compile options,
    graph breaks, bases, decorators, context managers, transforms, generators, format
    specs, then a class's methods and builtin calls."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return []
    found = _Collect()
    module.visit(found)
    out: list[Probe] = []
    out += _compile_options(module, found)
    out += _graph_breaks(module, found)
    out += _bases(module, found)
    out += _decorators(module, found)
    out += _contexts(module, found)
    out += _transforms(module, found)
    out += _generators(module, found)
    out += _format_specs(module, found)
    out += _handlers(module, found)
    out += _environment(module, found)
    out += _closure_cells(module, found)
    out += _methods(module, found)
    out += _builtin_calls(module, found)
    seen: set[str] = set()
    unique = []
    for probe in out:
        if probe.source != source and probe.source not in seen:
            seen.add(probe.source)
            unique.append(probe)
    return unique


def constructs(source: str) -> list[str]:
    """The constructs `probes` would ask about, by name, each once."""
    return list(dict.fromkeys(p.construct for p in probes(source)))


def _compile_options(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    entries: list[tuple[str, cst.BaseExpression, Callable[[cst.BaseExpression | None], str | None]]] = []
    for assign in found.dicts:
        value = assign.value
        if not isinstance(value, cst.Dict):
            continue
        for element in value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                key = element.key.evaluated_value
                def edit(new: cst.BaseExpression | None, element: cst.DictElement = element,
                         value: cst.Dict = value) -> str | None:
                    if new is None:
                        return _replaced(module, value, value.with_changes(
                            elements=[e for e in value.elements if e is not element]))
                    return _replaced(module, element, element.with_changes(value=new))
                entries.append((str(key), element.value, edit))
    for call in found.calls:
        if _dotted(call.func) in ("torch.compile", "compile") or _leaf(call.func) == "compile":
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in ("dynamic", "fullgraph", "mode", "options"):
                    def edit_arg(new: cst.BaseExpression | None, arg: cst.Arg = arg, call: cst.Call = call
                                 ) -> str | None:
                        if new is None:
                            return _replaced(module, call, call.with_changes(
                                args=[a for a in call.args if a is not arg]))
                        return _replaced(module, arg, arg.with_changes(value=new))
                    entries.append((arg.keyword.value, arg.value, edit_arg))
    for key, value, edit in entries:
        if key == "backend":
            continue  # the ablation answers for the backend
        construct = f"`{key}={code(value)}`"
        source = edit(None)
        if source is not None:
            yield Probe(construct, f"without `{key}=` (its default)", source, removal=True)
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            flipped = "False" if value.value == "True" else "True"
            source = edit(cst.Name(flipped))
            if source is not None:
                yield Probe(construct, f"with `{key}={flipped}`", source)


def _graph_breaks(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for statement in found.statements:
        calls = [s.value for s in statement.body if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call)]
        if calls and _leaf(calls[0].func) in _GRAPH_BREAKS:
            source = _without_statement(module, statement)
            if source is not None:
                yield Probe("a graph break", "without the graph break", source, removal=True)


def _bases(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for cls in found.classes:
        for arg in cls.bases:
            if arg.keyword is not None:
                continue
            base = _dotted(arg.value)
            if not base:
                continue
            construct = f"a `{base}` subclass"
            for sibling in _BASE_SIBLINGS.get(base, ()):
                source = _replaced(module, arg.value, cst.parse_expression(sibling))
                if source is not None:
                    if "." in sibling and not _imports(source, sibling.split(".")[0]):
                        source = f"import {sibling.split('.')[0]}\n" + source
                    yield Probe(construct, f"as a `{sibling}` subclass", source)
            if base in _BASE_SIBLINGS and len(cls.bases) == 1:
                alias = cst.parse_statement(f"{cls.name.value} = {base}\n")
                source = _replaced(module, cls, alias)
                if source is not None:
                    yield Probe(construct, f"as a plain `{base}` (`{cls.name.value} = {base}`)", source, removal=True)
            elif base != "object" and not base.endswith(_STRUCTURAL_BASES):
                source = _replaced(module, cls, cls.with_changes(
                    bases=[b for b in cls.bases if b is not arg], lpar=cst.MaybeSentinel.DEFAULT,
                    rpar=cst.MaybeSentinel.DEFAULT) if len(cls.bases) > 1 else cls.with_changes(
                    bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT))
                if source is not None:
                    yield Probe(f"base `{base}`", f"without the base `{base}`", source, removal=True)


def _imports(source: str, name: str) -> bool:
    return f"import {name}" in source


def _decorators(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for node in [*found.functions, *found.classes]:
        for decorator in node.decorators:
            expr = decorator.decorator
            name = _dotted(expr.func) if isinstance(expr, cst.Call) else _dotted(expr)
            if not name or name in ("staticmethod", "classmethod", "property") or name.endswith(".setter"):
                continue  # changing these changes how the function is called, not what Dynamo sees
            source = _replaced(module, node, node.with_changes(
                decorators=[d for d in node.decorators if d is not decorator]))
            if source is not None:
                yield Probe(f"`@{name}`", f"without `@{name}`", source, removal=True)


def _contexts(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for with_ in found.withs:
        for item in with_.items:
            if item.asname is not None:
                continue
            call = item.item
            name = _dotted(call.func) if isinstance(call, cst.Call) else _dotted(call)
            if not name:
                continue
            construct = f"a `{name}` block"
            if len(with_.items) == 1 and isinstance(with_.body, cst.IndentedBlock):
                source = _replaced(module, with_, cst.FlattenSentinel(with_.body.body))
            else:
                source = _replaced(module, with_, with_.with_changes(
                    items=[i.with_changes(comma=cst.MaybeSentinel.DEFAULT) if n == len(with_.items) - 2 else i
                           for n, i in enumerate(w for w in with_.items if w is not item)]))
            if source is not None:
                yield Probe(construct, f"without the `{name}` block", source, removal=True)
            for sibling in _CONTEXT_SIBLINGS.get(name.rsplit(".", 1)[-1], ()):
                source = _replaced(module, call, cst.parse_expression(sibling))
                if source is not None:
                    yield Probe(construct, f"with `{sibling}` instead", source)


def _transforms(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for call in found.calls:
        inner = call.func
        if isinstance(inner, cst.Call) and _leaf(inner.func) in _TRANSFORMS_CURRIED and inner.args \
                and inner.args[0].keyword is None and inner.args[0].star == "":
            name = _dotted(inner.func)
            source = _replaced(module, call, call.with_changes(func=inner.args[0].value))
            if source is not None:
                yield Probe(f"`{name}`", f"without `{name}` (the function called directly)", source, removal=True)
        elif _leaf(call.func) in _TRANSFORMS_DIRECT and call.args and call.args[0].keyword is None:
            name = _dotted(call.func)
            rest = [a for a in call.args[1:] if a.keyword is None or a.keyword.value not in ("use_reentrant",)]
            source = _replaced(module, call, cst.Call(func=call.args[0].value, args=rest))
            if source is not None:
                yield Probe(f"`{name}`", f"without `{name}` (the function called directly)", source, removal=True)


def _generators(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for gen in found.generators:
        listed = cst.ListComp(elt=gen.elt, for_in=gen.for_in)
        source = _replaced(module, gen, listed)
        if source is not None:
            yield Probe("a generator expression", "with a list comprehension instead", source)
        if gen.for_in.ifs:
            source = _replaced(module, gen, gen.with_changes(for_in=gen.for_in.with_changes(ifs=[])))
            if source is not None:
                yield Probe("the generator's filter", "without the `if` filter", source, removal=True)


def _environment(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    """`os.environ` read or written: the variant uses an empty plain dict the program fills
    itself (Dynamo treats the process environment as it does no other mapping; a copy of
    the environment would differ between the eager and the compiled process)."""
    class Swap(cst.CSTTransformer):
        def __init__(self) -> None:
            self.swapped = False

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            if _dotted(original) == "os.environ":
                self.swapped = True
                return cst.Name("ENVIRON_AS_DICT")
            return updated

    swap = Swap()
    try:
        swapped = module.visit(swap)
    except Exception:  # noqa: BLE001
        return
    if not swap.swapped:
        return
    body = list(swapped.body)
    after = next((i + 1 for i in range(len(body) - 1, -1, -1) if "import os" in code(body[i])), None)
    if after is None:
        return
    body.insert(after, cst.parse_statement("ENVIRON_AS_DICT = {}\n"))  # a copy would differ by process
    yield Probe("`os.environ`", "with a plain `dict` the program fills itself instead",
                swapped.with_changes(body=body).code)


def _handlers(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    """A `try` whose handlers catch something: without the `try` (its body alone), and each
    handler catching `Exception` instead."""
    for try_ in found.trys:
        if try_.finalbody is not None or try_.orelse is not None or not try_.handlers:
            continue
        caught = [_dotted(h.type) if h.type is not None else "" for h in try_.handlers]
        construct = f"a `try`/`except {', '.join(c or 'everything' for c in caught)}`"
        source = _replaced(module, try_, cst.FlattenSentinel(try_.body.body))
        if source is not None:
            yield Probe(construct, "without the `try` (its body alone)", source, removal=True)
        for handler, name in zip(try_.handlers, caught):
            if name and name not in ("Exception", "BaseException"):
                source = _replaced(module, handler, handler.with_changes(type=cst.Name("Exception")))
                if source is not None:
                    yield Probe(construct, f"catching `Exception` instead of `{name}`", source)


def _format_specs(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for part in found.specs:
        if part.format_spec:
            spec = "".join(code(p) for p in part.format_spec)
            source = _replaced(module, part, part.with_changes(format_spec=None))
            if source is not None:
                yield Probe(f"the format spec `:{spec}`", f"without it (`{{{code(part.expression)}}}`)",
                            source, removal=True)
        if part.conversion:
            source = _replaced(module, part, part.with_changes(conversion=None))
            if source is not None:
                yield Probe(f"the conversion `!{part.conversion}`", f"without `!{part.conversion}`", source,
                            removal=True)


_DISPLAYS = {kind: DISPLAY_KINDS[kind] for kind in (cst.Dict, cst.List, cst.Set)}  # containers one mutates


def _closure_cells(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    """A container a function builds and a function nested in it uses (a closure cell):
    the variant builds it once at module level instead, where a global holds it."""
    for outer in found.functions:
        if not isinstance(outer.body, cst.IndentedBlock):
            continue
        nested = [s for s in outer.body.body if isinstance(s, cst.FunctionDef)]
        for statement in outer.body.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                    and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
                continue
            assign = statement.body[0]
            target, kind = assign.targets[0].target, _DISPLAYS.get(type(assign.value))
            if not (isinstance(target, cst.Name) and kind):
                continue
            name = target.value
            if not any(_uses(function, name) for function in nested):
                continue
            without = _without_statement(module, statement)
            if without is None:
                continue
            hoisted = cst.parse_module(without)
            index = next((i for i, s in enumerate(hoisted.body) if isinstance(s, cst.FunctionDef)
                          and s.name.value == outer.name.value), None)
            if index is None:
                continue  # a method's closure: its class keeps the function
            body = [*hoisted.body[:index], statement, *hoisted.body[index:]]
            yield Probe(f"a `{kind}` held in a closure", f"with the `{kind}` a module global instead",
                        hoisted.with_changes(body=body).code)


def _uses(node: cst.CSTNode, name: str) -> bool:
    class Find(cst.CSTVisitor):
        def __init__(self) -> None:
            self.hit = False

        def visit_Name(self, n: cst.Name) -> None:
            self.hit = self.hit or n.value == name
    finder = Find()
    node.visit(finder)
    return finder.hit


def _methods(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for cls in found.classes:
        if not isinstance(cls.body, cst.IndentedBlock):
            continue
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef):
                source = _without_statement(module, statement)
                if source is not None:
                    what = f"`{cls.name.value}.{statement.name.value}`"
                    yield Probe(what, f"without {what}", source, removal=True)


def _builtin_calls(module: cst.Module, found: _Collect) -> Iterator[Probe]:
    for call in found.calls:
        name = _dotted(call.func)
        args = call.args
        if name == "format" and len(args) == 2 and isinstance(args[1].value, cst.SimpleString):
            spec = args[1].value.evaluated_value
            if isinstance(spec, str) and "{" not in spec and "}" not in spec:
                fstring = cst.parse_expression(f'f"{{_v:{spec}}}"')
                assert isinstance(fstring, cst.FormattedString)
                part = fstring.parts[0]
                assert isinstance(part, cst.FormattedStringExpression)
                source = _replaced(module, call, fstring.with_changes(parts=[part.with_changes(
                    expression=args[0].value)]))
                if source is not None:
                    yield Probe("`format`", f"with an f-string `{{...:{spec}}}` instead of `format`", source)
                source = _replaced(module, call, cst.Call(func=cst.Name("str"), args=[args[0].with_changes(
                    comma=cst.MaybeSentinel.DEFAULT)]))
                if source is not None:
                    yield Probe(f"the format spec `:{spec}`", "with `str(...)` instead (no spec)", source)
        if name == "vars" and len(args) == 1 and args[0].keyword is None and not args[0].star:
            source = _replaced(module, call, cst.Attribute(value=args[0].value, attr=cst.Name("__dict__")))
            if source is not None:
                yield Probe("`vars`", "with `.__dict__` instead of `vars`", source)
        if name == "hasattr" and len(args) == 2 and isinstance(args[1].value, cst.SimpleString):
            dir_call = cst.Call(func=cst.Name("dir"), args=[args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            source = _replaced(module, call, cst.Comparison(left=args[1].value, comparisons=[
                cst.ComparisonTarget(operator=cst.In(), comparator=dir_call)]))
            if source is not None:
                yield Probe("`hasattr`", f"with `{code(args[1].value)} in dir(...)` instead of `hasattr`", source)
        if name == "getattr" and len(args) == 2 and isinstance(args[1].value, cst.SimpleString):
            attr = args[1].value.evaluated_value
            if isinstance(attr, str) and attr.isidentifier():
                source = _replaced(module, call, cst.Attribute(value=args[0].value, attr=cst.Name(attr)))
                if source is not None:
                    yield Probe(f"`getattr(..., {attr!r})`", f"with `.{attr}` instead of `getattr`", source)
    for statement in found.statements:
        body = statement.body
        if len(body) == 1 and isinstance(body[0], cst.Expr) and isinstance(body[0].value, cst.Call):
            call = body[0].value
            if _dotted(call.func) == "setattr" and len(call.args) == 3 \
                    and isinstance(call.args[1].value, cst.SimpleString):
                attr = call.args[1].value.evaluated_value
                if isinstance(attr, str) and attr.isidentifier():
                    assign = cst.Assign(targets=[cst.AssignTarget(cst.Attribute(
                        value=call.args[0].value, attr=cst.Name(attr)))], value=call.args[2].value)
                    source = _replaced(module, statement, statement.with_changes(body=[assign]))
                    if source is not None:
                        yield Probe("`setattr`", f"with `.{attr} = ...` instead of `setattr`", source)


# ---- running the probes -------------------------------------------------------------------------------------


class Prober:
    """Runs probes through a runner (the warm pool, or the background reduction's
    throttled share of it) and judges them with the finding's predicate."""

    def __init__(self, runner: Runner, *, oracle: Oracle | None = None, budget: int = DEFAULT_BUDGET,
                 clock: Callable[[], float] | None = None) -> None:
        self._runner = runner
        self._oracle = oracle or Oracle()
        self._budget = budget
        self._clock = clock or time.monotonic
        self._cache: dict[tuple[Signature, str], tuple[str, str]] = {}

    def explain(self, target: Target, *, original: str = "", stop: Callable[[], bool] = lambda: False) -> Matters:
        started = self._clock()
        source = target.program.source
        result = Matters(removed=[c for c in constructs(original) if c not in set(constructs(source))]
                         if original else [])
        candidates = [p for p in probes(source) if admissible(p.source, target.program)]
        result.skipped = max(0, len(candidates) - self._budget)
        candidates = candidates[:self._budget]
        outcomes = self._judge([p.source for p in candidates], target, result, stop)
        passing = [i for i, (outcome, _) in enumerate(outcomes) if outcome == PASSES]
        if passing and not stop():  # a pass that explains the bug must hold twice
            again = self._judge([candidates[i].source for i in passing], target, result, stop, fresh=True)
            for i, (outcome, detail) in zip(passing, again):
                if outcome != PASSES:  # flaky: what the second run gave stands
                    outcomes[i] = (outcome, "passed once, not twice: " + (detail or outcome))
        result.rows = [Row(p.construct, p.change, outcome, detail, p.removal)
                       for p, (outcome, detail) in zip(candidates, outcomes)]
        result.seconds = self._clock() - started
        return result

    def _judge(self, sources: list[str], target: Target, result: Matters, stop: Callable[[], bool], *,
               fresh: bool = False) -> list[tuple[str, str]]:
        keys = [(target.signature, hashlib.sha1(s.encode()).hexdigest()) for s in sources]
        out: list[tuple[str, str] | None] = [None if fresh else self._cache.get(k) for k in keys]
        todo = [i for i, o in enumerate(out) if o is None]
        if stop():
            return [o or (BREAKS_PROGRAM, "not run: stopped") for o in out]
        programs: dict[int, Program] = {}
        for i in todo:
            try:
                programs[i] = Program.from_source(sources[i], target.program.name)
            except ProgramError as exc:
                out[i] = (BREAKS_PROGRAM, str(exc)[:200])
        config = target.candidate_config
        # eager runs first: a variant that breaks the program eagerly says nothing, and needs
        # no compiled run (the reducer's candidates are filtered the same way)
        eager: dict[int, Future[ExecResult]] = {i: self._runner.submit(p, Mode.EAGER, config)
                                               for i, p in programs.items()}
        eager_runs = {i: future.result() for i, future in eager.items()}
        result.checks += len(eager_runs)
        compiled: dict[int, Future[ExecResult]] = {}
        for i, run in eager_runs.items():
            if ends(run) == target.eager_ends:
                compiled[i] = self._runner.submit(programs[i], Mode.COMPILED, config)
            else:
                outcome, kind = ends(run)
                out[i] = (BREAKS_PROGRAM, f"eager run {outcome}{': ' + kind if kind else ''}")
        for i, future in compiled.items():
            result.checks += 1
            out[i] = self._classify(programs[i], eager_runs[i], future.result(), target)
        if not fresh:
            self._cache.update((keys[i], out[i]) for i in programs if out[i] is not None)  # type: ignore[misc]
        return [o if o is not None else (BREAKS_PROGRAM, "") for o in out]

    def _classify(self, program: Program, eager: ExecResult, compiled: ExecResult, target: Target) -> tuple[str, str]:
        judgement = self._oracle.judge(eager, compiled, mask=target.mask, program=program)
        signature = Signature.of(CheckResult(program, judgement, (eager, compiled)))
        if judgement.verdict.is_finding:
            if signature == target.signature:
                return STILL_FAILS, ""
            return FAILS_OTHERWISE, signature.describe()
        if judgement.verdict.name == "PASS":
            return PASSES, ""
        return BREAKS_PROGRAM, f"{judgement.verdict.name}: {judgement.reason[:150]}"


# ---- words --------------------------------------------------------------------------------------------------


def headline(data: dict[str, Any], *, said: str = "") -> str:
    """The constructs that matter, for a title: "a `set` subclass and a graph break" (not
    those the title says already: `said`="fullgraph" for a graph break under fullgraph)."""
    # what the bug needs; failing that, what cannot go and whose kind does not matter (a
    # `try` the program breaks without)
    needed = data.get("needed", []) or data.get("any_neighbour", [])
    needed = [c for c in needed if not (said and said in c)]
    if not needed:
        return ""
    if len(needed) == 1:
        return needed[0]
    return ", ".join(needed[:-1]) + " and " + needed[-1]


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's "What matters" section from `Matters.as_json()`."""
    rows = data.get("rows", [])
    if not rows and not data.get("removed"):
        return []
    lines = ["### What matters", ""]
    by_construct: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        by_construct.setdefault(row["construct"], {}).setdefault(row["outcome"], []).append(row["change"])
    needed, not_needed = data.get("needed", []), data.get("not_needed", [])
    if needed:
        lines.append("**Needed** (the bug goes away with the change):")
        for construct in needed:
            outcomes = by_construct.get(construct, {})
            parts = [f"passes {'; '.join(outcomes.get(PASSES, []))}"]
            if outcomes.get(STILL_FAILS):
                parts.append(f"still fails {'; '.join(outcomes[STILL_FAILS])}")
            lines.append(f"- {construct}: {'. '.join(parts)}")
        lines.append("")
    if not_needed or data.get("removed"):
        lines.append("**Not needed** (the bug stays without it):")
        for construct in not_needed:
            lines.append(f"- {construct}: still fails {'; '.join(by_construct[construct][STILL_FAILS])}")
        for construct in data.get("removed", []):
            if construct not in not_needed:
                lines.append(f"- {construct}: the reduction took it out and the bug stayed")
        lines.append("")
    if data.get("any_neighbour"):
        lines.append("**Any of its kind** (the bug stays with its neighbours; without it the program no longer runs):")
        for construct in data["any_neighbour"]:
            lines.append(f"- {construct}: still fails {'; '.join(by_construct[construct][STILL_FAILS])}")
        lines.append("")
    other = [row for row in rows if row["outcome"] == FAILS_OTHERWISE]
    if other:
        lines.append("Changes that give another finding (not this bug): " + "; ".join(
            f"{row['change']} ({row['detail']})" for row in other))
        lines.append("")
    broke = sum(1 for row in rows if row["outcome"] == BREAKS_PROGRAM)
    skipped = data.get("skipped", 0)
    lines.append(f"Checked {len(rows)} variants of the reduced program ({data.get('checks', 0)} runs, "
                 f"{data.get('seconds', 0)} s)" + (f", {broke} of which broke the program eagerly" if broke else "")
                 + (f"; {skipped} more were over the budget" if skipped else "") + ".")
    lines.append("")
    return lines
