"""A3: a torch.Tensor subclass with __torch_function__ created, used and unwrapped inside a module's forward."""
import torch


class Tracked(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_function__(func, types, args, kwargs)
        if func is torch.Tensor.add or func is torch.add:
            out = out * 1.0  # still Tracked
        return out

    def double(self):
        return self * 2


def unwrap(t):
    return t.as_subclass(torch.Tensor) if isinstance(t, Tracked) else t


class ScaleMod(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(0.5, 1.5, 4))

    def forward(self, x, wrap):
        if wrap:
            x = x.as_subclass(Tracked)
        y = x * self.w
        y = torch.add(y, 1.0)
        y = y.double() if isinstance(y, Tracked) else y + y
        z = torch.sin(y).sum(dim=-1)
        kind = type(z).__name__
        return unwrap(z), kind, isinstance(y, Tracked), unwrap(y.mean(0))


fn = ScaleMod()


def inputs():
    return (torch.randn(3, 4), True)


def drive(f):
    out = [f(*inputs()), f(*inputs())]
    out.append(f(torch.randn(3, 4), False))
    out.append(f(torch.randn(5, 4), True))
    return out
