"""Before/after and decline tests for the A3 (magic methods) and A4 (descriptors) operators."""

from mutator.mutation.operators.dunders import (CallHelperThroughDescriptor, RebindMethodCall, RouteThroughCache,
                                                RouteThroughCopiedMethods, RouteThroughDescriptor,
                                                RouteThroughNamedtupleSubclass, RouteThroughProperty,
                                                RouteThroughTensorSubclass, SwapDunderForSibling,
                                                WrapInContainerProtocol, WrapOperandInDunderClass)

from tests.unit.operators.helpers import assert_declines, assert_rewrites

SIN = """
    import torch


    def fn(x):
        return x.sin()
"""


def test_wrap_operand_uses_the_dunder_of_the_left_operand():
    before = """
        import torch


        def fn(x, y):
            return x + y
    """
    after = """
        import torch
        class _Operand:
            def __init__(self, value):
                self.value = value

            def __add__(self, other):
                return self.value + other


        def fn(x, y):
            return _Operand(x) + y
    """
    assert_rewrites(WrapOperandInDunderClass, before, after, seed=0)


def test_wrap_operand_uses_the_reflected_dunder_after_a_number():
    before = """
        import torch


        def fn(x):
            return 2 * x
    """
    after = """
        import torch
        class _Operand:
            def __init__(self, value):
                self.value = value

            def __rmul__(self, other):
                return other * self.value


        def fn(x):
            return 2 * _Operand(x)
    """
    assert_rewrites(WrapOperandInDunderClass, before, after, seed=0)


def test_container_protocol_for_loop_through_a_generator_iter():
    before = """
        import torch


        def fn(x, keys):
            for k in keys:
                if k in ("a", "b"):
                    x = x + len(k)
            return x
    """
    after = """
        import torch
        class _Delegate:
            def __init__(self, items):
                self.items = items

            def __iter__(self):
                for item in self.items:
                    yield item


        def fn(x, keys):
            for k in _Delegate(keys):
                if k in ("a", "b"):
                    x = x + len(k)
            return x
    """
    assert_rewrites(WrapInContainerProtocol, before, after, seed=0)


def test_container_protocol_len():
    before = """
        import torch


        def fn(x, keys):
            for k in keys:
                if k in ("a", "b"):
                    x = x + len(k)
            return x
    """
    after = """
        import torch
        class _Delegate:
            def __init__(self, items):
                self.items = items

            def __len__(self):
                return len(self.items)


        def fn(x, keys):
            for k in keys:
                if k in ("a", "b"):
                    x = x + len(_Delegate(k))
            return x
    """
    assert_rewrites(WrapInContainerProtocol, before, after, seed=1)


def test_container_protocol_contains():
    before = """
        import torch


        def fn(x, keys):
            for k in keys:
                if k in ("a", "b"):
                    x = x + len(k)
            return x
    """
    after = """
        import torch
        class _Delegate:
            def __init__(self, items):
                self.items = items

            def __contains__(self, item):
                return item in self.items


        def fn(x, keys):
            for k in keys:
                if k in _Delegate(("a", "b")):
                    x = x + len(k)
            return x
    """
    assert_rewrites(WrapInContainerProtocol, before, after, seed=2)


def test_container_protocol_truth_test():
    before = """
        import torch


        def fn(x, keys):
            for k in keys:
                if k in ("a", "b"):
                    x = x + len(k)
            return x
    """
    after = """
        import torch
        class _Delegate:
            def __init__(self, items):
                self.items = items

            def __bool__(self):
                return bool(self.items)


        def fn(x, keys):
            for k in keys:
                if _Delegate(k in ("a", "b")):
                    x = x + len(k)
            return x
    """
    assert_rewrites(WrapInContainerProtocol, before, after, seed=5)


def test_dunder_sibling_add_to_iadd():
    before = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    after = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                result = self
                result += other
                return result

            def __iadd__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=0)


def test_dunder_sibling_add_to_radd():
    before = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    after = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                return type(self).__radd__(self, other)

            def __radd__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=1)


def test_dunder_sibling_add_to_mul():
    before = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    after = """
        import torch


        class Vec:
            def __init__(self, data):
                self.data = data

            def __add__(self, other):
                return self * other

            def __mul__(self, other):
                return Vec(self.data + other.data)


        def fn(x, y):
            return (Vec(x) + Vec(y)).data
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=2)


def test_dunder_sibling_eq_to_ne():
    before = """
        import torch


        class Key:
            def __init__(self, k):
                self.k = k

            def __eq__(self, other):
                return self.k == other.k

            __hash__ = None


        def fn(x):
            return x * (Key(1) == Key(1))
    """
    after = """
        import torch
        def _negate(result):
            if result is NotImplemented:
                return result
            if isinstance(result, torch.Tensor):
                return result.logical_not()
            return not result


        class Key:
            def __init__(self, k):
                self.k = k

            def __eq__(self, other):
                return _negate(self != other)

            def __ne__(self, other):
                return _negate(self.k == other.k)

            __hash__ = None


        def fn(x):
            return x * (Key(1) == Key(1))
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=0)


def test_dunder_sibling_getattr_to_getattribute():
    before = """
        import torch


        class Bag:
            def __init__(self, items):
                self.items = items

            def __len__(self):
                return len(self.items)

            def __getattr__(self, name):
                if name == "first":
                    return self.items[0]
                raise AttributeError(name)


        def fn(x):
            bag = Bag([x])
            return bag.first if bag else x
    """
    after = """
        import torch


        class Bag:
            def __init__(self, items):
                self.items = items

            def __len__(self):
                return len(self.items)

            def __getattribute__(self, name):
                try:
                    return super().__getattribute__(name)
                except AttributeError:
                    return type(self)._attribute_fallback(self, name)

            def _attribute_fallback(self, name):
                if name == "first":
                    return self.items[0]
                raise AttributeError(name)


        def fn(x):
            bag = Bag([x])
            return bag.first if bag else x
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=0)


def test_dunder_sibling_len_adds_bool():
    before = """
        import torch


        class Bag:
            def __init__(self, items):
                self.items = items

            def __len__(self):
                return len(self.items)

            def __getattr__(self, name):
                if name == "first":
                    return self.items[0]
                raise AttributeError(name)


        def fn(x):
            bag = Bag([x])
            return bag.first if bag else x
    """
    after = """
        import torch


        class Bag:
            def __init__(self, items):
                self.items = items

            def __len__(self):
                return len(self.items)

            def __bool__(self):
                return len(self) > 0

            def __getattr__(self, name):
                if name == "first":
                    return self.items[0]
                raise AttributeError(name)


        def fn(x):
            bag = Bag([x])
            return bag.first if bag else x
    """
    assert_rewrites(SwapDunderForSibling, before, after, seed=1)


def test_route_through_tensor_subclass_with_default_torch_function():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        class _Traced(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs or {})

            def halved(self):
                return self * 0.5

        def _route(value):
            if type(value) not in (torch.Tensor, torch.nn.Parameter):
                return value
            traced = value.as_subclass(_Traced)
            if traced.is_floating_point():
                doubled = traced * 2.0
                traced = doubled.halved() if isinstance(doubled, _Traced) else _Traced.halved(doubled)
            return traced.as_subclass(torch.Tensor)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughTensorSubclass, before, after, seed=2)


def test_route_through_tensor_subclass_that_unwraps():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        class _Traced(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                with torch._C.DisableTorchFunctionSubclass():
                    args = tuple(a.as_subclass(torch.Tensor) if isinstance(a, cls) else a for a in args)
                return func(*args, **(kwargs or {}))

            def halved(self):
                return self.mul(0.5)

        def _route(value):
            if type(value) not in (torch.Tensor, torch.nn.Parameter):
                return value
            traced = value.as_subclass(_Traced)
            if traced.is_floating_point():
                doubled = traced * 2.0
                traced = doubled.halved() if isinstance(doubled, _Traced) else _Traced.halved(doubled)
            return traced.as_subclass(torch.Tensor)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughTensorSubclass, before, after, seed=1)


def test_route_through_namedtuple_mul_and_truediv():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import collections
        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        class _Pair(collections.namedtuple("_PairFields", ["value", "gain"])):
            __slots__ = ()

            def __mul__(self, k):
                return _Pair(_scale(self.value, k), self.gain * k)

            def __truediv__(self, k):
                return _Pair(_scale(self.value, 1.0 / k), self.gain / k)


        def _route(value):
            pair = _Pair(value, 1.0) * 4.0
            return (pair / pair.gain).value


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughNamedtupleSubclass, before, after, seed=2)


def test_route_through_namedtuple_add_and_eq():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import collections
        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        class _Pair(collections.namedtuple("_PairFields", "value gain")):
            def __add__(self, other):
                return _Pair(_scale(self.value, other.gain), self.gain + other.gain)

            def __eq__(self, other):
                return isinstance(other, _Pair) and self.gain == other.gain

            __hash__ = tuple.__hash__


        def _route(value):
            pair = _Pair(value, 0.0) + _Pair(None, 2.0)
            out, gain = pair
            return _scale(out, 1.0 / gain) if pair == _Pair(None, 2.0) else out


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughNamedtupleSubclass, before, after, seed=0)


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


def test_operand_and_container_wrappers_decline_without_operators():
    for op in (WrapOperandInDunderClass, WrapInContainerProtocol):
        assert_declines(op, SIN, f"no site for {op.name} in the region")


def test_wrap_operand_leaves_not_and_negative_literals_alone():
    before = """
        import torch


        def fn(x, flag):
            if not flag:
                return -1
            return x.sin()
    """
    assert_declines(WrapOperandInDunderClass, before, "no site for wrap_operand_in_dunder_class in the region")


def test_container_protocol_never_wraps_assignment_targets():
    before = """
        import torch


        def fn(x, table):
            table["k"] = x
            del table["k"]
            return x
    """
    assert_declines(WrapInContainerProtocol, before, "no site for wrap_in_container_protocol in the region")


def test_dunder_sibling_declines_for_tensor_subclasses():
    before = """
        import torch


        class Tagged(torch.Tensor):
            def __add__(self, other):
                return super().__add__(other)


        def fn(x):
            return x.as_subclass(Tagged) + 1
    """
    assert_declines(SwapDunderForSibling, before, "no site for dunder_sibling in the region")


def test_value_routers_decline_without_a_value():
    before = """
        import torch


        def fn(x):
            return x > 0
    """
    for op in (RouteThroughTensorSubclass, RouteThroughNamedtupleSubclass, RouteThroughProperty,
               RouteThroughDescriptor, RouteThroughCache, RouteThroughCopiedMethods):
        assert_declines(op, before, f"no site for {op.name} in the region")


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
