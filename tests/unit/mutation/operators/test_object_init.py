"""Before/after and decline tests for the A1 (object initialisation) operators."""

from mutator.mutation.operators.attribute_access import RouteThroughShadowedMethod
from mutator.mutation.operators.object_init import (
    HoistInitToBase,
    InitAttributeViaProperty,
    RouteThroughDataclass,
    RouteThroughHalfBuiltObject,
    RouteThroughNew,
    RouteThroughSuperInit,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

# A region whose only value is a comparison: nothing for the routers to route.
ONLY_A_TEST = """
    import torch


    def fn(x):
        return x > 0
"""


def test_route_through_dataclass_replaces_a_derived_dataclass():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import dataclasses


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        @dataclasses.dataclass
        class _RecordBase:
            value: object
            gain: float = 4.0

            def __post_init__(self):
                self.scaled = _scale(self.value, self.gain)


        @dataclasses.dataclass
        class _Record(_RecordBase):
            inverse: float = dataclasses.field(init=False)

            def __post_init__(self):
                super().__post_init__()
                self.inverse = 1.0 / self.gain

            def result(self):
                return _scale(self.scaled, self.inverse)


        def fn(x):
            return dataclasses.replace(_Record(x.sin()), gain=0.25).result()
    """
    assert_rewrites(RouteThroughDataclass, before, after, seed=3)


def test_route_through_dataclass_post_init_and_default_factory():
    before = """
        import torch


        def fn(x):
            return x.sin()
    """
    after = """
        import torch
        import dataclasses


        def _scale(value, factor):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                return value * factor
            return value


        @dataclasses.dataclass
        class _Record:
            value: object
            gain: float = 2.0
            trail: list = dataclasses.field(default_factory=list)
            scaled: object = dataclasses.field(init=False, default=None)

            def __post_init__(self):
                self.trail.append(self.gain)
                self.scaled = _scale(self.value, self.gain)

            def result(self):
                return _scale(self.scaled, 1.0 / self.trail[-1])


        def fn(x):
            return _Record(x.sin()).result()
    """
    assert_rewrites(RouteThroughDataclass, before, after, seed=2)


def test_route_through_super_init_calls_the_mixin_init_directly():
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


        class _Base:
            def __init__(self, value, **options):
                self.value = value
                self.gain = options.get("gain", 1.0)


        class _Mixin:
            def __init__(self, *args, **kwargs):
                self.ready = True
                super().__init__(*args, **kwargs)


        class _Child(_Mixin, _Base):
            def __init__(self, value, gain=2.0, **options):
                _Mixin.__init__(self, _scale(value, gain), gain=gain, **options)

            def result(self):
                return _scale(self.value, 1.0 / self.gain) if self.ready else self.value


        def fn(x):
            return _Child(x.sin(), gain=0.5).result()
    """
    assert_rewrites(RouteThroughSuperInit, before, after, seed=5)


def test_route_through_new_returns_a_foreign_instance():
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


        class _Plain:
            def result(self):
                return _scale(self.scaled, 0.5)


        class _Built:
            def __new__(cls, value):
                obj = object.__new__(_Plain)
                obj.scaled = _scale(value, 2.0)
                return obj

            def __init__(self, value):
                raise RuntimeError("__init__ runs only for instances of the class")


        def fn(x):
            return _Built(x.sin()).result()
    """
    assert_rewrites(RouteThroughNew, before, after, seed=0)


def test_route_through_half_built_object_consults_bool_during_init():
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


        class _Partial:
            def __init__(self, value, gain=None):
                if isinstance(value, torch.Tensor):
                    self.tensor = value
                if gain:
                    self.gain = gain
                self.complete = bool(self)
                if not self.complete:
                    self.value = value

            def __bool__(self):
                return "tensor" in self.__dict__ and getattr(self, "gain", 0) > 0

            def result(self):
                if self.complete:
                    return _scale(_scale(self.tensor, self.gain), 1.0 / self.gain)
                return getattr(self, "value", None)


        def fn(x):
            return _Partial(x.sin(), 2.0).result()
    """
    assert_rewrites(RouteThroughHalfBuiltObject, before, after, seed=0)


def test_hoist_init_to_base_delegates_with_super():
    before = """
        import torch


        class Box:
            def __init__(self, value, scale=2.0):
                self.value = value * scale


        def fn(x):
            return Box(x).value
    """
    after = """
        import torch


        class _BoxInit:
            def __init__(self, value, scale):
                self.value = value * scale


        class Box(_BoxInit):
            def __init__(self, value, scale=2.0):
                super().__init__(value, scale)


        def fn(x):
            return Box(x).value
    """
    assert_rewrites(HoistInitToBase, before, after, seed=1)


def test_hoist_init_to_base_forwards_star_and_keyword_only_parameters():
    before = """
        import torch


        class Base:
            def __init__(self, weight, *, bias=0.0):
                self.weight = weight
                self.bias = bias


        class Layer(Base):
            def __init__(self, weight, *extra, bias=0.5, **options):
                super().__init__(weight, bias=bias)
                self.extra = extra


        def fn(x):
            layer = Layer(x)
            return layer.weight + layer.bias
    """
    after = """
        import torch


        class Base:
            def __init__(self, weight, *, bias=0.0):
                self.weight = weight
                self.bias = bias


        class _LayerInit(Base):
            def __init__(self, weight, *extra, bias, **options):
                super().__init__(weight, bias=bias)
                self.extra = extra


        class Layer(_LayerInit):
            def __init__(self, weight, *extra, bias=0.5, **options):
                super(Layer, self).__init__(weight, *extra, bias=bias, **options)


        def fn(x):
            layer = Layer(x)
            return layer.weight + layer.bias
    """
    assert_rewrites(HoistInitToBase, before, after, seed=0)


def test_init_attribute_via_property_with_setter_and_deleter():
    before = """
        import torch


        class Box:
            def __init__(self, value, scale=2.0):
                self.value = value * scale


        def fn(x):
            return Box(x).value
    """
    after = """
        import torch


        class Box:
            def __init__(self, value, scale=2.0):
                self.value = value * scale

            @property
            def value(self):
                return self._value_value

            @value.setter
            def value(self, value):
                self._value_value = value

            @value.deleter
            def value(self):
                del self._value_value


        def fn(x):
            return Box(x).value
    """
    assert_rewrites(InitAttributeViaProperty, before, after, seed=2)


def test_init_attribute_via_property_call():
    before = """
        import torch


        class Box:
            def __init__(self, value, scale=2.0):
                self.value = value * scale


        def fn(x):
            return Box(x).value
    """
    after = """
        import torch


        class Box:
            def __init__(self, value, scale=2.0):
                self.value = value * scale

            value = property(
                lambda self: self._value_value,
                lambda self, value: setattr(self, "_value_value", value),
                lambda self: delattr(self, "_value_value"),
            )


        def fn(x):
            return Box(x).value
    """
    assert_rewrites(InitAttributeViaProperty, before, after, seed=0)


def test_routers_decline_without_a_value_to_route():
    for op in (RouteThroughDataclass, RouteThroughSuperInit, RouteThroughNew, RouteThroughHalfBuiltObject,
               RouteThroughShadowedMethod):
        assert_declines(op, ONLY_A_TEST, f"no site for {op.name} in the region")


def test_routers_leave_dispatch_hooks_alone():
    before = """
        import torch


        class Tagged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                out = super().__torch_function__(func, types, args, kwargs or {})
                return out


        def fn(x):
            return x.as_subclass(Tagged) > 0
    """
    assert_declines(RouteThroughDataclass, before, "no site for route_through_dataclass in the region")


def test_hoist_init_to_base_declines_when_init_uses_private_names():
    before = """
        import torch


        class Box:
            def __init__(self, value):
                self.__hidden = value

            def get(self):
                return self.__hidden


        def fn(x):
            return Box(x).get()
    """
    assert_declines(HoistInitToBase, before, "no site for hoist_init_to_base in the region")


def test_init_attribute_via_property_declines_for_modules_and_attribute_hooks():
    before = """
        import torch


        class Box(torch.nn.Module):
            def __init__(self, value):
                super().__init__()
                self.value = value


        class Bag:
            def __init__(self, value):
                self.value = value

            def __getattr__(self, name):
                return self.__dict__["value"]


        def fn(x):
            return Box(x).value + Bag(x).value
    """
    assert_declines(InitAttributeViaProperty, before, "no site for init_attribute_via_property in the region")
