"""Builders for synthetic observations, so oracle and comparison rules are tested without torch."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from mutator.observation import CallRecord, CompiledCallable, CompileStats, ExecResult, Mode, Observation, Outcome, Recompile, Stdout
from mutator.values import ExceptionInfo, FrameInfo, SeqValue, TensorValue


def tensor(values, dtype: str = "torch.float32", *, requires_grad: bool = False, alias: str | None = None,
           grad: TensorValue | None = None) -> TensorValue:
    np_dtype = {"torch.float32": np.float32, "torch.float64": np.float64, "torch.int64": np.int64,
                "torch.bool": np.bool_, "torch.float16": np.float16}[dtype]
    arr = np.asarray(values, dtype=np_dtype)
    flat = arr.reshape(-1).copy()
    digest = hashlib.sha1(dtype.encode() + flat.tobytes()).hexdigest()[:16]
    return TensorValue("Tensor", dtype, tuple(arr.shape), requires_grad, "cpu", flat, digest, grad, alias)


def exc(type_name: str, message: str = "boom", *, bases: tuple[str, ...] = ("Exception", "BaseException", "object"),
        chain: tuple[str, ...] = (), gb_type: str | None = None, dynamo: bool = False) -> ExceptionInfo:
    frame = FrameInfo("torch/_dynamo/symbolic_convert.py", 10, "step") if dynamo else None
    return ExceptionInfo(type_name, bases, message, (), chain, gb_type, frame)


def call(index: int = 0, *, label: str = "fn", result=None, args=None, exception: ExceptionInfo | None = None,
         signature: str = "", exact: str = "", recompiles: tuple[Recompile, ...] = ()) -> CallRecord:
    return CallRecord(index=index, label=label, args=args if args is not None else SeqValue("tuple", ()),
                      kwargs=None, result=result, exception=exception, signature=signature,
                      exact_signature=exact, recompiles=recompiles)


def stdout(text: str) -> Stdout:
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    return Stdout(text, len(text), digest, digest)


def run(mode: Mode = Mode.EAGER, *, outcome: Outcome = Outcome.COMPLETED, calls=(), uncaught=None,
        compiled=(), compile_stats: CompileStats | None = None, text: str = "", state=None,
        detail: str = "") -> ExecResult:
    observation = Observation(calls=tuple(calls), compiled=tuple(compiled), stdout=stdout(text), uncaught=uncaught,
                              state=state, compile=compile_stats)
    return ExecResult(program="p.py", mode=mode, outcome=outcome, observation=observation, detail=detail)


def compiled_run(**kwargs) -> ExecResult:
    kwargs.setdefault("compiled", (CompiledCallable("fn", "eager", False, None),))
    return run(Mode.COMPILED, **kwargs)


def with_fullgraph(result: ExecResult) -> ExecResult:
    return replace(result, observation=replace(result.observation,
                                               compiled=(CompiledCallable("fn", "eager", True, None),)))
