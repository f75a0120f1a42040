"""`ast.parse`, one thread at a time.

CPython 3.11 converts a parse tree to `ast` nodes with a recursion-depth counter that
threads share: two threads parsing at once can fail with "SystemError: AST constructor
recursion depth mismatch" (cpython gh-106905). The fuzzer parses in its check threads,
its reduction thread, its LLM threads and its main thread, so every parse of ours goes
through this lock. `warnings.catch_warnings` is process-wide too: `strict` parses (a
SyntaxWarning is an error) hold the same lock.
"""

from __future__ import annotations

import ast
import threading
import warnings

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", *, strict: bool = False) -> ast.Module:
    """ast.parse; `strict`: a SyntaxWarning (`1if`, `x is 1`) raises SyntaxError instead."""
    with _LOCK:
        if not strict:
            return ast.parse(source, filename)
        with warnings.catch_warnings():
            warnings.simplefilter("error", SyntaxWarning)
            try:
                return ast.parse(source, filename)
            except SyntaxWarning as exc:
                raise SyntaxError(str(exc)) from None


def compiles(tree: ast.Module, filename: str = "<unknown>") -> bool:
    """Whether Python compiles `tree` without an error or a SyntaxWarning (the compiler's
    own: `None(x)`, `1[0]`, "perhaps you missed a comma?"), printing nothing."""
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        try:
            compile(tree, filename, "exec", dont_inherit=True)
        except (SyntaxError, SyntaxWarning, ValueError):
            return False
    return True
