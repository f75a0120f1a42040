"""G1: compiled function called with changing Python int, float, bool and str arguments."""
import torch


def activate(h, kind):
    if kind == "relu":
        return torch.relu(h)
    if kind == "tanh":
        return torch.tanh(h)
    return h


def fn(x, scale, repeats, use_bias, kind):
    h = x
    for _ in range(repeats):
        h = h * scale + 0.1
    if use_bias:
        h = h + torch.arange(h.shape[-1], dtype=h.dtype)
    return activate(h, kind), scale * repeats


def inputs():
    return (torch.randn(2, 4), 0.5, 2, True, "relu")


def drive(f):
    x = torch.randn(2, 4)
    settings = [
        (0.5, 2, True, "relu"),
        (0.75, 2, True, "relu"),
        (1.25, 3, False, "tanh"),
        (0.5, 1, True, "none"),
        (2.0, 2, False, "relu"),
        (0.5, 2, True, "relu"),
    ]
    return [f(x, s, r, b, k) for s, r, b, k in settings]
