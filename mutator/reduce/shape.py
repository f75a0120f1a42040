"""What a reduction keeps besides the signature: which error a crash shows, and where and
between which kinds of value a mismatch diverges.

A signature is a bug's identity as the campaign files it (`mutator.findings.signature`):
kind, exception type, Dynamo site, which observation diverged. Two bugs can share one. A
reduction that deletes a statement can slide from one to the other: a crash
`'_Proxy' object has no attribute '_proxy'` in `builder.py:_wrap` became `issubclass()
arg 1 must be a class`, at the same site, a bug a newer torch fixed while the first is
still live; a `globals:value:int` mismatch went from a list a decorator's wrapper
mutates to a `self.__dict__.get` default. So the reducer's predicate (`Target`) keeps a
`Shape` too: a crash's message, a mismatch's path and the kinds of its two values, each
with what varies between programs of one bug masked (quoted text, addresses, numbers and
the program's own names), so that `'_Proxy' object has no attribute '_proxy'` and `'_Box'
object has no attribute 'x'` are one shape and `issubclass() arg 1 must be a class`
another.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass

from mutator.core.verdict import Verdict
from mutator.judge.oracle import Judgement

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[A-Za-z_]\w*")
_LIMIT = 200

# kinds whose signature is an exception's type and site: the message tells their errors apart
_BY_MESSAGE = (Verdict.CRASH, Verdict.FULLGRAPH_BREAK)


def masked(text: str, names: Collection[str] = frozenset()) -> str:
    """The first line of `text` with quoted text, addresses, numbers and `names` (the
    program's own) masked: what stays the same between two programs of one error."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = _ADDRESS.sub("<address>", first)
    first = _WORD.sub(lambda word: "<name>" if word.group() in names else word.group(), first)
    return _NUMBER.sub("N", _QUOTED.sub("<quoted>", first))[:_LIMIT]


def program_names(source: str) -> frozenset[str]:
    """The names a program defines (functions, classes, parameters, variables, attributes
    it assigns), not those it imports: what a message may name that another program of
    the same bug names otherwise."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Shape:
    """A failure's shape, for the kinds the signature leaves ambiguous; empty otherwise."""

    message: str = ""  # a crash's (or refused graph break's) exception message, masked
    path: str = ""  # a mismatch's diverging observation, masked ("call N (<name>) result[N]")
    kinds: str = ""  # a mismatch's two values: "eager int, compiled int"

    @classmethod
    def of(cls, judgement: Judgement, names: Collection[str]) -> Shape:
        """`names`: the target program's (`program_names`), for every candidate alike."""
        if judgement.verdict is Verdict.MISMATCH and judgement.divergence is not None:
            divergence = judgement.divergence
            kinds = f"eager {divergence.kind}, compiled {divergence.compiled_kind}" \
                if divergence.kind or divergence.compiled_kind else ""
            return cls(path=masked(divergence.where, names), kinds=kinds)
        if judgement.verdict in _BY_MESSAGE and judgement.exception is not None:
            return cls(message=masked(judgement.exception.message, names))
        return cls()

    def describe(self) -> str:
        return "; ".join(part for part in (self.message, self.path, self.kinds) if part)
