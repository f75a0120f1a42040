"""Standalone reproducers: `repro.py`, a script that needs only torch, as PyTorch asks for.

For a harness-form program the reduced program is followed by a few lines that run it
eagerly, then compiled with `backend="eager"` (seeding torch before each), print both
outcomes and fail with an `AssertionError` saying what differs; it exits 0 once the bug
is fixed. The shortest form comes first: six lines and one assertion (`assert_close` for
tensors, `==` for anything else), the form a PyTorch issue takes; where it does not
reproduce (an exception eager raises too, requires_grad, state, globals), a longer
form that compares outcome by outcome. A script-form program that checks itself is its
own reproducer.

A reproducer is believed only after it has been run with plain `python`, outside this
package: it must fail, and a control, the same file with `torch.compile` replaced by the
identity, must pass (otherwise what fails is the program, not the compiler: state that
the eager run left behind, say). `verify` says which.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mutator import syntax
from mutator.exec import sandbox
from mutator.program import Program, ProgramForm
from mutator.values import MapValue, SeqValue, SetValue, TensorValue
from mutator.verdict import Verdict

REPRO_KINDS = (Verdict.MISMATCH, Verdict.CRASH, Verdict.FULLGRAPH_BREAK, Verdict.BACKEND_FAILURE)
_SEPARATOR = "# ---- reproducer: eager vs torch.compile(backend=\"eager\"); exits 1 while the bug is there ----"

_SAME = '''
def _same(eager, compiled, path="result"):
    if isinstance(eager, torch.Tensor) and isinstance(compiled, torch.Tensor):
        assert (eager.dtype, eager.shape) == (compiled.dtype, compiled.shape), \\
            f"{path}: eager {eager.dtype} {tuple(eager.shape)}, compiled {compiled.dtype} {tuple(compiled.shape)}"
        assert eager.requires_grad == compiled.requires_grad, f"{path}: requires_grad differs"
        close = torch.allclose(eager, compiled, equal_nan=True) if eager.is_floating_point() else \\
            torch.equal(eager, compiled)
        assert close, f"{path}: values differ:\\n  eager    {eager}\\n  compiled {compiled}"
    elif isinstance(eager, (list, tuple)) and isinstance(compiled, (list, tuple)):
        assert type(eager) is type(compiled) and len(eager) == len(compiled), \\
            f"{path}: eager {eager!r}, compiled {compiled!r}"
        for i, (e, c) in enumerate(zip(eager, compiled)):
            _same(e, c, f"{path}[{i}]")
    elif isinstance(eager, dict) and isinstance(compiled, dict):
        assert list(eager) == list(compiled), f"{path}: keys {list(eager)} vs {list(compiled)}"
        for key in eager:
            _same(eager[key], compiled[key], f"{path}[{key!r}]")
    else:
        assert type(eager) is type(compiled) and eager == compiled, f"{path}: eager {eager!r}, compiled {compiled!r}"
'''

_FOOTER = '''
def _run(f):
    {seed}
    try:
        result = {run}
    except Exception as e:  # only the program's own code: an error of these lines is not caught
        return e
    return {ret}


expected = _run(fn)
actual = _run(torch.compile(fn{kwargs}))
print("eager:   ", repr(expected))
print("compiled:", repr(actual))
if isinstance(actual, Exception) and not isinstance(expected, Exception):
    raise AssertionError(f"torch.compile: {{type(actual).__name__}} where eager returned") from actual
if isinstance(expected, Exception):
    assert type(actual) is type(expected), f"eager raised {{expected!r}}, compiled gave {{actual!r}}"
else:
    _same(expected, actual)
'''


_GLOBALS = '''
def _globals():  # the program's data globals, which the compiled code must update as eager does
    return {k: type(v)(v) for k, v in globals().items()
            if not k.startswith("_") and type(v) in (dict, list, set, int, float, str, bool, tuple)}


_START = _globals()
'''


def harness_repro(program: Program, *, with_globals: bool = False) -> str:
    """The reduced harness-form program with the lines that run it both ways and compare.

    `with_globals`: each run starts from the globals as the program left them at import
    and the globals after it are compared too (one process runs both ways)."""
    assert program.form is ProgramForm.HARNESS
    names, imported = _top_level_names(program.source)
    call = "drive(f)" if "drive" in names else "f(*inputs())" if _returns_sequences(program.source) else "f(inputs())"
    run = f"({call}, state())" if "state" in names else call
    kwargs = _compile_kwargs(program, names)
    seeds = ["torch.manual_seed(0)"] + (["random.seed(0)"] if "random" in imported else []) + \
        ([f"{imported['numpy']}.random.seed(0)"] if "numpy" in imported else [])
    ret = "result"
    if with_globals:
        seeds.insert(0, "globals().update({k: type(v)(v) for k, v in _START.items()})")
        ret = "result, {k: v for k, v in _globals().items() if k in _START}"
    footer = _FOOTER.format(seed="\n    ".join(seeds), run=run, kwargs=kwargs, ret=ret)
    if with_globals:
        footer = _GLOBALS.strip() + "\n\n" + footer
    source = program.source.rstrip() + "\n\n\n" + _SEPARATOR + "\n" + _SAME.strip() + "\n\n" + footer
    if "torch" not in imported:
        source = "import torch\n" + source
    return source


_SHORT = '''
torch.manual_seed(0)
expected = {eager_run}
torch.manual_seed(0)
actual = {compiled_run}
print("eager:   ", expected)
print("compiled:", actual)
{check}
'''


def short_repro(program: Program, *, tensors: bool) -> str | None:
    """The six-line form: run, run compiled, print both, one assertion (`tensors`: the
    result holds tensors, compared by `torch.testing.assert_close`; else by `==`). None for
    programs it cannot express (state(), reseeded RNGs of other libraries)."""
    assert program.form is ProgramForm.HARNESS
    names, imported = _top_level_names(program.source)
    if "state" in names or "random" in imported or "numpy" in imported:
        return None
    kwargs = _compile_kwargs(program, names)
    if "drive" in names:
        eager_run, compiled_run = "drive(fn)", f"drive(torch.compile(fn{kwargs}))"
    else:
        star = "*" if _returns_sequences(program.source) else ""
        eager_run, compiled_run = f"fn({star}inputs())", f"torch.compile(fn{kwargs})({star}inputs())"
    check = ("torch.testing.assert_close(actual, expected, equal_nan=True)" if tensors else
             'assert actual == expected, f"eager {expected!r}, compiled {actual!r}"')
    footer = _SHORT.format(eager_run=eager_run, compiled_run=compiled_run, check=check)
    source = program.source.rstrip() + "\n\n\n" + _SEPARATOR + footer
    return source if "torch" in imported else "import torch\n" + source


def _compile_kwargs(program: Program, names: set[str]) -> str:
    if "COMPILE_KWARGS" not in names:
        return ', backend="eager"'
    if "backend" in program.source:
        return ', **{**COMPILE_KWARGS, "backend": "eager"}'
    return ', backend="eager", **COMPILE_KWARGS'


def make_repros(program: Program, verdict: Verdict, *, observation: str = "", result: object = None) -> list[str]:
    """Reproducers to try, shortest first (the first that verifies is the one to keep); none
    when this kind of finding gets none (yet). `observation`: what diverged (a Signature's),
    "globals:..." to compare globals too; `result`: the eager run's result (a Value), which
    says how to compare."""
    if verdict not in REPRO_KINDS:
        return []
    if program.form is not ProgramForm.HARNESS:
        return [program.source]  # a script: its own checks, verified like any reproducer
    with_globals = observation.startswith("globals")
    short = None if with_globals else short_repro(program, tensors=_has_tensor(result))
    return [r for r in (short, harness_repro(program, with_globals=with_globals)) if r is not None]


def _has_tensor(value: object) -> bool:
    if isinstance(value, TensorValue):
        return True
    if isinstance(value, (SeqValue, SetValue)):
        return any(_has_tensor(item) for item in value.items)
    if isinstance(value, MapValue):
        return any(_has_tensor(v) for _, v in value.items)
    return False


def control_of(repro: str) -> str:
    """The same reproducer with torch.compile the identity: it must pass."""
    prelude = ("import torch\n"
               "torch.compile = lambda model=None, **kwargs: model if model is not None else (lambda f: f)\n"
               "torch._dynamo.optimize = lambda *args, **kwargs: (lambda f: f)\n")
    lines = repro.splitlines(keepends=True)
    insert = _after_future_imports(repro)
    return "".join(lines[:insert]) + prelude + "".join(lines[insert:])


@dataclass(frozen=True, slots=True)
class Verification:
    reproduces: bool  # fails with plain python, and its control passes
    exit_code: int | None
    control_exit_code: int | None
    output: str  # the end of what the reproducer printed (stdout and stderr)

    def describe(self) -> str:
        if self.reproduces:
            return f"fails with plain python (exit {self.exit_code}); with torch.compile as the identity it passes"
        if self.exit_code == 0:
            return "passes with plain python: the bug does not show outside mutator's runs"
        return (f"fails (exit {self.exit_code}) but so does its control with torch.compile as the identity "
                f"(exit {self.control_exit_code}): what fails is the program, not the compiler")


def verify(repro: str, *, python: str = sys.executable, timeout: float = 300.0) -> Verification:
    """Run the reproducer and its control with plain python, in a scratch directory."""
    code, output = _run_script(repro, python, timeout)
    control = None
    if code not in (0, None):
        control, _ = _run_script(control_of(repro), python, timeout)
    return Verification(code not in (0, None) and control == 0, code, control, output[-4000:])


def _run_script(source: str, python: str, timeout: float) -> tuple[int | None, str]:
    with tempfile.TemporaryDirectory(prefix="mutator-repro-") as scratch:
        path = Path(scratch) / "repro.py"
        path.write_text(source)
        env = sandbox.scrubbed_environment()
        env.pop("PYTHONPATH", None)  # only torch: not this package
        env.update(HOME=scratch, TMPDIR=scratch, TORCHINDUCTOR_CACHE_DIR=os.path.join(scratch, "inductor"))
        try:
            proc = subprocess.run([python, str(path)], cwd=scratch, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f} s"
        return proc.returncode, proc.stdout + proc.stderr


def _top_level_names(source: str) -> tuple[set[str], dict[str, str]]:
    """Names the module defines, and the modules it imports (module -> the name bound)."""
    names: set[str] = set()
    imported: dict[str, str] = {}
    for node in syntax.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if "." not in alias.name or alias.asname:
                    imported[alias.name] = alias.asname or alias.name
                else:
                    imported.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
    return names, imported


def _returns_sequences(source: str) -> bool:
    """Whether inputs() returns tuples or lists (the runtime passes anything else as one argument)."""
    inputs = next((node for node in syntax.parse(source).body if isinstance(node, ast.FunctionDef)
                   and node.name == "inputs"), None)
    returns = [node.value for node in ast.walk(inputs) if isinstance(node, ast.Return)] if inputs else []
    return all(isinstance(value, (ast.Tuple, ast.List)) for value in returns if value is not None) or \
        any(not isinstance(value, (ast.Tuple, ast.List, ast.Call, ast.Constant)) for value in returns)


def _after_future_imports(source: str) -> int:
    """The line index after any docstring and `from __future__` imports."""
    tree = syntax.parse(source)
    end = 0
    for i, node in enumerate(tree.body):
        is_docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if is_docstring or isinstance(node, ast.ImportFrom) and node.module == "__future__":
            end = node.end_lineno or end
        else:
            break
    return end
