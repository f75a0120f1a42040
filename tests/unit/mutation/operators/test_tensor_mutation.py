"""Before/after tests for the F2 operators (tensor_mutation.py)."""

from __future__ import annotations

from mutator.mutation.operators.tensor_mutation import (
    DataUpdate,
    GradFlagToggle,
    InplaceRewrite,
    InplaceSibling,
    InputViewInplace,
    OutArgument,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_inplace_rewrite_adds_on_a_clone():
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
            z = x.clone()
            z.add_(y)
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(InplaceRewrite, before, after, seed=0)


def test_inplace_rewrite_needs_a_tensor_op():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(InplaceRewrite, before, 'no site for inplace_rewrite in the region')


def test_out_argument_fills_a_buffer():
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
            z_out = torch.empty(0, dtype=x.dtype)
            torch.add(x, y, out=z_out)
            z = z_out
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(OutArgument, before, after, seed=0)


def test_out_argument_needs_a_tensor_op():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(OutArgument, before, 'no site for out_argument in the region')


def test_inplace_sibling_swaps_add():
    before = """
        import torch


        def fn(x):
            x.add_(1.0)
            return x


        def inputs():
            return (torch.randn(3),)
    """
    after = """
        import torch


        def fn(x):
            x.mul_(1.0)
            return x


        def inputs():
            return (torch.randn(3),)
    """
    assert_rewrites(InplaceSibling, before, after, seed=0)


def test_inplace_sibling_splits_clamp():
    before = """
        import torch


        def fn(x):
            x.clamp_(min=0.0, max=1.0)
            return x


        def inputs():
            return (torch.randn(3),)
    """
    after = """
        import torch


        def fn(x):
            x.clamp_max_(1.0)
            return x


        def inputs():
            return (torch.randn(3),)
    """
    assert_rewrites(InplaceSibling, before, after, seed=0)


def test_inplace_sibling_needs_an_inplace_op():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(InplaceSibling, before, 'no site for inplace_sibling in the region')


def test_input_view_inplace_mutates_a_view():
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
            y[0].mul_(0.5)
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(InputViewInplace, before, after, seed=0)


def test_input_view_inplace_skips_leaves_requiring_grad():
    before = """
        import torch


        def fn(w):
            return w * 2


        def inputs():
            return (torch.randn(3, requires_grad=True),)
    """
    assert_declines(InputViewInplace, before, 'no site for input_view_inplace in the region')


def test_data_update_scales_parameters():
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
                self.lin.weight.data.mul_(0.9)
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(DataUpdate, before, after, seed=0)


def test_data_update_on_a_local_tensor():
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
            z.data.mul_(0.5)
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(DataUpdate, before, after, seed=0)


def test_data_update_needs_a_tensor():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(DataUpdate, before, 'no site for data_update in the region')


def test_grad_flag_toggle_adds_a_leaf_requiring_grad():
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
            z_leaf = torch.zeros_like(z)
            z_leaf.requires_grad_(True)
            z = z + z_leaf
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_rewrites(GradFlagToggle, before, after, seed=0)


def test_grad_flag_toggle_needs_a_tensor():
    before = """
        import torch


        def fn(x):
            return x.sin()


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(GradFlagToggle, before, 'no site for grad_flag_toggle in the region')
