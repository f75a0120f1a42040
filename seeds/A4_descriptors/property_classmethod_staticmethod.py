"""A4: property (getter/setter/deleter), classmethod constructors and staticmethods on an nn.Module and a helper class."""
import torch


class Schedule:
    base = 0.5

    def __init__(self, step):
        self._step = step

    @classmethod
    def warm(cls, step):
        return cls(step + 2)

    @staticmethod
    def curve(t, k):
        return torch.sigmoid(t * k)

    @property
    def factor(self):
        return self.base * (1 + self._step)

    @factor.setter
    def factor(self, v):
        self._step = v / self.base - 1

    @factor.deleter
    def factor(self):
        self._step = 0


class Gate(torch.nn.Module):
    scale_default = 1.5

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self._scale = None

    @property
    def scale(self):
        return self.scale_default if self._scale is None else self._scale

    @scale.setter
    def scale(self, v):
        self._scale = float(v)

    @classmethod
    def describe(cls):
        return cls.__name__ + "/" + str(cls.scale_default)

    @staticmethod
    def mix(a, b, w):
        return a * w + b * (1 - w)

    def forward(self, x):
        s = Schedule.warm(1)
        h = self.lin(x) * self.scale
        g = Schedule.curve(h, s.factor)
        s.factor = 3.0
        h2 = self.mix(h, g, 0.25) + type(self).mix(g, h, 0.75) * s.factor
        del s.factor
        return h2 + s.factor, self.describe(), s._step


fn = Gate()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    out = [f(*inputs())]
    fn.scale = 0.5
    out.append(f(*inputs()))
    Gate.scale_default = 3.0
    fn._scale = None
    out.append(f(*inputs()))
    Gate.scale_default = 1.5
    return out
