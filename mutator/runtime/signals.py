"""Dynamo's own signals of a compiled run, where arc coverage is blind (issue 24, point 4).

Arcs say which lines of `torch/_dynamo` ran, not what they ran on: the same lines of
`symbolic_convert.py` handle `LOAD_ATTR` on a tensor and on a `set` subclass instance, and
one `VariableTracker.__init__` serves every kind. Three signals tell those apart:

- `vt`: each `VariableTracker` class the trace built (what Dynamo took the program's
  values for: `UserDefinedSetVariable`, `LocalGeneratorObjectVariable`, ...);
- `op`: each (instruction, kind of value it acted on) the trace stepped through: the
  callee's kind for a call, the top of the stack otherwise (`CALL:UserFunctionVariable`,
  `LOAD_ATTR:UserDefinedObjectVariable`, `FOR_ITER:ListIteratorVariable`);
- `guard`: each (guard kind, where its source lives) the compiled frames installed
  (`DICT_KEYS_MATCH:LOCAL`, `ID_MATCH:GLOBAL`).

`DynamoSignals` patches three methods of this torch once per process, in the warm worker
(a forked run inherits the patches); `start` and `stop` bracket one compiled run, and
`stop` gives what it recorded as semantic features (`mutator.core.features.dynamo_signal`).
A torch without one of the three methods records the others (`patched` says which); none
of it changes what Dynamo does, and outside `start`/`stop` a patch costs one test.
"""

from __future__ import annotations

import dis
import functools
from collections.abc import Callable
from typing import Any

from mutator.core.features import dynamo_signal



class DynamoSignals:
    """The recorder. Its patches go in once per process (a second recorder shares them);
    they record only between `start` and `stop`, into the recorder started last."""

    def __init__(self) -> None:
        self.patched: tuple[str, ...] = _install()

    def start(self) -> None:
        global _seen
        _seen = set()

    def stop(self) -> frozenset[int]:
        global _seen
        seen, _seen = _seen, None
        return frozenset(dynamo_signal(kind, value) for kind, value in seen or ())


_seen: set[tuple[str, str]] | None = None  # what the started recorder saw; None: none is started
_patched: tuple[str, ...] | None = None  # the signals this process's patches record, once installed


def _install() -> tuple[str, ...]:
    global _patched
    if _patched is None:
        done = []
        for name, install in (("vt", _patch_variables), ("op", _patch_steps), ("guard", _patch_guards)):
            try:
                install()
            except (ImportError, AttributeError):  # another torch: record what it allows
                continue
            done.append(name)
        _patched = tuple(done)
    return _patched


def _patch_variables() -> None:
    from torch._dynamo.variables.base import VariableTracker

    original = VariableTracker.__init__

    @functools.wraps(original)
    def __init__(vt: Any, *args: Any, **kwargs: Any) -> None:
        original(vt, *args, **kwargs)
        if _seen is not None:
            _seen.add(("vt", type(vt).__name__))

    VariableTracker.__init__ = __init__  # type: ignore[method-assign]


def _patch_steps() -> None:
    from torch._dynamo.symbolic_convert import InstructionTranslatorBase
    from torch._dynamo.variables.lazy import LazyVariableTracker

    original: Callable[[Any], bool] = InstructionTranslatorBase.step

    def kind(vt: Any) -> str:
        if type(vt) is LazyVariableTracker:
            vt = vt.unwrap()  # the realized tracker, or the lazy one where nothing realized it
        return type(vt).__name__

    @functools.wraps(original)
    def step(tx: Any) -> bool:
        if _seen is None:
            return original(tx)
        seen, name, operands = _seen, None, ()
        try:
            ip = tx.instruction_pointer
            if ip is not None:
                inst = tx.instructions[ip]
                name = f"{inst.opname}({_operator(inst)})" if inst.opname in _WITH_OPERATOR else inst.opname
                operands = _operands(inst.opname, inst.arg, tx.stack)
        except Exception:  # never let the recording change the trace
            pass
        try:
            return original(tx)
        finally:
            # the kinds after the step: a lazy operand (a local or a global not looked at yet)
            # is realized by the instruction that needs it (`GET_ITER` on a set subclass)
            if name is not None:
                try:
                    seen.add(("op", f"{name}:{'/'.join(map(kind, operands))}" if operands else name))
                except Exception:
                    pass

    InstructionTranslatorBase.step = step  # type: ignore[method-assign]


def _patch_guards() -> None:
    from torch._dynamo.guards import CheckFunctionManager

    original = CheckFunctionManager.__init__

    @functools.wraps(original)
    def __init__(manager: Any, f_code: Any, output_graph: Any = None, *args: Any, **kwargs: Any) -> None:
        if _seen is not None and output_graph is not None:
            try:
                for guard in output_graph.guards:
                    create = guard.inner_create_fn()
                    _seen.add(("guard", f"{getattr(create, '__name__', '?')}:{guard.source.name}"))
            except Exception:
                pass
        original(manager, f_code, output_graph, *args, **kwargs)

    CheckFunctionManager.__init__ = __init__  # type: ignore[method-assign]


# instructions that act on no value already on the stack (loads push one), or on a count of them
_NO_OPERAND_PREFIXES = ("LOAD_", "BUILD_", "JUMP_", "MAKE_", "COPY", "SWAP")
_ON_TOP = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})  # loads of an attribute of the top
_NO_OPERAND = frozenset({"PUSH_NULL", "RESUME", "NOP", "KW_NAMES", "PRECALL", "EXTENDED_ARG", "CACHE", "POP_TOP",
                         "RETURN_CONST", "BEFORE_WITH"})


# instructions on the two top values, and those whose argument is an operator (`+`, `<`, `|=`)
_BINARY = frozenset({"BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "CONTAINS_OP", "IS_OP", "STORE_SUBSCR",
                     "DELETE_SUBSCR", "BINARY_SLICE"})
_WITH_OPERATOR = frozenset({"BINARY_OP", "COMPARE_OP", "CONTAINS_OP", "IS_OP"})


def _operator(inst: Any) -> str:
    """A binary operation's or a comparison's operator: `+`, `|=`, `<`, `in` (by its argument)."""
    if inst.opname == "BINARY_OP":
        ops = getattr(dis, "_nb_ops", ())
        return ops[inst.arg][1] if isinstance(inst.arg, int) and 0 <= inst.arg < len(ops) else str(inst.arg)
    return str(inst.argval)[:8]


def _operands(opname: str, arg: int | None, stack: list[Any]) -> tuple[Any, ...]:
    """What an instruction acts on: a call's callee (below its arguments: `[NULL, callee,
    args]` or `[callee, self, args]`), both operands of a binary operation, the top of the
    stack otherwise; nothing where it acts on none (a load, a jump) or the stack is too short."""
    if opname in _NO_OPERAND or opname.startswith(_NO_OPERAND_PREFIXES) and opname not in _ON_TOP:
        return ()
    if opname in ("CALL", "CALL_KW"):
        below = (arg or 0) + (opname == "CALL_KW")  # CALL_KW's names tuple sits on the arguments
        if len(stack) >= below + 2 and type(stack[-below - 2]).__name__ != "NullVariable":
            return (stack[-below - 2],)
        return (stack[-below - 1],) if len(stack) > below else ()
    if opname == "CALL_FUNCTION_EX":
        below = 2 if (arg or 0) & 1 else 1  # the arguments tuple, and the keywords dict with flag 1
        return (stack[-below - 1],) if len(stack) > below else ()
    if opname in _BINARY:
        return tuple(stack[-2:]) if len(stack) >= 2 else ()
    return (stack[-1],) if stack else ()
