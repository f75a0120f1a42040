"""One run's recording: the patched `torch.compile`, the recorders it returns, the calls.

In the eager run `torch.compile(f)` returns a transparent `Recorder` around `f`; in the
compiled run, a `Recorder` around the real compiled callable. Calling a recorder records
the call (arguments after the call, result or exception, the program's globals, the
whole state it started from, and what Dynamo compiled during it) and streams the record
to the worker at once, so a crash later in the run loses nothing observed before it.
Programs that run their own unittest tests have each test's outcome recorded too.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import random
import re
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch._dynamo import utils as dynamo_utils

from mutator.core.observation import CallRecord, CompiledCallable, Mode, Recompile, RunConfig, TestOutcome
from mutator.runtime.backends import COMPILER_MADE, BackendWatch
from mutator.runtime.own_checks import ProgramSource
from mutator.runtime.configs import ConfigWatch
from mutator.runtime.errors import exception_info
from mutator.runtime.iterators import materialise
from mutator.runtime.lru_caches import calling_through, noting_traced_through
from mutator.runtime.snapshot import signature_of, snapshot
from mutator.runtime.unittests import TestRecorder
from mutator.core.values import OpaqueValue

_INDUCTOR_ONLY_OPTIONS = ("mode", "options")
_HINT = re.compile(r"\(HINT: (.*?)\)\s*$", re.DOTALL)


class Session:
    """The recording state of one run; `emit` sends each finished CallRecord to the worker."""

    def __init__(self, mode: Mode, config: RunConfig, emit: Callable[[object], None],
                 program: ProgramSource | None = None, library_names: frozenset[str] = frozenset()) -> None:
        self.mode = mode
        self.config = config
        self._emit = emit
        self.program = program
        self.library_names = library_names  # program globals bound to torch's or a library's objects
        self.compiled: list[CompiledCallable] = []
        self.calls = 0
        self.depth = 0
        self.resets = 0  # torch._dynamo.reset() calls so far: compiling again after one is expected
        self.program_globals: dict[str, Any] = {}
        self.tests: list[TestOutcome] = []
        self.current_test = ""
        self.stdout_position: Callable[[], int] = lambda: 0
        self._labels: set[str] = set()
        self._codes: dict[str, str] = {}  # Dynamo's frame id ("0" of compile id "0/3") -> code key
        self._escaped: tuple[int, BaseException] | None = None  # the last call's exception, and the call
        self._config = ConfigWatch() if mode is Mode.COMPILED else None  # what the program sets of Dynamo's
        # what the program's own backends write (compiled runs: no other run calls a backend)
        self._backends = BackendWatch(program.name, self.globals_view) \
            if mode is Mode.COMPILED and program is not None else None
        self._lru_traced: list[str] = []  # where Dynamo traced through an lru_cache wrapper (runtime.lru_caches)

    # -- torch.compile and torch._dynamo.optimize, as the program sees them -----------------
    @contextlib.contextmanager
    def patched(self) -> Iterator[None]:
        _build_dynamo_tables()
        real_compile, real_optimize, real_reset = torch.compile, torch._dynamo.optimize, torch._dynamo.reset
        real_assert = torch._dynamo.optimize_assert
        # where code gets optimize_assert from: the package, the module defining it (torch's own
        # calls from there stay real: _called_from_torch), torch._dynamo.testing's binding (a
        # later import of it takes the package's, patched by then)
        holders = [torch._dynamo, torch._dynamo.eval_frame, *filter(None, [sys.modules.get("torch._dynamo.testing")])]

        def counting_reset(*args: Any, **kwargs: Any) -> Any:  # torch.compiler.reset() lands here too
            self.resets += 1
            return real_reset(*args, **kwargs)

        torch.compile = functools.partial(self.compile, real_compile)  # type: ignore[assignment]
        torch._dynamo.optimize = functools.partial(self.optimize, real_compile, real_optimize)  # type: ignore[assignment]
        torch._dynamo.reset = counting_reset  # type: ignore[assignment]
        for holder in holders:
            holder.optimize_assert = functools.partial(self.optimize_assert, real_compile, real_assert)
        with TestRecorder(self).recording(), self._lru_caches():
            try:
                yield
            finally:
                torch.compile, torch._dynamo.optimize, torch._dynamo.reset = real_compile, real_optimize, real_reset
                for holder in holders:
                    holder.optimize_assert = real_assert

    def _lru_caches(self) -> contextlib.AbstractContextManager[None]:
        """Compiled runs note where Dynamo traces through an lru_cache wrapper; a confirmation's
        eager run may call the program's cached functions through inside recorded calls, as Dynamo does."""
        if self.mode is Mode.COMPILED:
            return noting_traced_through(self._lru_traced.append)
        if self.mode is Mode.EAGER and self.config.lru_cache_calls_through and self.program is not None:
            return calling_through(self.program.name, lambda: self.depth > 0)
        return contextlib.nullcontext()

    def compile(self, real_compile: Callable[..., Any], model: Any = None, /, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():  # Dynamo traces a nested torch.compile: it is torch's to handle
            return real_compile(**kwargs) if model is None else real_compile(model, **kwargs)
        if _called_from_torch():  # torch's own use of torch.compile is not the program's
            return real_compile(model, **kwargs)
        if model is None:  # @torch.compile(...) used as a decorator factory
            return lambda target: self.compile(real_compile, target, **kwargs)
        options = self._options(kwargs)
        info = CompiledCallable(
            label=self._label(model),
            backend=_backend_name(options.get("backend")),
            fullgraph=bool(options.get("fullgraph", False)),
            dynamic=options.get("dynamic"),
        )
        self.compiled.append(info)
        if self.mode is Mode.REFERENCE and isinstance(model, torch.nn.Module):
            model = model.double()
        if self.mode is Mode.COMPILED and not options.get("disable", False):
            if self._backends is not None:
                options["backend"] = self._backends.backend(options["backend"])
            compiled = real_compile(model, **options)
        else:
            compiled = model
        return Recorder(self, model, compiled, info.label)

    def optimize(self, real_compile: Callable[..., Any], real_optimize: Callable[..., Any], *args: Any,
                 **kwargs: Any) -> Any:
        """torch._dynamo.optimize(backend, nopython=...) as a decorator, as old reproducers use it."""
        if torch.compiler.is_compiling() or _called_from_torch():  # torch.compile itself is built on optimize
            return real_optimize(*args, **kwargs)
        return self._decorator(real_compile, "_optimize", args, kwargs, fullgraph=kwargs.get("nopython", False))

    def optimize_assert(self, real_compile: Callable[..., Any], real_assert: Callable[..., Any], *args: Any,
                        **kwargs: Any) -> Any:
        """torch._dynamo.optimize_assert(backend): compile with no graph break allowed, as torch's
        test helpers do (`make_dynamo_test`, `standard_test`, through torch._dynamo.testing)."""
        if torch.compiler.is_compiling() or _called_from_torch():
            return real_assert(*args, **kwargs)
        return self._decorator(real_compile, "_optimize_assert", args, kwargs, fullgraph=True)

    def _decorator(self, real_compile: Callable[..., Any], real_name: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], *, fullgraph: bool) -> Callable[[Any], Any]:
        """What optimize(...) or optimize_assert(...) returns: a decorator compiling like
        torch.compile, after refusing what eval_frame's `real_name` refuses."""
        _take_arguments_as(real_name, args, kwargs)
        backend = args[0] if args else kwargs.get("backend", "inductor")
        options = dict(backend=backend, fullgraph=fullgraph, dynamic=kwargs.get("dynamic"))
        return lambda target: self.compile(real_compile, target, **options)

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        options = dict(kwargs)
        if not callable(options.get("backend")):  # a backend named by string, or none
            options["backend"] = self.config.backend
        if options["backend"] != "inductor":
            for key in _INDUCTOR_ONLY_OPTIONS:
                options.pop(key, None)
        if self.config.fullgraph is not None:
            options["fullgraph"] = self.config.fullgraph
        if self.config.dynamic is not None:
            options["dynamic"] = self.config.dynamic
        return options

    def _label(self, model: Any) -> str:
        base = getattr(model, "__qualname__", None) or type(model).__name__
        if self.depth:
            # made inside a recorded call: where Dynamo traces that call, its torch.compile is a
            # no-op that makes no recorder, so it must not take a label from those made outside
            return f"{base} (compiled inside a call)"
        label, n = base, 1
        while label in self._labels:
            n += 1
            label = f"{base}#{n}"
        self._labels.add(label)
        return label

    # -- calls ---------------------------------------------------------------------------
    def record(self, recorder: Recorder, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run one outermost call through `recorder` and emit its CallRecord."""
        index = self.calls
        self.calls += 1
        signature, exact = _safe(lambda: signature_of((_target_state(recorder._target), args, kwargs, _global_state(),
                                                       self.globals_view(), _functions(self.program_globals))), ("", ""))
        error_on_graph_break = bool(dynamo_utils._get_error_on_graph_break())
        if self.mode is Mode.REFERENCE:
            args, kwargs = _to_float64(args), _to_float64(kwargs)
        compiles_before = len(dynamo_utils.get_compilation_metrics())
        call = functools.partial(CallRecord, index=index, label=recorder._label, signature=signature,
                                 exact_signature=exact, error_on_graph_break=error_on_graph_break,
                                 test=self.current_test, entry_code=_safe(lambda: _entry_code(recorder._target), ""),
                                 stdout_at=self.stdout_position(),
                                 config=_safe(self._config.changes, ()) if self._config is not None else ())
        try:
            result = recorder._compiled(*args, **kwargs)
        except BaseException as exc:
            self._escaped = (index, exc)
            self._emit_call(call, args, kwargs, compiles_before, exception=exc)
            raise
        # a returned generator or builtin iterator is compared by what it yields: Dynamo
        # materialises generators (runtime.iterators), so both runs consume it here
        result, seen = materialise(result)
        self._emit_call(call, args, kwargs, compiles_before, result=seen)
        return result

    def escaped_from(self, exc: BaseException) -> int | None:
        """The index of the recorded call `exc` escaped from, or None if the program raised it itself.

        An exception that escapes a call and is not caught ends the program (or the test) at
        once, so the last call's exception is the only candidate.
        """
        return self._escaped[0] if self._escaped is not None and self._escaped[1] is exc else None

    def _emit_call(self, call: Callable[..., CallRecord], args: tuple[Any, ...], kwargs: dict[str, Any],
                   compiles_before: int, *, result: Any = None, exception: BaseException | None = None) -> None:
        new_metrics = [m for m in dynamo_utils.get_compilation_metrics()[compiles_before:] if not m.is_runtime]
        for m in new_metrics:
            if m.co_name:
                self._codes.setdefault(_frame_id(m), _code_key(m))
        self._emit(
            call(
                args=_safe(lambda: snapshot(args)),
                kwargs=_safe(lambda: snapshot(kwargs)),
                result=_safe(lambda: snapshot(result, inputs=args)) if exception is None else None,
                exception=exception_info(exception, self.program, in_call=True) if exception is not None else None,
                program_state=_safe(lambda: snapshot(self._compared_globals())),
                resets=self.resets,
                compiles=len(new_metrics),
                compiler_made=tuple(sorted(self._backends.wrote)) if self._backends is not None else (),
                lru_cache_traced=tuple(dict.fromkeys(self._lru_traced)),
                recompiles=tuple(self._recompile(m) for m in new_metrics if m.recompile_reason),
            )
        )

    def _recompile(self, metrics: Any) -> Recompile:
        hint = _HINT.search(metrics.recompile_reason.strip().splitlines()[0]) if metrics.recompile_reason.strip() else None
        return Recompile(
            code=self._codes.get(_frame_id(metrics), _code_key(metrics)),
            reason=recompile_reason(metrics.recompile_reason),
            hint=" ".join(hint.group(1).split())[:300] if hint else "",
            limit=(limit := metrics.fail_type is not None and "recompile limit" in (metrics.fail_reason or "")),
            lowered=limit and _recompile_limit_lowered(),
        )

    def _compared_globals(self) -> dict[str, Any]:
        """The globals view with what the program's backends wrote left unread: it is not
        compared, and read first it would take the program's own objects it holds (the example
        inputs are the program's tensors) away from the names the eager run finds them under."""
        view = self.globals_view()
        if self._backends is None or not self._backends.wrote:
            return view
        return {name: COMPILER_MADE if name in self._backends.wrote else value for name, value in view.items()}

    def globals_view(self) -> dict[str, Any]:
        """The program's data globals and its classes' data attributes: what side effects reach.

        Names the program bound to torch's or a library's objects (`from torch._dynamo.utils
        import counters`, a logger, ...) are not the program's state and are left out.
        """
        view: dict[str, Any] = {}
        module_name = self.program_globals.get("__name__")
        for name, value in self.program_globals.items():
            if name.startswith("__") or name in self.library_names:
                continue
            if isinstance(value, Recorder):
                view[name] = value.__dict__["_target"]
            elif isinstance(value, type) and value.__module__ == module_name:
                view[name] = {k: v for k, v in vars(value).items() if not k.startswith("__") and _is_data(v)}
            elif _is_data(value):
                view[name] = value
        return view


class Recorder:
    """What `torch.compile` returns inside a run: calls through it are observation points.

    Attribute reads and writes go to the original object, as OptimizedModule's do.
    """

    _mutator_recorder = True

    def __init__(self, session: Session, target: Any, compiled: Any, label: str) -> None:
        d = self.__dict__
        d["_session"], d["_target"], d["_compiled"], d["_label"] = session, target, compiled, label
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            if hasattr(target, name) and not isinstance(target, torch.nn.Module):
                d[name] = getattr(target, name)
        d["__wrapped__"] = target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        session = self.__dict__["_session"]
        if torch.compiler.is_compiling() or session.depth:  # nested: only the outermost call records
            return self.__dict__["_compiled"](*args, **kwargs)
        session.depth += 1
        try:
            return session.record(self, args, kwargs)
        finally:
            session.depth -= 1

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """`@torch.compile` on a method: bind like a function would."""
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_target"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_target"], name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__dict__["_target"], name)


# what a call's record (_emit_call, _recompile, _code_key) and execute.compile_stats read of each
# compilation's metrics
_METRICS_READ = ("is_runtime", "recompile_reason", "co_name", "co_filename", "co_firstlineno", "compile_id",
                 "fail_type", "fail_reason", "entire_frame_compile_time_s")


def unavailable() -> tuple[str, ...]:
    """What the recording needs of Dynamo and this torch does not offer, one phrase each."""
    import dataclasses

    import torch._dynamo.config as config

    missing = [f"torch._dynamo.eval_frame.{name} (optimize's arguments are not checked)"
               for name in ("_optimize", "_optimize_assert") if not hasattr(torch._dynamo.eval_frame, name)]
    if not hasattr(dynamo_utils, "_get_error_on_graph_break"):
        missing.append("torch._dynamo.utils._get_error_on_graph_break (every run fails)")
    fields = {f.name for f in dataclasses.fields(dynamo_utils.CompilationMetrics)}
    missing += [f"CompilationMetrics.{name} (compiles are not attributed to calls)"
                for name in _METRICS_READ if name not in fields]
    missing += [f"{name} (calls under different TorchFunctionModes are taken for one state)"
                for name, present in _MODE_HOOKS.items() if not present]
    if not all(build is not None for build in _dynamo_tables()):
        missing.append("Dynamo's tables by torch object (a nested torch.compile Dynamo traces may break the graph)")
    if "recompile_limit" not in getattr(config, "_config", {}):
        missing.append("torch._dynamo.config.recompile_limit (a lowered limit is not seen)")
    return tuple(missing)


def _recompile_limit_lowered() -> bool:
    """Whether Dynamo's recompile limit is now below its default (`cache_size_limit` is its
    alias): a program that lowers it, as PyTorch's tests of the limit do, means to reach it."""
    import torch._dynamo.config as config

    entry = getattr(config, "_config", {}).get("recompile_limit")
    return entry is not None and isinstance(entry.default, int) and config.recompile_limit < entry.default


def recompile_reason(text: str) -> str:
    """'0/1: L['x'].size()[0] == 3   # x.sum()  # file:4 in f' -> "L['x'].size()[0] == 3"."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if ": " in first and first.split(": ", 1)[0].replace("/", "").isdigit():
        first = first.split(": ", 1)[1]
    return " ".join(first.split("#", 1)[0].split())[:300]


def _build_dynamo_tables() -> None:
    """Have Dynamo build, while torch.compile is still torch's, the tables it builds once from
    torch's functions by identity (its rule per torch object, its handlers of torch functions,
    `torch.compile`'s among them: a nested torch.compile it traces is a no-op). Built during a
    run, with torch.compile patched, they would know that run's stand-in instead, and in every
    later run a nested torch.compile that Dynamo traces would break the graph."""
    for build in _dynamo_tables():
        if build is not None:
            build()


def _dynamo_tables() -> tuple[Callable[[], Any] | None, ...]:
    from torch._dynamo import trace_rules
    from torch._dynamo.variables.torch import TorchInGraphFunctionVariable

    return (getattr(trace_rules, "get_torch_obj_rule_map", None),
            getattr(TorchInGraphFunctionVariable, "_get_handlers", None))


def _take_arguments_as(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise the TypeError torch._dynamo.eval_frame's `name` (after its rebuild_ctx) raises for
    arguments it does not take: our stand-in must refuse what the real one refuses."""
    real = getattr(torch._dynamo.eval_frame, name, None)
    if real is not None:
        inspect.signature(real).bind(None, *args, **kwargs)


# torch's modules that compile on a program's behalf: nn.Module.compile, and the test helpers
# a test calls to compile its own code (make_dynamo_test, standard_test)
_PROGRAM_SIDE = ("torch.nn.modules.module", "torch.testing._internal.", "torch._dynamo.testing")


def _called_from_torch() -> bool:
    """Whether the nearest caller outside this module is torch's own compiler code."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    caller = frame.f_globals.get("__name__", "") if frame is not None else ""
    return (caller == "torch" or caller.startswith("torch.")) and not caller.startswith(_PROGRAM_SIDE)


def _backend_name(backend: Any) -> str:
    if isinstance(backend, str):
        return backend
    return "callable:" + str(getattr(backend, "__name__", type(backend).__name__))


def _code_key(metrics: Any) -> str:
    return f"{metrics.co_name}@{os.path.basename(metrics.co_filename or '?')}:{metrics.co_firstlineno}"


def _entry_code(target: Any) -> str:
    """The code object Dynamo compiles first for `target`, keyed like `_code_key` does."""
    if isinstance(target, torch.nn.Module):
        target = type(target).forward
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None:
        return ""
    return f"{code.co_name}@{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _frame_id(metrics: Any) -> str:
    """Dynamo's id of the code object a compilation was for: "0" of compile id "0/3"."""
    return str(metrics.compile_id or "").split("/", 1)[0]


def _global_state() -> tuple[Any, ...]:
    """The process-wide state a compiled call may depend on (and Dynamo may guard on)."""
    return (
        dict(os.environ),
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        str(torch.get_default_dtype()),
        str(torch.get_default_device()),
        torch.is_autocast_enabled("cpu"),
        str(torch.get_autocast_dtype("cpu")),
        torch.are_deterministic_algorithms_enabled(),
        torch.get_num_threads(),
        torch._C._is_torch_function_enabled(),
        _function_modes(),
        torch.autograd._profiler_enabled(),
        bool(dynamo_utils._get_error_on_graph_break()),
        _digest(torch.get_rng_state().numpy().tobytes()),
        _digest(repr(random.getstate()).encode()),
        _digest(np.random.get_state()[1].tobytes()),
    )


# what the mode reading needs of this torch, looked at once (calls read it on every record)
_MODE_HOOKS = {"torch._C._is_torch_function_all_disabled": hasattr(torch._C, "_is_torch_function_all_disabled"),
               "torch.overrides._get_current_function_mode_stack":
                   hasattr(torch.overrides, "_get_current_function_mode_stack")}


def _function_modes() -> tuple[Any, ...]:
    """Whether torch functions are all disabled (`DisableTorchFunction`, not only the subclass
    part) and the TorchFunctionModes active by type, innermost last: what Dynamo guards on
    (GLOBAL_STATE, `___check_torch_function_mode_stack`), so a call under another mode is
    another state."""
    if not all(_MODE_HOOKS.values()):
        return ()
    return (torch._C._is_torch_function_all_disabled(),
            *(f"{type(mode).__module__}.{type(mode).__qualname__}"
              for mode in torch.overrides._get_current_function_mode_stack()))


def _target_state(target: Any) -> Any:
    """What a compiled callable carries besides its arguments: a module's state, a function's
    closure cells and defaults, a bound method's object, a partial's function and arguments,
    and any other callable itself (an object with `__call__`, a builtin): Dynamo compiles
    those through one shared wrapper (`external_utils.inner`) whose guards read it as `fn`."""
    if isinstance(target, torch.nn.Module):
        return target
    if isinstance(target, types.MethodType):
        return (target.__self__, _target_state(target.__func__))
    if isinstance(target, types.FunctionType):
        cells = tuple(_cell_contents(cell) for cell in target.__closure__ or ())
        return (cells, target.__defaults__, target.__kwdefaults__)
    if isinstance(target, functools.partial):
        return (target.func, _target_state(target.func), target.args, target.keywords)
    return target


def _functions(program_globals: dict[str, Any]) -> dict[str, Any]:
    """The program's global functions, for the state signature: what their closure cells hold
    is guarded once Dynamo inlines one (`G['bump'].__closure__[0].cell_contents == 1`)."""
    return {name: value for name, value in program_globals.items() if isinstance(value, types.FunctionType)}


def _cell_contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:16]


def _is_data(value: Any) -> bool:
    return not isinstance(
        value,
        (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, functools.partial,
         property, staticmethod, classmethod),
    ) and not getattr(type(value), "__module__", "").startswith("typing")


def _to_float64(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(torch.float64).requires_grad_(value.requires_grad) if value.is_leaf else value.to(torch.float64)
    if isinstance(value, torch.nn.Module):
        return value.double()
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_float64(v) for v in value)
    if isinstance(value, list):
        return [_to_float64(v) for v in value]
    if isinstance(value, dict) and type(value) is dict:
        return {k: _to_float64(v) for k, v in value.items()}
    return value


def _safe(build: Callable[[], Any], fallback: Any = None) -> Any:
    """Our own snapshot code must never change what the program does."""
    try:
        return build()
    except Exception as exc:  # a bug of ours or a hostile object: record it, don't propagate
        if fallback is not None:
            return fallback
        return OpaqueValue("snapshot-failed", f"{type(exc).__name__}: {exc}"[:200])

