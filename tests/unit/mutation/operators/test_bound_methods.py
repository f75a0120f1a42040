"""Before/after and decline tests for the A4 operators in bound_methods.py (method binding)."""

from mutator.mutation.operators.bound_methods import (
    CallHelperThroughDescriptor,
    RebindMethodCall,
    RouteThroughCopiedMethods,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_route_through_bound_method_copied_between_instances():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        class _Scaler:
            def __init__(self, gain):
                self.gain = gain

            def apply(self, value):
                return _scale(value, self.gain)


        def _route(value):
            up, down = _Scaler(2.0), _Scaler(0.5)
            up.apply = down.apply
            return up.apply(_Scaler.apply(up, value))


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughCopiedMethods, before, after, seed=2)


def test_route_through_method_type_bindings():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import types


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        class _Scaler:
            def __init__(self, gain):
                self.gain = gain


        def _scaled_by(self, value):
            return _scale(value, self.gain)


        def _route(value):
            up, down = _Scaler(2.0), _Scaler(0.5)
            up.apply = types.MethodType(_scaled_by, up)
            down.apply = types.MethodType(up.apply.__func__, down)
            return down.apply(up.apply(value)) if down.apply.__self__ is down else value


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughCopiedMethods, before, after, seed=0)


def test_rebind_method_call_through_the_class():
    before = """
        import torch


        class Scaler:
            def __init__(self, k):
                self.k = k

            def apply(self, x):
                return x * self.k


        def fn(x):
            s = Scaler(2.0)
            return s.apply(x)
    """
    after = """
        import torch


        class Scaler:
            def __init__(self, k):
                self.k = k

            def apply(self, x):
                return x * self.k


        def fn(x):
            s = Scaler(2.0)
            return type(s).apply(s, x)
    """
    assert_rewrites(RebindMethodCall, before, after, seed=1)


def test_rebind_method_call_with_method_type():
    before = """
        import torch


        class Scaler:
            def __init__(self, k):
                self.k = k

            def apply(self, x):
                return x * self.k


        def fn(x):
            s = Scaler(2.0)
            return s.apply(x)
    """
    after = """
        import torch
        import types


        class Scaler:
            def __init__(self, k):
                self.k = k

            def apply(self, x):
                return x * self.k


        def fn(x):
            s = Scaler(2.0)
            return types.MethodType(type(s).apply, s)(x)
    """
    assert_rewrites(RebindMethodCall, before, after, seed=4)


def test_call_helper_through_staticmethod():
    before = """
        import torch


        def helper(t, k):
            return t * k


        def fn(x):
            return helper(x, 2.0)
    """
    after = """
        import torch


        def helper(t, k):
            return t * k


        class _Namespace:
            helper = staticmethod(helper)


        def fn(x):
            return _Namespace.helper(x, 2.0)
    """
    assert_rewrites(CallHelperThroughDescriptor, before, after, seed=2)


def test_call_helper_through_property():
    before = """
        import torch


        def helper(t, k):
            return t * k


        def fn(x):
            return helper(x, 2.0)
    """
    after = """
        import torch


        def helper(t, k):
            return t * k


        class _Namespace:
            @property
            def helper(self):
                return helper


        def fn(x):
            return _Namespace().helper(x, 2.0)
    """
    assert_rewrites(CallHelperThroughDescriptor, before, after, seed=1)


def test_rebind_method_call_declines_when_an_instance_attribute_may_shadow_the_method():
    before = """
        import torch


        class Scaler:
            def apply(self, x):
                return x * 2


        def fn(x):
            s = Scaler()
            s.apply = torch.tanh
            return s.apply(x)
    """
    assert_declines(RebindMethodCall, before, "no site for rebind_method_call in the region")


def test_call_helper_through_descriptor_declines_when_a_local_hides_the_helper():
    before = """
        import torch


        def helper(t):
            return t


        def fn(x):
            helper = torch.tanh
            return helper(x)
    """
    assert_declines(CallHelperThroughDescriptor, before, "no site for call_helper_through_descriptor in the region")
