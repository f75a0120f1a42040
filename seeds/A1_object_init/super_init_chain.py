"""A1: super().__init__ chains with keyword forwarding and multiple inheritance, objects built in the compiled function."""
import torch


class Base:
    def __init__(self, weight, **kwargs):
        self.weight = weight
        self.extra = kwargs.get("extra", 0.0)
        self.calls = 0


class Scaled(Base):
    def __init__(self, weight, factor=2.0, **kwargs):
        super().__init__(weight, **kwargs)
        self.factor = factor

    def apply(self, x):
        self.calls += 1
        return x * self.weight * self.factor + self.extra


class Mixin:
    def __init__(self, *args, **kwargs):
        self.mixed = True
        super().__init__(*args, **kwargs)

    def bias(self):
        return 1.0 if self.mixed else 0.0


class ScaledWithBias(Mixin, Scaled):
    def __init__(self, weight):
        super().__init__(weight, factor=0.5, extra=0.25)

    def apply(self, x):
        return super().apply(x) + self.bias()


def fn(x, w):
    layers = [Scaled(w), ScaledWithBias(w * 2), Scaled(w, factor=-1.0, extra=1.0)]
    out = x
    for layer in layers:
        out = layer.apply(out)
    total_calls = sum(layer.calls for layer in layers)
    return out.relu(), total_calls, layers[1].factor


def inputs():
    return (torch.randn(4, 3), torch.randn(3))
