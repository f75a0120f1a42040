"""Turn live Python values (tensors, modules, containers, user objects) into `values` trees.

Only instance dictionaries and slots are read: a snapshot never calls a property, a
`__getattr__`, `__repr__` or `__eq__` of the program's, so taking it cannot change
what it observes. Objects owned by torch or a library (see `ownership`) are kept as
their type's name only. The same state gives the same tree in every run: a second path
to an object already taken is a `RefValue` naming the first, and the order in which
paths are taken never depends on ids or hashes.
"""

from __future__ import annotations

import collections
import enum
import hashlib
import pickle
import random
import types
import weakref
from typing import Any

import numpy as np
import torch

from mutator.runtime.iterators import Consumed, is_lazy_iterator
from mutator.runtime.ownership import derives_from_infrastructure, library_owned, program_defined
from mutator.core.values import (
    MapValue,
    ObjectValue,
    OpaqueValue,
    RefValue,
    SeqValue,
    SetValue,
    TensorValue,
    Value,
    structure_digest,
)

MAX_DEPTH = 8
MAX_ITEMS = 256
MAX_ELEMENTS = 200_000  # larger tensors keep an evenly strided sample of this many values
MAX_STR = 4096

_MODULE_INTERNALS = frozenset(torch.nn.Module().__dict__) | {"_compiled_call_impl"}
_MODULE_REGISTRIES = ("_parameters", "_buffers", "_modules")
_MODULE_HOOKS = tuple(sorted(name for name in _MODULE_INTERNALS if "hooks" in name))
_COMPILE_MARKS = ("_is_torch_compile", "_torchdynamo", "_dynamo")  # what torch.compile writes on objects
_SHAPE_MARKS = ("_dynamo", "_has_dynamo", "_specialize_on")  # mark_dynamic and friends, on tensors
_OPAQUE_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.ModuleType,
    type,
)
_UNREADABLE = (RuntimeError, TypeError, ValueError, NotImplementedError, AttributeError)
_CLASS_BOOKKEEPING = frozenset({"__dict__", "__weakref__", "__doc__", "__module__", "__qualname__"})


def snapshot(value: Any, *, inputs: tuple[Any, ...] = ()) -> Value:
    """Snapshot `value`; tensors sharing storage with one of `inputs` are marked `argN`."""
    return _Snapshotter(inputs).take(value, "", 0)


def signature_of(value: Any) -> tuple[str, str]:
    """(metadata digest, digest with tensor values) of a value: "same state" for storms.

    Beyond what comparisons see, it covers what guards may read: strides, dispatch keys,
    dynamic-shape marks and Python attributes of tensors, the hooks registered on modules,
    what the program's classes hold (attribute lookups through `type(x).__dict__`), what
    its functions' closure cells hold, and whether a weak reference's referent is alive,
    and as what.
    """
    tree = _Snapshotter((), guards=True).take(value, "", 0)
    return structure_digest(tree, with_values=False), structure_digest(tree, with_values=True)


class _Snapshotter:
    def __init__(self, inputs: tuple[Any, ...], *, guards: bool = False) -> None:
        self._guards = guards
        self._seen: dict[int, tuple[str, str]] = {}  # id -> (kind, path) of mutable objects
        self._storages: dict[int, str] = {}
        for i, arg in enumerate(inputs):
            if isinstance(arg, torch.Tensor):
                ptr = _storage_ptr(arg)
                if ptr:
                    self._storages.setdefault(ptr, f"arg{i}")

    def take(self, value: Any, path: str, depth: int) -> Value:
        if value is None or isinstance(value, (bool, int, float, complex)):
            return value if type(value) in (bool, int, float, complex) or value is None else _scalar(value)
        if isinstance(value, str):
            return _bounded_str(value)
        if isinstance(value, bytes):
            return value[:MAX_STR]
        if depth > MAX_DEPTH:
            return OpaqueValue(_kind(value), "<deeper than the snapshot bound>")
        if isinstance(value, torch.Tensor):
            return self._memo(value, path, lambda: self._tensor(value, path, depth))
        if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
            return OpaqueValue(_kind(value), str(value))
        if isinstance(value, torch.Size):
            return SeqValue("Size", tuple(int(v) for v in value))
        if isinstance(value, np.ndarray):
            return _numpy_value("ndarray", value)
        if isinstance(value, np.generic):
            return _numpy_value(type(value).__name__, np.asarray(value))
        if isinstance(value, enum.Enum):
            return OpaqueValue(_kind(value), value.name)
        if self._guards and isinstance(value, type) and program_defined(value):
            return self._memo(value, path, lambda: self._class(value, path, depth))
        if self._guards and isinstance(value, (types.FunctionType, types.MethodType)) and program_defined(value):
            return self._memo(value, path, lambda: self._function(value, path, depth))
        if isinstance(value, _OPAQUE_TYPES):
            return OpaqueValue(_kind(value), _qualname(value))
        if isinstance(value, (range, slice)):
            return OpaqueValue(_kind(value), repr(value))
        if isinstance(value, BaseException):
            return OpaqueValue(_kind(value), _bounded_str(str(value)))
        if isinstance(value, Consumed):
            return self._memo(value, path, lambda: self._consumed(value, path, depth))
        if is_lazy_iterator(value):  # not consumed (a global, an argument): a generator and Dynamo's tuple_iterator alike
            return OpaqueValue("iterator", "")
        if "_mutator_recorder" in type(value).__dict__:  # a Recorder: never ask it for attributes
            return OpaqueValue("compiled", object.__getattribute__(value, "_label"))
        if isinstance(value, torch.autograd.graph.Node):  # a grad_fn: which node it is is the backend's choice
            return OpaqueValue("autograd node", "")
        if self._guards and isinstance(value, weakref.ref):  # Dynamo guards what `ref()` gives: None once dead
            referent = weakref.ref.__call__(value)  # not a subclass's own __call__: no program code runs
            return self._memo(value, path, lambda: ObjectValue(
                _kind(value), (("referent", self.take(referent, f"{path}()", depth + 1)),)))
        rng = _rng_state(value)
        if rng is not None:
            return OpaqueValue(_kind(value), rng)
        if library_owned(value):
            return OpaqueValue(_kind(value), "library object")
        if isinstance(value, tuple):  # tuple identity is an implementation detail: no memo
            return self._sequence(value, path, depth)
        if isinstance(value, (list, collections.deque)):
            return self._memo(value, path, lambda: self._sequence(value, path, depth))
        if isinstance(value, (dict, types.MappingProxyType)):
            return self._memo(value, path, lambda: self._mapping(value, path, depth))
        if isinstance(value, (set, frozenset)):
            return self._memo(value, path, lambda: self._set(value, path, depth))
        if isinstance(value, torch.nn.Module):
            return self._memo(value, path, lambda: self._module(value, path, depth))
        return self._memo(value, path, lambda: self._object(value, path, depth))

    def _memo(self, value: Any, path: str, build: Any) -> Value:
        key = id(value)
        if key in self._seen:
            kind, first = self._seen[key]
            return RefValue(kind, first or "<root>")
        self._seen[key] = (_kind(value), path)
        return build()

    def _tensor(self, t: torch.Tensor, path: str, depth: int) -> TensorValue:
        with torch._C.DisableTorchFunctionSubclass():
            grad = t.grad if t.is_leaf and t.requires_grad else None
            values, digest = _tensor_values(t)
            return TensorValue(
                type_name=_kind(t),
                dtype=str(t.dtype),
                shape=tuple(int(s) for s in t.shape),
                requires_grad=bool(t.requires_grad),
                device=str(t.device),
                values=values,
                digest=digest,
                grad=self._tensor(grad, path + ".grad", depth + 1) if grad is not None else None,
                alias=self._storages.get(_storage_ptr(t)),
                marks=_guarded_metadata(t) + self._attribute_marks(t, path, depth) if self._guards else (),
            )

    def _attribute_marks(self, t: torch.Tensor, path: str, depth: int) -> tuple[str, ...]:
        """The tensor's own Python attributes (`t.tag = 1`), each name with a digest of its
        value as guards see it: Dynamo guards `hasattr(x, 'tag')` and the values it reads."""
        try:
            attrs = object.__getattribute__(t, "__dict__")
        except AttributeError:
            return ()
        marks = []
        for name, value in sorted(attrs.items(), key=lambda item: str(item[0]))[:MAX_ITEMS]:
            if isinstance(name, str) and not name.startswith(("__", *_SHAPE_MARKS)):
                digest = structure_digest(self.take(value, f"{path}.{name}", depth + 1), with_values=False)
                marks.append(f"attr {name}={digest}")
        return tuple(marks)

    def _sequence(self, value: Any, path: str, depth: int) -> SeqValue:
        items = list(value)
        return SeqValue(
            _kind(value),
            tuple(self.take(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(items[:MAX_ITEMS])),
            max(0, len(items) - MAX_ITEMS),
        )

    def _consumed(self, value: Consumed, path: str, depth: int) -> SeqValue:
        """What a returned iterator yielded (runtime.iterators), then how it ended: what it
        returned (a generator's `return` value, None for most), what it raised, or that it
        had more items than were taken."""
        items = tuple(self.take(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value.items[:MAX_ITEMS]))
        if value.error is not None:
            items += (OpaqueValue("raised", f"{_kind(value.error)}: {_bounded_str(str(value.error))}"),)
        elif value.unfinished:
            items += (OpaqueValue("unfinished", f"more than {len(value.items)} items"),)
        else:
            returned = self.take(value.returned, f"{path}.returned", depth + 1)
            items += (ObjectValue("returned", (("returned", returned),)),)
        return SeqValue("iterator", items, max(0, len(value.items) - MAX_ITEMS))

    def _mapping(self, value: Any, path: str, depth: int) -> MapValue:
        items = list(value.items())
        return MapValue(
            _kind(value),
            tuple(
                (self.take(k, f"{path}.key", depth + 1), self.take(v, f"{path}[{k!r}]", depth + 1))
                for k, v in items[:MAX_ITEMS]
            ),
            max(0, len(items) - MAX_ITEMS),
        )

    def _set(self, value: Any, path: str, depth: int) -> SetValue:
        taken = [self.take(v, f"{path}{{}}", depth + 1) for v in list(value)[:MAX_ITEMS]]
        taken.sort(key=lambda v: structure_digest(v, with_values=True))
        return SetValue(_kind(value), tuple(taken), max(0, len(value) - MAX_ITEMS))

    def _module(self, module: torch.nn.Module, path: str, depth: int) -> ObjectValue:
        """Registered parameters, buffers and submodules, then plain attributes and `training`.

        An instance attribute shadows a registry entry of the same name (it is what
        `module.name` reads), so the shadowed entry is named by its registry.
        """
        own = {name: item for name, item in module.__dict__.items()
               if name not in _MODULE_INTERNALS and not name.startswith(("__", *_COMPILE_MARKS))}
        fields: list[tuple[str, Value]] = []
        for registry in _MODULE_REGISTRIES:
            for name, item in module.__dict__.get(registry, {}).items():
                label = f"{registry}[{name!r}]" if name in own else name
                fields.append((label, self.take(item, f"{path}.{label}", depth + 1)))
        for name, item in own.items():
            fields.append((name, self.take(item, f"{path}.{name}", depth + 1)))
        fields.append(("training", bool(module.__dict__.get("training", True))))
        if self._guards:
            hooks = tuple(_qualname(hook) for name in _MODULE_HOOKS
                          for hook in (module.__dict__.get(name) or {}).values() if callable(hook))
            fields.append(("<hooks>", SeqValue("hooks", hooks)))
            fields.append(("<class>", self.take(type(module), f"{path}.__class__", depth + 1)))
        return ObjectValue(_kind(module), tuple(fields))

    def _object(self, obj: Any, path: str, depth: int) -> Value:
        fields: list[tuple[str, Value]] = []
        attrs = _instance_attrs(obj)
        if attrs is None and not (self._guards and program_defined(type(obj))):
            return OpaqueValue(_kind(obj), "")
        attrs = attrs or []
        if derives_from_infrastructure(type(obj)):  # a Thread or TestCase subclass: its base's bookkeeping is not ours
            attrs = [(name, item) for name, item in attrs if not name.startswith("_")]
        for name, item in attrs:
            fields.append((name, self.take(item, f"{path}.{name}", depth + 1)))
        if isinstance(obj, dict):  # a dict subclass with attributes: keep its items too
            fields.append(("<items>", self._mapping(obj, path, depth)))
        if self._guards:
            fields.append(("<class>", self.take(type(obj), f"{path}.__class__", depth + 1)))
        return ObjectValue(_kind(obj), tuple(fields))

    def _class(self, cls: type, path: str, depth: int) -> ObjectValue:
        """What each of the program's classes along `cls`'s MRO holds, by name: an attribute
        read on an instance is guarded through `type(x).__dict__`, so deleting, adding or
        changing a class attribute (a method included) between calls changes the state."""
        fields: list[tuple[str, Value]] = []
        for klass in cls.__mro__:
            if not program_defined(klass):
                continue
            members = sorted(((str(name), item) for name, item in vars(klass).items()
                              if name not in _CLASS_BOOKKEEPING), key=lambda member: member[0])
            for name, item in members[:MAX_ITEMS]:
                if isinstance(item, (staticmethod, classmethod)):
                    item = item.__func__
                fields.append((f"{klass.__qualname__}.{name}", self.take(item, f"{path}.{name}", depth + 1)))
        return ObjectValue(f"class {_qualname(cls)}", tuple(fields))

    def _function(self, fn: types.FunctionType | types.MethodType, path: str, depth: int) -> ObjectValue:
        """A program's function as guards see it once Dynamo inlines it: what its closure cells
        hold (a counter a `nonlocal` bumps: `bump.__closure__[0].cell_contents == 1`), its
        defaults and attributes; a bound method, its object too."""
        if isinstance(fn, types.MethodType):
            return ObjectValue(f"method {_qualname(fn)}", (
                ("self", self.take(fn.__self__, f"{path}.__self__", depth + 1)),
                ("function", self.take(fn.__func__, f"{path}.__func__", depth + 1))))
        cells = tuple(_cell_contents(cell) for cell in fn.__closure__ or ())
        fields = [("closure", self.take(cells, f"{path}.__closure__", depth + 1)),
                  ("defaults", self.take(fn.__defaults__, f"{path}.__defaults__", depth + 1)),
                  ("kwdefaults", self.take(fn.__kwdefaults__, f"{path}.__kwdefaults__", depth + 1))]
        fields += [(name, self.take(item, f"{path}.{name}", depth + 1))
                   for name, item in list(fn.__dict__.items())[:MAX_ITEMS] if not name.startswith(("__", *_COMPILE_MARKS))]
        return ObjectValue(f"function {_qualname(fn)}", tuple(fields))


def _instance_attrs(obj: Any) -> list[tuple[str, Any]] | None:
    attrs: list[tuple[str, Any]] = []
    found = False
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        d = None
    if isinstance(d, dict):
        found = True
        attrs.extend((k, v) for k, v in list(d.items())[:MAX_ITEMS] if not k.startswith(("__", *_COMPILE_MARKS)))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            found = True
            try:
                attrs.append((name, object.__getattribute__(obj, name)))
            except AttributeError:
                attrs.append((name, OpaqueValue("unset", "")))
    return attrs if found else None


def _tensor_values(t: torch.Tensor) -> tuple[np.ndarray | None, str]:
    try:
        data = t.detach()
        if data.is_nested or data.device.type != "cpu":
            return None, f"unreadable:{data.device.type}"
        if data.layout != torch.strided:
            data = data.to_dense()
        if data.is_quantized:
            data = data.dequantize()
        data = data.resolve_conj().resolve_neg()
        if data.dtype in (torch.bfloat16,) or data.dtype.itemsize == 1 and data.dtype.is_floating_point:
            data = data.to(torch.float32)
        arr = np.array(data.numpy(), copy=True).reshape(-1)
    except _UNREADABLE as exc:  # fake or functional tensors that escaped a trace, odd dtypes
        return None, f"unreadable:{type(exc).__name__}"
    if arr.size > MAX_ELEMENTS:
        arr = arr[:: -(-arr.size // MAX_ELEMENTS)].copy()
    arr.setflags(write=False)
    digest = hashlib.sha1(f"{t.dtype}{tuple(t.shape)}".encode() + arr.tobytes()).hexdigest()[:16]
    return arr, digest


def _guarded_metadata(t: torch.Tensor) -> tuple[str, ...]:
    """What Dynamo's tensor guards check beyond dtype, shape, device and requires_grad:
    strides, storage offset, dispatch keys (inference tensors, subclasses), and the
    dynamic-shape marks the program put on the tensor."""
    try:
        attrs = object.__getattribute__(t, "__dict__")
    except AttributeError:
        attrs = {}
    marks = sorted(f"{k}={v!r}" for k, v in attrs.items() if k.startswith(_SHAPE_MARKS))
    try:
        layout = [f"stride={tuple(t.stride())}", f"offset={t.storage_offset()}", f"keys={torch._C._dispatch_keys(t)}"]
    except _UNREADABLE:  # sparse and other layouts without strides
        layout = [f"layout={t.layout}"]
    return tuple(layout + marks)


def _rng_state(value: Any) -> str | None:
    """A random generator is its state: the same seed and draws give the same digest."""
    if isinstance(value, torch.Generator):
        state = value.get_state().numpy().tobytes()
    elif isinstance(value, random.Random):
        state = repr(value.getstate()).encode()
    elif isinstance(value, np.random.RandomState):
        state = pickle.dumps(value.get_state())
    elif isinstance(value, np.random.Generator):
        state = pickle.dumps(value.bit_generator.state)
    else:
        return None
    return "state " + hashlib.sha1(state).hexdigest()[:16]


def _numpy_value(kind: str, arr: np.ndarray) -> TensorValue:
    flat = np.array(arr, copy=True).reshape(-1)
    flat.setflags(write=False)
    digest = hashlib.sha1(f"{arr.dtype}{arr.shape}".encode() + flat.tobytes()).hexdigest()[:16]
    return TensorValue(kind, f"numpy.{arr.dtype}", tuple(arr.shape), False, "numpy", flat, digest)


def _cell_contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell: a name bound later in the enclosing function
        return OpaqueValue("empty cell", "")


def _storage_ptr(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except _UNREADABLE:
        return 0


def _scalar(value: Any) -> Any:
    """A subclass of a scalar type (an IntEnum, a bool-like): keep its plain value."""
    for base in (bool, int, float, complex):
        if isinstance(value, base):
            return base(value)
    return value


def _bounded_str(value: str) -> str:
    if len(value) <= MAX_STR:
        return value
    digest = hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:12]
    return f"{value[:MAX_STR]}...<{len(value)} chars, sha1 {digest}>"


def _kind(value: Any) -> str:
    return "iterator" if isinstance(value, Consumed) else type(value).__name__


def _qualname(value: Any) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or ""
    return str(name)
