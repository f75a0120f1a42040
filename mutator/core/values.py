"""Torch-free snapshots of what a program produced, so the parent can compare runs.

A child process turns every observed Python value into a tree of these frozen
dataclasses (see `mutator.runtime.snapshot`); tensors carry their metadata and a numpy
copy of their values. The parent unpickles them without importing torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

Scalar = Union[None, bool, int, float, complex, str, bytes]


@dataclass(frozen=True, slots=True, eq=False)
class TensorValue:
    """A tensor's metadata and values; `values` is None when too large or not readable."""

    type_name: str  # "Tensor", "Parameter", or a subclass's name
    dtype: str  # "torch.float32"
    shape: tuple[int, ...]
    requires_grad: bool
    device: str
    values: np.ndarray | None
    digest: str  # hash of dtype, shape and raw values: exact equality
    grad: TensorValue | None = None
    alias: str | None = None  # "arg0" etc. when it shares storage with an input of the call
    marks: tuple[str, ...] = ()  # strides, dispatch keys, dynamic-shape marks, Python attributes: in state signatures only


@dataclass(frozen=True, slots=True, eq=False)
class SeqValue:
    """A list, tuple, namedtuple, deque, torch.Size... `kind` is the type's name."""

    kind: str
    items: tuple[Value, ...]
    truncated: int = 0  # items left out beyond the snapshot's bound


@dataclass(frozen=True, slots=True, eq=False)
class MapValue:
    """A dict or mapping, in iteration order (order is observable in Python)."""

    kind: str
    items: tuple[tuple[Value, Value], ...]
    truncated: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class SetValue:
    """A set or frozenset, items in a canonical order (set order is not semantics)."""

    kind: str
    items: tuple[Value, ...]
    truncated: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class ObjectValue:
    """A user object or nn.Module: its type's name and its instance attributes."""

    kind: str
    fields: tuple[tuple[str, Value], ...]


@dataclass(frozen=True, slots=True, eq=False)
class OpaqueValue:
    """Something compared by a stable text only: a function, a dtype, a device, a class."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True, eq=False)
class RefValue:
    """A second reference to an object already in the snapshot (cycles, sharing)."""

    kind: str
    path: str


Value = Union[Scalar, TensorValue, SeqValue, MapValue, SetValue, ObjectValue, OpaqueValue, RefValue]


@dataclass(frozen=True, slots=True)
class FrameInfo:
    filename: str
    lineno: int
    function: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}"


@dataclass(frozen=True, slots=True)
class ExceptionInfo:
    """An exception as data: enough to compare runs and to sign a finding."""

    type_name: str  # qualified, builtins unqualified: "ValueError", "torch._dynamo.exc.Unsupported"
    bases: tuple[str, ...]  # qualified names of the whole MRO, for "would `except X` catch it"
    message: str
    frames: tuple[FrameInfo, ...]  # innermost last, bounded
    chain: tuple[str, ...] = ()  # types of the __cause__/__context__ chain, outermost first
    gb_type: str | None = None  # Unsupported's graph-break type
    dynamo_frame: FrameInfo | None = None  # innermost frame inside torch/_dynamo, if any
    user_stack: tuple[FrameInfo, ...] = ()  # for a graph break: the user frames Dynamo was tracing, innermost last
    error_on_graph_break: bool | None = None  # Dynamo's error_on_graph_break setting where it broke
    check: str | None = None  # "check" / "compiler": a failing check of the program's own (runtime.checks)

    @property
    def short_type(self) -> str:
        return self.type_name.rsplit(".", 1)[-1]

    @property
    def in_dynamo(self) -> bool:
        return self.dynamo_frame is not None

    def is_a(self, type_name: str) -> bool:
        """Whether this exception is an instance of the type with this qualified name."""
        return type_name in self.bases or type_name == self.type_name

    def involves(self, short_name: str) -> bool:
        """Whether this exception or one in its chain has this class name."""
        return any(t.rsplit(".", 1)[-1] == short_name for t in (self.type_name, *self.chain))

    def one_line(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.short_type}: {first}"[:200]


def structure_digest(value: Value, *, with_values: bool) -> str:
    """A hash of a snapshot: with_values=False keeps only types, shapes and scalars.

    Used to tell whether two calls had "the same inputs" (recompile-storm detection).
    """
    h = hashlib.sha1()
    _feed(h, value, with_values)
    return h.hexdigest()[:16]


def _feed(h: Any, value: Value, with_values: bool) -> None:
    if isinstance(value, TensorValue):
        h.update(f"T{value.type_name}{value.dtype}{value.shape}{value.requires_grad}{value.device}{value.marks}".encode())
        if with_values:
            h.update(value.digest.encode())
    elif isinstance(value, (SeqValue, SetValue)):
        h.update(f"S{value.kind}{len(value.items)}(".encode())
        for item in value.items:
            _feed(h, item, with_values)
        h.update(b")")
    elif isinstance(value, MapValue):
        h.update(f"M{value.kind}{len(value.items)}(".encode())
        for key, item in value.items:
            _feed(h, key, with_values)
            _feed(h, item, with_values)
        h.update(b")")
    elif isinstance(value, ObjectValue):
        h.update(f"O{value.kind}(".encode())
        for name, item in value.fields:
            h.update(name.encode())
            _feed(h, item, with_values)
        h.update(b")")
    elif isinstance(value, (OpaqueValue, RefValue)):
        h.update(f"X{value!r}".encode())
    else:
        h.update(f"V{type(value).__name__}{value!r}".encode())
