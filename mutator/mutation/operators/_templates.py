"""How operators write new code: templates, module-level helpers, and expressions fitted into place.

Template text becomes statements (`build`, `parse_lines`) or an expression
(`template_expr`); module-level helpers get fresh names (`define_helpers`, `record`);
program expressions are parenthesised as their new position needs (`paren`, `atom_code`,
`operand_code`) so that moving them never changes how they parse.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from string import Template

import libcst as cst
import libcst.matchers as m
from libcst.helpers import parse_template_expression

from mutator.mutation.operator import Operator
from mutator.mutation.tree import after_docstring, code

# -- statements -----------------------------------------------------------------------------------


class _Fill(cst.CSTTransformer):
    """Replaces placeholder names by expressions and placeholder lines by statements."""

    def __init__(self, parts: dict[str, cst.BaseExpression | Sequence[cst.BaseStatement]]) -> None:
        super().__init__()
        self.parts = parts

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        part = self.parts.get(updated_node.value)
        return part if isinstance(part, cst.BaseExpression) else updated_node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if m.matches(original_node, m.SimpleStatementLine(body=[m.Expr(m.Name())])):
            part = self.parts.get(original_node.body[0].value.value)  # type: ignore[attr-defined]
            if part is not None and not isinstance(part, cst.BaseExpression):
                return cst.FlattenSentinel(list(part))
        return updated_node


def build(template: str, **parts: cst.BaseExpression | Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Parse `template`; a Name spelled like a key of `parts` becomes that expression, and a
    line holding just such a name becomes those statements. Program code never goes through text,
    so its own layout (multi-line expressions, comments) cannot break the template's indentation."""
    return list(cst.parse_module(textwrap.dedent(template).strip() + "\n").visit(_Fill(parts)).body)


def parse_lines(text: str) -> list[cst.BaseStatement]:
    """The statements of `text` (module level, no indentation)."""
    return list(cst.parse_module(text.strip() + "\n").body)


def insert_at_top(fn: cst.FunctionDef, new: list[cst.BaseStatement]) -> cst.FunctionDef:
    """`fn` with `new` at the top of its body, after the docstring."""
    if not isinstance(fn.body, cst.IndentedBlock):
        return fn
    body = list(fn.body.body)
    at = after_docstring(body)
    body[at:at] = new
    return fn.with_changes(body=fn.body.with_changes(body=body))


class _OwnReturns(cst.CSTTransformer):
    """Rewrites the return statements of one function body, not those of nested defs, classes and lambdas."""

    def __init__(self, value: Callable[[cst.Return], cst.BaseExpression]) -> None:
        super().__init__()
        self.value = value

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        return updated_node.with_changes(value=self.value(updated_node))


def rewrite_returns(body: cst.BaseSuite, value: Callable[[cst.Return], cst.BaseExpression]) -> cst.BaseSuite:
    """`body` (of a function) with what each of its own return statements returns replaced by `value(return)`."""
    return body.visit(_OwnReturns(value))  # type: ignore[return-value]


# -- module-level helpers -------------------------------------------------------------------------

def record(op: Operator, base: str) -> str:
    """A fresh module-level dict the mutant records what ran in, idempotently (`LOG["finally"] = True`).

    Globals are compared after every call, so the record is observed; and because it stops
    growing after the first call, Dynamo's guards on it stay valid (a list appended to on every
    call would make every call recompile, a recompile storm of our own making)."""
    name = op.fresh(base)
    op.add_helper(f"{name} = {{}}")
    return name


_HELPER_MODULES = ("torch", "dataclasses", "collections", "functools", "types")


def define_helpers(op: Operator, template: str) -> dict[str, str]:
    """Add module-level helper code with a fresh identifier for every `$name` in it; returns the names.

    The modules the code uses (`torch.`, `functools.`, ...) are imported too."""
    fresh = {name: op.fresh(f"_{name}") for name in dict.fromkeys(re.findall(r"\$(\w+)", template))}
    for module in _HELPER_MODULES:
        if re.search(rf"\b{module}\.", template):
            op.add_import(module)
    op.add_helper(Template(template).substitute(fresh))
    return fresh


# -- expressions ----------------------------------------------------------------------------------

def template_expr(template: str, **nodes: cst.BaseExpression | str) -> cst.BaseExpression:
    """An expression from a `{placeholder}` template; strings become names."""
    return parse_template_expression(template, **{k: cst.Name(v) if isinstance(v, str) else v
                                                  for k, v in nodes.items()})


def keyword_arg(keyword: str, value: cst.BaseExpression) -> cst.Arg:
    """`keyword=value`, spelled without spaces around `=`."""
    return cst.Arg(value, keyword=cst.Name(keyword), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


_ATOMS = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Call, cst.Subscript,
          cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp,
          cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis)


def paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr`, parenthesised unless it is an atom (safe to substitute anywhere)."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def atom_code(node: cst.BaseExpression) -> str:
    """The node's code, parenthesised when it is a bare tuple (`a, b`) or generator expression."""
    text = code(node)
    return f"({text})" if isinstance(node, (cst.Tuple, cst.GeneratorExp)) and not node.lpar else text


# unlike paren's atoms, implicitly concatenated strings and `...` get parentheses here
_OPERAND_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary,
                  cst.SimpleString, cst.FormattedString, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp,
                  cst.DictComp)


def operand_code(node: cst.BaseExpression) -> str:
    """The node's code, parenthesised unless it is an atom: safe as an operand or a `for ... in` iterable."""
    text = code(node)
    return text if isinstance(node, _OPERAND_ATOMS) or getattr(node, "lpar", None) else f"({text})"
