"""Before/after tests for the G1 and G3 operators (guards.py) and the G2 operators (shapes.py)."""

from __future__ import annotations

from mutator.mutation.operators.guards import (
    AttrValuesBetweenCalls,
    AutocastBetweenCalls,
    FreshObjectPerCall,
    GlobalScalarBetweenCalls,
    GradModeBetweenCalls,
    MutateReadContainer,
    ScalarParamSweep,
    UpdateModuleParams,
    VaryScalarInputs,
    VaryTensorMetadata,
)
from mutator.mutation.operators.shapes import BatchSizeSweep, DataDependentSize, MarkDynamicInput, SizeArithmetic

from tests.unit.operators.helpers import assert_declines, assert_rewrites


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


def test_grad_mode_between_calls_extends_drive():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))


        def drive(f):
            return f(*inputs())
    """
    after = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))


        def drive(f):
            result = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            with torch.set_grad_enabled(False):
                extra.append(f(*inputs()))
            with torch.no_grad():
                extra.append(f(*inputs()))
            extra.append(f(*inputs()))
            return result, extra
    """
    assert_rewrites(GradModeBetweenCalls, before, after, seed=0)


def test_grad_mode_between_calls_in_a_script():
    before = """
        import torch


        @torch.compile
        def run(x):
            return x.cos()


        x = torch.randn(3)
        print(run(x))
    """
    after = """
        import torch


        @torch.compile
        def run(x):
            return x.cos()


        x = torch.randn(3)
        with torch.set_grad_enabled(False):
            print(run(x))
        print(run(x))
    """
    assert_rewrites(GradModeBetweenCalls, before, after, seed=0)


def test_grad_mode_between_calls_needs_a_final_return():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)


        def drive(f):
            f(*inputs())
    """
    assert_declines(GradModeBetweenCalls, before, 'drive(f) does not end in its only return statement')


def test_autocast_between_calls_creates_drive():
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


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
        def drive(f):
            first = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            with torch.autocast("cpu", dtype=torch.bfloat16):
                with torch.autocast("cpu", enabled=False):
                    extra.append(f(*inputs()))
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(AutocastBetweenCalls, before, after, seed=0)


def test_autocast_between_calls_needs_a_final_return():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)


        def drive(f):
            f(*inputs())
    """
    assert_declines(AutocastBetweenCalls, before, 'drive(f) does not end in its only return statement')


def test_mutate_read_container_edits_a_global_list():
    before = """
        import torch

        WEIGHTS = [1.0, 2.0]


        def fn(x):
            for w in WEIGHTS:
                x = x * w
            return x


        def inputs():
            return (torch.randn(3),)
    """
    after = """
        import torch

        WEIGHTS = [1.0, 2.0]


        def fn(x):
            for w in WEIGHTS:
                x = x * w
            return x


        def inputs():
            return (torch.randn(3),)
        def drive(f):
            first = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            WEIGHTS[0] = WEIGHTS[0] * 2 + 1
            extra.append(f(*inputs()))
            WEIGHTS.append(WEIGHTS[-1])
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(MutateReadContainer, before, after, seed=0)


def test_mutate_read_container_introduces_factors():
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
        FACTORS = [1.0, 0.5]


        def fn(x, y):
            z = x + y
            res = z.sin()
            for w in FACTORS:
                res = res * w
            return res


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
        def drive(f):
            first = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            FACTORS[0] = FACTORS[0] * 2 + 1
            extra.append(f(*inputs()))
            FACTORS.append(FACTORS[-1])
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(MutateReadContainer, before, after, seed=0)


def test_mutate_read_container_needs_a_container_or_tensor_result():
    before = """
        import torch


        def fn(x):
            return x.shape


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(MutateReadContainer, before, 'no site for mutate_read_container in the program')


def test_update_module_params_between_calls():
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
            extra.append(f(*inputs()))
            with torch.no_grad():
                for p in fn.parameters():
                    p.mul_(-0.5)
            extra.append(f(*inputs()))
            return first, extra
    """
    assert_rewrites(UpdateModuleParams, before, after, seed=0)


def test_update_module_params_needs_a_module():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(UpdateModuleParams, before, 'no site for update_module_params in the program')


def test_vary_tensor_metadata_aliases_inputs():
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


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
        def drive(f):
            first = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            args = list(inputs())
            args[1] = args[0]
            extra.append(f(*args))
            return first, extra
    """
    assert_rewrites(VaryTensorMetadata, before, after, seed=1)


def test_vary_tensor_metadata_changes_strides():
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


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
        def drive(f):
            first = f(*inputs())
            extra = []
            extra.append(f(*inputs()))
            args = list(inputs())
            args[0] = args[0].transpose(0, -1).contiguous().transpose(0, -1)
            extra.append(f(*args))
            return first, extra
    """
    assert_rewrites(VaryTensorMetadata, before, after, seed=0)


def test_vary_tensor_metadata_needs_a_tensor_input():
    before = """
        import torch


        def fn(k):
            return k * 2


        def inputs():
            return (3,)
    """
    assert_declines(VaryTensorMetadata, before, 'no site for vary_tensor_metadata in the program')


def test_batch_size_sweep_resizes_inputs():
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
        def inputs_batch(n):
            return (torch.randn(n, 4),)
        def drive(f):
            first = f(*inputs())
            extra = []
            for size in (4, 5, 3):
                extra.append(f(*inputs_batch(size)))
            return first, extra
    """
    assert_rewrites(BatchSizeSweep, before, after, seed=0)


def test_batch_size_sweep_needs_known_shapes():
    before = """
        import torch


        def fn(x, mask):
            return x[mask]


        def inputs():
            return (torch.randn(3), torch.tensor([True, False, True]))
    """
    assert_declines(BatchSizeSweep, before, 'no site for batch_size_sweep in the program')


def test_mark_dynamic_input_marks_and_resizes():
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
        def inputs_batch(n):
            return (torch.randn(n, 4),)
        def drive(f):
            first = f(*inputs())
            extra = []
            for size in (2, 3, 5):
                args = inputs_batch(size)
                torch._dynamo.maybe_mark_dynamic(args[0], 0)
                extra.append(f(*args))
            return first, extra
    """
    assert_rewrites(MarkDynamicInput, before, after, seed=1)


def test_mark_dynamic_input_keeps_sizes_off_the_batch():
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


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
        def drive(f):
            first = f(*inputs())
            extra = []
            for _ in range(2):
                args = inputs()
                torch._dynamo.maybe_mark_dynamic(args[1], 1)
                extra.append(f(*args))
            return first, extra
    """
    assert_rewrites(MarkDynamicInput, before, after, seed=0)


def test_mark_dynamic_input_needs_a_tensor_input():
    before = """
        import torch


        def fn(k):
            return k * 2


        def inputs():
            return (3,)
    """
    assert_declines(MarkDynamicInput, before, 'no site for mark_dynamic_input in the program')


def test_data_dependent_size_from_nonzero():
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


        def fn(x, y):
            z = x + y
            z_picked = (z.detach().flatten() > 0).nonzero()
            z = z + z_picked.shape[0]
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(DataDependentSize, before, after, seed=2)


def test_data_dependent_size_from_unique():
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


        def fn(x, y):
            z = x + y
            z_picked = torch.unique(z.detach().round())
            z = z + z_picked.numel()
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(DataDependentSize, before, after, seed=0)


def test_data_dependent_size_needs_a_tensor():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(DataDependentSize, before, 'no site for data_dependent_size in the region')


def test_size_arithmetic_branches_on_numel():
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


        def fn(x, y):
            z = x + y
            if z.numel() > 8:
                z = z * 0.5
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(SizeArithmetic, before, after, seed=0)


def test_size_arithmetic_needs_a_tensor():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(SizeArithmetic, before, 'no site for size_arithmetic in the region')
