"""The operator framework: one libcst transformer per job, applied to one chosen site.

An operator subclasses `Operator`, names its `family` (a taxonomy leaf: A1..G3, X for
generic structure, S for splices), its `name` and a one-line `DESCRIPTION`, and implements
one or two `leave_*` hooks. In a hook it asks `self.is_site(original_node)`; `apply` runs
the transformer twice over the same tree: first to collect every candidate site in the
operator's target (the compiled region by default), then, after choosing one candidate
(`choose_site`, with the injected `random.Random`), to rewrite only that one. An operator
that cannot rewrite the chosen site safely calls `self.decline(reason)` and returns the
node unchanged. New names come from `self.fresh(...)` and never collide with the program's.
A splice (`NEEDS_DONOR`) also reads a second program, the donor, as `self.donor`.
"""

from __future__ import annotations

import random
import textwrap
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext, NameAllocator, Target
from mutator.mutation.tree import is_import
from mutator.core.program import Program, ProgramError

FAMILIES = ("A1", "A2", "A3", "A4", "B1", "B2", "C", "D", "E1", "E2", "E3", "E4", "F1", "F2", "G1", "G2", "G3",
            "O", "S", "X")  # the 17 leaf classes, O for the taxonomy's Others, S for splices, X for generic structure


REPAIR_PREFIX = "repair:"  # a repair's step in a provenance: "E2.wrap_in_try@f:3+repair:rule.define_name"


def family_of(op_id: str) -> str:
    """The family of an operator id such as "E2.wrap_in_try" (ids are `family.name`)."""
    return op_id.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class Step:
    """One operator applied at one site: the unit of provenance."""

    op: str  # "E2.wrap_in_try"
    site: str  # "forward:12"

    def __str__(self) -> str:
        return f"{self.op}@{self.site}" if self.site else self.op


@dataclass(frozen=True, slots=True)
class Mutant:
    program: Program
    steps: tuple[Step, ...]

    @property
    def provenance(self) -> str:
        return "+".join(str(s) for s in self.steps)


@dataclass(frozen=True, slots=True)
class Declined:
    op: str
    reason: str


class Operator(m.MatcherDecoratableTransformer):
    family: ClassVar[str]
    name: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    TARGET: ClassVar[Target] = "region"
    NEEDS_DONOR: ClassVar[bool] = False  # a splice: applies only with a second program to take a part from
    id: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            if cls.family not in FAMILIES:
                raise TypeError(f"{cls.__name__}: unknown family {cls.family!r}")
            cls.id = f"{cls.family}.{cls.name}"

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        _init_matchers(self)
        self.ctx = ctx
        self.rng = rng
        self._names = NameAllocator(ctx.names)
        self._candidates: list[cst.CSTNode] = []
        self._chosen: cst.CSTNode | None = None
        self._helpers: list[cst.BaseStatement] = []
        self._appended: list[cst.BaseStatement] = []
        self._imports: list[str] = []
        self._path: set[int] | None = None  # rewrite pass: the chosen site and its ancestors
        self._pruned: set[int] = set()
        self.declined: str | None = None
        self.donor: MutationContext | None = None  # a splice's second program (set by `apply`)

    # -- for operator authors ------------------------------------------------------------
    def is_site(self, original_node: cst.CSTNode) -> bool:
        """True for the one chosen site; while counting, records a candidate and says False."""
        if not self.ctx.in_target(original_node, self.TARGET):
            return False
        if self._chosen is None:
            self._candidates.append(original_node)
            return False
        return original_node is self._chosen

    def decline(self, reason: str) -> None:
        self.declined = reason

    def choose_site(self, candidates: list[cst.CSTNode]) -> cst.CSTNode | None:
        """The one site to rewrite, of those the counting pass found (which depend on the
        program alone); None declines, with the reason given to `decline`."""
        return self.rng.choice(candidates)

    def fresh(self, base: str) -> str:
        return self._names.fresh(base)

    def add_helper(self, code: str | Sequence[cst.BaseStatement]) -> None:
        """Module-level statements (source, or statements with their comments), placed after
        the imports (before any use at load time)."""
        self._helpers.extend(cst.parse_module(textwrap.dedent(code).strip() + "\n").body
                             if isinstance(code, str) else code)

    def append_to_module(self, code: str) -> None:
        """Module-level statements placed at the end (a new `drive`, say)."""
        self._appended.extend(cst.parse_module(textwrap.dedent(code).strip() + "\n").body)

    def add_import(self, module: str) -> None:
        """`import <module>` unless the program already imports it under that name."""
        self._imports.append(module)

    def no_site_reason(self) -> str:
        return f"no site for {self.name} in the {self.TARGET if self.TARGET != 'anywhere' else 'program'}"

    # -- for the driver ------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        # The counting pass only walks what can reach the target, and the rewrite pass only
        # the path to the chosen site: no hook runs in subtrees that cannot hold a site,
        # which makes both several times faster.
        if self._path is not None and id(node) not in self._path:
            self._pruned.add(id(node))
            return False
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        if id(original_node) in self._pruned:
            return updated_node
        return super().on_leave(original_node, updated_node)

    def finish(self, module: cst.Module) -> cst.Module:
        imports = [cst.parse_statement(f"import {name}\n") for name in dict.fromkeys(self._imports)
                   if not _imports(module, name)]
        if not (imports or self._helpers or self._appended):
            return module
        body = list(module.body)
        at = _after_imports(body)
        helpers = _pep8_spaced(self._helpers, before=body[at - 1] if at else None)
        if helpers and at < len(body):
            body[at] = _spaced_after(body[at], helpers[-1])
        body[at:at] = [*imports, *helpers]
        if self._appended:
            body.extend(_pep8_spaced(self._appended, before=body[-1] if body else None))
        return module.with_changes(body=body)


def apply(op: type[Operator], ctx: MutationContext, rng: random.Random, *,
          donor: MutationContext | None = None) -> Mutant | Declined:
    """Apply `op` once to the program in `ctx` (a splice takes its part from `donor`); never
    raises for anything the programs contain.

    An operator that raises is a bug of ours; it is reported as a decline naming the
    exception (the operator tests treat such declines as failures), so one broken
    operator never stops a campaign.
    """
    try:
        return _apply(op, ctx, rng, donor)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return Declined(op.id, f"operator failed: {type(exc).__name__}: {exc}"[:300])


def _apply(op: type[Operator], ctx: MutationContext, rng: random.Random,
           donor: MutationContext | None) -> Mutant | Declined:
    if op.NEEDS_DONOR and donor is None:
        return Declined(op.id, "a splice needs a donor: a second program to take a part from")
    candidates = ctx.candidates.get(op.id)
    if candidates is None:  # the counting pass depends only on the program: once per context
        counter = op(ctx, rng)
        counter._path = ctx.reaching(op.TARGET, hooked=hooked_types(op, counter))
        if counter._path is None or counter._path:  # empty: no node a hook of op fires on
            ctx.module.visit(counter)
        candidates = ctx.candidates[op.id] = counter._candidates
    if not candidates:
        return Declined(op.id, op(ctx, rng).no_site_reason())
    rewriter = op(ctx, rng)
    rewriter.donor = donor  # after construction: operators' constructors take (ctx, rng) only
    chosen = rewriter.choose_site(candidates)
    if chosen is None:
        return Declined(op.id, rewriter.declined or rewriter.no_site_reason())
    rewriter._chosen = chosen
    rewriter._path = ctx.path_to(chosen)
    new_module = ctx.module.visit(rewriter)
    if rewriter.declined:
        return Declined(op.id, rewriter.declined)
    code = rewriter.finish(new_module).code
    if code == ctx.program.source:
        return Declined(op.id, "the rewrite changed nothing")
    try:
        compile(code, ctx.program.name, "exec")
        program = Program.from_source(code, ctx.program.name)
    except (SyntaxError, ValueError, ProgramError) as exc:  # a bug in the operator: say so, don't ship it
        return Declined(op.id, f"operator produced an invalid program: {exc}")
    return Mutant(program, (Step(op.id, ctx.where(rewriter._chosen)),))


_HOOKED: dict[type, frozenset[str] | None] = {}
_GENERIC_HOOKS = ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute")


def hooked_types(op: type[Operator], instance: Operator) -> frozenset[str] | None:
    """The names of the node types `op`'s hooks fire on (`leave_Call`, `visit_Subscript_slice`,
    `@m.leave(m.Call(...))`), or None when it cannot tell (a generic hook, a matcher that
    is not one node type): the counting pass need only walk those nodes and their ancestors,
    since libcst calls a hook on a node of exactly its type and nothing else runs a hook."""
    if op in _HOOKED:
        return _HOOKED[op]
    names: set[str] | None = set()
    for klass in op.__mro__:
        if klass in Operator.__mro__:
            continue
        for attr in vars(klass):
            if attr in _GENERIC_HOOKS:
                names = None
                break
            prefix, _, rest = attr.partition("_")
            if prefix in ("visit", "leave") and rest[:1].isupper():
                names.add(rest.split("_", 1)[0])
        if names is None:
            break
    if names is not None:
        for matcher in (*instance._extra_visit_funcs, *instance._extra_leave_funcs):
            node_type = getattr(cst, type(matcher).__name__, None)
            if not (isinstance(node_type, type) and issubclass(node_type, cst.CSTNode)):
                names = None
                break
            names.add(node_type.__name__)
    _HOOKED[op] = result = frozenset(names) if names is not None else None
    return result


_GATHERED: dict[type, tuple[dict[Any, tuple[Any, ...]], dict[Any, tuple[Any, ...]], dict[Any, None]]] = {}


def _init_matchers(op: Operator) -> None:
    """MatcherDecoratableTransformer.__init__, with its inspection of the class done once per class.

    libcst finds @m.visit/@m.leave/@m.call_if_inside functions by getattr-ing every name
    in dir(self) on every construction: more than the rest of a rewrite costs.
    """
    cls = type(op)
    gathered = _GATHERED.get(cls)
    if gathered is None:
        m.MatcherDecoratableTransformer.__init__(op)
        _GATHERED[cls] = (
            {k: tuple(f.__func__ for f in v) for k, v in op._extra_visit_funcs.items()},
            {k: tuple(f.__func__ for f in v) for k, v in op._extra_leave_funcs.items()},
            dict(op._matchers),
        )
        return
    visit, leave, matchers = gathered
    cst.CSTTransformer.__init__(op)
    op._extra_visit_funcs = {k: tuple(types.MethodType(f, op) for f in v) for k, v in visit.items()}
    op._extra_leave_funcs = {k: tuple(types.MethodType(f, op) for f in v) for k, v in leave.items()}
    op._matchers = dict(matchers)


def _imports(module: cst.Module, name: str) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        if cst.Module([]).code_for_node(bound) == name:
                            return True
    return False


def _blank_lines(stmt: cst.BaseStatement) -> int:
    """The blank lines PEP 8 wants before a module-level statement after `stmt`'s kind: 2 around defs."""
    return 2 if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else 0


def _with_blank_lines(stmt: cst.BaseStatement, n: int) -> cst.BaseStatement:
    """`stmt` with at least `n` blank lines before it (its comments kept, below them)."""
    lines = list(stmt.leading_lines)
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    if blank >= n:
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * (n - blank) + lines)


def _pep8_spaced(stmts: list[cst.BaseStatement], *, before: cst.BaseStatement | None) -> list[cst.BaseStatement]:
    """Inserted module-level statements laid out as a person would: two blank lines around
    functions and classes, one between the imports and what follows them."""
    spaced, previous = [], before
    for stmt in stmts:
        if previous is not None:
            wanted = max(_blank_lines(stmt), _blank_lines(previous))
            if not wanted and not is_import(stmt) and is_import(previous):
                wanted = 1
            stmt = _with_blank_lines(stmt, wanted)
        spaced.append(stmt)
        previous = stmt
    return spaced


def _spaced_after(stmt: cst.BaseStatement, inserted: cst.BaseStatement) -> cst.BaseStatement:
    return _with_blank_lines(stmt, max(_blank_lines(stmt), _blank_lines(inserted)))


def _after_imports(body: list[cst.BaseStatement]) -> int:
    at = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) or (i == 0 and m.matches(s, m.Expr(m.SimpleString())))
            for s in stmt.body
        ):
            at = i + 1
        else:
            break
    return at
