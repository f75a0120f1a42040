"""Driver operators: more calls to the compiled callable, with something changed between them.

Guards only matter across calls, so the G operators rewrite the driver. `DriverOperator`
adds calls after the program's own ones (which run first and untouched; drive(f) then
returns both results), or varies a script's top-level call. The result helpers let an
operator make the compiled entry's result depend on a new parameter or global.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operators._facts import FactsOperator, ProgramFacts
from mutator.mutation.operators._templates import parse_lines
from mutator.mutation.operators._tensor_facts import TensorFacts
from mutator.mutation.tree import body_nodes, children, code, dotted


def indent(text: str, by: str = "    ") -> str:
    """`text` with every non-empty line indented `by`."""
    return "\n".join(by + line if line else line for line in text.strip("\n").splitlines())


class DriverOperator(FactsOperator):
    """Adds calls to the compiled callable with something changed between them.

    Harness: the site is drive(f), or inputs() when there is no drive (one is then created
    that makes the default single call first). Subclasses implement `extra_calls(f, out)`:
    statements that call `f` and append results to the list `out`; None declines.
    Script: the site is a top-level statement calling a compiled callable; `vary_script`
    returns statements to put before it (typically a varied copy), None declines.
    """

    TARGET = "anywhere"

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        drive = ctx.top_level("drive") if ctx.is_harness else None
        self.drive = drive if isinstance(drive, cst.FunctionDef) else None
        self.compiled = ctx.compiled_names if not ctx.is_harness else {}
        self._entry_rewrite: tuple[cst.FunctionDef, cst.FunctionDef] | None = None

    # -- for subclasses -------------------------------------------------------------------
    def applicable(self) -> bool:
        """Cheap check before counting a harness site."""
        return True

    def extra_calls(self, f: str, out: str) -> str | None:
        raise NotImplementedError

    def vary_script(self, stmt: cst.SimpleStatementLine, call: cst.Call,
                    entry: cst.FunctionDef | None) -> list[cst.BaseStatement] | None:
        self.decline(f"{self.name} does not vary script programs")
        return None

    def rewrite_entry(self, entry: cst.FunctionDef, new: cst.FunctionDef) -> None:
        """Ask for the compiled entry to be replaced (say, to take a new parameter)."""
        self._entry_rewrite = (entry, new)

    def inputs_call(self) -> str:
        return "inputs()"

    # -- machinery ------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._entry_rewrite is None or self.declined:
            return updated_node
        old, new = self._entry_rewrite
        return updated_node.visit(_Replace(old, new))  # type: ignore[return-value]

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not self.ctx.is_harness or original_node.name.value not in ("drive", "inputs"):
            return updated_node
        is_site = (original_node is self.drive) or (self.drive is None and original_node.name.value == "inputs"
                                                    and self.ctx.top_level("inputs") is original_node)
        if not is_site or not self.applicable() or not self.is_site(original_node):
            return updated_node
        if self.drive is None:
            out = self.fresh("extra")
            extra = self.extra_calls("f", out)
            if extra is None:
                return updated_node
            first = self.fresh("first")
            self.append_to_module(f"def drive(f):\n    {first} = f(*inputs())\n    {out} = []\n"
                                  f"{indent(extra)}\n    return {first}, {out}")
            return updated_node
        return self._extend_drive(updated_node)

    def _extend_drive(self, drive: cst.FunctionDef) -> cst.FunctionDef:
        returns = [n for n in body_nodes(drive) if isinstance(n, cst.Return)]
        body = list(drive.body.body) if isinstance(drive.body, cst.IndentedBlock) else []
        last = body[-1] if body else None
        if (len(returns) != 1 or not m.matches(last, m.SimpleStatementLine([m.Return()]))
                or last.body[0] is not returns[0] or returns[0].value is None or not drive.params.params):
            self.decline("drive(f) does not end in its only return statement")
            return drive
        f = drive.params.params[0].name.value
        out, result = self.fresh("extra"), self.fresh("result")
        extra = self.extra_calls(f, out)
        if extra is None:
            return drive
        new = parse_lines(f"{result} = {code(returns[0].value)}\n{out} = []\n{extra}\nreturn {result}, {out}")
        return drive.with_changes(body=drive.body.with_changes(body=[*body[:-1], *new]))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        if self.ctx.is_harness or not any(original_node is s for s in self.ctx.module.body):
            return updated_node
        call = next((n for n in _walk_calls(original_node) if dotted(n.func) in self.compiled), None)
        if call is None or not self.is_site(original_node):
            return updated_node
        before = self.vary_script(original_node, call, self.compiled[dotted(call.func)])
        if not before:
            return updated_node
        return cst.FlattenSentinel([*before, updated_node])

    def entry(self) -> cst.FunctionDef | None:
        """The one compiled entry of a harness program."""
        return self.ctx.entries[0] if self.ctx.is_harness and len(self.ctx.entries) == 1 else None


class _Replace(cst.CSTTransformer):
    """Replace the function equal to `old` (the entry may sit before or after the driver)."""

    def __init__(self, old: cst.FunctionDef, new: cst.FunctionDef) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        return self.new if original_node.deep_equals(self.old) else updated_node


def _walk_calls(node: cst.CSTNode) -> list[cst.Call]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            found.append(current)
        if not isinstance(current, cst.Lambda):
            stack.extend(reversed(children(current)))
    return found


# -- the compiled entry's result ------------------------------------------------------------------
def result_site(facts: TensorFacts, entry: cst.FunctionDef) -> tuple[int, cst.BaseExpression, int | None] | None:
    """(body index of the final return, the floating-point tensor it returns, its tuple position)."""
    body = entry.body.body if isinstance(entry.body, cst.IndentedBlock) else ()
    if not body or not m.matches(body[-1], m.SimpleStatementLine([m.Return()])) or body[-1].body[0].value is None:
        return None
    value = body[-1].body[0].value
    if facts.is_float(value):
        return len(body) - 1, value, None
    if isinstance(value, cst.Tuple):
        for i, element in enumerate(value.elements):
            if not isinstance(element, cst.StarredElement) and facts.is_float(element.value):
                return len(body) - 1, element.value, i
    return None


def use_in_result(facts: TensorFacts, entry: cst.FunctionDef, param: str | None, default: str, use: str,
                  res: str) -> cst.FunctionDef | None:
    """`entry` with `use` (statements on `res`) applied to its result, and a new parameter `param=default`."""
    params = entry.params
    if param is not None and (isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None):
        return None
    site = result_site(facts, entry)
    if site is None:
        return None
    at, value, position = site
    ret = entry.body.body[at]
    new_value: cst.BaseExpression = cst.Name(res)
    if position is not None:
        elements = list(ret.body[0].value.elements)
        elements[position] = elements[position].with_changes(value=cst.Name(res))
        new_value = ret.body[0].value.with_changes(elements=elements)
    bare = value.with_changes(lpar=(), rpar=()) if hasattr(value, "lpar") else value
    stmts = [*parse_lines(f"{res} = {code(bare)}\n{use}"),
             ret.with_changes(body=[ret.body[0].with_changes(value=new_value)])]
    entry = entry.with_changes(body=entry.body.with_changes(body=[*entry.body.body[:at], *stmts]))
    if param is None:
        return entry
    new_param = cst.Param(cst.Name(param), default=cst.parse_expression(default),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    return entry.with_changes(params=params.with_changes(params=[*params.params, new_param]))


def has_result(facts: ProgramFacts, entry: cst.FunctionDef | None) -> bool:
    """True when `entry` ends by returning a floating-point tensor (alone or in a tuple)."""
    return entry is not None and result_site(facts.facts(entry), entry) is not None
