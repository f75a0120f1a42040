"""Repair requests shaped like the ones campaigns log, for the repair tests."""

from __future__ import annotations

import textwrap

from mutator.core.program import Program
from mutator.core.values import ExceptionInfo, FrameInfo
from mutator.mutation.operator import Mutant, Step
from mutator.repair import RepairRequest


NAME = "mutant_of_000001.py"


def request(source: str, error_type: str, message: str, *, line: int | None = None, parent: str | None = None,
            op: str = "E2.wrap_in_try") -> RepairRequest:
    program = Program.from_source(textwrap.dedent(source), NAME)
    frames = (FrameInfo(NAME, line, "fn"),) if line else ()
    error = ExceptionInfo(error_type, (error_type, "Exception", "BaseException", "object"), message, frames)
    parent_program = Program.from_source(textwrap.dedent(parent), "seed.py") if parent else None
    return RepairRequest(program, Mutant(program, (Step(op, "fn:2"),)), parent_program, error, "raised")
