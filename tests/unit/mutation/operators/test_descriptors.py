"""Before/after and decline tests for the A4 operators in descriptors.py (and all value routers' decline)."""

from mutator.mutation.operators.bound_methods import RouteThroughCopiedMethods
from mutator.mutation.operators.descriptors import RouteThroughCache, RouteThroughDescriptor, RouteThroughProperty
from mutator.mutation.operators.magic_methods import RouteThroughNamedtupleSubclass, RouteThroughTensorSubclass

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_route_through_property_with_deleter():
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


        class _Holder:
            def __init__(self):
                self.scale = 2.0

            @property
            def value(self):
                return _scale(self._raw, 1.0 / self.scale)

            @value.setter
            def value(self, v):
                self._raw = _scale(v, self.scale)

            @value.deleter
            def value(self):
                self.scale = 4.0


        def _route(value):
            holder = _Holder()
            holder.value = value
            del holder.value
            return _scale(holder.value, 2.0)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughProperty, before, after, seed=2)


def test_route_through_property_getter_replaced_in_subclass():
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


        class _HolderBase:
            @property
            def value(self):
                return self._raw

            @value.setter
            def value(self, v):
                self._raw = _scale(v, 2.0)


        class _Holder(_HolderBase):
            @_HolderBase.value.getter
            def value(self):
                return _scale(self._raw, 0.5)


        def _route(value):
            holder = _Holder()
            holder.value = value
            return holder.value


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughProperty, before, after, seed=1)


def test_route_through_data_descriptor():
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


        class _Scaled:
            def __init__(self, factor):
                self.factor = factor

            def __set_name__(self, owner, name):
                self.slot = "_" + name + "_raw"

            def __get__(self, obj, objtype=None):
                if obj is None:
                    return self
                return _scale(getattr(obj, self.slot), 1.0 / self.factor)

            def __set__(self, obj, value):
                setattr(obj, self.slot, _scale(value, self.factor))


        class _Holder:
            value = _Scaled(2.0)

            def __init__(self, value):
                self.value = value


        def _route(value):
            return _Holder(value).value


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughDescriptor, before, after, seed=1)


def test_route_through_shadowed_non_data_descriptor():
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


        class _Halving:
            def __get__(self, obj, objtype=None):
                if obj is None:
                    return 0.5
                return _scale(obj.raw, 0.5)


        class _Holder:
            value = _Halving()

            def __init__(self, value):
                self.raw = _scale(value, 4.0)


        def _route(value):
            holder = _Holder(value)
            holder.value = holder.value
            return _scale(holder.value, _Holder.value)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughDescriptor, before, after, seed=3)


def test_route_through_method_binding_descriptor():
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


        class _Bound:
            def __init__(self, func):
                self.func = func

            def __get__(self, obj, objtype=None):
                if obj is None:
                    return self.func
                return types.MethodType(self.func, obj)


        class _Holder:
            def __init__(self, gain):
                self.gain = gain

            @_Bound
            def apply(self, value):
                return _scale(value, self.gain)


        def _route(value):
            return _Holder(0.5).apply(_Holder.apply(_Holder(2.0), value))


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughDescriptor, before, after, seed=4)


def test_route_through_cached_property():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import functools


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        class _Lazy:
            def __init__(self, value):
                self.value = value
                self.computed = 0

            @functools.cached_property
            def doubled(self):
                self.computed += 1
                return _scale(self.value, 2.0)


        def _route(value):
            lazy = _Lazy(value)
            first = lazy.doubled
            again = lazy.doubled
            del lazy.doubled
            return _scale(lazy.doubled if again is first else first, 1.0 / (2 * lazy.computed - 2))


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughCache, before, after, seed=2)


def test_route_through_lru_cache():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import functools


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        @functools.lru_cache(maxsize=None)
        def _factor(power):
            return 2.0 ** power


        def _route(value):
            return _scale(_scale(value, _factor(3)), _factor(-3))


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughCache, before, after, seed=0)


def test_value_routers_decline_without_a_value():
    before = """
        import torch


        def fn(x):
            return x > 0
    """
    for op in (RouteThroughTensorSubclass, RouteThroughNamedtupleSubclass, RouteThroughProperty,
               RouteThroughDescriptor, RouteThroughCache, RouteThroughCopiedMethods):
        assert_declines(op, before, f"no site for {op.name} in the region")
