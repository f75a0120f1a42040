"""Reproducers that run eager and compiled each in a fresh process of its own.

Two needs share the form. A program whose eager run leaves state behind (a module
global, a class-level counter, a mode, torch's global state) makes a one-process
reproducer compare the compiled run against a changed world: its control fails too and it
is not believed. And a hang is best stopped from outside: a timeout on a child process
stops Dynamo in C code too, where `signal.alarm` would not.

The script runs itself twice with an argument (`eager` or `compiled`) naming the side;
each child saves what it observed (pickled: a value that does not pickle is kept as its
repr) and the parent compares: the result or the exception type, `state()`, the
arguments after the call, the program's data globals and the attributes of its objects
and classes, which is what the finding compared. For a hang the parent gives the
compiled child `factor` times the eager child's time plus `margin` seconds and exits 1
when it is not done by then.
"""

from __future__ import annotations

from mutator.core.program import Program, ProgramForm
from mutator.reduce import repro_source
from mutator.runtime.configs import Changes

FRESH_HEADER = "# ---- reproducer: eager vs torch.compile(backend=\"eager\"), each in a fresh process; " \
               "exits 1 while the bug is there ----"
HANG_HEADER = "# ---- reproducer: torch.compile(backend=\"eager\") in a process with a time limit; " \
              "exits 1 while it hangs ----"

_OBSERVE = '''
import os
import pickle
import subprocess
import sys
import tempfile
import time
import types


def _program_data():  # the program's data globals, its objects' attributes, its classes' data attributes
    data = {{}}
    for name, value in globals().items():
        if name.startswith("_") or isinstance(value, (types.ModuleType, types.FunctionType)):
            continue
        if isinstance(value, type):
            if value.__module__ == __name__:
                data[name] = {{k: v for k, v in vars(value).items() if not k.startswith("__") and not callable(v)
                              and not isinstance(v, (staticmethod, classmethod, property))}}
        elif isinstance(value, torch.nn.Module):
            data[name] = dict({{k: v for k, v in vars(value).items() if not k.startswith("_")}},
                              state_dict=value.state_dict())
        elif type(value).__module__ == __name__:
            data[name] = {{k: v for k, v in vars(value).items() if not k.startswith("__")}}
        elif isinstance(value, (dict, list, set, tuple, int, float, str, bool, torch.Tensor)):
            data[name] = value
    return data


def _portable(value):
    try:
        pickle.dumps(value)
        return value
    except Exception:  # what does not pickle is compared by its repr
        return repr(value)


def _observe(f):
    observed = {{}}
    try:
        {run}
    except Exception as e:  # only the program's own code: an error of these lines is not caught
        observed["raised"] = type(e).__name__
    return {{key: _portable(value) for key, value in {{**observed, "globals": _program_data()}}.items()}}


if len(sys.argv) == 3:  # one side, in a process of its own
    with open(sys.argv[2], "wb") as _out:
        pickle.dump(_observe(fn if sys.argv[1] == "eager" else torch.compile(fn{kwargs})), _out)
    sys.exit(0)


def _side(name, scratch, timeout=None):
    path = os.path.join(scratch, name)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), name, path], timeout=timeout)
    if proc.returncode:
        return f"the {{name}} process exited with {{proc.returncode}}"
    with open(path, "rb") as saved:
        return pickle.load(saved)
'''

_COMPARE = '''

with tempfile.TemporaryDirectory() as scratch:
    expected = _side("eager", scratch)
    actual = _side("compiled", scratch)
print("eager:   ", repr(expected))
print("compiled:", repr(actual))
assert isinstance(expected, dict), f"eager: {expected}"
assert isinstance(actual, dict), f"torch.compile: {actual}"
if "raised" in actual and "raised" not in expected:
    raise AssertionError(f"torch.compile: {actual['raised']} where eager returned")
if "raised" in expected and "raised" not in actual:
    raise AssertionError(f"eager raised {expected['raised']}, torch.compile returned")
_same(expected, actual, "observed")
'''

_HANG = '''

FACTOR, MARGIN = {factor}, {margin}  # the compiled side may take FACTOR times eager's time, plus MARGIN seconds

with tempfile.TemporaryDirectory() as scratch:
    started = time.monotonic()
    _side("eager", scratch)
    eager_seconds = time.monotonic() - started
    limit = FACTOR * eager_seconds + MARGIN
    started = time.monotonic()
    try:
        _side("compiled", scratch, timeout=limit)
    except subprocess.TimeoutExpired:
        # Fixed: the compiled side ends within the limit, as eager does
        sys.exit(f"torch.compile: no result after {{limit:.0f}} s where eager took {{eager_seconds:.1f}} s: it hangs")
print(f"eager took {{eager_seconds:.1f}} s, compiled {{time.monotonic() - started:.1f}} s (limit {{limit:.0f}} s)")
'''

_SCRIPT_HANG = '''
import os
import subprocess
import sys
import time

if "REPRO_SIDE" not in os.environ:  # the parent: each side in a process of its own
    FACTOR, MARGIN = {factor}, {margin}  # the compiled side may take FACTOR times eager's time, plus MARGIN seconds
    started = time.monotonic()
    subprocess.run([sys.executable, os.path.abspath(__file__)], env={{**os.environ, "REPRO_SIDE": "eager"}})
    eager_seconds = time.monotonic() - started
    limit = FACTOR * eager_seconds + MARGIN
    try:
        subprocess.run([sys.executable, os.path.abspath(__file__)], env={{**os.environ, "REPRO_SIDE": "compiled"}},
                       timeout=limit)
    except subprocess.TimeoutExpired:
        # Fixed: the compiled side ends within the limit, as eager does
        sys.exit(f"torch.compile: no result after {{limit:.0f}} s where eager took {{eager_seconds:.1f}} s: it hangs")
    sys.exit(0)
if os.environ["REPRO_SIDE"] == "eager":
    import torch

    torch.compile = lambda model=None, **kwargs: model if model is not None else (lambda f: f)
# ---- the program ----
'''


_CALLS = '''
class _Calls:  # what drive() calls: the function, each call's result kept (its attributes are the function's)
    def __init__(self, f):
        self.__dict__.update(_f=f, results=[])

    def __call__(self, *args, **kwargs):
        result = self.__dict__["_f"](*args, **kwargs)
        self.__dict__["results"].append(result)
        return result

    def __getattr__(self, name):
        return getattr(self.__dict__["_f"], name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_f"], name, value)
'''


def fresh_repro(program: Program, *, config: Changes = ()) -> str:
    """Eager and compiled each in a fresh process, their observations compared."""
    return _harness(program, FRESH_HEADER, _COMPARE, config, with_same=True)


def fresh_calls_repro(program: Program, *, config: Changes = ()) -> str | None:
    """`fresh_repro` that also compares what each call of the function returned inside
    `drive()`, as the runtime records it: a reduced `drive` need not return what diverged (the
    reduction judges the calls, not what drive returns). None for a program without `drive`."""
    names, _ = repro_source.top_level_names(program.source)
    if "drive" not in names:
        return None
    return _harness(program, FRESH_HEADER, _COMPARE, config, with_same=True, calls=True)


def hang_repro(program: Program, *, factor: float = 10.0, margin: float = 30.0, config: Changes = ()) -> str:
    """The compiled side under a time limit of `factor` times the eager side's time plus `margin` seconds."""
    if program.form is ProgramForm.SCRIPT:
        prelude = "\n".join(filter(None, [HANG_HEADER, _SCRIPT_HANG.format(factor=factor, margin=margin).strip(),
                                           repro_source.config_lines(config)])) + "\n"
        return repro_source.insert_prelude(program.source, prelude)
    return _harness(program, HANG_HEADER, _HANG.format(factor=factor, margin=margin), config, with_same=False)


def _harness(program: Program, header: str, parent: str, config: Changes, *, with_same: bool,
             calls: bool = False) -> str:
    assert program.form is ProgramForm.HARNESS
    names, imported = repro_source.top_level_names(program.source)
    run = repro_source.call_of(program, names, "f")
    lines = [f'observed["result"] = {run}']
    if calls:
        lines = ["f = _Calls(f)", 'observed["calls"] = f.results', *lines]
    if "drive" not in names:  # the arguments after the call: in-place updates show
        star = "*" if repro_source.returns_sequences(program.source) else ""
        lines = ["args = inputs()", f'observed["result"] = f({star}args)', 'observed["args"] = args']
    if "state" in names:
        lines.append('observed["state"] = state()')
    observe = _OBSERVE.format(run="\n        ".join(lines), kwargs=repro_source.compile_kwargs(program, names))
    parts = ["\n".join(filter(None, [header, repro_source.config_lines(config)])),
             *([_CALLS.strip()] if calls else []), observe.strip()]
    if with_same:
        parts.append(repro_source.SAME.strip())
    # each process seeds before the program's first line, as the runtime does: what it makes
    # at import (a module's initial weights) is the same on both sides
    seeded = repro_source.insert_prelude(program.source, _seeding(imported))
    return seeded.rstrip() + "\n\n\n" + "\n\n\n".join(parts) + "\n" + parent


def _seeding(imported: dict[str, str]) -> str:
    modules = ["torch"] + [name for name in ("random", "numpy") if name in imported]
    # a program that imports no torch (the reduction took its import out) still seeds torch
    lines = [f"import {name}" + (f" as {imported[name]}" if imported.get(name, name) != name else "")
             for name in modules]
    return "\n".join(lines + [repro_source.seeds(imported), ""])
