"""What a repair gets (the invalid mutant, how it failed, what made it) and what it gives."""

from __future__ import annotations

import ast
import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Union

from mutator.core import parsing
from mutator.mutation.operator import REPAIR_PREFIX, Mutant, Step
from mutator.core.program import Program, ProgramError
from mutator.core.values import ExceptionInfo, FrameInfo


@dataclass(frozen=True, slots=True)
class RepairRequest:
    program: Program  # the invalid mutant
    mutant: Mutant  # the operators that made it, with their sites
    parent: Program | None  # what it was made from
    error: ExceptionInfo | None  # the eager run's exception (None: it timed out, ran out of memory...)
    outcome: str  # the eager run's outcome ("raised", "timeout", ...)
    reason: str = ""  # the verdict's reason (why a program whose eager run completed is invalid)

    @property
    def frame(self) -> FrameInfo | None:
        """The innermost frame of the program's own code where it failed."""
        if self.error is None:
            return None
        own = [f for f in self.error.frames if f.filename == self.program.name]
        return own[-1] if own else None

    @property
    def line(self) -> int | None:
        frame = self.frame
        return frame.lineno if frame is not None else None

    @property
    def is_repair(self) -> bool:
        """A repaired program that failed again: it gets no second repair."""
        return any(step.op.startswith(REPAIR_PREFIX) for step in self.mutant.steps)

    def changed_lines(self) -> list[int]:
        """The mutant's lines (1-based) that differ from its parent's: the operators' region."""
        if self.parent is None:
            return []
        before = self.parent.source.splitlines()
        after = self.program.source.splitlines()
        changed: list[int] = []
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                changed += range(j1 + 1, j2 + 1)
        return changed

    def inserted_construct(self) -> Counter[str]:
        """What the operators put in, on the syntax tree: the node shapes (node type with
        the name, attribute or definition it carries) the mutant has more of than its
        parent. A repair must keep all of it, or it has undone the mutation."""
        if self.parent is None:
            return Counter()
        return construct_of(self.program.source) - construct_of(self.parent.source)

    def describe(self) -> str:
        """The failure in a line: for logs, prompts and the provenance of a result."""
        if self.error is None:
            return self.reason[:300] or f"eager run {self.outcome}"
        where = f" at line {self.line}" if self.line else ""
        return f"{self.error.type_name}: {self.error.message[:300]}{where}"


def construct_of(source: str) -> Counter[str]:
    """A multiset of the node shapes of a source; constants are left out (a repair may
    change a size), names and attributes are in."""
    try:
        tree = parsing.parse(source)
    except SyntaxError:
        return Counter()
    shapes: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Load, ast.Store, ast.Del, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop,
                             ast.boolop, ast.Constant, ast.arguments, ast.keyword, ast.alias, ast.Module)):
            continue
        detail = ""
        if isinstance(node, ast.Name):
            detail = node.id
        elif isinstance(node, ast.Attribute):
            detail = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            detail = node.name
        elif isinstance(node, ast.arg):
            detail = node.arg
        shapes[f"{type(node).__name__}:{detail}" if detail else type(node).__name__] += 1
    return shapes


def keeps_construct(request: RepairRequest, source: str) -> bool:
    """Whether `source` still holds everything the operators inserted."""
    needed = request.inserted_construct()
    have = construct_of(source)
    return all(have[shape] >= count for shape, count in needed.items())


@dataclass(frozen=True, slots=True)
class Repaired:
    program: Program
    how: str  # "rule.define_name", "llm"

    @property
    def step(self) -> Step:
        return Step(f"{REPAIR_PREFIX}{self.how}", "")


@dataclass(frozen=True, slots=True)
class NotRepaired:
    reason: str


RepairResult = Union[Repaired, NotRepaired]


def repaired(request: RepairRequest, source: str, how: str) -> RepairResult:
    """A candidate source as a result: it must be a program of the same form, differ from
    the mutant and keep the inserted construct."""
    if source == request.program.source:
        return NotRepaired(f"{how}: changed nothing")
    try:
        program = Program.from_source(source, request.program.name)
    except ProgramError as exc:
        return NotRepaired(f"{how}: not a program ({str(exc)[:200]})")
    if program.form is not request.program.form:
        return NotRepaired(f"{how}: turned a {request.program.form.value} program into a {program.form.value} one")
    if not keeps_construct(request, source):
        missing = request.inserted_construct() - construct_of(source)
        return NotRepaired(f"{how}: removed what the operator inserted ({', '.join(sorted(missing)[:5])})")
    return Repaired(program, how)
