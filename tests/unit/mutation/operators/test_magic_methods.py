"""Before/after and decline tests for the A3 (magic methods) operators."""

from mutator.mutation.operators.magic_methods import (
    RouteThroughNamedtupleSubclass,
    RouteThroughTensorSubclass,
    SwapDunderForSibling,
    WrapInContainerProtocol,
    WrapOperandInDunderClass,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

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
