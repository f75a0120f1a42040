"""E3: functools.wraps decorators and decorator factories whose wrappers close over counters and config."""
import functools

import torch

CALLS = {}


def counted(fn):
    count = 0

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal count
        count += 1
        CALLS[wrapper.__name__] = count
        return fn(*args, **kwargs)

    return wrapper


def clipped(lo, hi):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(x, *args):
            return fn(x, *args).clamp(lo, hi)
        wrapper.bounds = (lo, hi)
        return wrapper
    return deco


@counted
def gate(x):
    return torch.sigmoid(x) * x


@counted
@clipped(-1.0, 1.0)
def mix(x, y):
    return x * 3 + y


def fn(x, y):
    h = gate(x)
    for _ in range(2):
        h = mix(h, y)
    lo, hi = mix.__wrapped__.bounds
    name = gate.__name__ + "/" + mix.__name__
    return h + gate(y), lo, hi, name


def inputs():
    return (torch.randn(4), torch.randn(4))


def state():
    return dict(CALLS)
