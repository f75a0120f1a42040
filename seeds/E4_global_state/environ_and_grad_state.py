"""E4: os.environ and sys-level state read inside the compiled function, plus torch.set_grad_enabled called without a with."""
import os
import sys

import torch

KEY = "SEED_FUZZ_ACT"


def activation(x):
    name = os.environ.get(KEY, "relu")
    if name == "gelu":
        return torch.nn.functional.gelu(x)
    if name == "tanh":
        return torch.tanh(x)
    return torch.relu(x)


def fn(x, w):
    h = activation(x @ w)
    if sys.byteorder == "little" and sys.maxsize > 2**32:
        h = h + 1
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    frozen = h * 2
    torch.set_grad_enabled(prev)
    live = h.sum()
    limit = sys.getrecursionlimit() > 100
    return frozen, live, frozen.requires_grad, live.requires_grad, torch.is_grad_enabled(), limit


def inputs():
    return (torch.randn(2, 3), torch.randn(3, 3, requires_grad=True))


def drive(f):
    outs = []
    old = os.environ.get(KEY)
    try:
        w = torch.randn(3, 3, requires_grad=True)
        x = torch.randn(2, 3)
        for name in ("relu", "gelu", "tanh"):
            os.environ[KEY] = name
            outs.append(f(x, w))
        torch.set_grad_enabled(False)
        outs.append(f(x, w))
    finally:
        torch.set_grad_enabled(True)
        if old is None:
            os.environ.pop(KEY, None)
        else:
            os.environ[KEY] = old
    outs.append(f(x, w))
    return outs
