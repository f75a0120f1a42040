"""Whether an exception is one of the program's own checks, and what that check is about.

Scripts check themselves: `assert torch.allclose(eager, compiled)`, `assert_close`,
`self.assertEqual`, `raise AssertionError(...)` in an `else:`. The oracle treats a
failing check of values as a wrong result, and a failing check of *compiler behaviour*
(`cnt.frame_count == 1`, `counters["graph_break"]`, `assertRaises(Unsupported)`) as the
program's expectation of the compiler, not a bug. This runs in the child, where the
failing frame's values can still be looked at.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import types
from typing import Any

from mutator.runtime.ownership import library_owner

CHECK = "check"  # the program's own check of values failed
COMPILER_CHECK = "compiler"  # the program's own check of compiler behaviour failed
_CHECK_HELPERS = ("unittest/", "torch/testing/", "numpy/testing/", "_pytest/", "pytest/")
_COMPILER_OWNERS = ("torch._dynamo", "torch._inductor", "torch._functorch", "torch.fx", "torch._guards",
                    "torch._logging", "torch.compiler", "torch._subclasses")
# harvested programs carry their own assertion helpers (mutator.harvest.framework): the check
# they stand for is the caller's
_HELPERS = ("HarvestedChecks.", "harvested_same", "harvested_raises.", "harvested_standard_test")
_COMPILER_WORDS = re.compile(  # assertExpectedInline: what expecttest compares is the compiler's printout
    r"frame_count|op_count|graph_count|graph_break|graph break|unique_graphs|recompil|fullgraph|assertExpected|"
    r"Unsupported|counters\[|explain|compile_times|cache_size|frames\W+ok", re.IGNORECASE)
_MAX_ITEMS = 16
_COMPILE_STEP = ("torch/_dynamo/convert_frame.py",)  # a frame here: Dynamo is compiling, not running


class ProgramSource:
    """The program's file name and syntax tree, to find the statement a frame is in."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self._source = source

    @functools.cached_property
    def _statements(self) -> list[ast.stmt]:
        try:
            tree = ast.parse(self._source)
        except SyntaxError:
            return []
        return [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]

    def statement_at(self, lineno: int) -> ast.stmt | None:
        """The innermost statement whose first line is `lineno` (or that spans it)."""
        spanning = [s for s in self._statements if s.lineno <= lineno <= (s.end_lineno or s.lineno)]
        starting = [s for s in spanning if s.lineno == lineno]
        pool = starting or spanning
        return min(pool, key=lambda s: (s.end_lineno or s.lineno) - s.lineno, default=None)

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self._source, node) or ""


def classify_check(exc: BaseException, program: ProgramSource | None, *, in_call: bool = False) -> str | None:
    """CHECK or COMPILER_CHECK when `exc` is a failing check of the program's own, else None.

    A check is an AssertionError raised by the program's code (or an assertion helper it
    called: unittest, torch.testing, numpy.testing, pytest), or, outside compiled calls
    (`in_call` False), an exception raised by a `raise` statement of the program's. An
    exception of torch's types (a backend's error wrapped in BackendCompilerFailed keeps
    the program's traceback) is never one.
    """
    if program is None or type(exc).__module__.startswith("torch"):
        return None
    frames = _frames(exc)
    own = [(frame, lineno) for frame, lineno in frames if frame.f_code.co_filename == program.name]
    if not own:
        return None
    innermost_file = frames[-1][0].f_code.co_filename
    callers = [(f, n) for f, n in own if not getattr(f.f_code, "co_qualname", f.f_code.co_name).startswith(_HELPERS)]
    frame, lineno = (callers or own)[-1]
    statement = program.statement_at(lineno)
    if isinstance(exc, AssertionError):
        if innermost_file != program.name and not any(h in innermost_file for h in _CHECK_HELPERS):
            return None  # an AssertionError from inside torch is torch's, not the program's
    elif in_call or innermost_file != program.name or not isinstance(statement, ast.Raise):
        return None
    if statement is not None and _about_compiler(statement, program, frame, exc):
        return COMPILER_CHECK
    if isinstance(exc, AssertionError) and any(_compiling(f) for f, _ in frames):
        # the program's code run by Dynamo while it compiles (a bytecode hook, a backend
        # callable): what it checks is the compiler's output
        return COMPILER_CHECK
    return CHECK


def _compiling(frame: types.FrameType) -> bool:
    return frame.f_code.co_filename.replace("\\", "/").endswith(_COMPILE_STEP)


class CompilerPrints:
    """Tells whether the program is printing compiler state right now (`print(cnt.frame_count)`,
    `print(counters)`): such text differs by design between an eager and a compiled run."""

    def __init__(self, program: ProgramSource) -> None:
        self._program = program
        self._cache: dict[tuple[int, int], bool] = {}

    def __call__(self) -> bool:
        frame = sys._getframe(1)
        for _ in range(12):
            if frame is None:
                return False
            if frame.f_code.co_filename == self._program.name:
                key = (id(frame.f_code), frame.f_lineno)
                if key not in self._cache:
                    statement = self._program.statement_at(frame.f_lineno)
                    self._cache[key] = statement is not None and _about_compiler(statement, self._program, frame)
                return self._cache[key]
            frame = frame.f_back
        return False


def _about_compiler(statement: ast.stmt, program: ProgramSource, frame: types.FrameType,
                    exc: BaseException | None = None) -> bool:
    """Whether a statement looks at the compiler: its counters, graphs, refusals."""
    text = program.segment(statement) if not isinstance(statement, (ast.With, ast.For, ast.If, ast.Try)) \
        else program.segment(statement).splitlines()[0]
    if _COMPILER_WORDS.search(text) or exc is not None and _COMPILER_WORDS.search(_message(exc)):
        return True
    header = statement.items if isinstance(statement, ast.With) else [statement]
    for node in (n for part in header for n in ast.walk(part)):
        if isinstance(node, (ast.Name, ast.Attribute)) and _is_compiler_state(_resolve(node, frame)):
            return True
    return False


def _resolve(node: ast.expr, frame: types.FrameType) -> Any:
    """The value of a name or attribute chain, read without running any program code."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, frame)
        if isinstance(base, types.ModuleType):
            return vars(base).get(node.attr)
        try:
            return object.__getattribute__(base, "__dict__").get(node.attr)
        except (AttributeError, TypeError):
            return None
    return None


def _is_compiler_state(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return False
    if isinstance(value, (list, tuple)):
        return any(_is_compiler_state(item) for item in value[:_MAX_ITEMS])
    owner = value.__module__ if isinstance(value, type) else library_owner(value)
    return bool(owner) and owner.startswith(_COMPILER_OWNERS)


def _frames(exc: BaseException) -> list[tuple[types.FrameType, int]]:
    frames: list[tuple[types.FrameType, int]] = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return frames


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a program's __str__ may raise anything
        return ""
