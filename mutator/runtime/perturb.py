"""Compiler state that reads otherwise: the perturbed eager run of a confirmation.

A value a program computes from Dynamo's or the compiler stack's state (a count read from
`torch._dynamo.utils.counters`, a `CompileCounter`'s `frame_count`, ...) is not program
state, wherever the program keeps or prints it (DESIGN.md, "What is compared, on other
people's programs"): in an eager run nothing compiles, so it differs from the compiled
run's by design. The taint is applied where such a value is read, not to a list of names:
a confirmation's second eager run (`RunConfig.perturb_compiler_state`) starts with every
source below reading otherwise than in any other run, so whatever the program derived
from them differs between its two eager runs and is masked as run-specific
(`Oracle.run_specific`) wherever it travelled, while the program's own data stays
compared.

Perturbed here, in place (programs hold these objects by `from ... import`):

- `torch._dynamo.utils.counters`: every category, present or made later (by `counters[...]`
  or after `counters.clear()`), counts `PERTURBED` more for every key, missing keys
  included, and carries a `MARKER` entry; a `MARKER` category is added. `.items()`,
  `len()`, `sum(...)`, `["frames"]["total"]` and `.get("total", 0)` all read otherwise.
- `torch._dynamo.testing.CompileCounter` and `CompileCounterWithBackend`: an instance
  starts, and starts again after `clear()`, at `PERTURBED` frames and ops.
- `torch._dynamo.utils.get_compilation_metrics()`: one more entry (a real
  `CompilationMetrics`, so that reading its attributes works), until the program clears them.
- `torch._inductor.metrics`' counts (`generated_kernel_count`, ...): `PERTURBED`, and again
  after its `reset()`.

Everything is put back when the context ends (the forked child of a run never gets
there; in-process callers, tests, do).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import Any

PERTURBED = 1009  # a count no small test reaches: `cnt.frame_count == 1` fails here as it does eagerly
MARKER = "mutator: perturbed compiler state"
_INDUCTOR_COUNTS = ("generated_kernel_count", "generated_cpp_vec_kernel_count", "num_bytes_accessed",
                    "ir_nodes_pre_fusion", "cpp_to_dtype_count", "num_comprehensive_padding",
                    "num_matches_for_scatter_upon_const_tensor", "num_loop_reordering", "num_auto_chunking",
                    "parallel_reduction_count", "codegen_mix_order_reduction",
                    "rejected_mix_order_reduction_fusion", "codegen_nested_reduction")


class PerturbedCounter(collections.Counter):  # type: ignore[type-arg]
    """A category of Dynamo's counters in a perturbed run: a missing key counts `PERTURBED`,
    and the category is never without its `MARKER` entry."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self[MARKER] = PERTURBED

    def __missing__(self, key: Any) -> int:
        return PERTURBED

    def clear(self) -> None:
        super().clear()
        self[MARKER] = PERTURBED


@contextlib.contextmanager
def perturbed_compiler_state() -> Iterator[None]:
    """Within: the compiler state a program reads differs from an unperturbed run's (see the
    module's docstring); on exit it is as it was before."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_perturbed_counters())
        stack.enter_context(_perturbed_compile_counters())
        stack.enter_context(_perturbed_compilation_metrics())
        stack.enter_context(_perturbed_inductor_metrics())
        yield


@contextlib.contextmanager
def _perturbed_counters() -> Iterator[None]:
    from torch._dynamo.utils import counters

    factory = counters.default_factory
    before = [(name, category, type(category), dict(category)) for name, category in counters.items()]
    for _, category, _, content in before:
        category.__class__ = PerturbedCounter  # in place: a program may hold the category already
        dict.update(category, {key: count + PERTURBED for key, count in content.items()})
        category[MARKER] = PERTURBED
    counters.default_factory = PerturbedCounter
    counters[MARKER] = PerturbedCounter()
    try:
        yield
    finally:
        counters.default_factory = factory
        counters.clear()
        for name, category, cls, content in before:
            category.__class__ = cls
            dict.clear(category)
            dict.update(category, content)
            counters[name] = category


@contextlib.contextmanager
def _perturbed_compile_counters() -> Iterator[None]:
    from torch._dynamo import testing

    originals: list[tuple[type, str, Callable[..., None]]] = []
    for name in ("CompileCounter", "CompileCounterWithBackend"):
        cls = getattr(testing, name, None)
        if cls is None:
            continue
        for method in ("__init__", "clear"):
            original = vars(cls).get(method)
            if original is None:
                continue
            originals.append((cls, method, original))
            setattr(cls, method, _then_perturbed_start(original))
    try:
        yield
    finally:
        for cls, method, original in originals:
            setattr(cls, method, original)


def _then_perturbed_start(method: Callable[..., None]) -> Callable[..., None]:
    """`method` (a counter's __init__ or clear), after which the counts start at `PERTURBED`."""
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        method(self, *args, **kwargs)
        for count in ("frame_count", "op_count"):
            value = getattr(self, count, 0)
            setattr(self, count, type(value)(PERTURBED))  # CompileCounterInt stays one

    return wrapper


@contextlib.contextmanager
def _perturbed_compilation_metrics() -> Iterator[None]:
    from torch._dynamo import utils

    metrics = getattr(utils, "_compilation_metrics", None)  # what get_compilation_metrics() lists
    if metrics is None:
        yield
        return
    before = list(metrics)
    metrics.append(_metrics_entry(utils.CompilationMetrics))  # the newest: what programs look at
    try:
        yield
    finally:
        metrics.clear()
        metrics.extend(before)


def _metrics_entry(cls: type) -> Any:
    """A compilation's metrics as no compilation made them: its names say so, its counts
    and times are `PERTURBED`; what a failure would fill, and versions, stay as they are."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        kind = str(field.type)  # "int | None": torch._dynamo.utils annotates lazily
        if field.name in ("compile_id", "frame_key", "co_name", "co_filename"):
            values[field.name] = MARKER
        elif field.name.startswith("fail_") or field.default not in (None, 0):
            continue
        elif kind.startswith("int"):
            values[field.name] = PERTURBED
        elif kind.startswith("float"):
            values[field.name] = float(PERTURBED)
    return cls(**values)


@contextlib.contextmanager
def _perturbed_inductor_metrics() -> Iterator[None]:
    from torch._inductor import metrics

    names = [name for name in _INDUCTOR_COUNTS if isinstance(getattr(metrics, name, None), int)]
    before = {name: getattr(metrics, name) for name in names}
    real_reset = metrics.reset

    def perturb() -> None:
        for name in names:
            setattr(metrics, name, PERTURBED)

    @functools.wraps(real_reset)
    def reset() -> None:
        real_reset()
        perturb()

    perturb()
    metrics.reset = reset
    try:
        yield
    finally:
        metrics.reset = real_reset
        for name, value in before.items():
            setattr(metrics, name, value)
