from dataclasses import replace

import pytest

from mutator.core.observation import Observation, Recompile
from mutator.judge.storms import guard_kind, recompile_storm
from mutator.core.verdict import Verdict

from tests.helpers import call


ENTRY = "forward@m.py:3"


def _calls(states, recompiles, *, exact=None):
    """One call per state ("" = no signature); `recompiles[i]`: the Recompile of call i, or None.

    `exact[i]`: the state with tensor values; by default every call's tensor values differ.
    """
    exact = exact or [f"{state}/{i}" for i, state in enumerate(states)]
    return [replace(call(i, signature=state, exact=values, recompiles=(r,) if r else ()), entry_code=ENTRY)
            for i, (state, values, r) in enumerate(zip(states, exact, recompiles))]


def storm(calls):
    return recompile_storm(Observation(calls=tuple(calls)))


VALUE = Recompile(ENTRY, "L['self'].calls == 1", hint="make this integer dynamic")


@pytest.mark.parametrize("reason,kind", [
    ("tensor 'x' size mismatch at index 0. expected 2, actual 3", "tensor size mismatch"),
    ("tensor 'x' requires_grad mismatch. expected requires_grad=1", "tensor requires_grad mismatch"),
    ("GLOBAL_STATE changed: grad_mode", "global state grad_mode"),
    ("___check_obj_id(L['c'], 94447205781328)", "object identity"),
    ("___check_type_id(L['k'], 9444)", "type identity"),
    ("Cache line invalidated because L['f'] got deallocated", "deallocated object"),
    ("BACKEND_MATCH failure: torch.compile detected different backend callables", "backend"),
    ("len(L['xs']) == 2", "length"),
    ("L['self']._modules['drop'].training == True", "value"),
])
def test_guard_kinds(reason, kind):
    assert guard_kind(reason) == kind


def test_recompiling_on_a_state_seen_before_is_a_storm():
    found = storm(_calls(["a", "b", "a"], [None, VALUE, VALUE]))
    assert found.verdict is Verdict.RECOMPILE_STORM and found.key == "repeat:value"
    assert "call 3, whose inputs and state repeat call 1 exactly" in found.reason


def test_recompiling_on_new_states_is_no_storm():
    assert storm(_calls(["a", "b", "c"], [None, VALUE, VALUE])) is None


def test_alternating_states_that_hit_the_cache_are_no_storm():
    assert storm(_calls(["a", "b", "a", "b"], [None, VALUE, None, None])) is None


def test_a_reset_starts_a_new_epoch():
    calls = _calls(["a", "a"], [None, VALUE])
    calls[1] = replace(calls[1], resets=1)
    assert storm(calls) is None


def test_calls_whose_state_could_not_be_read_never_repeat():
    assert storm(_calls(["", ""], [None, VALUE])) is None


def test_identity_guards_on_fresh_objects_are_documented_and_a_finding_only_at_the_limit():
    identity = Recompile("f@m.py:1", "___check_obj_id(L['c'], 944)")
    assert storm(_calls(["a", "a", "a"], [None, identity, identity])) is None
    found = storm(_calls(["a"] * 9, [None] + [identity] * 7 + [replace(identity, limit=True)]))
    assert found.verdict is Verdict.SPECIALIZATION and found.key == "limit:object identity"
    assert "objects made afresh for every call" in found.reason


def test_values_specialised_in_a_resume_function_are_documented():
    resumed = Recompile("torch_dynamo_resume_in_h_at_37@m.py:37", "idx[0] == 0")
    assert storm(_calls(["a", "a"], [None, resumed])) is None
    found = storm(_calls(["a"] * 9, [None] + [resumed] * 7 + [replace(resumed, limit=True)]))
    assert found.verdict is Verdict.SPECIALIZATION and "values computed from tensors" in found.reason


def test_a_resume_function_recompiling_on_its_stack_values_is_documented_even_on_the_same_tensor_values():
    # what the interrupted frame computed before the break (a helper bumping a hidden counter)
    # reaches the resume function on its stack: no part of the state the call began with
    stacked = Recompile("torch_dynamo_resume_in_fn_at_9@m.py:9", "___stack1 == 1")
    assert storm(_calls(["a", "a"], [None, stacked], exact=["a/1", "a/1"])) is None
    found = storm(_calls(["a"] * 9, [None] + [stacked] * 7 + [replace(stacked, limit=True)], exact=["a/1"] * 9))
    assert found.verdict is Verdict.SPECIALIZATION and "interrupted frame's stack" in found.reason


def test_a_resume_function_recompiling_on_anything_else_of_a_repeated_state_is_still_a_storm():
    resumed = Recompile("torch_dynamo_resume_in_fn_at_9@m.py:9", "G['scale'] == 2")
    found = storm(_calls(["a", "a"], [None, resumed], exact=["a/1", "a/1"]))
    assert found.verdict is Verdict.RECOMPILE_STORM and found.key == "repeat:value"
    entry = Recompile(ENTRY, "___stack1 == 1")  # only a resume function's inputs are named so
    assert storm(_calls(["a", "a"], [None, entry], exact=["a/1", "a/1"])).verdict is Verdict.RECOMPILE_STORM


def test_an_inner_frame_recompiling_on_the_same_tensor_values_is_a_storm():
    inner = Recompile("__torch_function__@m.py:18", "expected type of 'args[0]' to be a tensor type")
    assert storm(_calls(["a", "a"], [None, inner])) is None  # fed by tensor values that changed
    found = storm(_calls(["a", "a"], [None, inner], exact=["a/1", "a/1"]))
    assert found.verdict is Verdict.RECOMPILE_STORM and found.key == "repeat:type"


def test_functions_made_afresh_are_documented_too():
    assert guard_kind("CodeGuardAccessor: Not a function on act.__code__") == "function identity"


def test_a_real_repeat_outranks_documented_ones():
    identity = Recompile("f@m.py:1", "___check_obj_id(L['c'], 944)")
    found = storm(_calls(["a", "a", "a"], [None, identity, VALUE]))
    assert found.verdict is Verdict.RECOMPILE_STORM


def test_the_recompile_limit_on_states_that_never_repeat_is_documented_with_dynamos_hint():
    limit = replace(VALUE, limit=True, reason="L['self'].calls == 7")
    found = storm(_calls([f"s{i}" for i in range(9)], [None] + [VALUE] * 7 + [limit]))
    assert found.verdict is Verdict.SPECIALIZATION and found.key == "limit:value"
    assert "recompile limit after 8 recompilations" in found.reason and "make this integer dynamic" in found.reason


def test_the_limit_is_counted_and_named_per_code_object():
    other = Recompile("forward@m.py:30", "L['self'].k == 2")
    calls = _calls([f"s{i}" for i in range(10)], [None] + [VALUE, other] * 4 + [replace(other, limit=True)])
    found = storm(calls)
    assert found.reason.startswith("forward@m.py:30 hit Dynamo's recompile limit after 5 recompilations")


def test_a_recompile_limit_the_program_lowered_itself_is_its_aim_not_a_finding():
    lowered = replace(VALUE, limit=True, lowered=True, reason="L['n'] == 2")
    assert storm(_calls([f"s{i}" for i in range(4)], [None, VALUE, lowered, lowered])) is None
    default = replace(lowered, lowered=False)
    assert storm(_calls([f"s{i}" for i in range(4)], [None, VALUE, lowered, default])).verdict is Verdict.SPECIALIZATION
