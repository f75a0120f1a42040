"""Dynamo's own signals (mutator.runtime.signals): what an instruction acts on, and what a real
trace of a `set` subclass records that a trace of a plain `set` does not."""

from __future__ import annotations

import dis
import types

import torch

from mutator.core.features import dynamo_signal
from mutator.runtime.signals import DynamoSignals, _operands, _operator


class NullVariable:  # stands in for Dynamo's NULL on the stack (compared by name)
    pass


def test_a_call_acts_on_its_callee_below_the_arguments():
    callee, self_, a, b = object(), object(), object(), object()
    assert _operands("CALL", 2, [NullVariable(), callee, a, b]) == (callee,)  # [NULL, callee, args]
    assert _operands("CALL", 2, [callee, self_, a, b]) == (callee,)  # [method, self, args]
    assert _operands("CALL", 0, [callee]) == (callee,)
    names = object()
    assert _operands("CALL_KW", 1, [NullVariable(), callee, a, names]) == (callee,)
    assert _operands("CALL_FUNCTION_EX", 1, [callee, a, b]) == (callee,)  # flag 1: a keywords dict
    assert _operands("CALL_FUNCTION_EX", 0, [callee, a]) == (callee,)
    assert _operands("CALL", 3, [a]) == ()  # a stack too short: nothing, never an IndexError


def test_binary_operations_act_on_both_values_and_loads_on_none():
    left, right = object(), object()
    assert _operands("BINARY_OP", 0, [left, right]) == (left, right)
    assert _operands("CONTAINS_OP", 0, [left, right]) == (left, right)
    assert _operands("GET_ITER", None, [left, right]) == (right,)
    assert _operands("LOAD_ATTR", 0, [left, right]) == (right,)  # an attribute of the top
    for opname in ("LOAD_FAST", "LOAD_GLOBAL", "BUILD_TUPLE", "JUMP_BACKWARD", "PRECALL", "RESUME"):
        assert _operands(opname, 1, [left, right]) == (), opname
    plus = next(i for i, (_, symbol) in enumerate(dis._nb_ops) if symbol == "+")
    assert _operator(types.SimpleNamespace(opname="BINARY_OP", arg=plus, argval=plus)) == "+"
    assert _operator(types.SimpleNamespace(opname="COMPARE_OP", arg=2, argval="<")) == "<"


class Tags(set):
    pass


def _trace(*args):
    def fn(x, tags):
        for tag in sorted(tags):
            x = x + len(tag)
        return x, "a" in tags

    torch._dynamo.reset()
    recorder = DynamoSignals()
    recorder.start()
    try:
        torch.compile(fn, backend="eager")(torch.ones(2), *args)
    finally:
        features = recorder.stop()
    return recorder, features


def test_a_set_subclass_is_told_from_a_set_where_the_same_lines_run():
    recorder, subclass = _trace(Tags({"ab", "c"}))
    assert set(recorder.patched) == {"vt", "op", "guard"}
    _, plain = _trace({"ab", "c"})
    assert dynamo_signal("vt", "UserDefinedSetVariable") in subclass - plain
    assert dynamo_signal("vt", "TensorVariable") in subclass & plain
    assert any(dynamo_signal("guard", f"TENSOR_MATCH:{where}") in plain for where in ("LOCAL", "GLOBAL"))
    assert dynamo_signal("op", "BINARY_OP(+):TensorVariable/ConstantVariable") in subclass & plain


def test_nothing_is_recorded_outside_start_and_stop():
    recorder = DynamoSignals()
    torch._dynamo.reset()
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
    recorder.start()
    assert recorder.stop() == frozenset()
    assert DynamoSignals().patched == recorder.patched  # installed once: a second recorder shares the patches
