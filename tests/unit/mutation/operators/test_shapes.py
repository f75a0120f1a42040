"""Before/after tests for the G2 operators (shapes.py)."""

from __future__ import annotations

from mutator.mutation.operators.shapes import BatchSizeSweep, DataDependentSize, MarkDynamicInput, SizeArithmetic

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


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
