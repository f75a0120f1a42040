"""Before/after and decline tests for the A2 (attribute access) operators."""

from mutator.mutation.operators.attribute_access import (
    GuardWithHasattr,
    ReadThroughInstanceDict,
    ReadThroughProxy,
    ReadViaGetattr,
    RouteThroughShadowedMethod,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_read_via_getattr_with_default():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * getattr(cfg, "gain", None)
    """
    assert_rewrites(ReadViaGetattr, before, after, seed=1)


def test_read_via_getattr_names_the_attribute_in_a_global():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch

        _ATTR_NAME = "gain"


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * getattr(cfg, _ATTR_NAME)
    """
    assert_rewrites(ReadViaGetattr, before, after, seed=0)


def test_read_via_getattr_inside_try_keeps_the_attribute_error():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            try:
                return x * cfg.gain
            except AttributeError:
                return x
    """
    after = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            try:
                return x * getattr(cfg, "gain")
            except AttributeError:
                return x
    """
    assert_rewrites(ReadViaGetattr, before, after, seed=1)


def test_guard_with_hasattr_on_the_attribute():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * (cfg.gain if hasattr(cfg, "gain") else None)
    """
    assert_rewrites(GuardWithHasattr, before, after, seed=2)


def test_guard_with_hasattr_on_a_missing_attribute():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * (None if hasattr(cfg, "missing_attr") else cfg.gain)
    """
    assert_rewrites(GuardWithHasattr, before, after, seed=0)


def test_read_through_getattr_proxy():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class _Proxy:
            def __init__(self, target):
                object.__setattr__(self, "_proxy_target", target)

            def __getattr__(self, name):
                return getattr(self.__dict__["_proxy_target"], name)


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * _Proxy(cfg).gain
    """
    assert_rewrites(ReadThroughProxy, before, after, seed=2)


def test_read_through_getattribute_proxy():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class _Proxy:
            def __init__(self, target):
                self._proxy_target = target

            def __getattribute__(self, name):
                target = object.__getattribute__(self, "_proxy_target")
                return getattr(target, name)


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * _Proxy(cfg).gain
    """
    assert_rewrites(ReadThroughProxy, before, after, seed=0)


def test_read_through_instance_dict():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * cfg.gain
    """
    after = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return x * (cfg.__dict__["gain"] if not isinstance(cfg, type) and "gain" in getattr(cfg, "__dict__", ()) else cfg.gain)
    """
    assert_rewrites(ReadThroughInstanceDict, before, after, seed=2)


def test_route_through_method_shadowed_by_a_lambda():
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


        class _Shadowed:
            def transform(self, value):
                return _scale(value, 2.0)


        def _route(value):
            obj = _Shadowed()
            first = obj.transform(value)
            obj.transform = lambda v: _scale(v, 0.5)
            return obj.transform(first)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughShadowedMethod, before, after, seed=1)


def test_route_through_method_shadowed_in_dict_then_deleted():
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


        class _Shadowed:
            def transform(self, value):
                return _scale(value, 0.5)


        def _route(value):
            obj = _Shadowed()
            obj.__dict__["transform"] = lambda v: _scale(v, 2.0)
            doubled = obj.transform(value)
            del obj.transform
            return obj.transform(doubled)


        def fn(x):
            return _route(x.sin())
    """
    assert_rewrites(RouteThroughShadowedMethod, before, after, seed=3)


def test_attribute_readers_skip_modules_and_f_strings():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        cfg = Config()


        def fn(x):
            return torch.relu(x), f"{cfg.gain}"
    """
    for op in (ReadViaGetattr, GuardWithHasattr, ReadThroughProxy, ReadThroughInstanceDict):
        assert_declines(op, before, f"no site for {op.name} in the region")


def test_double_reading_rewriters_need_a_plain_receiver():
    before = """
        import torch


        class Config:
            def __init__(self):
                self.gain = 2.0


        def fn(x):
            return x * Config().gain
    """
    for op in (GuardWithHasattr, ReadThroughInstanceDict):
        assert_declines(op, before, f"no site for {op.name} in the region")
