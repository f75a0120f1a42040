"""Before/after tests for the F1 operators (attribute_updates.py)."""

from __future__ import annotations

from mutator.mutation.operators.attribute_updates import (
    AlternateAttr,
    AttrCounter,
    ClassAttrUpdate,
    DictEdit,
    LazyAttrCache,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_attr_counter_counts_calls_on_self():
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
                self.calls = getattr(self, "calls", 0) + 1
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(AttrCounter, before, after, seed=0)


def test_attr_counter_through_dict():
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
                self.__dict__["calls"] = self.__dict__.get("calls", 0) + 1
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(AttrCounter, before, after, seed=1)


def test_attr_counter_needs_an_object():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(AttrCounter, before, 'no site for attr_counter in the region')


def test_lazy_attr_cache_creates_on_first_call():
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
                if getattr(self, "h_first", None) is None:
                    self.register_buffer("h_first", h.detach().sum())
                h = h + self.h_first
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(LazyAttrCache, before, after, seed=0)


def test_lazy_attr_cache_needs_an_object():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(LazyAttrCache, before, 'no site for lazy_attr_cache in the region')


def test_alternate_attr_creates_then_deletes():
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
                if hasattr(self, "h_carry"):
                    h = h + self.h_carry
                    del self.h_carry
                else:
                    self.h_carry = h.detach().mean()
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(AlternateAttr, before, after, seed=0)


def test_alternate_attr_needs_an_object():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(AlternateAttr, before, 'no site for alternate_attr in the region')


def test_dict_edit_carries_value_through_dict():
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
                self.__dict__.update({"h_seen": h.detach().sum()})
                h = h - self.__dict__["h_seen"] * 0.5
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(DictEdit, before, after, seed=0)


def test_dict_edit_needs_an_object():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(DictEdit, before, 'no site for dict_edit in the region')


def test_class_attr_update_counts_on_the_class():
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
                Net.class_calls = getattr(Net, "class_calls", 0) + 1
                h = self.lin(x)
                return h * self.scale


        fn = Net()


        def inputs():
            return (torch.randn(2, 4),)
    """
    assert_rewrites(ClassAttrUpdate, before, after, seed=0)


def test_class_attr_update_needs_a_method():
    before = """
        import torch


        def fn(x, y):
            z = x + y
            return z.sin()


        def inputs():
            return (torch.randn(3, 4), torch.randn(3, 4))
    """
    assert_declines(ClassAttrUpdate, before, 'no site for class_attr_update in the region')
