"""Repair rules: small, deterministic edits for the ways mutants fail most often.

Each rule reads the failure (exception type and message, the line of the program's own
code where it was raised, the region the operators changed) and proposes one edited
source, or nothing. Rules never undo the mutation (`repaired` checks that what the
operators inserted is still there) and never check anything themselves: the repaired
program is run like any mutant, and only a valid one counts as repaired.

Which rules exist, and in which order, comes from measuring the invalid mutants of real
campaigns (`invalid/index.jsonl` of a campaign directory; the issue's note has the table).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import ClassVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from mutator.mutation.tree import bound_names, is_docstring, is_import, nodes
from mutator.repair.request import NotRepaired, RepairRequest, RepairResult, repaired

# names a mutant uses without importing: the operators' own vocabulary and its usual aliases
KNOWN_MODULES = {
    "math": "import math", "random": "import random", "itertools": "import itertools",
    "functools": "import functools", "operator": "import operator", "collections": "import collections",
    "contextlib": "import contextlib", "copy": "import copy", "dataclasses": "import dataclasses",
    "typing": "import typing", "types": "import types", "enum": "import enum", "weakref": "import weakref",
    "abc": "import abc", "inspect": "import inspect", "warnings": "import warnings", "sys": "import sys",
    "torch": "import torch", "np": "import numpy as np", "numpy": "import numpy",
    "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
    "defaultdict": "from collections import defaultdict", "OrderedDict": "from collections import OrderedDict",
    "namedtuple": "from collections import namedtuple", "deque": "from collections import deque",
    "dataclass": "from dataclasses import dataclass", "field": "from dataclasses import field",
    "partial": "from functools import partial", "wraps": "from functools import wraps",
    "contextmanager": "from contextlib import contextmanager", "NamedTuple": "from typing import NamedTuple",
}
_TENSOR_MAKERS = frozenset({"randn", "rand", "ones", "zeros", "full", "empty", "arange", "randint", "eye",
                            "linspace", "Linear", "Conv1d", "Conv2d", "BatchNorm1d", "LayerNorm", "Embedding",
                            "reshape", "view", "expand", "repeat"})


class Rule:
    name: ClassVar[str]
    TYPES: ClassVar[tuple[str, ...]]  # exception types it repairs

    def applies(self, request: RepairRequest) -> bool:
        return request.error is not None and request.error.type_name in self.TYPES

    def propose(self, request: RepairRequest) -> str | None:
        raise NotImplementedError

    def repair(self, request: RepairRequest) -> RepairResult:
        source = self.propose(request)
        if source is None:
            return NotRepaired(f"rule.{self.name}: nothing to do")
        return repaired(request, source, f"rule.{self.name}")


# -- NameError: an import, a definition the parent had, or the nearest defined name ----------
_NAME_ERROR = re.compile(r"name '(?P<name>[^']+)' is not defined")


class DefineName(Rule):
    """`name 'x' is not defined`: import it when it is a module the operators use; else
    copy its top-level definition from the parent (an operator moved code away from it);
    else bind it, before the failing statement, to the closest name defined in scope."""

    name = "define_name"
    TYPES = ("NameError",)

    def propose(self, request: RepairRequest) -> str | None:
        assert request.error is not None
        match = _NAME_ERROR.search(request.error.message)
        if match is None:
            return None
        missing = match["name"]
        module = cst.parse_module(request.program.source)
        if missing in KNOWN_MODULES:
            return _after_imports(module, cst.parse_statement(KNOWN_MODULES[missing] + "\n")).code
        definition = _top_level_definition(request.parent.source, missing) if request.parent else None
        if definition is not None:  # after the imports: definitions are looked up at call time
            return _after_imports(module, definition).code
        return _bind_before_line(module, request.line, missing, _defined_names(module))


def _after_imports(module: cst.Module, statement: cst.BaseStatement) -> cst.Module:
    """`statement` after the module's last import (or its docstring): whatever it uses is
    imported by then."""
    body = list(module.body)
    at = max((i + 1 for i, stmt in enumerate(body) if is_import(stmt) or (i == 0 and is_docstring(stmt))),
             default=0)
    body.insert(at, statement)
    return module.with_changes(body=body)


def _top_level_definition(source: str, name: str) -> cst.BaseStatement | None:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return stmt
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    return stmt
                if isinstance(small, (cst.Import, cst.ImportFrom)) and name in bound_names(small):
                    return stmt
    return None


def _defined_names(module: cst.Module) -> set[str]:
    """Every name the module mentions (bound, or a builtin it calls): what a misspelt one may mean."""
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)
    module.visit(Collect())
    return found


def _bind_before_line(module: cst.Module, line: int | None, missing: str, candidates: set[str]) -> str | None:
    close = difflib.get_close_matches(missing, sorted(candidates - {missing}), n=1, cutoff=0.6)
    if not close or line is None:
        return None
    return _insert_before_line(module, line, f"{missing} = {close[0]}\n")


def _insert_before_line(module: cst.Module, line: int, statement: str) -> str | None:
    """`statement` inserted before the statement that holds `line`, in its own body."""
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    inserter = _InsertBefore(positions, line, cst.parse_statement(statement))
    result = wrapper.module.visit(inserter)
    return result.code if inserter.done else None


class _Edit(cst.CSTTransformer):
    """A rule's edit; `changed`: it found something to change."""

    changed = False


def _edited(module: cst.Module, editor: _Edit) -> str | None:
    """The edited source, or None when the edit found nothing to change."""
    result = module.visit(editor)
    return result.code if editor.changed else None


def _spans(position: CodeRange | None, line: int) -> bool:
    """Whether a node at `position` covers source line `line`."""
    return position is not None and position.start.line <= line <= position.end.line


class _InsertBefore(cst.CSTTransformer):
    def __init__(self, positions, line: int, statement: cst.BaseStatement) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self._positions = positions
        self._line = line
        self._statement = statement
        self.done = False

    def _insert(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        for i, stmt in enumerate(body):
            position = self._positions.get(stmt)
            if not _spans(position, self._line):
                continue
            if isinstance(stmt, cst.SimpleStatementLine) or position.start.line == self._line:
                self.done = True
                return [*body[:i], self._statement, *body[i:]]
        return None

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if self.done:
            return updated
        body = self._insert(original.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.done:
            return updated
        body = self._insert(original.body)
        return updated if body is None else updated.with_changes(body=body)


# -- UnboundLocalError -----------------------------------------------------------------------
_UNBOUND = re.compile(r"(?:local variable '(?P<a>[^']+)'|cannot access local variable '(?P<b>[^']+)')")


class BindLocal(Rule):
    """`cannot access local variable 'x'`: an operator moved its assignment under a branch
    or after its use; bind it to None before the failing statement."""

    name = "bind_local"
    TYPES = ("UnboundLocalError",)

    def propose(self, request: RepairRequest) -> str | None:
        assert request.error is not None
        match = _UNBOUND.search(request.error.message)
        if match is None or request.line is None:
            return None
        return _insert_before_line(cst.parse_module(request.program.source), request.line,
                                   f"{match['a'] or match['b']} = None\n")


# -- TypeError: a call that no longer fits its function ----------------------------------------
_TAKES = re.compile(r"(?P<fn>[\w.]+)\(\) takes (?:from \d+ to )?(?P<max>\d+) positional arguments? but (?P<given>\d+)")
_MISSING = re.compile(r"(?P<fn>[\w.]+)\(\) missing \d+ required (?:positional|keyword-only) arguments?: (?P<names>.+)")
_UNEXPECTED = re.compile(r"(?P<fn>[\w.]+)\(\) got an unexpected keyword argument '(?P<kw>\w+)'")


class FitCall(Rule):
    """A call that does not fit its function after an operator added or removed a
    parameter or an argument: extra positional arguments and unknown keywords are dropped
    from the calls on the failing line; missing parameters of our own functions get a
    default of None."""

    name = "fit_call"
    TYPES = ("TypeError",)

    def propose(self, request: RepairRequest) -> str | None:
        assert request.error is not None
        message = request.error.message
        module = cst.parse_module(request.program.source)
        if (match := _MISSING.search(message)) is not None:
            names = re.findall(r"'(\w+)'", match["names"])
            return _default_parameters(module, match["fn"].split(".")[-1], names)
        if request.line is None:
            return None
        if (match := _UNEXPECTED.search(message)) is not None:
            return _edit_calls_on_line(module, request.line, match["fn"].split(".")[-1], drop_keyword=match["kw"])
        if (match := _TAKES.search(message)) is not None:
            # "takes 2 positional arguments but 3 were given": for a method, self counts in both
            return _edit_calls_on_line(module, request.line, match["fn"].split(".")[-1],
                                       drop_extra=int(match["given"]) - int(match["max"]))
        return None


def _default_parameters(module: cst.Module, function: str, names: list[str]) -> str | None:
    class Default(_Edit):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            if original.name.value != function:
                return updated
            params = list(updated.params.params)
            first = next((i for i, p in enumerate(params) if p.name.value in names), None)
            if first is None:
                return updated
            # every parameter from the first missing one on needs a default (Python's rule)
            for i in range(first, len(params)):
                if params[i].default is None:
                    params[i] = params[i].with_changes(default=cst.Name("None"), equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            kwonly = [p.with_changes(default=cst.Name("None")) if p.name.value in names and p.default is None else p
                      for p in updated.params.kwonly_params]
            self.changed = True
            return updated.with_changes(params=updated.params.with_changes(params=params, kwonly_params=kwonly))
    return _edited(module, Default())


def _edit_calls_on_line(module: cst.Module, line: int, function: str, *, drop_keyword: str | None = None,
                        drop_extra: int = 0) -> str | None:
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)

    class Edit(_Edit):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if not _spans(positions.get(original), line) or _call_name(original) != function:
                return updated
            args = list(updated.args)
            if drop_keyword is not None:
                kept = [a for a in args if not (a.keyword is not None and a.keyword.value == drop_keyword)]
            else:
                positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
                if drop_extra <= 0 or len(positional) < drop_extra:
                    return updated
                dropped = set(positional[-drop_extra:])
                kept = [a for i, a in enumerate(args) if i not in dropped]
            if len(kept) == len(args):
                return updated
            if kept:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            self.changed = True
            return updated.with_changes(args=kept)
    return _edited(wrapper.module, Edit())


# -- RuntimeError: sizes that no longer agree after an operator changed one ------------------
_SIZES = re.compile(r"size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\)"
                    r"|shapes cannot be multiplied \((?P<m1>\d+)x(?P<k1>\d+) and (?P<k2>\d+)x(?P<n2>\d+)\)"
                    r"|Expected size (?P<e>\d+) but got size (?P<g>\d+)")


_RESHAPE = re.compile(r"shape '\[[\d, -]*\]' is invalid for input of size \d+")


class AgreeSizes(Rule):
    """Tensors whose sizes no longer agree because an operator changed a size (a batch
    size, a feature count): the operator's change is carried to every other literal of
    the old size in tensor-making calls, so the program is consistent at the new size."""

    name = "agree_sizes"
    TYPES = ("RuntimeError", "ValueError")

    def propose(self, request: RepairRequest) -> str | None:
        assert request.error is not None
        if _SIZES.search(request.error.message) is None or request.parent is None:
            return None
        changes = _changed_sizes(request.parent.source, request.program.source)
        if not changes:
            return None
        module = cst.parse_module(request.program.source)

        class Carry(_Edit):
            def __init__(self) -> None:
                super().__init__()
                self._maker = 0  # depth inside tensor-making calls

            def visit_Call(self, node: cst.Call) -> None:
                self._maker += _call_name(node) in _TENSOR_MAKERS

            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
                self._maker -= _call_name(original) in _TENSOR_MAKERS
                return updated

            def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.Integer:
                if not self._maker:
                    return updated
                new = changes.get(original.evaluated_value)
                if new is None:
                    return updated
                self.changed = True
                return updated.with_changes(value=str(new))
        return _edited(module, Carry())


def _call_name(node: cst.Call) -> str:
    func = node.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""


def _changed_sizes(before: str, after: str) -> dict[int, int]:
    """Integer literals the mutation changed, old -> new, read off the changed lines (one
    value per old size; an ambiguous change is left out)."""
    old_lines, new_lines = before.splitlines(), after.splitlines()
    changes: dict[int, set[int]] = {}
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for old, new in zip(old_lines[i1:i2], new_lines[j1:j2]):
            a, b = re.findall(r"(?<![\w.])\d+(?![\w.])", old), re.findall(r"(?<![\w.])\d+(?![\w.])", new)
            if len(a) != len(b):
                continue
            for x, y in zip(a, b):
                if x != y:
                    changes.setdefault(int(x), set()).add(int(y))
    return {old: next(iter(new)) for old, new in changes.items() if len(new) == 1 and old > 1}


# -- RuntimeError: a batch-size sweep the program's fixed sizes cannot take ------------------
class NarrowSweep(Rule):
    """A sweep of batch sizes an operator added (`for size in (6, 3): f(*inputs_batch(size))`)
    into a program whose other sizes are fixed (a weight of 3 rows, a reshape to (2, 8)):
    the sweep keeps its loop and its fresh inputs, at the program's own batch size."""

    name = "narrow_sweep"
    TYPES = ("RuntimeError", "ValueError", "IndexError")

    def applies(self, request: RepairRequest) -> bool:
        return super().applies(request) and request.error is not None and (
            _SIZES.search(request.error.message) is not None or _RESHAPE.search(request.error.message) is not None)

    def propose(self, request: RepairRequest) -> str | None:
        module = cst.parse_module(request.program.source)
        batch = _batch_size(module)
        if batch is None:
            return None

        class Narrow(_Edit):
            def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
                sizes = original.iter
                if not isinstance(sizes, (cst.Tuple, cst.List)) or not sizes.elements \
                        or not all(isinstance(e.value, cst.Integer) for e in sizes.elements) \
                        or not _calls(original.body, "inputs_batch"):
                    return updated
                if [e.value.evaluated_value for e in sizes.elements] == [batch]:  # type: ignore[attr-defined]
                    return updated
                self.changed = True
                return updated.with_changes(iter=cst.Tuple([cst.Element(cst.Integer(str(batch)), comma=cst.Comma())]))
        return _edited(module, Narrow())


def _batch_size(module: cst.Module) -> int | None:
    """The first size of the first tensor `inputs()` makes: the program's batch size."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "inputs":
            for node in nodes(stmt.body):
                if isinstance(node, cst.Call) and _call_name(node) in _TENSOR_MAKERS and node.args \
                        and isinstance(node.args[0].value, cst.Integer):
                    return int(node.args[0].value.evaluated_value)
    return None


def _calls(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Call) and _call_name(n) == name for n in nodes(node))


# -- StopIteration: an iterator an operator made run dry --------------------------------------
class NextDefault(Rule):
    """`StopIteration` from `next(it)` on the failing line: `next(it, None)`."""

    name = "next_default"
    TYPES = ("StopIteration",)

    def propose(self, request: RepairRequest) -> str | None:
        if request.line is None:
            return None
        module = cst.parse_module(request.program.source)
        wrapper = MetadataWrapper(module)
        positions = wrapper.resolve(PositionProvider)
        line = request.line

        class Default(_Edit):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
                if isinstance(original.func, cst.Name) and original.func.value == "next" and len(original.args) == 1 \
                        and _spans(positions.get(original), line):
                    self.changed = True
                    return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.Comma(
                        whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(cst.Name("None"))])
                return updated
        return _edited(wrapper.module, Default())


# -- AttributeError: an attribute read before anything set it --------------------------------
_NO_ATTRIBUTE = re.compile(r"'(?P<cls>\w+)' object has no attribute '(?P<attr>\w+)'")


class SetAttribute(Rule):
    """`'C' object has no attribute 'a'` for a class of the program: copy the parent's
    assignment of `self.a` into `C.__init__` if the operator lost it, else give the class
    a default `a = None`."""

    name = "set_attribute"
    TYPES = ("AttributeError",)

    def propose(self, request: RepairRequest) -> str | None:
        assert request.error is not None
        match = _NO_ATTRIBUTE.search(request.error.message)
        if match is None:
            return None
        cls, attr = match["cls"], match["attr"]
        module = cst.parse_module(request.program.source)

        class Default(_Edit):
            def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
                if original.name.value != cls or not isinstance(updated.body, cst.IndentedBlock):
                    return updated
                body = list(updated.body.body)
                at = 1 if body and is_docstring(body[0]) else 0
                body.insert(at, cst.parse_statement(f"{attr} = None\n"))
                self.changed = True
                return updated.with_changes(body=updated.body.with_changes(body=body))
        return _edited(module, Default())


# -- a graph break of the program's own under fullgraph=True ---------------------------------
class AllowBreaks(Rule):
    """An operator inserted `torch._dynamo.graph_break()` into a program compiled with
    fullgraph=True: no test of anything (Dynamo must raise). The break stays and
    COMPILE_KWARGS's fullgraph goes."""

    name = "allow_breaks"
    TYPES = ()

    def applies(self, request: RepairRequest) -> bool:
        return "fullgraph=True and the program calls torch._dynamo.graph_break()" in request.reason

    def propose(self, request: RepairRequest) -> str | None:
        module = cst.parse_module(request.program.source)

        class Drop(_Edit):
            def leave_DictElement(self, original: cst.DictElement,
                                  updated: cst.DictElement) -> cst.DictElement | cst.RemovalSentinel:
                if isinstance(original.key, cst.SimpleString) and original.key.evaluated_value == "fullgraph":
                    self.changed = True
                    return cst.RemoveFromParent()
                return updated

            def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg | cst.RemovalSentinel:
                if original.keyword is not None and original.keyword.value == "fullgraph":
                    self.changed = True
                    return cst.RemoveFromParent()
                return updated
        return _edited(module, Drop())


RULES: tuple[Rule, ...] = (DefineName(), BindLocal(), FitCall(), AgreeSizes(), NarrowSweep(), NextDefault(),
                           SetAttribute(), AllowBreaks())


def repair_by_rules(request: RepairRequest, rules: Sequence[Rule] = RULES) -> RepairResult:
    """The first rule's repair that is a program and keeps the mutation; never raises."""
    if request.is_repair:
        return NotRepaired("already repaired once")
    reasons = []
    for rule in rules:
        if not rule.applies(request):
            continue
        try:
            result = rule.repair(request)
        except Exception as exc:  # a rule's bug costs this repair, never the campaign
            result = NotRepaired(f"rule.{rule.name}: {type(exc).__name__}: {exc}"[:300])
        if not isinstance(result, NotRepaired):
            return result
        reasons.append(result.reason)
    return NotRepaired("; ".join(reasons) or f"no rule for {request.describe()[:200]}")
