"""G3: a compiled closure whose captured list, dict and rebound cell change between same-shaped calls."""
import torch


def make_fn():
    weights = [1.0, 2.0]
    table = {"shift": torch.zeros(3), "on": True}
    scale = 1.5

    def fn(x):
        y = x * scale
        for w in weights:
            y = y + w * x
        if table["on"]:
            y = y - table["shift"]
        return y

    def set_scale(v):
        nonlocal scale
        scale = v

    return fn, weights, table, set_scale


fn, WEIGHTS, TABLE, set_scale = make_fn()


def inputs():
    return (torch.randn(3),)


def drive(f):
    x = torch.randn(3)
    outs = [f(x)]
    WEIGHTS[0] = 5.0
    outs.append(f(x))
    WEIGHTS.append(-1.0)
    outs.append(f(x))
    TABLE["shift"] = torch.ones(3)
    outs.append(f(x))
    TABLE["shift"].mul_(3)
    outs.append(f(x))
    TABLE["on"] = False
    set_scale(0.25)
    outs.append(f(x))
    return outs
