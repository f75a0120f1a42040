"""The program's sys.stdout is ours (BoundedStdout), and Dynamo must not see it as program code."""

from __future__ import annotations

import contextlib
import io

import torch
from torch._dynamo.utils import counters

from mutator.runtime.execute import BoundedStdout
from mutator.runtime.own_checks import CompilerPrints, ProgramSource


def _frames_converted(out: io.TextIOBase) -> tuple[int, str]:
    """Frames Dynamo converted for one call of a function that prints after a graph break."""

    def fn(x):
        x = x + 1
        print("mid", x.shape[0])  # a graph break; the print runs while Dynamo's callback is on
        return x * 2

    torch._dynamo.reset()
    before = counters["frames"]["total"]
    with contextlib.redirect_stdout(out):
        torch.compile(fn, backend="eager")(torch.ones(2))
    return counters["frames"]["total"] - before, out.getvalue() if isinstance(out, io.StringIO) else ""


def test_dynamo_converts_no_frame_of_our_stdout_where_a_real_one_is_c_code():
    ours = BoundedStdout(100, CompilerPrints(ProgramSource("prog.py", "")))
    converted, _ = _frames_converted(ours)
    real, printed = _frames_converted(io.StringIO())  # C write, as a real sys.stdout's
    assert printed == "mid 2\n" and ours.result().head == "mid 2\n"
    assert converted == real
