"""Compiler state that reads otherwise: the perturbed eager run of a confirmation.

A value a program computes from Dynamo's or the compiler stack's state (a count read from
`torch._dynamo.utils.counters`, a `CompileCounter`'s `frame_count`, ...) is not program
state, wherever the program keeps or prints it (docs/design.md, "What is compared, on other
people's programs"): in an eager run nothing compiles, so it differs from the compiled
run's by design. The taint is applied where such a value is read, not to a list of names:
in a confirmation's second eager run (`RunConfig.perturb_compiler_state`) every source
below reads otherwise than in any other run, so whatever the program derived from them
differs between its two eager runs and is masked as run-specific (`Oracle.run_specific`)
wherever it travelled, while the program's own data stays compared.

It is the reading that is perturbed, not the state the run starts from: the types the
program reads through (the counters' mapping and category, the counter classes' count
attributes, the metrics module's class, the metrics function) read otherwise for as long
as the run lasts, so a program that resets the state first (`counters.clear()`,
`counters[k].clear()`, `del counters[k]`, `torch._dynamo.reset()`, a fresh
`CompileCounter()`, `cnt.frame_count = 0`, `metrics.reset()`) reads otherwise all the same.

- `torch._dynamo.utils.counters` (what `from torch._dynamo.utils import counters` binds in
  the run) is a `PerturbedCounters` view of the real mapping, which Dynamo's own modules
  keep writing: every category is present and `MARKER` is among them. A category read
  through it is a `PerturbedCategory`, in place (a program may hold it): every key is
  present, every count reads `PERTURBED` more than it holds (a key never counted reads
  `PERTURBED`), `MARKER` is among the keys. So `["frames"]["total"]`, `.get("total", 0)`,
  `counters.get(name, {})`, `len()`, `in`, iteration, `.items()`, `sum(...)`, `==` and
  copies all read otherwise.
- `CompileCounter` and `CompileCounterWithBackend` (`torch._dynamo.testing`): `frame_count`
  and `op_count` read `PERTURBED` more than they hold, on any instance, new or cleared.
- `torch._dynamo.utils.get_compilation_metrics()`: one more entry first (a real
  `CompilationMetrics`, so that reading its attributes works; the newest one when nothing
  compiled, as in an eager run), cleared or not.
- `torch._inductor.metrics`' counts (`generated_kernel_count`, ... every int it holds):
  `PERTURBED` more than they hold, reset or not.

Not perturbed: graphs a recording backend keeps, `compile_times()`, cache entries, and
state a program reaches by another name than these (`torch._dynamo.convert_frame.counters`)
or replaces (`torch._dynamo.utils.counters = defaultdict(Counter)`). A hook this torch does
not offer is listed by `unavailable()`, which the worker reports when it is ready.

Everything is put back when the context ends (the forked child of a run never gets
there; in-process callers, tests, do).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import functools
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

PERTURBED = 1009  # a count no small test reaches: `cnt.frame_count == 1` fails here as it does eagerly
MARKER = "mutator: perturbed compiler state"
COUNTER_CLASSES = ("CompileCounter", "CompileCounterWithBackend")
COUNTS = ("frame_count", "op_count")


def _more(value: Any) -> Any:
    """A count as the perturbed run reads it: `PERTURBED` more, of the same type (a
    CompileCounterInt stays one); what is not a number reads as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return type(value)(value + PERTURBED)
    return value


def _with_marker(keys: Any) -> list[Any]:
    listed = list(keys)
    return listed if MARKER in listed else [*listed, MARKER]


class _EveryKey:
    """The reading both perturbed mappings share: every key is present, `MARKER` among those
    listed, and the views go through the mapping's own `__getitem__`. `_stored()` is what the
    mapping holds."""

    __slots__ = ()  # a Counter's class is swapped for a subclass: the layout must not change

    def _stored(self) -> Any:
        raise NotImplementedError

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[Any]:
        return iter(_with_marker(self._stored()))

    def __reversed__(self) -> Iterator[Any]:
        return reversed(_with_marker(self._stored()))

    def __len__(self) -> int:
        return len(_with_marker(self._stored()))

    def keys(self) -> KeysView[Any]:
        return KeysView(self)  # type: ignore[arg-type]

    def values(self) -> ValuesView[Any]:
        return ValuesView(self)  # type: ignore[arg-type]

    def items(self) -> ItemsView[Any, Any]:
        return ItemsView(self)  # type: ignore[arg-type]


class PerturbedCategory(_EveryKey, collections.Counter):  # type: ignore[type-arg]
    """One category of Dynamo's counters (`counters["frames"]`) as the perturbed run reads it:
    every key present, every count `PERTURBED` more than it holds, `MARKER` among the keys.
    Writes store what they are given; a copy is a plain Counter of what this one reads.

    `MARKER` is also stored (`perturbed` puts it there, `clear` and `del` keep it): C code
    that looks at a dict's own size first (`json.dumps` writes "{}" for an empty one) must
    not find it empty."""

    @classmethod
    def perturbed(cls, category: collections.Counter) -> PerturbedCategory:  # type: ignore[type-arg]
        """`category` itself, reading otherwise from now on."""
        category.__class__ = cls
        dict.setdefault(category, MARKER, 0)
        return category  # type: ignore[return-value]

    def _stored(self) -> Any:
        return dict.keys(self)

    def __getitem__(self, key: Any) -> Any:
        return _more(dict.get(self, key, 0))

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key]  # every key is present: the default is never what it reads

    def __delitem__(self, key: Any) -> None:
        dict.pop(self, key, None)
        dict.setdefault(self, MARKER, 0)

    def pop(self, key: Any, *default: Any) -> Any:  # type: ignore[override]
        count = dict.pop(self, key, 0)
        dict.setdefault(self, MARKER, 0)
        return _more(count)

    def clear(self) -> None:
        dict.clear(self)
        dict.setdefault(self, MARKER, 0)

    def setdefault(self, key: Any, default: Any = 0) -> Any:
        if not dict.__contains__(self, key):
            dict.__setitem__(self, key, default)
        return self[key]

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other if isinstance(other, Mapping) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return dict(self.items()) != other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> collections.Counter:  # type: ignore[type-arg]
        return collections.Counter(dict(self.items()))

    __copy__ = copy

    def __reduce__(self) -> Any:
        return collections.Counter, (dict(self.items()),)


class PerturbedCounters(_EveryKey, collections.defaultdict):  # type: ignore[type-arg]
    """Dynamo's counters mapping as the perturbed run reads it: a view of `real`, where every
    category is present (made on first read, as the real defaultdict makes them) and is a
    `PerturbedCategory`, and `MARKER` is among the categories. Its own storage stays empty:
    every method goes to `real`; a copy is a plain defaultdict of plain Counters of what
    this one reads. (Its own storage holds a marker category only for C code that looks at
    a dict's own size first, as `json.dumps` does.)"""

    def __init__(self, real: collections.defaultdict) -> None:  # type: ignore[type-arg]
        super().__init__(real.default_factory)
        self._real = real
        dict.__setitem__(self, MARKER, PerturbedCategory.perturbed(collections.Counter()))

    def _stored(self) -> Any:
        return self._real

    def __getitem__(self, name: Any) -> Any:
        category = self._real[name]
        return PerturbedCategory.perturbed(category) if type(category) is collections.Counter else category

    def get(self, name: Any, default: Any = None) -> Any:
        return self[name]

    def __setitem__(self, name: Any, category: Any) -> None:
        self._real[name] = category

    def __delitem__(self, name: Any) -> None:
        self._real.pop(name, None)

    def pop(self, name: Any, *default: Any) -> Any:  # type: ignore[override]
        category = self[name]
        self._real.pop(name, None)
        return category

    def popitem(self) -> tuple[Any, Any]:
        return self._real.popitem()

    def setdefault(self, name: Any, default: Any = None) -> Any:
        return self[name]

    def clear(self) -> None:
        self._real.clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._real.update(*args, **kwargs)

    def __ior__(self, other: Any) -> PerturbedCounters:  # type: ignore[override]
        self._real.update(other)
        return self

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return dict(other) | self.copy()

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other if isinstance(other, Mapping) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return dict(self.items()) != other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"defaultdict({self._real.default_factory!r}, {dict(self.items())!r})"

    def copy(self) -> collections.defaultdict:  # type: ignore[type-arg]
        return collections.defaultdict(self._real.default_factory,
                                       {name: copy.copy(category) for name, category in self.items()})

    __copy__ = copy

    def __reduce__(self) -> Any:
        return collections.defaultdict, (self._real.default_factory,), None, None, iter(self.copy().items())


class _ReadsMore:
    """A count attribute (on a counter class, or a module's class) that reads `PERTURBED` more
    than the instance holds; setting it stores the value given."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return _more(vars(obj).get(self._name, 0))

    def __set__(self, obj: Any, value: Any) -> None:
        vars(obj)[self._name] = value

    def __delete__(self, obj: Any) -> None:
        del vars(obj)[self._name]


def unavailable() -> tuple[str, ...]:
    """The hooks above that this torch does not offer, one phrase each (the perturbed run
    then leaves that state as it is): what the worker reports when it is ready."""
    from torch._dynamo import testing, utils
    from torch._inductor import metrics

    missing = []
    if not isinstance(getattr(utils, "counters", None), collections.defaultdict):
        missing.append("torch._dynamo.utils.counters as a defaultdict (not perturbed)")
    missing += [f"torch._dynamo.testing.{name} (not perturbed)" for name in COUNTER_CLASSES if not hasattr(testing, name)]
    if not callable(getattr(utils, "get_compilation_metrics", None)) or \
            not dataclasses.is_dataclass(getattr(utils, "CompilationMetrics", None)):
        missing.append("torch._dynamo.utils.get_compilation_metrics (not perturbed)")
    if not _inductor_counts(metrics):
        missing.append("torch._inductor.metrics counts (not perturbed)")
    return tuple(missing)


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
    from torch._dynamo import utils

    real = utils.counters
    if not isinstance(real, collections.defaultdict):  # said by unavailable()
        yield
        return
    before = [(name, category, type(category), dict(category)) for name, category in real.items()]
    utils.counters = PerturbedCounters(real)
    try:
        yield
    finally:
        utils.counters = real
        real.clear()
        for name, category, cls, content in before:
            if type(category) is not cls:
                category.__class__ = cls
            dict.clear(category)
            dict.update(category, content)
            real[name] = category


@contextlib.contextmanager
def _perturbed_compile_counters() -> Iterator[None]:
    from torch._dynamo import testing

    installed: list[tuple[type, str, Any]] = []  # (class, attribute, what it had of its own)
    for cls in filter(None, (getattr(testing, name, None) for name in COUNTER_CLASSES)):
        for count in COUNTS:
            installed.append((cls, count, vars(cls).get(count)))
            setattr(cls, count, _ReadsMore(count))
    try:
        yield
    finally:
        for cls, count, own in installed:
            if own is None:
                delattr(cls, count)
            else:
                setattr(cls, count, own)


@contextlib.contextmanager
def _perturbed_compilation_metrics() -> Iterator[None]:
    from torch._dynamo import utils

    real: Callable[[], list[Any]] | None = getattr(utils, "get_compilation_metrics", None)
    if real is None or not dataclasses.is_dataclass(getattr(utils, "CompilationMetrics", None)):
        yield  # said by unavailable()
        return
    entry = _metrics_entry(utils.CompilationMetrics)

    # first, so that a caller counting what a call added (the Session) slices past it
    @functools.wraps(real)
    def listed() -> list[Any]:
        return [entry, *real()]

    utils.get_compilation_metrics = listed
    try:
        yield
    finally:
        utils.get_compilation_metrics = real


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


def _inductor_counts(metrics: Any) -> list[str]:
    """The counts this release's `torch._inductor.metrics` keeps: its module-level ints."""
    return [name for name, value in vars(metrics).items() if type(value) is int and not name.startswith("_")]


@contextlib.contextmanager
def _perturbed_inductor_metrics() -> Iterator[None]:
    from torch._inductor import metrics

    names = _inductor_counts(metrics)
    before = {name: vars(metrics)[name] for name in names}
    module_class = type(metrics)
    # a module's class may be changed to a subclass of ModuleType: its counts then read
    # through _ReadsMore, while metrics.reset() and Inductor's own code write the module's dict
    metrics.__class__ = type("PerturbedMetrics", (module_class,), {name: _ReadsMore(name) for name in names})
    try:
        yield
    finally:
        metrics.__class__ = module_class
        vars(metrics).update(before)
