"""What every reproducer is made of: how a harness program is called (read from its
source), the lines that seed and compile it, `_same`, and the Dynamo configuration the
program ran under, set before anything is compiled."""

from __future__ import annotations

import ast

from mutator.core import parsing
from mutator.core.configurations import CONFIGURATIONS
from mutator.core.program import Program
from mutator.runtime.configs import Changes

SAME = '''
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


_INTERNAL_ERRORS = '''# ---- reproducer: Dynamo's internal errors fail the script, even where the program catches them ----
import atexit as _atexit
import os as _os
import sys as _sys
import traceback as _traceback

import torch._dynamo.exc as _dynamo_exc

_INTERNAL_ERRORS = []
_internal_error_init = _dynamo_exc.InternalTorchDynamoError.__init__


def _record_internal_error(self, *args, **kwargs):
    _internal_error_init(self, *args, **kwargs)
    _INTERNAL_ERRORS.append(self)


_dynamo_exc.InternalTorchDynamoError.__init__ = _record_internal_error


@_atexit.register
def _fail_on_internal_errors():
    if _INTERNAL_ERRORS:
        _sys.stdout.flush()
        print("torch.compile raised an internal error (the program caught it):", file=_sys.stderr)
        _traceback.print_exception(_INTERNAL_ERRORS[0], file=_sys.stderr)
        _sys.stderr.flush()
        _os._exit(1)
# ----


'''


def surfacing_internal_errors(repro: str) -> str:
    """`repro` made to exit 1 when torch.compile raised an `InternalTorchDynamoError`
    anywhere, also where the program catches it: that is a `RuntimeError`, and a test's
    `assertRaises(RuntimeError)` or an `except RuntimeError:` swallows it, so the script
    would pass with the bug there."""
    return insert_prelude(repro, _INTERNAL_ERRORS)


def config_lines(config: Changes) -> str:
    """`torch._dynamo.config.<name> = <value>` for each entry the compiled calls ran under,
    set before anything is compiled: a named configuration's entries (`mutator.core.
    configurations`: a campaign checked the program under it) with a comment saying what it
    is and whether users run it, then those the program changed itself."""
    if not config:
        return ""
    rest = dict(config)
    named = []
    for configuration in CONFIGURATIONS.values():
        if configuration.settings and all(rest.get(name) == value for name, value in configuration.settings):
            named.append(configuration)
            for name, _ in configuration.settings:
                del rest[name]
    modules = sorted({name.rsplit(".", 1)[0] for name, _ in config})
    lines = [f"import {module}" for module in modules]
    for configuration in named:
        lines += [f"# the configuration {configuration.name!r}: {configuration.why}",
                  *(f"{name} = {value}" for name, value in configuration.settings)]
    if rest:
        lines += ["# the compiler configuration the program ran under (it sets it itself)",
                  *(f"{name} = {value}" for name, value in sorted(rest.items()))]
    return "\n".join(lines)


def compile_kwargs(program: Program, names: set[str]) -> str:
    if "COMPILE_KWARGS" not in names:
        return ', backend="eager"'
    if "backend" in program.source:
        return ', **{**COMPILE_KWARGS, "backend": "eager"}'
    return ', backend="eager", **COMPILE_KWARGS'


def call_of(program: Program, names: set[str], f: str) -> str:
    """How the runtime calls the compiled callable `f`: drive(f), else f with inputs()."""
    if "drive" in names:
        return f"drive({f})"
    return f"{f}(*inputs())" if returns_sequences(program.source) else f"{f}(inputs())"


def compiled_run(program: Program, names: set[str]) -> str:
    return call_of(program, names, f"torch.compile(fn{compile_kwargs(program, names)})")


def seeds(imported: dict[str, str]) -> str:
    """The generators the runtime seeds before each run, as far as the program imports them."""
    return "\n".join(["torch.manual_seed(0)"] + (["random.seed(0)"] if "random" in imported else []) +
                     ([f"{imported['numpy']}.random.seed(0)"] if "numpy" in imported else []))


def insert_prelude(source: str, prelude: str) -> str:
    """`prelude` after the program's docstring and `from __future__` imports."""
    lines = source.splitlines(keepends=True)
    at = after_future_imports(source)
    return "".join(lines[:at]) + prelude + "".join(lines[at:])


def top_level_names(source: str) -> tuple[set[str], dict[str, str]]:
    """Names the module defines, and the modules it imports (module -> the name bound)."""
    names: set[str] = set()
    imported: dict[str, str] = {}
    for node in parsing.parse(source).body:
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


def returns_sequences(source: str) -> bool:
    """Whether inputs() returns tuples or lists (the runtime passes anything else as one argument)."""
    inputs = next((node for node in parsing.parse(source).body if isinstance(node, ast.FunctionDef)
                   and node.name == "inputs"), None)
    returns = [node.value for node in ast.walk(inputs) if isinstance(node, ast.Return)] if inputs else []
    return all(isinstance(value, (ast.Tuple, ast.List)) for value in returns if value is not None) or \
        any(not isinstance(value, (ast.Tuple, ast.List, ast.Call, ast.Constant)) for value in returns)


def after_future_imports(source: str) -> int:
    """The line index after any docstring and `from __future__` imports."""
    tree = parsing.parse(source)
    end = 0
    for i, node in enumerate(tree.body):
        is_docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if is_docstring or isinstance(node, ast.ImportFrom) and node.module == "__future__":
            end = node.end_lineno or end
        else:
            break
    return end
