"""Standalone reproducers: `repro.py`, a script that needs only torch, as PyTorch asks for.

For a harness-form program the reduced program is followed by a few lines that run it
eagerly, then compiled with `backend="eager"` (seeding torch before each), print both
outcomes and fail with an `AssertionError` saying what differs; it exits 0 once the bug
is fixed. The shortest form comes first: six lines and one assertion (`assert_close` for
tensors, `==` for anything else), the form a PyTorch issue takes; where it does not
reproduce (an exception eager raises too, requires_grad, state, globals), a longer
form that compares outcome by outcome; last, one that runs each side in a fresh process
(`repro_process`), for programs whose eager run leaves state behind, comparing objects'
attributes too. A script-form program that checks itself is its own reproducer. A hang
gets a time limit (`repro_process`); a recompile storm and specialisation get a script
that counts compilations (`repro_counts`). Every form first sets the Dynamo configuration
the program ran under (what it changed itself, as the runtime recorded it). Dynamo's
internal error is a `RuntimeError`, which a program's own `except RuntimeError` or
`assertRaises(RuntimeError)` may catch: for such a crash the last form also fails when
one was raised anywhere.

A reproducer is believed only after it has been run with plain `python`, outside this
package: it must fail, and a control, the same file with `torch.compile` replaced by the
identity, must pass (otherwise what fails is the program, not the compiler: state that
the eager run left behind, say). `verify` says which.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mutator.exec import sandbox
from mutator.core.program import Program, ProgramForm
from mutator.reduce.repro_counts import count_repro
from mutator.reduce.repro_facts import ReproFacts
from mutator.reduce.repro_process import fresh_calls_repro, fresh_repro, hang_repro
from mutator.reduce.repro_source import (SAME, after_future_imports, compile_kwargs, config_lines, insert_prelude,
                                         returns_sequences, surfacing_internal_errors, top_level_names)
from mutator.runtime.configs import Changes
from mutator.core.values import MapValue, SeqValue, SetValue, TensorValue
from mutator.core.verdict import Verdict

# the kinds whose reproducer compares outcomes; HANG, RECOMPILE_STORM and SPECIALIZATION
# (by the recompile limit) get their own (mutator.reduce.repro_process, repro_counts)
VALUE_KINDS = (Verdict.MISMATCH, Verdict.CRASH, Verdict.FULLGRAPH_BREAK, Verdict.BACKEND_FAILURE)
_SEPARATOR = "# ---- reproducer: eager vs torch.compile(backend=\"eager\"); exits 1 while the bug is there ----"

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


def harness_repro(program: Program, *, with_globals: bool = False, config: Changes = ()) -> str:
    """The reduced harness-form program with the lines that run it both ways and compare.

    `with_globals`: each run starts from the globals as the program left them at import
    and the globals after it are compared too (one process runs both ways)."""
    assert program.form is ProgramForm.HARNESS
    names, imported = top_level_names(program.source)
    call = "drive(f)" if "drive" in names else "f(*inputs())" if returns_sequences(program.source) else "f(inputs())"
    run = f"({call}, state())" if "state" in names else call
    kwargs = compile_kwargs(program, names)
    seeds = ["torch.manual_seed(0)"] + (["random.seed(0)"] if "random" in imported else []) + \
        ([f"{imported['numpy']}.random.seed(0)"] if "numpy" in imported else [])
    ret = "result"
    if with_globals:
        seeds.insert(0, "globals().update({k: type(v)(v) for k, v in _START.items()})")
        ret = "result, {k: v for k, v in _globals().items() if k in _START}"
    footer = _FOOTER.format(seed="\n    ".join(seeds), run=run, kwargs=kwargs, ret=ret)
    if with_globals:
        footer = _GLOBALS.strip() + "\n\n" + footer
    source = program.source.rstrip() + "\n\n\n" + _heading(config) + "\n\n\n" + SAME.strip() + "\n\n" + footer
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


def short_repro(program: Program, *, tensors: bool, config: Changes = (), types: bool = False) -> str | None:
    """The six-line form: run, run compiled, print both, one assertion (`tensors`: the
    result holds tensors, compared by `torch.testing.assert_close`; else by `==`; `types`: a
    tensor's type diverged, which assert_close lets pass for a subclass unless told). None for
    programs it cannot express (state(), reseeded RNGs of other libraries)."""
    assert program.form is ProgramForm.HARNESS
    names, imported = top_level_names(program.source)
    if "state" in names or "random" in imported or "numpy" in imported:
        return None
    kwargs = compile_kwargs(program, names)
    if "drive" in names:
        eager_run, compiled_run = "drive(fn)", f"drive(torch.compile(fn{kwargs}))"
    else:
        star = "*" if returns_sequences(program.source) else ""
        eager_run, compiled_run = f"fn({star}inputs())", f"torch.compile(fn{kwargs})({star}inputs())"
    exact = ", allow_subclasses=False" if types else ""
    check = (f"torch.testing.assert_close(actual, expected, equal_nan=True{exact})" if tensors else
             'assert actual == expected, f"eager {expected!r}, compiled {actual!r}"')
    footer = _SHORT.format(eager_run=eager_run, compiled_run=compiled_run, check=check)
    source = program.source.rstrip() + "\n\n\n" + _heading(config) + "\n" + footer.lstrip("\n")
    return source if "torch" in imported else "import torch\n" + source


def _heading(config: Changes) -> str:
    return "\n".join(filter(None, [_SEPARATOR, config_lines(config)]))


def make_repros(program: Program, verdict: Verdict, *, observation: str = "", result: object = None,
                facts: ReproFacts = ReproFacts()) -> list[str]:
    """Reproducers to try, shortest first (the first that verifies is the one to keep); none
    when this kind of finding gets none (`missing` says why). `observation`: what diverged (a
    Signature's), "globals:..." to compare globals too; `result`: the eager run's result (a
    Value), which says how to compare; `facts`: what the finding's runs showed besides
    (repeated states, the recompile limit, the configuration the program set)."""
    config = facts.config
    if verdict is Verdict.HANG:
        return [hang_repro(program, config=config)]
    if verdict is Verdict.RECOMPILE_STORM:
        return [count_repro(program, verdict, repeats=facts.repeats, config=config)] if facts.repeats else []
    if verdict is Verdict.SPECIALIZATION and facts.limit_hit:
        return [count_repro(program, verdict, config=config)]
    if verdict not in VALUE_KINDS and verdict is not Verdict.SPECIALIZATION:  # refused as dynamic: an exception
        return []
    if program.form is not ProgramForm.HARNESS:  # a script: its own checks, verified like any reproducer
        with_config = insert_prelude(program.source, f"import torch\n{config_lines(config)}\n") if config else None
        repros = [r for r in (with_config, program.source) if r is not None]
    else:
        with_globals = observation.startswith("globals")
        short = None if with_globals else short_repro(program, tensors=_has_tensor(result), config=config,
                                                          types=":type:" in observation)
        # then each side in a fresh process: state one run leaves behind (a global, an environment
        # variable) cannot reach the other, and objects' attributes are compared too; last, also
        # what each call inside drive() returned, where drive() does not return it
        repros = [r for r in (short, harness_repro(program, with_globals=with_globals, config=config),
                              fresh_repro(program, config=config), fresh_calls_repro(program, config=config))
                  if r is not None]
    if facts.internal_error:  # where the program catches it, only a script that looks for it fails
        repros.append(surfacing_internal_errors(repros[0]))
    return repros


def missing(verdict: Verdict, facts: ReproFacts) -> str:
    """Why a finding of this kind gets no reproducer to try (it follows "could not be verified: " in a report)."""
    if verdict is Verdict.RECOMPILE_STORM and not facts.repeats:
        return "the finding's runs do not say which call repeated an earlier call's state, so there is none to run"
    return f"no reproducer is made for {verdict.name} findings"


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
    insert = after_future_imports(repro)
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
