"""A1: __new__ overrides and property setters invoked from __init__ of objects created in the compiled region."""
import torch


class Clamped:
    def __init__(self, limit, value):
        self.limit = limit
        self.value = value  # goes through the property setter

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, v):
        self._value = v.clamp(-self.limit, self.limit)


class Registry:
    created = []

    def __new__(cls, name, *args):
        obj = super().__new__(cls)
        obj.name = name
        cls.created.append(name)
        return obj

    def __init__(self, name, scale=1.0):
        self.scale = scale


class Unit(Registry):
    def __new__(cls, name, scale=1.0):
        inst = super().__new__(cls, name.upper())
        inst.tagged = True
        return inst


def helper(t, k):
    c = Clamped(k, t * 3)
    return c.value.sum(dim=-1)


def fn(x):
    r1 = Registry("alpha", 0.5)
    r2 = Unit("beta", scale=2.0)
    y = x * r1.scale + x * r2.scale
    clamp = Clamped(1.0, y)
    out = clamp.value + helper(x, 0.5).unsqueeze(-1)
    clamp.value = out * 10
    return clamp.value, r2.name, getattr(r2, "tagged", False)


def inputs():
    return (torch.randn(2, 5),)


def state():
    return list(Registry.created)
