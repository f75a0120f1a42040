"""Exceptions as data (`ExceptionInfo`), with the frames that sign a Dynamo failure."""

from __future__ import annotations

import traceback

from mutator.runtime.own_checks import ProgramSource, classify_check
from mutator.core.values import ExceptionInfo, FrameInfo

MAX_FRAMES = 12
MAX_MESSAGE = 4000
DYNAMO_DIR = "torch/_dynamo/"


def exception_info(exc: BaseException, program: ProgramSource | None = None, *, in_call: bool = False) -> ExceptionInfo:
    """Describe `exc`, its chain, and the innermost torch/_dynamo frame anywhere in the chain.

    For a graph break (an exception carrying Dynamo's `real_stack`) also the user frames
    Dynamo was tracing and its `error_on_graph_break` setting there; with `program`,
    whether it is a failing check of the program's own (`in_call`: it escaped from a
    compiled call).
    """
    chain = _chain(exc)
    dynamo_frame = None
    for link in reversed(chain):  # the deepest cause holds the innermost frames
        dynamo_frame = _innermost_dynamo_frame(link)
        if dynamo_frame is not None:
            break
    gb_type = next((getattr(e, "gb_type", None) for e in chain if getattr(e, "gb_type", None)), None)
    broken = next((e for e in chain if getattr(e, "real_stack", None)), None)
    tracer = getattr(broken, "_torch_dynamo_tracer_output", None)
    error_on_graph_break = getattr(tracer, "error_on_graph_break", None)
    return ExceptionInfo(
        type_name=qualified_name(type(exc)),
        bases=tuple(qualified_name(t) for t in type(exc).__mro__[1:]),
        message=_message(exc),
        frames=tuple(_frames(exc)[-MAX_FRAMES:]),
        chain=tuple(qualified_name(type(e)) for e in chain[1:]),
        gb_type=str(gb_type) if gb_type else None,
        dynamo_frame=dynamo_frame,
        user_stack=_user_stack(broken) if broken is not None else (),
        error_on_graph_break=error_on_graph_break if isinstance(error_on_graph_break, bool) else None,
        check=classify_check(exc, program, in_call=in_call),
    )


def qualified_name(cls: type) -> str:
    module = getattr(cls, "__module__", "") or ""
    if module in ("builtins", "__main__", "__mutator__"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def short_path(filename: str) -> str:
    """Site-packages paths relative to site-packages: stable across machines and venvs."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 8:
        chain.append(current)
        seen.add(id(current))
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None
    return chain


def _frames(exc: BaseException) -> list[FrameInfo]:
    return [
        FrameInfo(short_path(frame.f_code.co_filename), lineno or 0, frame.f_code.co_name)
        for frame, lineno in traceback.walk_tb(exc.__traceback__)
    ]


def _user_stack(exc: BaseException) -> tuple[FrameInfo, ...]:
    try:
        stack = list(exc.real_stack)  # type: ignore[attr-defined]
    except TypeError:
        return ()
    return tuple(FrameInfo(short_path(f.filename), f.lineno or 0, f.name)
                 for f in stack if hasattr(f, "filename"))[-MAX_FRAMES:]


def _innermost_dynamo_frame(exc: BaseException) -> FrameInfo | None:
    for frame in reversed(_frames(exc)):
        if frame.filename.startswith(DYNAMO_DIR):
            return frame
    return None


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception as err:  # a program's __str__ may raise anything
        text = f"<unprintable {type(exc).__name__}: {type(err).__name__}>"
    return text[:MAX_MESSAGE]
