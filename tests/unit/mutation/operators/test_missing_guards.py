"""Before/after tests for the G3 operators (missing_guards.py)."""

from __future__ import annotations

from mutator.mutation.operators.missing_guards import (
    AutocastBetweenCalls,
    GradModeBetweenCalls,
    MutateReadContainer,
    UpdateModuleParams,
    VaryTensorMetadata,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


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
