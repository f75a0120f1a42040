"""The constructs of a reduced program and their variants: what "what matters" probes.

For each construct (a class's base, a decorator, a context manager, a function transform
such as `vmap`, a generator expression, a graph break, a compile option, a format spec, a
method of a class, a container held in a closure, `os.environ`, a `getattr`/`setattr`/
`hasattr`/`vars`/`format` spelled as a builtin call), `probes` gives its removal and its
neighbours (a `set` subclass becomes a `frozenset` subclass or a plain `set`, a generator
a list comprehension, `no_grad` `enable_grad`) as whole program sources. Named in words that
do not depend on the program's own names, so that two programs' constructs compare.
Running and judging them is `mutator.reduce.matters`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import libcst as cst

from mutator.mutation.tree import DISPLAY_KINDS, code, dotted

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
# `construct_names`: the probes are named, not built (a variant's source costs a codegen of the module)
_NAMES_ONLY: ContextVar[bool] = ContextVar("names_only", default=False)
_UNBUILT = ""  # the source of a probe named only


@dataclass(frozen=True, slots=True)
class Probe:
    construct: str  # what it is about, in words that do not depend on the program's names
    change: str  # what the variant does to it
    source: str
    removal: bool = False  # the change takes the construct away (rather than swapping it)
    simpler: bool = False  # a neighbour simpler than the construct (`x.a` for `getattr(x, "a")`)

    @property
    def simplifies(self) -> bool:
        """Whether the variant is a reduction, to take when it still fails (`mutator.reduce.unneeded`)."""
        return self.removal or self.simpler


# ---- the constructs of a program and their variants -------------------------------------------------------


def _dotted(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


def _leaf(node: cst.BaseExpression) -> str:
    return _dotted(node).rsplit(".", 1)[-1]


def _replaced(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode | cst.RemovalSentinel
              | cst.FlattenSentinel[Any]) -> str | None:
    if _NAMES_ONLY.get():
        return _UNBUILT
    try:
        return module.deep_replace(old, new).code  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a variant libcst cannot build is a variant not tried
        return None


def _without_statement(module: cst.Module, statement: cst.CSTNode) -> str | None:
    """The module without `statement`; a body left empty gets a `pass`."""
    if _NAMES_ONLY.get():
        return _UNBUILT
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
    out = _all_probes(source)
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


def construct_names(source: str) -> list[str]:
    """The constructs of `source` by name, each once, without building a variant: what a
    program has, at the cost of a parse (`constructs` builds every variant, seconds for a long
    program). It may name a construct whose only variant would be the program itself."""
    token = _NAMES_ONLY.set(True)
    try:
        return list(dict.fromkeys(p.construct for p in _all_probes(source)))
    finally:
        _NAMES_ONLY.reset(token)


def _all_probes(source: str) -> list[Probe]:
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
    return out


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
                _UNBUILT if _NAMES_ONLY.get() else swapped.with_changes(body=body).code)


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
            if _NAMES_ONLY.get():
                yield Probe(f"a `{kind}` held in a closure", "", _UNBUILT)
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
                    yield Probe(f"the format spec `:{spec}`", "with `str(...)` instead (no spec)", source,
                                simpler=True)
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
                    yield Probe(f"`getattr(..., {attr!r})`", f"with `.{attr}` instead of `getattr`", source,
                                simpler=True)
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
                        yield Probe("`setattr`", f"with `.{attr} = ...` instead of `setattr`", source,
                                    simpler=True)
