"""A4: user descriptors with __get__/__set__/__set_name__ (data and non-data) used by a module and a config object."""
import torch


class Positive:
    """Data descriptor clamping values to be positive."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.slot, 1.0)

    def __set__(self, obj, value):
        setattr(obj, self.slot, max(value, 1e-3))


class Doubled:
    """Non-data descriptor: an instance attribute of the same name wins."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return 2
        return obj.base * 2


class Config:
    temperature = Positive()
    margin = Positive()
    width = Doubled()

    def __init__(self, base):
        self.base = base
        self.temperature = -5.0
        self.margin = 0.5


class Scorer(torch.nn.Module):
    gain = Positive()

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.gain = 2.0

    def forward(self, x):
        cfg = Config(base=2)
        h = self.lin(x) / cfg.temperature
        h = h + cfg.margin * cfg.width
        cfg.width = 10  # shadows the non-data descriptor on this instance
        h = h - cfg.width * 0.01 + Config.width
        cfg.margin = -1.0
        return h * self.gain + cfg.margin, cfg.temperature, type(Config.__dict__["margin"]).__name__


fn = Scorer()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    out = [f(*inputs())]
    fn.gain = -3.0
    out.append(f(*inputs()))
    return out
