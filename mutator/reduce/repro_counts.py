"""Reproducers that count compilations: recompile storms and specialisation.

Neither kind is a wrong value, so the reproducer runs the program compiled once and asks
torch's own counters what Dynamo did: `counters["frames"]["total"]` (frames Dynamo was
asked to convert) around each outermost call of a compiled callable, and
`counters["unimplemented"]` for the recompile limit. It exits 1 while

- RECOMPILE_STORM: a call whose inputs and whole state repeat an earlier call's exactly
  (as the fuzzer recorded them, named in the script) compiles anything: the count such a
  call allows is 0, since the code compiled for that state is in Dynamo's cache;
- SPECIALIZATION: a code object reaches `torch._dynamo.config.recompile_limit` on calls
  whose states never repeat (fixed: Dynamo generalises what changes, as automatic dynamic
  shapes do for sizes, instead of compiling once per value and then giving up).

With torch.compile the identity nothing is compiled, so its control passes.
"""

from __future__ import annotations

from mutator.core.program import Program, ProgramForm
from mutator.reduce import repro_source
from mutator.runtime.configs import Changes
from mutator.core.verdict import Verdict

_HEADER = "# ---- reproducer: counts what Dynamo compiles during each call; exits 1 while {what} ----"
_WHAT = {Verdict.RECOMPILE_STORM: "a call that repeats an earlier call's state recompiles",
         Verdict.SPECIALIZATION: "Dynamo hits its recompile limit"}

_COUNTING = '''
import os
import sys

import torch
from torch._dynamo.utils import counters

COMPILES = []  # frames Dynamo converted during each outermost call of a compiled callable, in order


class _Counted:
    """What torch.compile returns here: the compiled callable, counting per call."""

    depth = 0

    def __init__(self, compiled):
        self.__dict__["_compiled"] = compiled

    def __call__(self, *args, **kwargs):
        if _Counted.depth or torch.compiler.is_compiling():
            return self._compiled(*args, **kwargs)
        _Counted.depth += 1
        before = counters["frames"]["total"]
        try:
            return self._compiled(*args, **kwargs)
        finally:
            _Counted.depth -= 1
            COMPILES.append(counters["frames"]["total"] - before)

    def __get__(self, obj, objtype=None):  # @torch.compile on a method
        return self if obj is None else (lambda *args, **kwargs: self(obj, *args, **kwargs))

    def __getattr__(self, name):
        return getattr(self.__dict__["_compiled"], name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_compiled"], name, value)


def _counting(compile):
    def counting_compile(model=None, **kwargs):
        if model is None:  # @torch.compile(...)
            return lambda target: counting_compile(target, **kwargs)
        return _Counted(compile(model, **kwargs))
    return counting_compile


torch.compile = _counting(torch.compile)
'''

_STORM_CHECK = '''
REPEATS = {repeats}  # call -> the earlier call whose inputs and whole state it repeats exactly


def _failure():
    print(f"frames compiled during each call: {{COMPILES}}")
    # Fixed: a call that repeats an earlier call's state runs the code compiled for that state
    # (its guards hold), so it compiles nothing.
    again = [(call, earlier) for call, earlier in REPEATS.items() if call <= len(COMPILES) and COMPILES[call - 1]]
    return "; ".join(f"call {{call}} compiled {{COMPILES[call - 1]}} frame(s) although its inputs and state repeat "
                     f"call {{earlier}}'s exactly" for call, earlier in again)
'''

_LIMIT_CHECK = '''
def _failure():
    hits = sum(n for message, n in counters["unimplemented"].items()
               if message.startswith("Dynamo recompile limit exceeded"))
    limit = torch._dynamo.config.recompile_limit
    print(f"frames compiled during each call: {COMPILES}; recompile limit ({limit}) reached {hits} time(s)")
    # Fixed: Dynamo compiles these calls, whose states never repeat, without reaching its
    # recompile limit (and so without falling back to running the frame uncompiled).
    return f"Dynamo hit its recompile limit ({limit}) and stopped compiling a frame" if hits else ""
'''

_AT_EXIT = '''

def _exit_check():  # after the script, however it ends (unittest.main() exits)
    failure = _failure()
    if failure:
        print(f"AssertionError: {failure}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


import atexit  # noqa: E402

atexit.register(_exit_check)
'''


def count_repro(program: Program, verdict: Verdict, *, repeats: tuple[tuple[int, int], ...] = (),
                config: Changes = ()) -> str:
    """The counting reproducer of a RECOMPILE_STORM (`repeats`: the calls that repeat an
    earlier call's state) or a SPECIALIZATION (the recompile limit)."""
    assert verdict in _WHAT and (repeats or verdict is Verdict.SPECIALIZATION)
    check = _STORM_CHECK.format(repeats=dict(repeats)) if verdict is Verdict.RECOMPILE_STORM else _LIMIT_CHECK
    header = _HEADER.format(what=_WHAT[verdict])
    settings = repro_source.config_lines(config)
    if program.form is ProgramForm.SCRIPT:  # it compiles and calls at its top level: count from the start
        parts = ["\n".join(filter(None, [header, settings])), _COUNTING.strip(), check.strip(), _AT_EXIT.strip(),
                 "torch.manual_seed(0)\n# ---- the program ----\n"]
        return repro_source.insert_prelude(program.source, "\n\n\n".join(filter(None, parts)))
    names, imported = repro_source.top_level_names(program.source)
    run = "\n".join([repro_source.seeds(imported), repro_source.compiled_run(program, names),
                     "failure = _failure()", "assert not failure, failure", ""])
    footer = "\n\n\n".join(["\n".join(filter(None, [header, settings])), _COUNTING.strip(), check.strip(), run])
    source = program.source.rstrip() + "\n\n\n" + footer
    return source if "torch" in imported else "import torch\n" + source
