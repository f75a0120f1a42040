"""E2: try/except/else/finally around attribute access on modules and user objects."""
import torch


class Config:
    def __init__(self):
        self.scale = 2.0
        self.shift = -0.5


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.cfg = Config()
        self.visits = 0

    def lookup(self, name, default):
        try:
            value = getattr(self.cfg, name)
        except AttributeError:
            value = default
        else:
            value = value + 1.0
        finally:
            self.visits += 1
        return value

    def forward(self, x):
        h = self.lin(x)
        h = h * self.lookup("scale", 1.0) + self.lookup("bias", 0.25)
        try:
            extra = self.missing_layer(h)
        except AttributeError:
            extra = h.relu()
        try:
            w = self.lin.weight
            b = self.lin.nonexistent_bias
        except AttributeError as e:
            b = torch.zeros(3)
            tag = 1
        else:
            tag = 2
        finally:
            h = h + self.lookup("shift", 0.0)
        return h + extra + b, tag, w.shape[0]


fn = Head()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    outs = [f(torch.randn(2, 4)) for _ in range(2)]
    fn.cfg.shift = 1.5
    outs.append(f(torch.randn(2, 4)))
    return outs


def state():
    return fn.visits
