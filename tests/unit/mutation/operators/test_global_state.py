"""Before/after and decline tests for the E4 (global state and environment) operators."""

import pytest

from mutator.mutation.operators.global_state import (
    DefaultDtypeInRegion,
    DynamoResetBetweenCalls,
    EnvironBetweenCalls,
    GlobalBetweenCalls,
    GlobalCounter,
    RngInRegion,
    SetGradEnabledInRegion,
)

from mutator.mutation.operator import Mutant
from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites, rewrite

ONE_CALL_AT_A_TIME = """
    import torch

    def fn(x):
        return x + 1

    def inputs():
        return (torch.ones(3),)

    def drive(f):
        return f(torch.ones(3)), f(torch.zeros(3))
"""

NOTHING_TO_WRAP = """
    import torch

    COUNT = 0

    def fn(x):
        '''Only a docstring and a declaration.'''
        global COUNT
"""


def test_global_knob_changed_between_calls_of_drive():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y * 2

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            b = f(torch.zeros(3))
            return a, b
    """
    after = """
        import torch

        KNOB = 1.0


        def apply_knob(v):
            if isinstance(v, (torch.Tensor, float)) and (isinstance(v, float) or v.is_floating_point()):
                return v * KNOB
            return v


        def fn(x):
            y = x.sin()
            return apply_knob(y * 2)

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            global KNOB
            a = f(torch.ones(3))
            KNOB = 0.5
            b = f(torch.zeros(3))
            return a, b
    """
    assert_rewrites(GlobalBetweenCalls, before, after, seed=0)


def test_global_flag_gets_a_new_drive_when_there_is_none():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        KNOB = False


        def apply_knob(v):
            if isinstance(v, (torch.Tensor, float)) and (isinstance(v, float) or v.is_floating_point()):
                return -v if KNOB else v
            return v


        def fn(x):
            y = apply_knob(torch.zeros(3) + x)
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)


        def drive(f):
            global KNOB
            outs = [f(*inputs())]
            KNOB = True
            outs.append(f(*inputs()))
            KNOB = False
            outs.append(f(*inputs()))
            return outs
    """
    assert_rewrites(GlobalBetweenCalls, before, after, seed=1)


def test_global_knob_in_a_script_changes_at_top_level():
    before = """
        import torch

        @torch.compile
        def run(x):
            return x.cos() + 1

        x = torch.ones(2)
        print(run(x))
        print(run(x * 2))
    """
    after = """
        import torch

        KNOB = 1.0


        def apply_knob(v):
            if isinstance(v, (torch.Tensor, float)) and (isinstance(v, float) or v.is_floating_point()):
                return v * KNOB
            return v


        @torch.compile
        def run(x):
            return apply_knob(x.cos() + 1)

        x = torch.ones(2)
        print(run(x))
        KNOB = 0.5
        print(run(x * 2))
    """
    assert_rewrites(GlobalBetweenCalls, before, after, seed=0)


def test_environ_switch_set_by_drive():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y * 2

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            b = f(torch.zeros(3))
            return a, b
    """
    after = """
        import torch
        import os

        os.environ["MUTATOR_KNOB"] = "off"


        def apply_env(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                return v + 1 if os.environ["MUTATOR_KNOB"] == "on" else v
            return v


        def fn(x):
            y = x.sin()
            return apply_env(y * 2)

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            os.environ["MUTATOR_KNOB"] = "on"
            b = f(torch.zeros(3))
            return a, b
    """
    assert_rewrites(EnvironBetweenCalls, before, after, seed=0)


def test_environ_unset_at_first_call_reads_the_default():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y * 2

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            b = f(torch.zeros(3))
            return a, b
    """
    after = """
        import torch
        import os


        def apply_env(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                return v + 1 if os.environ.get("MUTATOR_KNOB", "off") == "on" else v
            return v


        def fn(x):
            y = x.sin()
            return apply_env(y * 2)

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            os.environ["MUTATOR_KNOB"] = "on"
            b = f(torch.zeros(3))
            return a, b
    """
    assert_rewrites(EnvironBetweenCalls, before, after, seed=5)


def test_environ_scale_in_a_script():
    before = """
        import torch

        @torch.compile
        def run(x):
            return x.cos() + 1

        x = torch.ones(2)
        print(run(x))
        print(run(x * 2))
    """
    after = """
        import torch
        import os

        os.environ["MUTATOR_KNOB"] = "1.0"


        def apply_env(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                return v * float(os.getenv("MUTATOR_KNOB", "1.0"))
            return v


        @torch.compile
        def run(x):
            return apply_env(x.cos() + 1)

        x = torch.ones(2)
        print(run(x))
        os.environ["MUTATOR_KNOB"] = "2.0"
        print(run(x * 2))
    """
    assert_rewrites(EnvironBetweenCalls, before, after, seed=1)


def test_global_counter_declared_and_bumped():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        COUNTER = 0


        def fn(x):
            global COUNTER
            y = torch.zeros(3) + x
            COUNTER += 1
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(GlobalCounter, before, after, seed=1)


def test_global_counter_doubling():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        COUNTER = 0


        def fn(x):
            global COUNTER
            COUNTER = COUNTER * 2 + 1
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(GlobalCounter, before, after, seed=0)


def test_default_dtype_switched_around_a_factory_call():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        def fn(x):
            prev_dtype = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)
            y = torch.zeros(3) + x
            torch.set_default_dtype(prev_dtype)
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(DefaultDtypeInRegion, before, after, seed=1)


def test_set_grad_enabled_plain_restore():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        def fn(x):
            prev_grad = torch.is_grad_enabled()
            torch.set_grad_enabled(True)
            y = torch.zeros(3) + x
            torch.set_grad_enabled(prev_grad)
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(SetGradEnabledInRegion, before, after, seed=2)


def test_set_grad_enabled_restores_in_finally_around_a_return():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        def fn(x):
            prev_grad = torch.is_grad_enabled()
            torch.set_grad_enabled(not prev_grad)
            try:
                y = torch.zeros(3) + x
                return y, y.dtype
            finally:
                torch.set_grad_enabled(prev_grad)

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(SetGradEnabledInRegion, before, after, seed=3)


def test_rng_noise_with_saved_and_restored_state_on_a_tuple_element():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch


        def add_noise(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                state = torch.get_rng_state()
                noise = torch.rand_like(v)
                torch.set_rng_state(state)
                return v + noise * 0.01
            return v


        def fn(x):
            y = torch.zeros(3) + x
            return add_noise(y), y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(RngInRegion, before, after, seed=0)


def test_rng_noise_after_manual_seed():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch


        def add_noise(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                torch.manual_seed(7)
                noise = torch.rand_like(v)
                return v + noise * 0.01
            return v


        def fn(x):
            y = add_noise(torch.zeros(3) + x)
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(RngInRegion, before, after, seed=3)


def test_dynamo_reset_between_two_calls_of_drive():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y * 2

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            b = f(torch.zeros(3))
            return a, b
    """
    after = """
        import torch

        def fn(x):
            y = x.sin()
            return y * 2

        def inputs():
            return (torch.ones(3),)

        def drive(f):
            a = f(torch.ones(3))
            torch._dynamo.reset()
            b = f(torch.zeros(3))
            return a, b
    """
    assert_rewrites(DynamoResetBetweenCalls, before, after, seed=1)


def test_compiler_reset_between_script_calls():
    before = """
        import torch

        @torch.compile
        def run(x):
            return x.cos() + 1

        x = torch.ones(2)
        print(run(x))
        print(run(x * 2))
    """
    after = """
        import torch

        @torch.compile
        def run(x):
            return x.cos() + 1

        x = torch.ones(2)
        print(run(x))
        torch.compiler.reset()
        print(run(x * 2))
    """
    assert_rewrites(DynamoResetBetweenCalls, before, after, seed=0)


def test_rng_noise_from_a_seeded_generator():
    before = """
        import torch

        def fn(x):
            y = torch.zeros(3) + x
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    after = """
        import torch

        GENERATOR = torch.Generator().manual_seed(0)


        def add_noise(v):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                noise = torch.rand(v.shape, generator=GENERATOR, dtype=v.dtype)
                return v + noise * 0.01
            return v


        def fn(x):
            y = add_noise(torch.zeros(3) + x)
            return y, y.dtype

        def inputs():
            return (torch.ones(3),)
    """
    assert_rewrites(RngInRegion, before, after, seed=4)


@pytest.mark.parametrize("op", [GlobalBetweenCalls, EnvironBetweenCalls])


def test_between_calls_declines_when_drive_never_calls_before_another_call(op):
    assert_declines(op, ONE_CALL_AT_A_TIME, "the driver makes no call after which state could change")


def test_dynamo_reset_declines_without_a_point_between_calls():
    assert_declines(DynamoResetBetweenCalls, ONE_CALL_AT_A_TIME, "no site for dynamo_reset_between_calls in the driver")


def test_between_calls_ignores_metadata_and_literals():
    before = """
        import torch

        def fn(x):
            return x.dtype, x.shape, 1.0, len(x)

        def drive(f):
            a = f(torch.ones(2))
            return a, f(torch.ones(3))
    """
    assert_declines(GlobalBetweenCalls, before, "no site for global_between_calls in the region")
    assert_declines(RngInRegion, before, "no site for rng_in_region in the region")


def test_between_calls_leaves_an_autograd_functions_backward_alone():
    """torch.compile bakes what a backward reads in when it compiles the forward (documented):
    state the driver changes between a call and its backward is not a bug to look for."""
    before = """
        import torch

        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2.0

            @staticmethod
            def backward(ctx, grad):
                scaled = grad * 2.0
                return scaled

        def fn(x):
            return Twice.apply(x)

        def drive(f):
            w = torch.ones(2, requires_grad=True)
            loss = f(w).sum()
            loss.backward()
            return f(w), w.grad
    """
    taken = set()
    for seed in range(12):  # the forward's and fn's values are its sites, the backward's are not
        mutant = rewrite(GlobalBetweenCalls, before, seed=seed)
        assert isinstance(mutant, Mutant) and "        scaled = grad * 2.0\n" in mutant.program.source
        taken |= {site for site in ("apply_knob(x * 2.0)", "apply_knob(Twice.apply(x))") if site in mutant.program.source}
    assert len(taken) == 2


@pytest.mark.parametrize("op", [GlobalCounter, SetGradEnabledInRegion])


def test_region_operators_decline_without_movable_statements(op):
    assert_declines(op, NOTHING_TO_WRAP, f"no site for {op.name} in the region")


def test_default_dtype_declines_without_a_factory_call():
    before = """
        import torch

        def fn(x):
            return x.new_ones(3) * 2
    """
    assert_declines(DefaultDtypeInRegion, before, "no site for default_dtype_in_region in the region")
