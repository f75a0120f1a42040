"""Where two observations of the same program differ (torch-free: numpy only).

Tensors are compared for type, dtype, shape, `requires_grad`, aliasing, gradients and
values, with `torch.testing.assert_close`'s default tolerances per dtype (NaNs in the same
places count as equal: both runs agree). Where float values differ beyond tolerance and
a float64 eager run is given, the difference is forgiven when the compiled values are
about as close to the float64 values as eager's are (the PyTorch issue template asks
fuzzer reports to check this).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from mutator.core.observation import CallRecord, Observation, Stdout
from mutator.core.printed import comparable
from mutator.core.values import (
    ExceptionInfo,
    MapValue,
    ObjectValue,
    OpaqueValue,
    RefValue,
    SeqValue,
    SetValue,
    TensorValue,
    Value,
)

MAX_DIVERGENCES = 16
REFERENCE_SLACK = 2.0  # compiled may be this many times further from float64 than eager is
REFERENCE_AGREEMENT = 1e-2  # eager must be this close (relative RMS) to float64 for the reference to count

# (rtol, atol) of torch.testing.assert_close, by dtype name.
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_PY_FLOAT = _TOLERANCES["float32"]  # Python floats in these programs mostly come from float32 tensors
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


@dataclass(frozen=True, slots=True)
class Divergence:
    """One place where the compiled run differs from the eager run."""

    observation: str  # result, args, kwargs, globals, returned, state, stdout, exception, calls
    where: str  # a readable location: "call 1 (fn) result[0]"
    aspect: str  # value, dtype, shape, requires_grad, type, alias, grad, length, keys, missing, text
    detail: str
    numeric: bool = False  # a float difference that a float64 reference run could explain
    kind: str = ""  # the type of the eager value that diverged: "Tensor", "str", "dict", ...
    compiled_kind: str = ""  # ... and of the compiled value (another than `kind` where the types differ)

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


def compare_observations(eager: Observation, compiled: Observation, reference: Observation | None = None,
                         *, names: tuple[str, str] = ("eager", "compiled"), mask: frozenset[str] = frozenset(),
                         limit: int = MAX_DIVERGENCES, stopped: str | None = None) -> list[Divergence]:
    """Divergences of `compiled` from `eager` in calls, returned value, state and stdout.

    `names` are how the two runs are called in the details (two eager runs, say). Paths
    in `mask` (a divergence's `where`) are not compared, nor anything below them.
    `stopped` ("eager" or "compiled"): that run stopped early, at a failing check of the
    program's own outside any call; compare the calls it made and what it printed with
    the same first part of the other run, and nothing after.
    """
    found = _Collector(names, mask, limit)
    one, other = names
    ref_calls = reference.calls if reference is not None else ()
    shorter = {"eager": len(eager.calls), "compiled": len(compiled.calls)}.get(stopped or "")
    if len(eager.calls) != len(compiled.calls) and shorter != min(len(eager.calls), len(compiled.calls)):
        found.add(Divergence("calls", "calls", "length",
                             f"{one} made {len(eager.calls)} recorded calls, {other} {len(compiled.calls)}"))
    for i, (e, c) in enumerate(zip(eager.calls, compiled.calls)):
        r = ref_calls[i] if i < len(ref_calls) and ref_calls[i].label == e.label else None
        _compare_call(found, e, c, r)
    for divergence in compare_stdout(eager.stdout, compiled.stdout, names=names, mask=mask, stopped=stopped,
                                     every_line=limit > MAX_DIVERGENCES):
        found.add(divergence)
    if stopped:
        return found.items
    ref = reference if reference is not None else Observation()
    found.values("returned", "drive() returned", eager.returned, compiled.returned, ref.returned)
    found.values("state", "state()", eager.state, compiled.state, ref.state)
    if _exc_type(eager.state_error) != _exc_type(compiled.state_error):
        found.add(Divergence("state", "state()", "exception",
                             f"{one} {_describe_exc(eager.state_error)}, {other} {_describe_exc(compiled.state_error)}"))
    if eager.exit_code != compiled.exit_code and not (eager.tests or compiled.tests):  # unittest.main's exit
        found.add(Divergence("exit", "sys.exit", "value", f"{one} {eager.exit_code}, {other} {compiled.exit_code}"))
    return found.items


def exceptions_match(eager: ExceptionInfo | None, compiled: ExceptionInfo | None) -> bool:
    """Same outcome for the program: both none, or an `except EagerType:` would catch both.

    Dynamo's own wrappers (TorchRuntimeError is a RuntimeError) count as a match; an
    InternalTorchDynamoError never does.
    """
    if eager is None or compiled is None:
        return eager is compiled
    if compiled.type_name == eager.type_name:
        return True
    return compiled.is_a(eager.type_name) and compiled.short_type != "InternalTorchDynamoError"


def compare_stdout(eager: Stdout | None, compiled: Stdout | None, *, names: tuple[str, str] = ("eager", "compiled"),
                   mask: frozenset[str] = frozenset(), stopped: str | None = None,
                   every_line: bool = False) -> list[Divergence]:
    """Equal text, or equal text with printed numbers equal to their printed precision; the
    name of an autograd node (a tensor's `grad_fn=<AddBackward0>`) is the backend's choice
    and not compared, a printed set's elements are compared in any order
    (`mutator.core.printed`).

    Lines are compared one by one: a line whose path ("stdout line 3") is in `mask` is
    not compared; "stdout" in `mask` masks all of it. `stopped` ("eager" or "compiled"):
    compare that run's lines with the other run's first lines only. `every_line`: one
    divergence per differing line (to build a mask), not just the first.
    """
    if eager is None or compiled is None or "stdout" in mask:
        return []
    if eager.normalized_digest == compiled.normalized_digest or \
            not (mask or stopped) and not eager.truncated and not compiled.truncated \
            and _same_printed_text(eager.head, compiled.head):
        return []
    one, other = names
    e_lines, c_lines = eager.head.splitlines(), compiled.head.splitlines()
    if stopped == "eager":
        c_lines = c_lines[:len(e_lines)]
    elif stopped == "compiled":
        e_lines = e_lines[:len(c_lines)]
    cut_short = eager.truncated and stopped != "compiled" or compiled.truncated and stopped != "eager"
    if cut_short or len(e_lines) != len(c_lines):
        return [Divergence("stdout", "stdout", "text", _first_differing_line(eager.head, compiled.head, names))]
    found: list[Divergence] = []
    for i, (x, y) in enumerate(zip(e_lines, c_lines)):
        where = f"stdout line {i + 1}"
        if where in mask or x == y or _same_printed_text(x, y):
            continue
        found.append(Divergence("stdout", where, "text", f"line {i + 1}: {one} {x[:120]!r}, {other} {y[:120]!r}"))
        if not every_line:
            break
    return found


def program_global(call: CallRecord, name: str) -> str:
    """The path of program global `name` after `call`, as divergences and masks name it."""
    return f"{_call_where(call)}{_GLOBALS}[{_key(name)}]"


def _call_where(call: CallRecord) -> str:
    return f"call {call.index + 1} ({call.label})"


_GLOBALS = " program globals after the call"


def _compare_call(found: _Collector, e: CallRecord, c: CallRecord, r: CallRecord | None) -> None:
    where = _call_where(e)
    if where in found.mask:
        return
    one, other = found.names
    if e.label != c.label:
        found.add(Divergence("calls", where, "label", f"{one} called {e.label}, {other} {c.label}"))
        return
    if not exceptions_match(e.exception, c.exception):
        found.add(Divergence("exception", where, "exception",
                             f"{one} {_describe_exc(e.exception)}, {other} {_describe_exc(c.exception)}"))
        return
    found.values("result", f"{where} result", e.result, c.result, r.result if r else None)
    found.values("args", f"{where} arguments after the call", e.args, c.args, r.args if r else None)
    found.values("kwargs", f"{where} keyword arguments after the call", e.kwargs, c.kwargs, r.kwargs if r else None)
    found.values("globals", f"{where}{_GLOBALS}", e.program_state, c.program_state, r.program_state if r else None)


class _Collector:
    def __init__(self, names: tuple[str, str], mask: frozenset[str] = frozenset(),
                 limit: int = MAX_DIVERGENCES) -> None:
        self.items: list[Divergence] = []
        self.names = names
        self.mask = mask
        self.limit = limit

    @property
    def full(self) -> bool:
        return len(self.items) >= self.limit

    def add(self, divergence: Divergence) -> None:
        if not self.full and divergence.where not in self.mask:
            self.items.append(divergence)

    def values(self, observation: str, where: str, e: Value, c: Value, r: Value) -> None:
        _walk(self, observation, where, "", e, c, r)


def _walk(found: _Collector, obs: str, where: str, path: str, e: Any, c: Any, r: Any) -> None:
    here = f"{where}{path}"
    one, other = found.names

    def diverge(aspect: str, detail: str, numeric: bool = False) -> None:
        found.add(Divergence(obs, here, aspect, detail, numeric, _value_kind(e), _value_kind(c)))

    if found.full or here in found.mask:
        return
    if type(e) is not type(c):
        diverge("type", f"{one} {_kind(e)}, {other} {_kind(c)}")
        return
    if isinstance(e, TensorValue):
        _compare_tensor(diverge, e, c, r if isinstance(r, TensorValue) else None, found, obs, here)
    elif isinstance(e, (SeqValue, SetValue)):
        if e.kind != c.kind:
            diverge("type", f"{one} {e.kind}, {other} {c.kind}")
        elif len(e.items) != len(c.items) or e.truncated != c.truncated:
            diverge("length", f"{one} {len(e.items) + e.truncated} items, {other} {len(c.items) + c.truncated}")
        else:
            r_items = r.items if isinstance(r, type(e)) and len(r.items) == len(e.items) else (None,) * len(e.items)
            for i, (ei, ci, ri) in enumerate(zip(e.items, c.items, r_items)):
                _walk(found, obs, where, f"{path}[{i}]", ei, ci, ri)
    elif isinstance(e, MapValue):
        _compare_map(diverge, found, obs, where, path, e, c, r)
    elif isinstance(e, ObjectValue):
        _compare_object(diverge, found, obs, where, path, e, c, r)
    elif isinstance(e, (OpaqueValue, RefValue)):
        if (e.kind, _text(e)) != (c.kind, _text(c)):
            diverge("value", f"{one} {_kind(e)} {_text(e)!r}, {other} {_kind(c)} {_text(c)!r}")
    elif isinstance(e, float):
        if not _close_float(e, c, r if isinstance(r, float) else None):
            diverge("value", f"{one} {e!r}, {other} {c!r}", numeric=True)
    elif isinstance(e, complex):
        if not (_close_float(e.real, c.real, None) and _close_float(e.imag, c.imag, None)):
            diverge("value", f"{one} {e!r}, {other} {c!r}", numeric=True)
    elif isinstance(e, str) and comparable(e) == comparable(c):
        return  # a repr kept as text: a tensor's grad_fn's name is the backend's, a set's order the hash table's
    elif e != c:
        diverge("value", f"{one} {_short(e)}, {other} {_short(c)}")


def _compare_tensor(diverge: Any, e: TensorValue, c: TensorValue, r: TensorValue | None,
                    found: _Collector, obs: str, here: str) -> None:
    one, other = found.names
    for aspect, ev, cv in (
        ("type", e.type_name, c.type_name),
        ("dtype", e.dtype, c.dtype),
        ("shape", e.shape, c.shape),
        ("requires_grad", e.requires_grad, c.requires_grad),
        ("device", e.device, c.device),
    ):
        if ev != cv:
            diverge(aspect, f"{one} {aspect} {ev}, {other} {cv}")
            return
    if e.digest != c.digest:
        detail, numeric = _value_difference(e, c, r, found.names)
        if detail:
            diverge("value", detail, numeric)
    if e.alias != c.alias:
        diverge("alias", f"{one}: {_alias_text(e.alias)}, {other}: {_alias_text(c.alias)}")
    if (e.grad is None) != (c.grad is None):
        diverge("grad", f"{one} grad {'set' if e.grad is not None else 'None'}, "
                        f"{other} grad {'set' if c.grad is not None else 'None'}")
    elif e.grad is not None and c.grad is not None:
        _walk(found, obs, here, ".grad", e.grad, c.grad, r.grad if r is not None else None)


def _value_difference(e: TensorValue, c: TensorValue, r: TensorValue | None,
                      names: tuple[str, str]) -> tuple[str, bool]:
    """'' when the values are close; otherwise a description and whether it is numeric."""
    one, other = names
    if e.values is None or c.values is None:
        return ("values differ (not readable: " + (e.digest if e.values is None else c.digest) + ")", False)
    if e.values.shape != c.values.shape:
        return (f"values differ in size ({e.values.size} vs {c.values.size})", False)
    dtype = e.dtype.rsplit(".", 1)[-1]
    if dtype not in _TOLERANCES:
        bad = e.values != c.values
        if not bad.any():
            return "", False
        i = int(np.flatnonzero(bad)[0])
        return (f"{int(bad.sum())} of {bad.size} values differ; first at flat index {i}: "
                f"{one} {e.values[i]!r}, {other} {c.values[i]!r}", False)
    rtol, atol = _TOLERANCES[dtype]
    ev, cv = e.values.astype(np.complex128 if "complex" in dtype else np.float64), \
        c.values.astype(np.complex128 if "complex" in dtype else np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(cv, ev, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return "", False
    if r is not None and r.values is not None and r.values.shape == ev.shape and _explained_by_reference(ev, cv, r.values):
        return "", False
    bad = ~close
    i = int(np.flatnonzero(bad)[0])
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(cv - ev)
        worst = float(np.nanmax(np.where(bad, diff, 0))) if np.isfinite(diff[bad]).any() else float("nan")
    reference_note = "" if r is None else " (beyond the float64 reference's tolerance too)"
    return (f"{int(bad.sum())} of {bad.size} values differ beyond rtol={rtol:g}, atol={atol:g}; max abs diff "
            f"{worst:.4g}; first at flat index {i}: {one} {ev[i]:.6g}, {other} {cv[i]:.6g}{reference_note}", True)


def _explained_by_reference(e: np.ndarray, c: np.ndarray, ref: np.ndarray) -> bool:
    """Whether compiled is about as close to the float64 values as eager is.

    A reference that is not close to eager itself (the program computed something else
    in float64) explains nothing.
    """
    ref = ref.astype(e.dtype)
    finite = np.isfinite(ref) & np.isfinite(e) & np.isfinite(c)
    if not finite.any() or (np.isfinite(e) != np.isfinite(c)).any():
        return False
    err_e = math.sqrt(float(np.mean(np.abs(e[finite] - ref[finite]) ** 2)))
    err_c = math.sqrt(float(np.mean(np.abs(c[finite] - ref[finite]) ** 2)))
    scale = math.sqrt(float(np.mean(np.abs(ref[finite]) ** 2)))
    if err_e > REFERENCE_AGREEMENT * scale + 1e-5:
        return False
    return err_c <= REFERENCE_SLACK * err_e + 1e-6


def _compare_map(diverge: Any, found: _Collector, obs: str, where: str, path: str,
                 e: MapValue, c: MapValue, r: Any) -> None:
    one, other = found.names
    if e.kind != c.kind:
        diverge("type", f"{one} {e.kind}, {other} {c.kind}")
        return
    e_keys = [_key(k) for k, _ in e.items]
    c_keys = [_key(k) for k, _ in c.items]
    if e_keys != c_keys:
        if sorted(e_keys) == sorted(c_keys):
            diverge("keys", f"same keys in a different order: {one} [{', '.join(e_keys[:8])}], {other} [{', '.join(c_keys[:8])}]")
        else:
            missing = [k for k in e_keys if k not in c_keys][:5]
            extra = [k for k in c_keys if k not in e_keys][:5]
            diverge("keys", f"keys differ: only {one} has [{', '.join(missing)}], only {other} has [{', '.join(extra)}]")
        return
    r_map = {_key(k): v for k, v in r.items} if isinstance(r, MapValue) else {}
    for (k, ev), (_, cv) in zip(e.items, c.items):
        _walk(found, obs, where, f"{path}[{_key(k)}]", ev, cv, r_map.get(_key(k)))


def _compare_object(diverge: Any, found: _Collector, obs: str, where: str, path: str,
                    e: ObjectValue, c: ObjectValue, r: Any) -> None:
    one, other = found.names
    if e.kind != c.kind:
        diverge("type", f"{one} {e.kind}, {other} {c.kind}")
        return
    e_fields, c_fields = dict(e.fields), dict(c.fields)
    missing = [n for n in e_fields if n not in c_fields]
    extra = [n for n in c_fields if n not in e_fields]
    if missing or extra:
        parts = ([f"attributes only {one} has: {missing}"] if missing else []) + \
                ([f"attributes only {other} has: {extra}"] if extra else [])
        diverge("missing", "; ".join(parts))
    r_fields = dict(r.fields) if isinstance(r, ObjectValue) else {}
    for name, ev in e.fields:
        if name in c_fields:
            _walk(found, obs, where, f"{path}.{name}", ev, c_fields[name], r_fields.get(name))


def _close_float(e: float, c: float, r: float | None) -> bool:
    if math.isnan(e) or math.isnan(c):
        return math.isnan(e) and math.isnan(c)
    rtol, atol = _PY_FLOAT
    if abs(e - c) <= atol + rtol * abs(e):
        return True
    if r is None or not math.isfinite(r) or abs(e - r) > REFERENCE_AGREEMENT * abs(r) + 1e-5:
        return False
    return abs(c - r) <= REFERENCE_SLACK * abs(e - r) + 1e-6


def _same_printed_text(a: str, b: str) -> bool:
    return _same_text_with_numbers(comparable(a), comparable(b))


def _same_text_with_numbers(a: str, b: str) -> bool:
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        # a value near a rounding boundary may print one unit apart in its last decimal;
        # numbers printed without decimals (integers, "1." in a tensor) must match exactly
        step = max(_printed_step(x), _printed_step(y))
        if step >= 1 or not abs(fx - fy) <= 1.01 * step + 1e-5 * abs(fx):
            return False
    return True


def _printed_step(text: str) -> float:
    """The size of one unit in the last printed digit: 0.01 for '1.25', 1e-5 for '1.5e-4'."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _first_differing_line(a: str, b: str, names: tuple[str, str]) -> str:
    one, other = names
    a_lines, b_lines = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(a_lines, b_lines)):
        if x != y:
            return f"line {i + 1}: {one} {x[:120]!r}, {other} {y[:120]!r}"
    if len(a_lines) != len(b_lines):
        return f"{one} printed {len(a_lines)} lines, {other} {len(b_lines)}"
    return "the printed text differs beyond what is kept (long output)"


def _exc_type(exc: ExceptionInfo | None) -> str | None:
    return exc.type_name if exc is not None else None


def _describe_exc(exc: ExceptionInfo | None) -> str:
    return "returned normally" if exc is None else "raised " + exc.one_line()


def _key(value: Value) -> str:
    return repr(value) if not isinstance(value, (TensorValue, ObjectValue, SeqValue, MapValue, SetValue)) \
        else f"<{_kind(value)}>"


def _value_kind(value: Any) -> str:
    if isinstance(value, TensorValue):
        return "Tensor"
    if isinstance(value, (SeqValue, MapValue, SetValue)):
        return value.kind
    if isinstance(value, (ObjectValue, OpaqueValue, RefValue)):
        return "object"
    return type(value).__name__


def _kind(value: Any) -> str:
    if isinstance(value, TensorValue):
        return f"{value.type_name}({value.dtype}, {list(value.shape)})"
    if isinstance(value, (SeqValue, MapValue, SetValue, ObjectValue, OpaqueValue, RefValue)):
        return value.kind
    return type(value).__name__


def _text(value: OpaqueValue | RefValue) -> str:
    return value.text if isinstance(value, OpaqueValue) else f"ref to {value.path}"


def _alias_text(alias: str | None) -> str:
    return f"shares storage with {alias}" if alias else "shares storage with no input"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
