"""Before/after tests for the G1 operators (value_guards.py)."""

from __future__ import annotations

from mutator.mutation.operators.value_guards import (
    AttrValuesBetweenCalls,
    FreshObjectPerCall,
    GlobalScalarBetweenCalls,
    ScalarParamSweep,
    VaryScalarInputs,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_scalar_param_sweep_creates_drive_and_parameter():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    after = """
        import torch


        def fn(x, y, mode="keep"):
            z = x + y
            res = z.sin()
            if mode == "double":
                res = res * 2
            return res


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))


        def drive(f):
            first = f(*inputs())
            extra = []
            for value in ("double", "keep", "other"):
                extra.append(f(*inputs(), value))
            return first, extra
    """
    assert_rewrites(ScalarParamSweep, before, after, seed=0)


def test_scalar_param_sweep_needs_a_tensor_result():
    before = """
        import torch


        def fn(x):
            return x.shape


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(ScalarParamSweep, before, 'no site for scalar_param_sweep in the program')


def test_vary_scalar_inputs_extends_drive():
    before = """
        import torch


        def fn(x, k):
            return x * k


        def inputs():
            return (torch.randn(3), 0.5)


        def drive(f):
            return [f(torch.randn(3), 0.5)]
    """
    after = """
        import torch


        def fn(x, k):
            return x * k


        def inputs():
            return (torch.randn(3), 0.5)


        def drive(f):
            result = [f(torch.randn(3), 0.5)]
            extra = []
            args = list(inputs())
            args[1] = 1.0
            extra.append(f(*args))
            args = list(inputs())
            args[1] = 1.5
            extra.append(f(*args))
            args = list(inputs())
            args[1] = 0.875
            extra.append(f(*args))
            return result, extra
    """
    assert_rewrites(VaryScalarInputs, before, after, seed=0)


def test_vary_scalar_inputs_needs_a_scalar_input():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(VaryScalarInputs, before, 'no site for vary_scalar_inputs in the program')


def test_fresh_object_per_call_rebuilds_objects():
    before = """
        import torch


        class Cfg:
            def __init__(self, alpha):
                self.alpha = alpha


        def fn(x, cfg):
            return x * cfg.alpha


        def inputs():
            return (torch.randn(3), Cfg(0.5))
    """
    after = """
        import torch


        class Cfg:
            def __init__(self, alpha):
                self.alpha = alpha


        def fn(x, cfg):
            return x * cfg.alpha


        def inputs():
            return (torch.randn(3), Cfg(0.5))


        def drive(f):
            first = f(*inputs())
            extra = []
            args = list(inputs())
            args[1] = Cfg(1.0)
            extra.append(f(*args))
            args = list(inputs())
            args[1] = Cfg(1.5)
            extra.append(f(*args))
            args = list(inputs())
            args[1] = Cfg(0.875)
            extra.append(f(*args))
            return first, extra
    """
    assert_rewrites(FreshObjectPerCall, before, after, seed=1)


def test_fresh_object_per_call_adds_an_object_parameter():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    after = """
        import torch


        class Knob:
            def __init__(self, scale, shift=0.0):
                self.scale = scale
                self.shift = shift


        def fn(x, y, knob=None):
            z = x + y
            res = z.sin()
            if knob is not None:
                res = res * knob.scale + knob.shift
            return res


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))


        def drive(f):
            first = f(*inputs())
            extra = []
            for i in range(4):
                extra.append(f(*inputs(), Knob(0.5 + i, shift=float(i % 2))))
            return first, extra
    """
    assert_rewrites(FreshObjectPerCall, before, after, seed=0)


def test_fresh_object_per_call_needs_an_object_or_tensor_result():
    before = """
        import torch


        def fn(x):
            return x.shape


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(FreshObjectPerCall, before, 'no site for fresh_object_per_call in the program')


def test_attr_values_between_calls_changes_module_attribute():
    before = """
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)
                self.scale = 0.5

            def forward(self, x):
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    after = """
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)
                self.scale = 0.5

            def forward(self, x):
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)


        def drive(f):
            first = f(*inputs())
            extra = []
            fn.scale = 1.0
            extra.append(f(*inputs()))
            fn.scale = 1.5
            extra.append(f(*inputs()))
            fn.scale = 0.875
            extra.append(f(*inputs()))
            fn.scale = 0.5
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(AttrValuesBetweenCalls, before, after, seed=0)


def test_attr_values_between_calls_needs_a_scalar_attribute():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(AttrValuesBetweenCalls, before, 'no site for attr_values_between_calls in the program')


def test_global_scalar_between_calls_uses_a_setter():
    before = """
        import torch

        SCALE = 2.0


        def fn(x):
            return x * SCALE


        def inputs():
            return (torch.randn(3),)
    """
    after = """
        import torch


        def set_scale(value):
            global SCALE
            SCALE = value


        SCALE = 2.0


        def fn(x):
            return x * SCALE


        def inputs():
            return (torch.randn(3),)


        def drive(f):
            first = f(*inputs())
            extra = []
            set_scale(3.25)
            extra.append(f(*inputs()))
            set_scale(4.5)
            extra.append(f(*inputs()))
            set_scale(2.0)
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(GlobalScalarBetweenCalls, before, after, seed=0)


def test_global_scalar_between_calls_introduces_a_gain():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    after = """
        import torch

        GAIN = 1.0


        def set_gain(value):
            global GAIN
            GAIN = value


        def fn(x, y):
            z = x + y
            res = z.sin()
            res = res * GAIN
            return res


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))


        def drive(f):
            first = f(*inputs())
            extra = []
            set_gain(1.75)
            extra.append(f(*inputs()))
            set_gain(2.5)
            extra.append(f(*inputs()))
            set_gain(1.0)
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(GlobalScalarBetweenCalls, before, after, seed=0)


def test_global_scalar_between_calls_needs_a_global_or_tensor_result():
    before = """
        import torch


        def fn(x):
            return x.shape


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(GlobalScalarBetweenCalls, before, 'no site for global_scalar_between_calls in the program')
