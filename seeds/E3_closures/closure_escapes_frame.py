"""E3: closures created and returned from the compiled frame, then called later by drive."""
import torch


def make_scaler(base):
    factor = base.mean()

    def scale(t):
        return t * factor + base

    def bump(delta):
        nonlocal factor
        factor = factor + delta
        return factor

    return scale, bump


def fn(x, w):
    scale, bump = make_scaler(w)
    y = scale(x)
    bump(1.0)
    z = scale(x)
    offset = y.sum()
    shifted = lambda t: t - offset
    return y, z, scale, bump, shifted


def inputs():
    return (torch.randn(3), torch.randn(3))


def drive(f):
    x, w = torch.randn(3), torch.randn(3)
    y, z, scale, bump, shifted = f(x, w)
    outs = [y, z, scale(torch.ones(3)), shifted(z)]
    bump(0.5)
    outs.append(scale(torch.ones(3)))
    y2, z2, scale2, _, _ = f(x * 2, w)
    outs += [y2, z2, scale2(x), scale(x)]
    return outs
