"""Builders for synthetic observations, so oracle and comparison rules are tested without torch;
and what tests ask of processes."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from mutator.core.observation import (CallRecord, CompiledCallable, CompileStats, ExecResult, Mode, Observation, Outcome,
                                  Recompile, Stdout, TestOutcome)
from mutator.core.values import ExceptionInfo, FrameInfo, SeqValue, TensorValue

PROGRAM = "prog.py"  # the name the synthetic runs' programs go by


def tensor(values, dtype: str = "torch.float32", *, requires_grad: bool = False, alias: str | None = None,
           grad: TensorValue | None = None) -> TensorValue:
    np_dtype = {"torch.float32": np.float32, "torch.float64": np.float64, "torch.int64": np.int64,
                "torch.bool": np.bool_, "torch.float16": np.float16}[dtype]
    arr = np.asarray(values, dtype=np_dtype)
    flat = arr.reshape(-1).copy()
    digest = hashlib.sha1(dtype.encode() + flat.tobytes()).hexdigest()[:16]
    return TensorValue("Tensor", dtype, tuple(arr.shape), requires_grad, "cpu", flat, digest, grad, alias)


def exc(type_name: str, message: str = "boom", *, bases: tuple[str, ...] = ("Exception", "BaseException", "object"),
        chain: tuple[str, ...] = (), gb_type: str | None = None, dynamo: bool = False, line: int | None = None,
        check: str | None = None, user_stack: tuple[FrameInfo, ...] = (),
        error_on_graph_break: bool | None = None) -> ExceptionInfo:
    """An exception as the runtime describes it; `line`: raised at that line of PROGRAM."""
    frame = FrameInfo("torch/_dynamo/symbolic_convert.py", 10, "step") if dynamo else None
    frames = (FrameInfo(PROGRAM, line, "<module>"),) if line is not None else ()
    return ExceptionInfo(type_name, bases, message, frames, chain, gb_type, frame, user_stack,
                         error_on_graph_break, check)


def call(index: int = 0, *, label: str = "fn", result=None, args=None, exception: ExceptionInfo | None = None,
         signature: str = "", exact: str = "", recompiles: tuple[Recompile, ...] = (), test: str = "",
         error_on_graph_break: bool = False, program_state=None) -> CallRecord:
    return CallRecord(index=index, label=label, args=args if args is not None else SeqValue("tuple", ()),
                      kwargs=None, result=result, exception=exception, program_state=program_state,
                      signature=signature, exact_signature=exact, recompiles=recompiles, test=test,
                      error_on_graph_break=error_on_graph_break)


def stdout(text: str) -> Stdout:
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    return Stdout(text, len(text), digest, digest)


def run(mode: Mode = Mode.EAGER, *, outcome: Outcome = Outcome.COMPLETED, calls=(), uncaught=None,
        compiled=(), compile_stats: CompileStats | None = None, text: str = "", state=None,
        detail: str = "", uncaught_call: int | None = None, exit_code: int | None = None,
        tests: tuple[TestOutcome, ...] = ()) -> ExecResult:
    """One run; an `uncaught` exception escaped from call `uncaught_call`, or (None) the program raised it."""
    observation = Observation(calls=tuple(calls), compiled=tuple(compiled), stdout=stdout(text), uncaught=uncaught,
                              uncaught_call=uncaught_call, state=state, compile=compile_stats, exit_code=exit_code,
                              tests=tuple(tests))
    return ExecResult(program=PROGRAM, mode=mode, outcome=outcome, observation=observation, detail=detail)


def compiled_run(**kwargs) -> ExecResult:
    kwargs.setdefault("compiled", (CompiledCallable("fn", "eager", False, None),))
    return run(Mode.COMPILED, **kwargs)


def with_fullgraph(result: ExecResult) -> ExecResult:
    return replace(result, observation=replace(result.observation,
                                               compiled=(CompiledCallable("fn", "eager", True, None),)))


def alive(pid: int) -> bool:
    """Running (a zombie is dead: it only waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
